/* cmd_report.c -- `dsforge report DIR`: the A/B page of an existing
** `gen -o DIR` output (diff/report.c renders it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "diff/report.h"

static const char help[] =
    "Usage: dsforge report DIR [-o FILE.html]\n"
    "\n"
    "Writes the A/B report page of a 'gen -o DIR' output: one\n"
    "self-contained HTML file (no scripts, no external styles, fonts or\n"
    "requests; the same bytes for the same output) with the variants side\n"
    "by side, the cells that differ from the control highlighted, memory\n"
    "bars against the budget, the batch composition, the findings, links\n"
    "to each JSON file, and the manifest's versions and hashes.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE       where to write it (default DIR/report.html)\n"
    "  -h, --help              show this help\n";

enum { OPT_OUTPUT = 1, OPT_HELP };

static const dsf_opt opts[] = {{"output", 'o', true, OPT_OUTPUT},
                               {"help", 'h', false, OPT_HELP},
                               {NULL, 0, false, 0}};

int dsf_cmd_report(int argc, char **argv)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_optparse p;
    dsf_optparse_init(&p, argc, argv, 1, "report");
    const char *dir = NULL, *out = NULL, *arg;
    int rc = 0, id;
    while (!rc && (id = dsf_opt_next(&p, opts, &arg, &d)) != DSF_OPT_END) {
        if (id < 0 && id != DSF_OPT_POS) {
            rc = id;
        } else if (id == OPT_HELP) {
            fputs(help, stdout);
            dsf_diags_free(&d);
            return 0;
        } else if (id == OPT_OUTPUT) {
            out = arg;
        } else if (!dir) {
            dir = arg;
        } else {
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "report takes one DIR, got '%s' too", arg);
        }
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
    return dsf_cli_finish(NULL, &d, rc);
}
