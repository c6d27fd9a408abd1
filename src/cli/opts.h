/*
** opts.h -- command-line option tables and their parser.
**
** A table (a dsf_opt array ending with id 0) is the one description of a
** command's options: the parser, --help, the completion scripts and the
** man page all read it (help.c). Long options take `--name value` or
** `--name=value`; short ones `-o value`. Positional arguments may come
** anywhere; `--` ends the options.
*/
#ifndef DSF_OPTS_H
#define DSF_OPTS_H

#include <stdbool.h>

#include "core/diag.h"

typedef struct dsf_opt {
    const char *name;     /* long name without dashes */
    char short_name;      /* 0 when none */
    const char *arg;      /* argument name ("DIR", "KEY=VALUE", "a|b"), or
                          ** NULL for a flag; "a|b" lists the values */
    const char *help;     /* one paragraph; help.c wraps it */
    int id;               /* > 0; 0 ends the table */
    const char *complete; /* what completes the argument: "profile",
                          ** "tier", "param", "file", "dir" or NULL */
} dsf_opt;

typedef struct dsf_optparse {
    int argc;
    char **argv;
    int i;             /* next argv index */
    const char *cmd;   /* command name for messages */
    bool only_positional;
    int arg_index;     /* argv index of the last option or positional */
} dsf_optparse;

#define DSF_OPT_END 0     /* no more arguments */
#define DSF_OPT_POS (-1)  /* a positional argument in *arg */

/* Starts parsing argv[first..argc). */
void dsf_optparse_init(dsf_optparse *p, int argc, char **argv, int first,
                       const char *cmd);

/* The next option's id, looked up in opts then in common (may be NULL),
** with its argument in *arg (borrowed from argv); DSF_OPT_POS for a
** positional, DSF_OPT_END at the end, or DSF_EUSAGE after adding an error
** (unknown option, with the closest known one as a hint; missing
** argument). */
int dsf_opt_next(dsf_optparse *p, const dsf_opt *opts, const dsf_opt *common,
                 const char **arg, dsf_diags *d);

/* Parses a whole number in [min, max] from s; DSF_EUSAGE with a message
** naming opt otherwise. */
int dsf_opt_int(long long *out, const char *s, long long min, long long max,
                const char *opt, dsf_diags *d);
int dsf_opt_double(double *out, const char *s, double min, double max,
                   const char *opt, dsf_diags *d);

#endif
