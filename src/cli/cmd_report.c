/* cmd_report.c -- `dsforge report DIR`: the A/B page of an existing
** `gen -o DIR` output (diff/report.c renders it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "report/report.h"

enum { OPT_OUTPUT = 1 };

static const dsf_opt opts[] = {
    {"output", 'o', "FILE", "where to write it (default DIR/report.html)",
     OPT_OUTPUT, "file"},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_report = {
    "report", "write the A/B report page of a gen output",
    "report DIR [-o FILE.html]",
    "Writes the A/B report page of a 'gen -o DIR' output: one "
    "self-contained HTML file (no scripts, no external styles, fonts or "
    "requests; the same bytes for the same output) with the variants side "
    "by side, the cells that differ from the control highlighted, memory "
    "bars against the budget, the batch composition, the findings, links "
    "to each JSON file, and the manifest's versions and hashes.",
    opts, false, NULL, NULL, NULL, run, NULL};

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_report, &env, &d);
    const char *dir = NULL, *out = NULL, *arg;
    int rc = 0, id;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == OPT_OUTPUT) {
            out = arg;
        } else if (!dir) {
            dir = arg;
        } else {
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "report takes one DIR, got '%s' too", arg);
        }
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        dsf_cli_env_free(&env);
        return 0;
    }
    if (!rc && !dir) {
        dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0,
                                   "report needs a DIR (a 'gen -o DIR' "
                                   "output)");
        dsf_diag_set_hint(g, "see 'dsforge report --help'");
        rc = DSF_EUSAGE;
    }
    char *page = NULL;
    if (!rc) {
        page = out ? dsf_xstrdup(out)
                   : dsf_xasprintf("%s/report.html", dir);
        rc = dsf_report_dir(dir, page, &d);
        if (!rc)
            printf("wrote %s\n", page);
    }
    free(page);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
