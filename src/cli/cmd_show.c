/* cmd_show.c -- `dsforge show PROFILE`: chain, params, tiers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "core/error.h"
#include "json/jsonout.h"
#include "profile/profile.h"


static int run(int argc, char **argv);

const dsf_command dsf_cmd_show = {
    "show", "show a profile: parents, params, tiers", "show PROFILE",
    "Shows a profile: its parent chain (with where each file comes from), "
    "every param with its type, default and doc, and each tier with what "
    "it changes.",
    NULL, true, NULL, "profile", NULL, run, NULL};

static void print_profile(const dsf_profile *p)
{
    const dsf_profile_src *leaf = &p->chain[p->nchain - 1];
    /* Summaries and docs are script text: through dsf_fputs_clean. */
    printf("%s: ", leaf->name);
    dsf_fputs_clean(leaf->summary, stdout, true);
    printf("\n\nchain (parent first):\n");
    for (size_t i = 0; i < p->nchain; i++) {
        const dsf_profile_src *s = &p->chain[i];
        if (strncmp(s->origin, "repo ", 5))
            printf("  %zu. %-20s %s (%s, sha256 %.12s)\n", i + 1, s->name,
                   s->path, s->origin, s->sha256);
        else /* the display name says the origin */
            printf("  %zu. %-20s %s (sha256 %.12s)\n", i + 1, s->name,
                   dsf_profile_src_where(s), s->sha256);
    }
    printf("\nparams:\n");
    for (size_t i = 0; i < p->nparams; i++) {
        const dsf_param *par = &p->params[i];
        char *def = dsf_json_print(par->def, false);
        printf("  %-24s %-8s default %-10s ", par->name,
               dsf_param_type_name(par->type), def);
        dsf_fputs_clean(*par->doc ? par->doc : "(no doc)", stdout, true);
        putchar('\n');
        if (par->values) {
            char *vals = dsf_json_print(par->values, false);
            printf("  %-24s one of %s\n", "", vals);
            free(vals);
        }
        char range[96];
        if (dsf_param_range_text(par, range, sizeof range))
            printf("  %-24s %s\n", "", range);
        if (par->json_file)
            printf("  %-24s or a JSON file (a value ending in .json)\n", "");
        free(def);
    }
    printf("\ntiers:\n");
    for (size_t i = 0; i < p->ntiers; i++) {
        const dsf_tier *t = &p->tiers[i];
        char *params = dsf_json_print(t->params, false);
        printf("  %-10s ", t->name);
        dsf_fputs_clean(t->summary, stdout, true);
        putchar('\n');
        printf("  %-10s params %s\n", "", params);
        if (t->config) {
            char *cfg = dsf_json_print(t->config, false);
            printf("  %-10s config overlay %s\n", "", cfg);
            free(cfg);
        }
        free(params);
    }
    if (!p->ntiers)
        printf("  (none: gen produces one variant, \"default\")\n");
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_show, &env, &d);
    const char *name = NULL;
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (name)
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "show takes one PROFILE");
        name = arg;
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc && !name)
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "show needs a PROFILE");
    if (!rc)
        rc = dsf_cli_env_finish(&env, &d);
    if (!rc) {
        dsf_srccache *sources = dsf_srccache_new();
        dsf_diags warnings = DSF_DIAGS_INIT;
        dsf_profile_ctx pc = {&env.profile_dirs, &env.plugin_dirs, sources,
                              env.limits, &warnings, &env.repo};
        dsf_profile *prof;
        rc = dsf_profile_load(&prof, &pc, name, &d);
        if (!rc) {
            print_profile(prof);
            dsf_profile_free(prof);
        }
        dsf_srccache_free(sources);
        dsf_diags_move(&d, &warnings);
        dsf_diags_free(&warnings);
    }
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
