/* cmd_collect.c -- `dsforge collect DIR`: argument parsing; the work is
** in collect/collect.c, the readers in the plugins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "collect/collect.h"
#include "core/error.h"
#include "core/xalloc.h"

enum {
    OPT_RESULTS = 1,
    OPT_RESULTS_FOR,
    OPT_BEST,
    OPT_CALIBRATION,
    OPT_FORMAT
};

static const dsf_opt opts[] = {
    {"results", 0, "DIR", "where the variants' results directories are "
     "(default DIR/results)", OPT_RESULTS, "dir"},
    {"results-for", 0, "VARIANT=DIR", "the results directory of one "
     "variant (repeatable)", OPT_RESULTS_FOR, NULL},
    {"best", 0, "METRIC", "also write DIR/best.json: the override that "
     "makes the best variant by METRIC from the control", OPT_BEST, NULL},
    {"export-calibration", 0, "FILE", "write one JSON line per measured "
     "variant: params, estimate, measurement", OPT_CALIBRATION, "file"},
    {"format", 0, "table|json", "what to print (default table)", OPT_FORMAT,
     NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_collect = {
    "collect", "read what each variant measured when it ran",
    "collect DIR [options]",
    "Reads the results of a sweep that has run: for each variant of the "
    "'gen -o DIR' output, the files under DIR/results/<variant file stem>/ "
    "(what the cluster emitters' jobs write: dsf-run.json, the logs, the "
    "training code's own files), through the readers the plugins "
    "declare. Each variant becomes one record: its status (ok, "
    "oom, failed, running, missing, mismatch; timeout or cancelled when "
    "the job system's own record is in the results directory), the "
    "values measured "
    "(throughput, step time, peak memory, loss, wall time) and which "
    "reader and file gave each. A run whose config sha256 is not the "
    "manifest's is refused, never attributed. The records are written to "
    "DIR/results.json in one atomic rename; 'dsforge report DIR' then "
    "shows them beside the estimates.",
    opts, true,
    "Exit status: 0 when every variant was read (failed or out-of-memory "
    "runs are results, not errors), 1 when a variant's results were "
    "refused (another config's sha256), 2 a usage error, 3 a missing or "
    "broken manifest, 5 a reader's script error. Nothing is written on an "
    "error. The readers and the record are documented in "
    "contrib/docs/results.md.",
    "dir", NULL, run, NULL};

typedef struct args {
    dsf_collect_opts o;
    char **results_for;
    size_t n;
} args;

static int take(args *a, int id, const char *arg, dsf_diags *d)
{
    switch (id) {
    case OPT_RESULTS:
        a->o.results = arg;
        return 0;
    case OPT_RESULTS_FOR:
        a->results_for = dsf_xrealloc(a->results_for,
                                      (a->n + 1) * sizeof *a->results_for);
        a->results_for[a->n++] = (char *)arg;
        return 0;
    case OPT_BEST:
        a->o.best = arg;
        return 0;
    case OPT_CALIBRATION:
        a->o.calibration = arg;
        return 0;
    case OPT_FORMAT:
        if (!strcmp(arg, "table") || !strcmp(arg, "json")) {
            a->o.format = *arg == 'j' ? DSF_COLLECT_JSON : DSF_COLLECT_TABLE;
            return 0;
        }
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "--format takes "
                              "table or json, not '%s'", arg);
    default:
        if (a->o.dir)
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "collect takes "
                                  "one DIR, got '%s' too", arg);
        a->o.dir = arg;
        return 0;
    }
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_collect, &env, &d);
    args a;
    memset(&a, 0, sizeof a);
    const char *arg;
    int rc = 0, id;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END)
        rc = take(&a, id, arg, &d);
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        free(a.results_for);
        dsf_diags_free(&d);
        dsf_cli_env_free(&env);
        return 0;
    }
    if (!rc && !a.o.dir) {
        dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0, "collect needs "
                                   "a DIR (a 'gen -o DIR' output)");
        dsf_diag_set_hint(g, "see 'dsforge collect --help'");
        rc = DSF_EUSAGE;
    }
    a.o.results_for = a.results_for;
    a.o.n_results_for = a.n;
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    dsf_buf out = DSF_BUF_INIT;
    int status = 0;
    if (!rc)
        rc = dsf_cli_env_finish(&env, &d);
    if (!rc)
        rc = dsf_plugin_env_load(&pe, &env, &d);
    if (!rc)
        rc = dsf_collect_run(pe.plugins, &a.o, &out, &status, &d);
    if (!rc)
        fwrite(out.data ? out.data : "", 1, out.len, stdout);
    dsf_buf_free(&out);
    free(a.results_for);
    dsf_plugin_env_free(&pe, &d);
    int ex = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return ex ? ex : status;
}
