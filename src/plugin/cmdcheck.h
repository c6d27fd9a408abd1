/*
** cmdcheck.h -- command checks that plugins declare (the `check_command`
** field of a declaration, contrib/docs/plugins.md): `dsforge check CONFIG
** -- COMMAND...` gives the config and the command's words to each, and
** maps what they find to the argument and to the config key.
**
** The core knows no launcher, script or flag: a plugin reads the words.
** It sees only the environment variables it declares (`env`), and only
** the files the command names (ctx.read_text).
*/
#ifndef DSF_PLUGIN_CMDCHECK_H
#define DSF_PLUGIN_CMDCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin.h"

/* The files a command check may read: at most this many bytes each. */
#define DSF_CMDCHECK_MAX_FILE (1024 * 1024)

/* One declared check. */
typedef struct dsf_cmdcheck {
    char *plugin;
    char **env;        /* the environment variables it reads */
    size_t nenv;
    int ref;           /* registry reference of run */
} dsf_cmdcheck;

typedef struct dsf_cmdchecks {
    dsf_cmdcheck *items;
    size_t n;
} dsf_cmdchecks;

/* A finding about the command. */
typedef struct dsf_cmd_finding {
    char *rule;
    char *plugin;
    dsf_severity severity;
    char *path;        /* the config path concerned, or NULL */
    char *message;
    char *fix;         /* or NULL */
    size_t *args;      /* the 0-based indexes of the words concerned, in
                          ascending order (the first is where it is
                          reported); may be empty */
    size_t nargs;
} dsf_cmd_finding;

typedef struct dsf_cmd_findings {
    dsf_cmd_finding *items;
    size_t len;
} dsf_cmd_findings;

/* What a check is run with (all borrowed). */
typedef struct dsf_cmdcheck_in {
    const dsf_validate_opts *vo;  /* target, mode, params, values */
    const char *config_file;      /* CONFIG as named on the command line */
    const char *variant;          /* the manifest's name for CONFIG's
                                     variant, or NULL */
    char *const *words;           /* the command */
    size_t nwords;
    bool target_given;            /* vo->target was chosen (--target, the
                                     manifest): a check's target is not
                                     used */
} dsf_cmdcheck_in;

/* Reads the `check_command` field of the declaration at stack index t of
** plugin (file names it for messages) into c: DSF_EINPUT with a
** diagnostic for a bad declaration. Leaves the stack as it was. */
int dsf_cmdchecks_read(dsf_cmdchecks *c, lua_State *L, int t,
                       const char *plugin, const char *file, dsf_diags *d);
void dsf_cmdchecks_free(dsf_cmdchecks *c);

/* How many plugins declare a command check. */
size_t dsf_plugins_cmdcheck_count(const dsf_plugins *p);

/* The declared command checks (borrowed), *n of them: their `env` lists
** for the help's environment variables. */
const dsf_cmdcheck *dsf_plugins_cmdchecks(const dsf_plugins *p, size_t *n);

/* Runs every declared command check (plugin order) on doc and in's
** command, appending to out (each check's findings sorted by their first
** argument, then path and rule) and adding the params a check learned
** from the command (the world size, say) to the object learned (a later
** plugin's value wins). A check returns a list of findings {severity,
** rule, message, path?, fix?, args?} (args: 1-based word numbers), or
** {findings = that list, params = a table, target = a name}; anything
** else, or raising, is a script error (DSF_ESCRIPT). *target (NULL or
** allocated; the caller frees it) is the target a check says the command
** runs CONFIG at (a later plugin's wins). */
int dsf_plugins_check_command(dsf_plugins *p, const cJSON *doc,
                              const dsf_cmdcheck_in *in,
                              dsf_cmd_findings *out, cJSON *learned,
                              char **target, dsf_diags *d);

void dsf_cmd_findings_free(dsf_cmd_findings *f);

#endif
