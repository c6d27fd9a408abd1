/*
** plugin_opts.h -- the options plugins add to a built-in command
** (plugin/options.h), seen by the command line: the command's table with
** them after its own (what the parse, --help, the completion scripts and
** the man page read), what the parse gave them, and their values once
** checked, for the plugins' hooks. The command knows none of them.
*/
#ifndef DSF_PLUGIN_OPTS_H
#define DSF_PLUGIN_OPTS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "cli/args.h"
#include "cli/help.h"
#include "cli/plugin_env.h"
#include "plugin/options.h"

/* The ids of the plugins' options: DSF_PLUGIN_OPT_ID + their index (below
** the common options' ids, above any command's own). */
#define DSF_PLUGIN_OPT_ID 500

typedef struct dsf_plugin_opts {
    dsf_command cmd;                 /* the command, with table */
    dsf_opt *table;                  /* its own options, then the plugins' */
    const dsf_plugin_option **popts; /* the plugins' (borrowed) */
    size_t n;
    char *summary, *description;     /* cmd's, with the family's name */
    char *target_arg;                /* --target's values ("a|b") */
    const char **given;              /* per plugins' option: the value on
                                     ** the command line (the last), "" for
                                     ** a flag, or NULL */
} dsf_plugin_opts;

/* b for the built-in command c with the options that the plugins p (NULL:
** none; their options read) add to it; docs: also its texts for --help
** (and the man page and completion) from the plugins' targets (their
** targets read: plugin/targets.h): the family's name in the summary and
** description (dsf_help_fill), --target's values and help. */
void dsf_plugin_opts_init(dsf_plugin_opts *b, const dsf_command *c,
                          const dsf_plugins *p, bool docs);
void dsf_plugin_opts_free(dsf_plugin_opts *b);

/* Takes option id with its argument when it is a plugin's: true then. */
bool dsf_plugin_opts_take(dsf_plugin_opts *b, int id, const char *arg);

/* What the plugins' options mean for a run. */
typedef struct dsf_plugin_opt_values {
    cJSON *ctx;          /* key -> value of the options that declare ctx
                         ** (dsf_validate_opts.values) */
    cJSON *params;       /* key -> value of the param options given */
    cJSON *defaults;     /* ... and of those not given, with a default */
    const char *strict;  /* the strictness class of a strict flag given,
                         ** or NULL (borrowed from the plugins) */
} dsf_plugin_opt_values;

/* The values of b's options, from the command line, their environment
** variables and their defaults, checked by the plugins p (which must be
** those of dsf_plugin_opts_init). The first error stops (usage error, or
** the check's script error). v is freed with dsf_plugin_opt_values_free
** in every case. A param value that reads as a number is one. */
int dsf_plugin_opts_values(const dsf_plugin_opts *b, dsf_plugins *p,
                           dsf_plugin_opt_values *v, dsf_diags *d);
void dsf_plugin_opt_values_free(dsf_plugin_opt_values *v);

/* For a built-in command that parses its options without the plugins:
** when argv[1..argc) asks for --help, loads the plugins (into pe, freed
** with dsf_plugin_env_free; offline) for the texts they give (docs of
** dsf_plugin_opts_init); else, or when they do not load, b is c's. */
void dsf_plugin_opts_for_help(dsf_plugin_opts *b, dsf_plugin_env *pe,
                              const dsf_command *c, int argc, char **argv);

/* Frees what dsf_plugin_opts_for_help made. */
void dsf_plugin_opts_help_free(dsf_plugin_opts *b, dsf_plugin_env *pe);

/* Applies the common options of argv[1..argc) to env, ignoring everything
** else (the command's parse reports errors): where the plugins whose
** options the parse needs are found. Whether --help (or -h) is among the
** arguments. */
bool dsf_cli_prescan(dsf_cli_env *env, int argc, char **argv);

#endif
