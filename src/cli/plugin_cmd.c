/* plugin_cmd.c -- see plugin_cmd.h. */
#include "plugin_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "cli/plugin_opts.h"
#include "plugin/targets.h"

/* A plugin option may not take the name (or letter) of a common option
** or of another of its command's options: the parse would give it to one
** of them and silently drop the other. */
static int check_option_names(const dsf_plugin_command *p, dsf_diags *d)
{
    for (size_t k = 0; k < p->nopts; k++) {
        const dsf_plugin_option *o = &p->opts[k];
        const char *clash = NULL;
        for (const dsf_opt *c = dsf_common_opts; c->id && !clash; c++)
            if (!strcmp(c->name, o->name) ||
                (o->short_name && o->short_name == c->short_name))
                clash = "a common option of every command";
        if (o->short_name == 'h')
            clash = "the letter of --help";
        for (size_t j = 0; j < k && !clash; j++)
            if (!strcmp(p->opts[j].name, o->name) ||
                (o->short_name && o->short_name == p->opts[j].short_name))
                clash = "declared twice";
        if (clash) {
            char letter[8] = "";
            if (o->short_name)
                snprintf(letter, sizeof letter, " (-%c)", o->short_name);
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                       "plugin '%s': command '%s': option "
                                       "'--%s'%s is %s", p->plugin, p->name,
                                       o->name, letter, clash);
            dsf_diag_set_hint(g, "rename it; see 'Commands' in "
                                 "contrib/docs/plugins.md");
            return DSF_EINPUT;
        }
    }
    return 0;
}

void dsf_plugin_cmds_load(dsf_plugin_cmds *pc, int argc, char **argv,
                          bool offline)
{
    memset(pc, 0, sizeof *pc);
    dsf_cli_env_init(&pc->env);
    dsf_cli_prescan(&pc->env, argc, argv);
    if (offline) {
        pc->env.offline = pc->env.repo.offline = true;
        pc->env.repo.progress = false;
    }
    pc->rc = dsf_cli_env_finish(&pc->env, &pc->d);
    if (!pc->rc)
        pc->rc = dsf_plugin_env_load(&pc->pe, &pc->env, &pc->d);
    if (!pc->rc)
        pc->rc = dsf_plugins_read_commands(pc->pe.plugins, &pc->d);
    if (pc->rc)
        return;
    pc->pcmds = dsf_plugins_commands(pc->pe.plugins, &pc->n);
    for (size_t i = 0; i < pc->n && !pc->rc; i++)
        pc->rc = check_option_names(&pc->pcmds[i], &pc->d);
    if (pc->rc) {
        pc->n = 0;
        return;
    }
    pc->cmds = dsf_xcalloc(pc->n + 1, sizeof *pc->cmds);
    pc->opts = dsf_xcalloc(pc->n + 1, sizeof *pc->opts);
    for (size_t i = 0; i < pc->n; i++) {
        const dsf_plugin_command *p = &pc->pcmds[i];
        dsf_opt *t = dsf_xcalloc(p->nopts + 1, sizeof *t);
        for (size_t k = 0; k < p->nopts; k++) {
            t[k].name = p->opts[k].name;
            t[k].short_name = p->opts[k].short_name;
            t[k].arg = p->opts[k].arg;
            t[k].help = p->opts[k].help;
            t[k].complete = p->opts[k].complete;
            t[k].id = (int)k + 1;
        }
        pc->opts[i] = t;
        dsf_command *c = &pc->cmds[i];
        c->name = p->name;
        c->summary = p->summary;
        c->usage = p->usage;
        c->description = p->description;
        c->opts = t;
        c->common = true;
        c->notes = p->notes;
        c->positional = p->positional;
        c->plugin = p->plugin;
    }
}

const dsf_command *dsf_plugin_cmds_builtin(dsf_plugin_cmds *pc,
                                           const dsf_command *c)
{
    if (pc->rc || !pc->pe.plugins)
        return c;
    for (size_t i = 0; i < pc->nbuiltins; i++)
        if (!strcmp(pc->builtins[i].cmd.name, c->name))
            return &pc->builtins[i].cmd;
    if (pc->nbuiltins == sizeof pc->builtins / sizeof *pc->builtins)
        return c;
    dsf_plugin_opts *b = &pc->builtins[pc->nbuiltins++];
    /* the options the plugins add, and their texts: read now (running a
    ** plugin command needs neither) */
    dsf_diags ignored = DSF_DIAGS_INIT;
    bool opts = !dsf_plugins_read_options(pc->pe.plugins, &ignored);
    bool docs = !dsf_plugins_read_targets(pc->pe.plugins, &ignored);
    dsf_diags_free(&ignored);
    dsf_plugin_opts_init(b, c, opts ? pc->pe.plugins : NULL, docs);
    return &b->cmd;
}

const char *dsf_plugin_cmds_family(dsf_plugin_cmds *pc)
{
    if (pc->rc || !pc->pe.plugins)
        return NULL;
    dsf_diags ignored = DSF_DIAGS_INIT;
    int rc = dsf_plugins_read_targets(pc->pe.plugins, &ignored);
    dsf_diags_free(&ignored);
    return rc ? NULL : dsf_plugins_target_family(pc->pe.plugins, NULL);
}

void dsf_plugin_cmds_free(dsf_plugin_cmds *pc)
{
    for (size_t i = 0; i < pc->nbuiltins; i++)
        dsf_plugin_opts_free(&pc->builtins[i]);
    for (size_t i = 0; i < pc->n; i++)
        free(pc->opts[i]);
    free(pc->opts);
    free(pc->cmds);
    dsf_plugin_env_free(&pc->pe, &pc->d);
    dsf_diags_free(&pc->d);
    dsf_cli_env_free(&pc->env);
}

const dsf_command *dsf_plugin_cmds_find(const dsf_plugin_cmds *pc,
                                        const char *name)
{
    for (size_t i = 0; i < pc->n; i++)
        if (!strcmp(pc->cmds[i].name, name))
            return &pc->cmds[i];
    return NULL;
}

/* The values of the options of p that declare `ctx` (given in opts,
** else from their environment variable), checked by their plugin, into
** values. */
static int ctx_values(dsf_plugin_cmds *pc, const dsf_plugin_command *p,
                      const cJSON *opts, cJSON *values, dsf_diags *d)
{
    int rc = 0;
    for (size_t k = 0; k < p->nopts && !rc; k++) {
        const dsf_plugin_option *o = &p->opts[k];
        if (!o->arg || (!o->ctx && !o->check && !o->env))
            continue;
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(opts, o->name);
        const char *value;
        rc = dsf_plugins_option_value(pc->pe.plugins, o,
                                      cJSON_IsString(g) ? g->valuestring
                                                        : NULL,
                                      NULL, &value, d);
        if (!rc && value && o->ctx)
            cJSON_AddStringToObject(values, o->key, value);
    }
    return rc;
}

int dsf_plugin_cmds_run(dsf_plugin_cmds *pc, const dsf_command *c, int argc,
                        char **argv)
{
    const dsf_plugin_command *p = &pc->pcmds[c - pc->cmds];
    dsf_cli_env env; /* the parse's; pc->env already has the options */
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, c, &env, &d);
    cJSON *opts = cJSON_CreateObject(), *args = cJSON_CreateArray();
    int id;
    const char *arg;
    while ((id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == DSF_OPT_POS) {
            cJSON_AddItemToArray(args, cJSON_CreateString(arg));
        } else {
            const dsf_opt *o = &c->opts[id - 1];
            cJSON_DeleteItemFromObjectCaseSensitive(opts, o->name);
            cJSON_AddItemToObject(opts, o->name,
                                  o->arg ? cJSON_CreateString(arg)
                                         : cJSON_CreateTrue());
        }
    }
    int rc = cl.rc, status = 0;
    cJSON *values = cJSON_CreateObject();
    if (!rc && !cl.help_shown)
        rc = ctx_values(pc, p, opts, values, &d);
    if (!rc && !cl.help_shown) {
        char *out = NULL;
        rc = dsf_plugins_run_command(pc->pe.plugins, p, opts, args, argv + 1,
                                     argc - 1, values, &out, &status, &d);
        if (!rc)
            fputs(out, stdout);
        free(out);
    }
    cJSON_Delete(opts);
    cJSON_Delete(args);
    cJSON_Delete(values);
    dsf_diags_move(&d, &pc->pe.warnings);
    int st = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return st ? st : status;
}
