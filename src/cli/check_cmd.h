/*
** check_cmd.h -- `dsforge check CONFIG -- COMMAND...`: the plugins'
** command checks (plugin/cmdcheck.h) run on a config and a training
** command, and their findings as diagnostics at the argument (its argv
** index and its column in the command line as printed) and at the config
** key they concern.
**
** When CONFIG is a file a `gen -o` wrote (listed with the same sha256 in
** the manifest.json beside it), its variant's params and target are what
** the config intends: the checks see them as ctx.params.
*/
#ifndef DSF_CHECK_CMD_H
#define DSF_CHECK_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "json/jsonc.h"
#include "plugin/plugin.h"

typedef struct dsf_check_cmd {
    char *const *words;  /* the command (borrowed from argv) */
    size_t nwords;
    char *line;          /* the words sh-quoted, joined by spaces */
    size_t *cols;        /* 1-based byte column of each word in line */
    cJSON *params;       /* the manifest's params of CONFIG, or NULL */
    char *variant;       /* its "<profile>-<variant>" name, or NULL */
    char *target;        /* the manifest's target for it, or NULL */
    char *cmd_target;    /* the target a command check says the command
                            runs CONFIG at, or NULL */
} dsf_check_cmd;

/* Sets c up for words[0..n) (borrowed; n > 0). Freed with
** dsf_check_cmd_free. */
void dsf_check_cmd_init(dsf_check_cmd *c, char *const *words, size_t n);
void dsf_check_cmd_free(dsf_check_cmd *c);

/* Looks CONFIG (file) up in the manifest.json of its directory (a
** regular file only: it is read again). Not finding it is no error; a file the manifest lists with another sha256
** adds a note to notes (the params are then not used). */
void dsf_check_cmd_manifest(dsf_check_cmd *c, const char *file,
                            dsf_diags *notes);

/* Runs the command checks on doc (read from file through src) with vo.
** Their findings go to out (unsorted: each at its argument, followed by a
** note at the config key when it names one) and, when json is not NULL,
** to the array json as objects; the params they learn from the command
** to the object learned, the target they say the command runs CONFIG at
** to c->cmd_target (target_given: vo->target was chosen, by --target or
** the manifest). Errors: no plugin checks commands (DSF_EINPUT), a script
** error. */
int dsf_check_cmd_run(dsf_check_cmd *c, dsf_plugins *p, cJSON *doc,
                      const dsf_jsrc *src, const char *file,
                      const dsf_validate_opts *vo, bool target_given,
                      dsf_diags *out, cJSON *json, cJSON *learned,
                      dsf_diags *d);

#endif
