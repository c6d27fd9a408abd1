/* cmd_list.c -- `dsforge list`: the profiles on the search path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonout.h"
#include "profile/profile.h"


enum { OPT_JSON = 1 };
static const dsf_opt opts[] = {
    {"json", 0, NULL, "machine-readable output", OPT_JSON, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_list = {
    "list", "list the profiles on the search path", "list [--json]",
    "Lists every profile on the search path: name, tiers, where it comes "
    "from and its summary. Search path, highest first: --profile-path "
    "DIRs, DSFORGE_PATH, ./profiles, $XDG_CONFIG_HOME/dsforge/profiles, "
    "built-in. A profile shadowed by a higher directory is marked.",
    opts, true, NULL, NULL, NULL, run, NULL};

/* Appends the profiles of every configured repository as REPO/PROFILE
** (their locked copies; online this revalidates each repository once). */
static int add_repo_profiles(dsf_profile_entry **e, size_t *n,
                             const dsf_repo_opts *o, dsf_diags *d)
{
    dsf_repo_info *repos;
    size_t nr;
    int rc = dsf_repo_list(&repos, &nr, o, d);
    for (size_t i = 0; !rc && i < nr; i++) {
        if (repos[i].shadowed)
            continue;
        char *dir;
        rc = dsf_repo_resolve_dir(&dir, repos[i].name, NULL, o, d);
        if (rc)
            break;
        dsf_dirs one = DSF_DIRS_INIT;
        char *pdir = dsf_path_join(dir, "profiles");
        char *origin = dsf_xasprintf("repo %s", repos[i].name);
        dsf_dirs_add(&one, pdir, origin);
        dsf_profile_entry *re;
        size_t rn;
        dsf_profile_list(&re, &rn, &one);
        *e = dsf_xrealloc(*e, (*n + rn + 1) * sizeof **e);
        for (size_t k = 0; k < rn; k++) {
            char *q = dsf_xasprintf("%s/%s", repos[i].name, re[k].name);
            free(re[k].name);
            re[k].name = q;
            (*e)[(*n)++] = re[k];
        }
        free(re);
        dsf_dirs_free(&one);
        free(origin);
        free(pdir);
        free(dir);
    }
    dsf_repo_infos_free(repos, nr);
    return rc;
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_list, &env, &d);
    bool json = false;
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == OPT_JSON) {
            json = true;
        } else {
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "list takes no arguments");
        }
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc)
        rc = dsf_cli_env_finish(&env, &d);
    if (!rc) {
        dsf_profile_entry *e;
        size_t n;
        dsf_profile_list(&e, &n, &env.profile_dirs);
        rc = add_repo_profiles(&e, &n, &env.repo, &d);
        dsf_srccache *sources = dsf_srccache_new();
        dsf_diags warnings = DSF_DIAGS_INIT;
        dsf_profile_ctx pc = {&env.profile_dirs, &env.plugin_dirs, sources,
                              env.limits, &warnings, &env.repo};
        cJSON *arr = cJSON_CreateArray();
        if (!json)
            printf("%-20s %-22s %-10s %s\n", "NAME", "TIERS", "FROM",
                   "SUMMARY");
        for (size_t i = 0; i < n; i++) {
            dsf_profile *prof = NULL;
            dsf_diags ld = DSF_DIAGS_INIT;
            dsf_buf tiers = DSF_BUF_INIT;
            const char *summary = "";
            if (!e[i].shadowed &&
                dsf_profile_load(&prof, &pc, e[i].name, &ld) == 0) {
                for (size_t t = 0; t < prof->ntiers; t++)
                    dsf_buf_printf(&tiers, "%s%s", t ? "," : "",
                                   prof->tiers[t].name);
                summary = prof->chain[prof->nchain - 1].summary;
            } else if (!e[i].shadowed) {
                summary = "(cannot be loaded: run 'dsforge show' on it)";
            } else {
                summary = "(shadowed by a higher directory)";
            }
            if (json) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "name", e[i].name);
                cJSON_AddStringToObject(o, "path", e[i].path);
                cJSON_AddStringToObject(o, "origin", e[i].origin);
                cJSON_AddBoolToObject(o, "shadowed", e[i].shadowed);
                cJSON_AddStringToObject(o, "summary", summary);
                cJSON *ta = cJSON_AddArrayToObject(o, "tiers");
                for (size_t t = 0; prof && t < prof->ntiers; t++)
                    cJSON_AddItemToArray(
                        ta, cJSON_CreateString(prof->tiers[t].name));
                cJSON_AddItemToArray(arr, o);
            } else {
                printf("%-20s %-22s %-10s ", e[i].name,
                       tiers.len ? tiers.data : "-", e[i].origin);
                dsf_fputs_clean(summary, stdout, true); /* script text */
                putchar('\n');
            }
            dsf_buf_free(&tiers);
            dsf_profile_free(prof);
            dsf_diags_free(&ld);
        }
        if (json) {
            char *s = dsf_json_print(arr, true);
            fputs(s, stdout);
            free(s);
        } else {
            dsf_cli_print_project();
        }
        cJSON_Delete(arr);
        dsf_profile_entries_free(e, n);
        dsf_srccache_free(sources);
        dsf_diags_move(&d, &warnings);
        dsf_diags_free(&warnings);
    }
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
