/* cmd_diff.c -- `dsforge diff A B`: argument parsing and the walk over
** the variants; the comparison is in diff/compare.c, the sides in
** diff/side.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "diff/compare.h"
#include "diff/side.h"
#include "json/jsonout.h"
#include "plugin/targets.h"

enum {
    OPT_IGNORE = 1,
    OPT_FORMAT,
    OPT_PARAM,
    OPT_A_PARAM,
    OPT_B_PARAM,
    OPT_FILE,
    OPT_A_SET,
    OPT_B_SET,
    OPT_TARGET
};

static const dsf_opt opts[] = {
    {"ignore", 0, "PATH", "leave out PATH and everything below it "
     "(repeatable)", OPT_IGNORE, NULL},
    {"format", 0, "text|json", "output format (default text)", OPT_FORMAT,
     NULL},
    {"param", 0, "KEY=VALUE", "profile input for both sides", OPT_PARAM,
     "param"},
    {"a-param", 0, "KEY=VALUE", "profile input for side A only",
     OPT_A_PARAM, "param"},
    {"b-param", 0, "KEY=VALUE", "profile input for side B only",
     OPT_B_PARAM, "param"},
    {"file", 'f', "FILE", "override file for both sides", OPT_FILE, "file"},
    {"a-set", 0, "PATH=VALUE", "edit side A only", OPT_A_SET, NULL},
    {"b-set", 0, "PATH=VALUE", "edit side B only", OPT_B_SET, NULL},
    {"target", 0, "TARGET", "as for gen (default: the profile's, else the "
     "plugins' default)", OPT_TARGET, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_diff = {
    "diff", "compare two configs or variants, with reasons",
    "diff A B [options] [EDIT...]",
    "Compares two configs semantically: added, removed and changed values "
    "by path; numbers by value (5e8 equals 500000000), arrays element by "
    "element, key order ignored. A and B are each: FILE.json, a config "
    "file; DIR:VARIANT, a variant of a 'gen -o DIR' output; DIR, every "
    "variant of a 'gen -o DIR' output, paired by name with the other DIR; "
    "PROFILE[@VER][:TIER], a variant generated now: each difference names "
    "the layer that set it on each side, and the consequences (memory, "
    "fit, batch, findings) come from the plugins' summary.\n\n"
    "EDITs (PATH=VALUE, +PATH=VALUE, ~PATH) apply to both profile sides. "
    "diff takes two sides: compare three two at a time.",
    opts, true,
    "Exit status: 0 equal, 1 different, 2 usage error, 3 input error (a "
    "missing or malformed file, a variant with errors, two directories "
    "with no variant name in common), 5 script error.",
    "profile", NULL, run, NULL};

/* What one side gets: the shared arguments, then its own. */
typedef struct side_args {
    dsf_param_arg *params;
    size_t nparams;
    dsf_edit *edits;   /* shallow copies; owned by args.owned_edits */
    size_t nedits;
} side_args;

typedef struct args {
    const char *side[2];
    char **ignore;
    size_t nignore;
    bool json;
    const char **files;
    size_t nfiles;
    side_args both, per[2];
    dsf_edit *owned_edits;
    size_t nowned;
} args;

static int add_param(side_args *s, const char *arg, int argno, dsf_diags *d)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "argument #%d: expected KEY=VALUE, got '%s'",
                              argno, arg);
    s->params = dsf_xrealloc(s->params, (s->nparams + 1) * sizeof *s->params);
    s->params[s->nparams].key = dsf_xstrndup(arg, (size_t)(eq - arg));
    s->params[s->nparams].value = dsf_xstrdup(eq + 1);
    s->params[s->nparams].argno = argno;
    s->nparams++;
    return 0;
}

static int add_edit(args *a, side_args *s, const char *text, int argno,
                    dsf_diags *d)
{
    dsf_edit e;
    char *err;
    if (dsf_edit_parse(&e, text, argno, &err) != 0) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "argument #%d: %s", argno, err);
        dsf_diag_set_hint(g, "edits are PATH=VALUE, +PATH=VALUE or ~PATH");
        free(err);
        return DSF_EUSAGE;
    }
    a->owned_edits = dsf_xrealloc(a->owned_edits,
                                  (a->nowned + 1) * sizeof *a->owned_edits);
    a->owned_edits[a->nowned++] = e;
    s->edits = dsf_xrealloc(s->edits, (s->nedits + 1) * sizeof *s->edits);
    s->edits[s->nedits++] = e;
    return 0;
}

/* A positional argument after A and B that is no edit (no '=', no '~'):
** a third side, which diff does not take. */
static int third_side(const char *arg, int argno, dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "argument #%d: '%s' is a third side, but "
                               "diff compares two, A and B",
                               argno, arg);
    dsf_diag_set_hint(g, "compare them two at a time ('dsforge diff A B', "
                         "then 'dsforge diff A C'); after A and B come "
                         "edits: PATH=VALUE, +PATH=VALUE or ~PATH");
    return DSF_EUSAGE;
}

static int add_ignore(args *a, const char *text, dsf_diags *d)
{
    dsf_jpath p;
    char *err;
    if (dsf_jpath_parse(&p, text, &err) != 0) {
        int rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "--ignore %s: %s",
                                text, err);
        free(err);
        return rc;
    }
    dsf_buf b = DSF_BUF_INIT;
    dsf_jpath_format(&b, &p, p.len);
    dsf_jpath_free(&p);
    a->ignore = dsf_xrealloc(a->ignore, (a->nignore + 1) * sizeof *a->ignore);
    a->ignore[a->nignore++] = dsf_buf_take(&b);
    if (!a->ignore[a->nignore - 1])
        a->ignore[a->nignore - 1] = dsf_xstrdup("");
    return 0;
}

static void free_side_args(side_args *s)
{
    for (size_t i = 0; i < s->nparams; i++) {
        free(s->params[i].key);
        free(s->params[i].value);
    }
    free(s->params);
    free(s->edits);
}

static void free_args(args *a)
{
    for (size_t i = 0; i < a->nignore; i++)
        free(a->ignore[i]);
    free(a->ignore);
    free(a->files);
    free_side_args(&a->both);
    free_side_args(&a->per[0]);
    free_side_args(&a->per[1]);
    for (size_t i = 0; i < a->nowned; i++)
        dsf_edit_free(&a->owned_edits[i]);
    free(a->owned_edits);
}

/* Concatenates the shared and the per-side arrays (shallow copies). */
static void *concat(const void *x, size_t nx, const void *y, size_t ny,
                    size_t size)
{
    char *out = dsf_xcalloc(nx + ny + 1, size);
    if (nx)
        memcpy(out, x, nx * size);
    if (ny)
        memcpy(out + nx * size, y, ny * size);
    return out;
}

static int generate(dsf_side *s, const args *a, int which,
                    const dsf_cli_env *env, const char *target, dsf_diags *d)
{
    dsf_gen_request r;
    memset(&r, 0, sizeof r);
    const side_args *b = &a->both, *p = &a->per[which];
    r.params = concat(b->params, b->nparams, p->params, p->nparams,
                      sizeof *r.params);
    r.nparams = b->nparams + p->nparams;
    r.edits = concat(b->edits, b->nedits, p->edits, p->nedits,
                     sizeof *r.edits);
    r.nedits = b->nedits + p->nedits;
    r.files = a->files;
    r.nfiles = a->nfiles;
    r.target = target;
    r.profile_dirs = &env->profile_dirs;
    r.plugin_dirs = &env->plugin_dirs;
    r.limits = env->limits;
    r.repo = &env->repo;
    int rc = dsf_side_generate(s, &r, d);
    /* The side copied r; these arrays are only read while generating. */
    free(r.params);
    free(r.edits);
    s->req.params = NULL;
    s->req.edits = NULL;
    return rc;
}

/* Compares every variant of two output directories, paired by name. */
static int diff_dirs(dsf_side *s, const args *a, bool *differ, dsf_diags *d)
{
    cJSON *all = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(all, "variants");
    cJSON *only[2] = {cJSON_AddArrayToObject(all, "only_in_a"),
                      cJSON_AddArrayToObject(all, "only_in_b")};
    int rc = 0;
    size_t ndiff = 0, npaired = 0;
    for (size_t i = 0; i < s[0].nv && !rc; i++) {
        long j = dsf_side_find(&s[1], s[0].v[i].name);
        if (j < 0) {
            cJSON_AddItemToArray(only[0],
                                 cJSON_CreateString(s[0].v[i].name));
            continue;
        }
        npaired++;
        rc = dsf_side_load(&s[0], i, d);
        if (!rc)
            rc = dsf_side_load(&s[1], (size_t)j, d);
        if (rc)
            break;
        char *la = dsf_xasprintf("%s:%s", s[0].dir, s[0].v[i].name);
        char *lb = dsf_xasprintf("%s:%s", s[1].dir, s[1].v[j].name);
        cJSON *c = dsf_compare(&s[0].v[i], la, &s[1].v[j], lb,
                               (const char *const *)a->ignore, a->nignore);
        free(la);
        free(lb);
        dsf_side_unload(&s[0], i);
        dsf_side_unload(&s[1], (size_t)j);
        if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "equal"))) {
            ndiff++;
            if (!a->json)
                dsf_compare_print(stdout, c);
        }
        if (a->json)
            cJSON_AddItemToArray(list, c);
        else
            cJSON_Delete(c);
    }
    for (size_t j = 0; j < s[1].nv && !rc; j++)
        if (dsf_side_find(&s[0], s[1].v[j].name) < 0)
            cJSON_AddItemToArray(only[1],
                                 cJSON_CreateString(s[1].v[j].name));
    *differ = ndiff || only[0]->child || only[1]->child;
    if (!rc && !npaired) {
        /* Nothing was compared: that is no answer, neither "equal" nor
        ** "different". */
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "no variant of %s has a namesake in %s "
                                   "(%zu and %zu variants): nothing to "
                                   "compare", s[0].dir, s[1].dir, s[0].nv,
                                   s[1].nv);
        dsf_diag_set_hint(g, "output directories pair variants by name; "
                             "compare two variants with other names as "
                             "DIR:VARIANT");
        rc = DSF_EINPUT;
    }
    if (!rc) {
        cJSON_AddBoolToObject(all, "equal", !*differ);
        if (a->json) {
            char *t = dsf_json_print(all, true);
            fputs(t, stdout);
            free(t);
        } else {
            for (int k = 0; k < 2; k++)
                for (const cJSON *n = only[k]->child; n; n = n->next)
                    printf("only in %s: %s\n", s[k].dir, n->valuestring);
            printf("%zu of %zu paired variants differ\n", ndiff, npaired);
        }
    }
    cJSON_Delete(all);
    return rc;
}

/* --target is one the plugins own, also when no side is generated. */
static int check_target(const dsf_cli_env *env, const char *target,
                        dsf_diags *d)
{
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    int rc = dsf_plugin_env_load(&pe, env, d);
    if (!rc)
        rc = dsf_plugins_read_targets(pe.plugins, d);
    if (!rc)
        rc = dsf_plugins_check_target(pe.plugins, target, "--target",
                                      DSF_EUSAGE, d);
    dsf_plugin_env_free(&pe, d);
    return rc;
}

static int run_diff(const args *a, const dsf_cli_env *env, const char *target,
                    bool *differ, dsf_diags *d)
{
    dsf_side s[2];
    memset(s, 0, sizeof s);
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++)
        rc = dsf_side_open(&s[k], a->side[k], d);
    bool profile_args = a->both.nparams || a->both.nedits || a->nfiles ||
                        a->per[0].nparams || a->per[0].nedits ||
                        a->per[1].nparams || a->per[1].nedits;
    if (!rc && profile_args && s[0].kind != DSF_SIDE_PROFILE &&
        s[1].kind != DSF_SIDE_PROFILE)
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "params, -f files and edits apply to "
                            "PROFILE[:TIER] sides; neither side is one");
    if (!rc && (s[0].kind == DSF_SIDE_DIR) != (s[1].kind == DSF_SIDE_DIR))
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "a whole output directory compares only with "
                            "another one (name a variant as DIR:VARIANT)");
    for (int k = 0; k < 2 && !rc; k++)
        if (s[k].kind == DSF_SIDE_PROFILE)
            rc = generate(&s[k], a, k, env, target, d);
    if (!rc && target && s[0].kind != DSF_SIDE_PROFILE &&
        s[1].kind != DSF_SIDE_PROFILE)
        rc = check_target(env, target, d); /* (gen checks a profile's) */
    if (!rc && s[0].kind == DSF_SIDE_DIR) {
        rc = diff_dirs(s, a, differ, d);
    } else if (!rc) {
        cJSON *c = dsf_compare(&s[0].v[0], s[0].label, &s[1].v[0],
                               s[1].label, (const char *const *)a->ignore,
                               a->nignore);
        *differ = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c,
                                                                 "equal"));
        if (a->json) {
            char *t = dsf_json_print(c, true);
            fputs(t, stdout);
            free(t);
        } else {
            dsf_compare_print(stdout, c);
        }
        cJSON_Delete(c);
    }
    dsf_side_close(&s[0]);
    dsf_side_close(&s[1]);
    return rc;
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    args a;
    memset(&a, 0, sizeof a);
    const char *target = NULL; /* the profile's, or the default */
    dsf_plugin_opts po; /* --help: the texts the plugins give */
    dsf_plugin_env pe;
    dsf_plugin_opts_for_help(&po, &pe, &dsf_cmd_diff, argc, argv);
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &po.cmd, &env, &d);
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        int argno = cl.p.arg_index + 1; /* count "diff" as argument #1 */
        switch (id) {
        case DSF_OPT_POS:
            if (!a.side[0])
                a.side[0] = arg;
            else if (!a.side[1])
                a.side[1] = arg;
            else if (!strchr(arg, '=') && arg[0] != '~')
                rc = third_side(arg, argno, &d);
            else
                rc = add_edit(&a, &a.both, arg, argno, &d);
            break;
        case OPT_IGNORE:
            rc = add_ignore(&a, arg, &d);
            break;
        case OPT_FORMAT:
            if (strcmp(arg, "text") && strcmp(arg, "json"))
                rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                    "--format must be 'text' or 'json'");
            a.json = !strcmp(arg, "json");
            break;
        case OPT_PARAM:
        case OPT_A_PARAM:
        case OPT_B_PARAM:
            rc = add_param(id == OPT_PARAM     ? &a.both
                           : id == OPT_A_PARAM ? &a.per[0]
                                               : &a.per[1],
                           arg, argno, &d);
            break;
        case OPT_FILE:
            a.files = dsf_xrealloc(a.files, (a.nfiles + 1) * sizeof *a.files);
            a.files[a.nfiles++] = arg;
            break;
        case OPT_A_SET:
        case OPT_B_SET:
            rc = add_edit(&a, &a.per[id == OPT_A_SET ? 0 : 1], arg, argno,
                          &d);
            break;
        case OPT_TARGET:
            target = arg; /* checked by gen once the plugins load */
            break;
        default:
            break;
        }
    }
    if (!rc)
        rc = cl.rc;
    dsf_plugin_opts_help_free(&po, &pe);
    if (cl.help_shown) {
        free_args(&a);
        dsf_cli_env_free(&env);
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc && !a.side[1]) {
        dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0,
                                   "diff needs two sides, A and B");
        dsf_diag_set_hint(g, "e.g. 'dsforge diff 8xa100:small "
                             "8xa100:large'; see 'dsforge diff --help'");
        rc = DSF_EUSAGE;
    }
    if (!rc)
        rc = dsf_cli_env_finish(&env, &d);
    bool differ = false;
    if (!rc)
        rc = run_diff(&a, &env, target, &differ, &d);
    dsf_diags_sort(&d);
    int status = dsf_cli_finish(&env, &d, rc);
    if (status == 0 && differ)
        status = 1;
    free_args(&a);
    dsf_cli_env_free(&env);
    return status;
}
