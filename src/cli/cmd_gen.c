/* cmd_gen.c -- `dsforge gen`: argument parsing only; the work is in
** profile/gen.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "cli/plugin_opts.h"
#include "plugin/targets.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonout.h"
#include "machine/detect.h"
#include "profile/gen.h"

enum {
    OPT_TIER = 1,
    OPT_MATRIX,
    OPT_MATRIX_FILE,
    OPT_PARAM,
    OPT_FILE,
    OPT_SET,
    OPT_UNSET,
    OPT_OUTPUT,
    OPT_STDOUT,
    OPT_WHY,
    OPT_REPORT,
    OPT_TARGET,
    OPT_EMIT,
    OPT_TRAIN_CMD,
    OPT_EMIT_OPT,
    OPT_MAX_PARALLEL,
    OPT_CANARY,
    OPT_PROBE,
    OPT_DETECT,
    OPT_DETECT_TIMEOUT,
    OPT_JOBS
};

static const dsf_opt opts[] = {
    {"tier", 0, "NAME[,NAME]", "generate these tiers (repeatable)", OPT_TIER,
     "tier"},
    {"matrix", 0, "KEY=V1,V2,...",
     "sweep a param, or a config path (an edit per value); the cartesian "
     "product over all --matrix options, for each tier", OPT_MATRIX,
     "param"},
    {"matrix-file", 0, "F1,F2,...",
     "sweep override files (variants named by file stem)", OPT_MATRIX_FILE,
     "file"},
    {"param", 0, "KEY=VALUE", "set a profile input before build runs",
     OPT_PARAM, "param"},
    {"file", 'f', "FILE",
     "override file (JSON with comments; {\"$delete\": true} deletes a "
     "key)", OPT_FILE, "file"},
    {"set", 0, "PATH=VALUE", "same as the edit PATH=VALUE", OPT_SET, NULL},
    {"unset", 0, "PATH", "same as the edit ~PATH", OPT_UNSET, NULL},
    {"output", 'o', "DIR",
     "write DIR/<profile>-<variant>.json and DIR/manifest.json", OPT_OUTPUT,
     "dir"},
    {"stdout", 0, NULL, "print the one selected variant", OPT_STDOUT, NULL},
    {"why", 0, "PATH", "print which layers set PATH, and stop", OPT_WHY,
     NULL},
    {"report", 0, "FILE.html",
     "also write the A/B report page (see 'dsforge report --help')",
     OPT_REPORT, "file"},
    {"target", 0, "TARGET",
     "the program the configs are given to (one of the targets the "
     "plugins own; default: the profile's, else theirs)", OPT_TARGET, NULL},
    {"emit", 0, "NAME[,NAME]",
     "also write the files of these emitters for every variant ('none': "
     "not the profile's default; see 'dsforge plugins')", OPT_EMIT, NULL},
    {"train-cmd", 0, "CMD",
     "the training command the emitted launch files run (the script and "
     "its arguments, shell words)", OPT_TRAIN_CMD, NULL},
    {"emit-opt", 0, "KEY=VALUE",
     "an option for the emitters (ctx.options; which keys each reads: "
     "'dsforge plugins', contrib/docs/cluster.md); repeatable",
     OPT_EMIT_OPT, NULL},
    {"max-parallel", 0, "K",
     "run at most K variants at once (for the emitters that submit the "
     "whole sweep: --emit-opt max_parallel=K)", OPT_MAX_PARALLEL, NULL},
    {"canary", 0, NULL,
     "run the control variant first and the others only after it "
     "succeeded (--emit-opt canary=true)", OPT_CANARY, NULL},
    {"probe", 0, "STEPS",
     "make every variant a short benchmark of STEPS steps that ends the "
     "run (--param probe_steps=STEPS; what it adds is the plugins')",
     OPT_PROBE, NULL},
    {"detect", 0, NULL,
     "fill the params this machine determines (GPUs per node, world size "
     "on one node, GPU and host memory, precision; as the plugins map "
     "'dsforge detect') unless --param or --matrix sets them; no GPU is "
     "an error", OPT_DETECT, NULL},
    {"detect-timeout", 0, "MS",
     "time allowed to nvidia-smi/rocm-smi under --detect (default 10000)",
     OPT_DETECT_TIMEOUT, NULL},
    {"jobs", 'j', "N",
     "processes that evaluate a sweep's variants (default: one per CPU; "
     "1: one process); the output is the same for any N", OPT_JOBS, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_gen = {
    "gen", "generate configs for a profile's tiers or a sweep matrix",
    "gen PROFILE [options] [EDIT...]",
    "Generates @F configs for a profile's tiers (default: all) or a "
    "sweep matrix. Every variant is computed and validated before anything "
    "is written; a failure leaves the output directory as it was. Without "
    "-o or --stdout it is a dry run: validate, print the summary, write "
    "nothing.\n\n"
    "Layers, lowest first: the profile chain's build results (parent "
    "first), the tier's config overlay, -f files (left to right), the "
    "command-line edits (left to right), then the sweep's --matrix-file "
    "and --matrix PATH values (in the order given).",
    opts, true,
    "Edits: PATH=VALUE sets, +PATH=VALUE adds (error if present), ~PATH "
    "deletes (error if absent). VALUE is JSON when it parses as JSON, else "
    "a string. PATH is dotted keys; [N] indexes an array and [\"a.b\"] "
    "quotes a key containing dots.",
    "profile", NULL, run, NULL};

typedef struct args {
    const char **tiers;
    size_t ntiers;
    char **tier_copies;       /* also --emit's */
    size_t ntier_copies;
    const char **emit;
    size_t nemit;
    dsf_matrix_axis *matrix;
    size_t nmatrix;
    dsf_param_arg *params;
    size_t nparams;
    const char **files;
    size_t nfiles;
    dsf_edit *edits;
    size_t nedits;
    cJSON *emit_opts;         /* --emit-opt, --max-parallel, --canary */
} args;

static int split_kv(const char *arg, char **key, char **value,
                    const char *opt, dsf_diags *d)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "%s expects KEY=VALUE, got '%s'", opt, arg);
    *key = dsf_xstrndup(arg, (size_t)(eq - arg));
    *value = dsf_xstrdup(eq + 1);
    return 0;
}

static int add_edit(args *a, const char *text, int argno, dsf_diags *d)
{
    a->edits = dsf_xrealloc(a->edits, (a->nedits + 1) * sizeof *a->edits);
    char *err;
    if (dsf_edit_parse(&a->edits[a->nedits], text, argno, &err) != 0) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "argument #%d: %s", argno, err);
        dsf_diag_set_hint(g, "edits are PATH=VALUE, +PATH=VALUE or ~PATH");
        free(err);
        return DSF_EUSAGE;
    }
    a->nedits++;
    return 0;
}

/* Splits a comma list (a copy kept in a->tier_copies) onto *list. */
static void add_names(args *a, const char *arg, const char ***list,
                      size_t *n)
{
    char *copy = dsf_xstrdup(arg);
    a->tier_copies = dsf_xrealloc(a->tier_copies, (a->ntier_copies + 1) *
                                                      sizeof *a->tier_copies);
    a->tier_copies[a->ntier_copies++] = copy;
    for (char *s = copy, *next; s; s = next) {
        next = strchr(s, ',');
        if (next)
            *next++ = '\0';
        if (!*s)
            continue;
        *list = dsf_xrealloc(*list, (*n + 1) * sizeof **list);
        (*list)[(*n)++] = s;
    }
}

static void free_args(args *a)
{
    free(a->tiers);
    free(a->emit);
    for (size_t i = 0; i < a->ntier_copies; i++)
        free(a->tier_copies[i]);
    free(a->tier_copies);
    for (size_t i = 0; i < a->nmatrix; i++) {
        free(a->matrix[i].key);
        for (size_t k = 0; k < a->matrix[i].n; k++)
            free(a->matrix[i].values[k]);
        free(a->matrix[i].values);
    }
    free(a->matrix);
    for (size_t i = 0; i < a->nparams; i++) {
        free(a->params[i].key);
        free(a->params[i].value);
    }
    free(a->params);
    free(a->files);
    for (size_t i = 0; i < a->nedits; i++)
        dsf_edit_free(&a->edits[i]);
    free(a->edits);
    cJSON_Delete(a->emit_opts);
}

/* --detect: this machine's facts as JSON (machine/detect.h); a machine
** without a GPU is an input error. Differences between the GPUs are
** warnings in d. */
static int detect_machine(cJSON **out, int timeout_ms, dsf_diags *d)
{
    dsf_machine m;
    *out = NULL;
    int rc = dsf_machine_detect(&m, timeout_ms, d, d);
    if (rc)
        return rc;
    if (!m.ngpus) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "gen --detect: no GPU found (%s)",
                                   m.gpu_source ? m.gpu_source
                                   : "neither nvidia-smi nor rocm-smi is "
                                     "installed");
        dsf_diag_set_hint(g, "'dsforge detect' shows what was found; "
                             "without --detect, set the params with "
                             "--param");
        rc = DSF_EINPUT;
    } else {
        *out = dsf_machine_to_json(&m);
    }
    dsf_machine_free(&m);
    return rc;
}

/* --matrix KEY=V1,V2 or --matrix-file F1,F2 (files). */
static int add_axis(args *a, const char *arg, bool files, int argno,
                    dsf_diags *d)
{
    char *key = NULL, *vals = NULL;
    if (files)
        vals = dsf_xstrdup(arg);
    else {
        int rc = split_kv(arg, &key, &vals, "--matrix", d);
        if (rc)
            return rc;
    }
    a->matrix = dsf_xrealloc(a->matrix, (a->nmatrix + 1) * sizeof *a->matrix);
    dsf_matrix_axis *ax = &a->matrix[a->nmatrix++];
    memset(ax, 0, sizeof *ax);
    ax->key = key;
    ax->argno = argno;
    ax->files = files;
    for (char *s = vals, *next; s; s = next) {
        next = strchr(s, ',');
        if (next)
            *next++ = '\0';
        ax->values = dsf_xrealloc(ax->values,
                                  (ax->n + 1) * sizeof *ax->values);
        ax->values[ax->n++] = dsf_xstrdup(s);
    }
    free(vals);
    return 0;
}

static int add_param(args *a, const char *arg, int argno, dsf_diags *d)
{
    char *key = NULL, *val = NULL;
    int rc = split_kv(arg, &key, &val, "--param", d);
    if (rc)
        return rc;
    a->params = dsf_xrealloc(a->params, (a->nparams + 1) * sizeof *a->params);
    a->params[a->nparams].key = key;
    a->params[a->nparams].value = val;
    a->params[a->nparams].argno = argno;
    a->nparams++;
    return 0;
}

/* --why PATH: a bad path is a usage error now, not a failure after the
** variants were built. */
static int check_why(const char *arg, dsf_diags *d)
{
    dsf_jpath jp;
    char *err;
    if (dsf_jpath_parse(&jp, arg, &err) == 0) {
        dsf_jpath_free(&jp);
        return 0;
    }
    int rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "--why: %s", err);
    free(err);
    return rc;
}

/* KEY=VALUE of --emit-opt (or what --max-parallel and --canary mean)
** into a->emit_opts: KEY is lower-case letters, digits and '_'; a key
** given twice is a usage error. */
static int add_emit_opt(args *a, const char *arg, const char *opt,
                        dsf_diags *d)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    bool ok = n > 0 && n <= 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = (arg[i] >= 'a' && arg[i] <= 'z') ||
             (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
    if (!ok)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "%s: expected KEY=VALUE with a KEY of "
                              "lower-case letters, digits and '_', got "
                              "'%s'", opt, arg);
    char *key = dsf_xstrndup(arg, n);
    if (!a->emit_opts)
        a->emit_opts = cJSON_CreateObject();
    int rc = 0;
    if (cJSON_GetObjectItemCaseSensitive(a->emit_opts, key))
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "%s: the emitter option '%s' is given twice",
                            opt, key);
    else
        cJSON_AddStringToObject(a->emit_opts, key, eq + 1);
    free(key);
    return rc;
}

/* What the command line asks for beside the request itself. */
typedef struct extra {
    bool detect;
    long long detect_ms, jobs;
} extra;

/* One option (or operand) of gen into a, r and x. */
static int take_option(int id, const char *arg, int argno, args *a,
                       dsf_gen_request *r, extra *x, dsf_diags *d)
{
    switch (id) {
    case DSF_OPT_POS:
        if (r->profile)
            return add_edit(a, arg, argno, d);
        r->profile = arg;
        return 0;
    case OPT_TIER:
        add_names(a, arg, &a->tiers, &a->ntiers);
        return 0;
    case OPT_EMIT:
        add_names(a, arg, &a->emit, &a->nemit);
        r->emit_given = true;
        return 0;
    case OPT_TRAIN_CMD:
        r->train_cmd = arg;
        return 0;
    case OPT_EMIT_OPT:
        return add_emit_opt(a, arg, "--emit-opt", d);
    case OPT_MAX_PARALLEL: {
        long long k;
        int rc = dsf_opt_int(&k, arg, 1, 1000000, "--max-parallel", d);
        if (!rc) {
            char *e = dsf_xasprintf("max_parallel=%lld", k);
            rc = add_emit_opt(a, e, "--max-parallel", d);
            free(e);
        }
        return rc;
    }
    case OPT_CANARY:
        return add_emit_opt(a, "canary=true", "--canary", d);
    case OPT_PROBE: {
        long long steps;
        int rc = dsf_opt_int(&steps, arg, 2, 1000000, "--probe", d);
        if (!rc) {
            char *e = dsf_xasprintf("probe_steps=%lld", steps);
            rc = add_param(a, e, argno, d);
            free(e);
        }
        return rc;
    }
    case OPT_MATRIX:
    case OPT_MATRIX_FILE:
        return add_axis(a, arg, id == OPT_MATRIX_FILE, argno, d);
    case OPT_PARAM:
        return add_param(a, arg, argno, d);
    case OPT_FILE:
        a->files = dsf_xrealloc(a->files, (a->nfiles + 1) * sizeof *a->files);
        a->files[a->nfiles++] = arg;
        return 0;
    case OPT_SET:
        return add_edit(a, arg, argno, d);
    case OPT_UNSET: {
        char *e = dsf_xasprintf("~%s", arg);
        int rc = add_edit(a, e, argno, d);
        free(e);
        return rc;
    }
    case OPT_OUTPUT:
        r->outdir = arg;
        return 0;
    case OPT_STDOUT:
        r->to_stdout = true;
        return 0;
    case OPT_WHY:
        r->why = arg;
        return check_why(arg, d);
    case OPT_REPORT:
        r->report = arg;
        return 0;
    case OPT_TARGET:
        r->target = arg; /* one the plugins own: checked once loaded */
        return 0;
    case OPT_DETECT:
        x->detect = true;
        return 0;
    case OPT_DETECT_TIMEOUT:
        return dsf_opt_int(&x->detect_ms, arg, 1, 600000, "--detect-timeout",
                           d);
    case OPT_JOBS: {
        int rc = dsf_opt_int(&x->jobs, arg, 1, 64, "--jobs", d);
        r->jobs = (size_t)x->jobs;
        return rc;
    }
    default:
        return 0;
    }
}

/* The combinations the options cannot take. */
static int check_request(const dsf_gen_request *r, dsf_diags *d)
{
    if (!r->profile) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "gen needs a PROFILE");
        dsf_diag_set_hint(g, "try 'dsforge list' for the profiles, "
                             "'dsforge gen --help' for the options");
        return DSF_EUSAGE;
    }
    if (r->report && (r->to_stdout || r->why))
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "--report cannot be combined with %s",
                              r->why ? "--why" : "--stdout");
    if (r->to_stdout && r->outdir)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "--stdout and -o cannot be combined");
    return 0;
}

/* The request's lists from a, and the environment's dirs and limits. */
static void fill_request(dsf_gen_request *r, const args *a,
                         dsf_cli_env *env)
{
    r->tiers = a->tiers;
    r->ntiers = a->ntiers;
    r->emit = a->emit;
    r->nemit = a->nemit;
    r->emit_options = a->emit_opts;
    r->matrix = a->matrix;
    r->nmatrix = a->nmatrix;
    r->params = a->params;
    r->nparams = a->nparams;
    r->files = a->files;
    r->nfiles = a->nfiles;
    r->edits = a->edits;
    r->nedits = a->nedits;
    r->color = env->color;
    r->profile_dirs = &env->profile_dirs;
    r->plugin_dirs = &env->plugin_dirs;
    r->limits = env->limits;
    r->repo = &env->repo;
}

/* Loads the plugins on the plugin path the common options of argv and
** the environment give (offline for --help) into pe: the options they
** add to gen are parsed with its own, and the run uses them. */
static int load_plugins(dsf_cli_env *lenv, int argc, char **argv,
                        dsf_plugin_env *pe, bool *help, dsf_diags *d)
{
    *help = dsf_cli_prescan(lenv, argc, argv);
    if (*help) {
        lenv->offline = lenv->repo.offline = true;
        lenv->repo.progress = false;
    }
    int rc = dsf_cli_env_finish(lenv, d);
    if (!rc)
        rc = dsf_plugin_env_load(pe, lenv, d);
    if (!rc)
        rc = dsf_plugins_read_options(pe->plugins, d);
    if (!rc && *help) /* the texts they give gen's help */
        rc = dsf_plugins_read_targets(pe->plugins, d);
    return rc;
}

static int run(int argc, char **argv)
{
    dsf_cli_env env, lenv; /* the parse's, and the plugins' (prescan) */
    dsf_cli_env_init(&env);
    dsf_cli_env_init(&lenv);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    bool help;
    int lrc = load_plugins(&lenv, argc, argv, &pe, &help, &d);
    dsf_plugin_opts po;
    dsf_plugin_opts_init(&po, &dsf_cmd_gen, lrc ? NULL : pe.plugins, help);
    args a;
    memset(&a, 0, sizeof a);
    dsf_gen_request r;
    memset(&r, 0, sizeof r);
    extra x = {false, 10000, 0};
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &po.cmd, &env, &d);
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END)
        /* "gen" counts as argument #1 */
        if (!dsf_plugin_opts_take(&po, id, arg))
            rc = take_option(id, arg, cl.p.arg_index + 1, &a, &r, &x, &d);
    if (!rc)
        rc = cl.rc;
    if (lrc) /* the plugins' error comes first */
        rc = lrc;
    dsf_plugin_opt_values pv;
    memset(&pv, 0, sizeof pv);
    if (!rc && !cl.help_shown)
        rc = dsf_plugin_opts_values(&po, pe.plugins, &pv, &d);
    if (cl.help_shown && !lrc) {
        dsf_plugin_opts_free(&po);
        free_args(&a);
        dsf_plugin_env_free(&pe, &d);
        dsf_cli_env_free(&env);
        dsf_cli_env_free(&lenv);
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc)
        rc = check_request(&r, &d);
    cJSON *machine = NULL;
    if (!rc && x.detect)
        rc = detect_machine(&machine, (int)x.detect_ms, &d);
    r.machine = machine;
    if (!rc) {
        fill_request(&r, &a, &lenv); /* its paths, the plugins' */
        r.color = env.color;
        r.plugins = pe.plugins;
        r.sources = pe.sources;
        r.values = pv.ctx;
        r.strict = pv.strict;
        rc = dsf_gen_run(&r, &d);
    }
    /* the plugins' load notices, as the run's own warnings */
    dsf_diags_move(&d, &pe.warnings);
    dsf_diags_sort(&d);
    int status = dsf_cli_finish(&env, &d, rc);
    cJSON_Delete(machine);
    dsf_plugin_opt_values_free(&pv);
    dsf_plugin_opts_free(&po);
    dsf_plugin_env_free(&pe, &d);
    free_args(&a);
    dsf_cli_env_free(&env);
    dsf_cli_env_free(&lenv);
    return status;
}
