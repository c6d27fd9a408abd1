/* complete.c -- see complete.h. */
#include "complete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "profile/profile.h"

static void cand(const char *prefix, const char *s, const char *suffix)
{
    if (!strncmp(s, prefix, strlen(prefix)))
        printf("%s%s\n", s, suffix);
}

static const dsf_opt *find_opt(const dsf_command *c, const char *word)
{
    const dsf_opt *common = c->common ? dsf_common_opts : dsf_help_opts;
    for (int t = 0; t < 2; t++)
        for (const dsf_opt *o = t ? common : c->opts; o && o->id; o++) {
            if (word[0] == '-' && word[1] == '-' && !strcmp(word + 2, o->name))
                return o;
            if (word[0] == '-' && o->short_name && word[1] == o->short_name &&
                !word[2])
                return o;
        }
    return NULL;
}

/* The profiles, or the tiers / params of profile (when not NULL). */
static void complete_profiles(const char *cur, char **words, int n,
                              const char *kind, const char *profile)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    env.offline = env.repo.offline = true; /* never the network */
    env.repo.progress = false;
    dsf_diags d = DSF_DIAGS_INIT;
    for (int i = 0; i + 1 < n; i++) {
        int id = !strcmp(words[i], "--profile-path") ? DSF_OPT_PROFILE_PATH
                 : !strcmp(words[i], "--plugin-path") ? DSF_OPT_PLUGIN_PATH
                                                      : 0;
        if (id)
            dsf_cli_env_option(&env, id, words[++i], &d);
    }
    dsf_cli_env_finish(&env, &d);
    if (!strcmp(kind, "profile")) {
        dsf_profile_entry *e;
        size_t ne;
        dsf_profile_list(&e, &ne, &env.profile_dirs);
        for (size_t i = 0; i < ne; i++)
            if (!e[i].shadowed)
                cand(cur, e[i].name, "");
        dsf_profile_entries_free(e, ne);
    } else if (profile) {
        dsf_srccache *sources = dsf_srccache_new();
        dsf_diags warnings = DSF_DIAGS_INIT;
        dsf_profile_ctx pc = {&env.profile_dirs, &env.plugin_dirs, sources,
                              env.limits, &warnings, NULL};
        dsf_profile *prof;
        if (dsf_profile_load(&prof, &pc, profile, &d) == 0) {
            if (!strcmp(kind, "tier")) {
                /* after a comma: the rest of a NAME,NAME list */
                const char *comma = strrchr(cur, ',');
                size_t keep = comma ? (size_t)(comma - cur + 1) : 0;
                for (size_t i = 0; i < prof->ntiers; i++)
                    if (!strncmp(prof->tiers[i].name, cur + keep,
                                 strlen(cur + keep)))
                        printf("%.*s%s\n", (int)keep, cur,
                               prof->tiers[i].name);
            } else {
                for (size_t i = 0; i < prof->nparams; i++)
                    cand(cur, prof->params[i].name, "=");
            }
            dsf_profile_free(prof);
        }
        dsf_srccache_free(sources);
        dsf_diags_free(&warnings);
    }
    dsf_diags_free(&d);
    dsf_cli_env_free(&env);
}

int dsf_complete(int n, char **words, const dsf_command *const *cmds,
                 size_t ncmds)
{
    if (n < 1)
        return 0;
    const char *cur = words[n - 1];
    if (n == 1) {
        if (cur[0] == '-') {
            cand(cur, "--help", "");
            cand(cur, "--version", "");
        } else {
            for (size_t i = 0; i < ncmds; i++)
                cand(cur, cmds[i]->name, "");
        }
        return 0;
    }
    const dsf_command *c = NULL;
    for (size_t i = 0; i < ncmds; i++)
        if (!strcmp(cmds[i]->name, words[0]))
            c = cmds[i];
    if (!c)
        return 0;
    /* the positionals before cur, and whether cur is an option's value */
    const char *first_pos = NULL;
    int npos = 0;
    const dsf_opt *pending = NULL;
    for (int i = 1; i < n - 1; i++) {
        if (pending) {
            pending = NULL;
            continue;
        }
        if (!strcmp(words[i], "--"))
            return 0; /* what follows is not dsforge's (check -- COMMAND):
                      ** the shell completes file names */
        if (words[i][0] == '-' && words[i][1]) {
            const dsf_opt *o = find_opt(c, words[i]);
            if (o && o->arg && !strchr(words[i], '='))
                pending = o;
        } else if (!npos++) {
            first_pos = words[i];
        }
    }
    if (pending) {
        const char *arg = pending->arg;
        if (pending->complete) {
            if (!strcmp(pending->complete, "tier") ||
                !strcmp(pending->complete, "param") ||
                !strcmp(pending->complete, "profile"))
                complete_profiles(cur, words, n - 1, pending->complete,
                                  first_pos);
            /* file, dir: nothing, so the shell completes file names */
        } else if (strchr(arg, '|')) {
            /* "deepspeed|hf": the values */
            char buf[256];
            snprintf(buf, sizeof buf, "%s", arg);
            for (char *s = strtok(buf, "|"); s; s = strtok(NULL, "|"))
                cand(cur, s, "");
        }
        return 0;
    }
    if (cur[0] == '-') {
        const dsf_opt *common = c->common ? dsf_common_opts : dsf_help_opts;
        for (int t = 0; t < 2; t++)
            for (const dsf_opt *o = t ? common : c->opts; o && o->id; o++) {
                char name[96];
                snprintf(name, sizeof name, "--%s", o->name);
                cand(cur, name, "");
            }
        return 0;
    }
    if (c->subcommands && npos == 0) {
        for (const char *const *s = c->subcommands; *s; s++)
            cand(cur, *s, "");
    } else if (c->positional && !strcmp(c->positional, "command") &&
               npos == 0) {
        for (size_t i = 0; i < ncmds; i++)
            cand(cur, cmds[i]->name, "");
    } else if (c->positional && !strcmp(c->positional, "profile") &&
               npos == 0) {
        complete_profiles(cur, words, n - 1, "profile", NULL);
    }
    return 0;
}
