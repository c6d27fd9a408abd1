/* plugin_opts.c -- see plugin_opts.h. */
#include "plugin_opts.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "plugin/targets.h"

/* The texts of b's command from the plugins' targets (docs). */
static void docs_from_targets(dsf_plugin_opts *b, const dsf_plugins *p,
                              size_t own)
{
    const char *family = dsf_plugins_target_family(p, NULL);
    b->summary = dsf_help_fill(b->cmd.summary, family);
    b->cmd.summary = b->summary;
    if (b->cmd.description) {
        b->description = dsf_help_fill(b->cmd.description, family);
        b->cmd.description = b->description;
    }
    const char **names = dsf_plugins_target_names(p);
    dsf_buf v = DSF_BUF_INIT;
    for (size_t i = 0; names[i]; i++)
        dsf_buf_printf(&v, "%s%s", i ? "|" : "", names[i]);
    free(names);
    b->target_arg = dsf_buf_take(&v);
    for (size_t i = 0; i < own; i++) {
        if (strcmp(b->table[i].name, "target"))
            continue;
        const char *help = dsf_plugins_target_help(p, b->cmd.name);
        if (*b->target_arg)
            b->table[i].arg = b->target_arg;
        if (help)
            b->table[i].help = help;
    }
}

void dsf_plugin_opts_init(dsf_plugin_opts *b, const dsf_command *c,
                          const dsf_plugins *p, bool docs)
{
    memset(b, 0, sizeof *b);
    b->cmd = *c;
    if (!p)
        return;
    b->popts = dsf_plugins_options_for(p, c->name, &b->n);
    size_t own = 0;
    while (c->opts && c->opts[own].id)
        own++;
    b->table = dsf_xcalloc(own + b->n + 1, sizeof *b->table);
    if (own)
        memcpy(b->table, c->opts, own * sizeof *b->table);
    for (size_t k = 0; k < b->n; k++) {
        const dsf_plugin_option *o = b->popts[k];
        dsf_opt *t = &b->table[own + k];
        t->name = o->name;
        t->short_name = o->short_name;
        t->arg = o->arg;
        t->help = dsf_plugin_option_help(o, c->name);
        t->complete = o->complete;
        t->id = DSF_PLUGIN_OPT_ID + (int)k;
    }
    b->table[own + b->n].id = 0;
    b->cmd.opts = b->table;
    b->given = dsf_xcalloc(b->n + 1, sizeof *b->given);
    if (docs)
        docs_from_targets(b, p, own);
}

void dsf_plugin_opts_free(dsf_plugin_opts *b)
{
    free(b->summary);
    free(b->description);
    free(b->target_arg);
    free(b->table);
    free(b->popts);
    free(b->given);
    memset(b, 0, sizeof *b);
}

bool dsf_plugin_opts_take(dsf_plugin_opts *b, int id, const char *arg)
{
    if (id < DSF_PLUGIN_OPT_ID || id >= DSF_PLUGIN_OPT_ID + (int)b->n)
        return false;
    b->given[id - DSF_PLUGIN_OPT_ID] = arg ? arg : "";
    return true;
}

/* A param's value: a number when the text is one. */
static cJSON *param_value(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*s && !*end && end != s && s[0] != ' ')
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(s);
}

int dsf_plugin_opts_values(const dsf_plugin_opts *b, dsf_plugins *p,
                           dsf_plugin_opt_values *v, dsf_diags *d)
{
    memset(v, 0, sizeof *v);
    v->ctx = cJSON_CreateObject();
    v->params = cJSON_CreateObject();
    v->defaults = cJSON_CreateObject();
    int rc = 0;
    for (size_t k = 0; k < b->n && !rc; k++) {
        const dsf_plugin_option *o = b->popts[k];
        if (!o->arg) { /* a flag */
            if (b->given[k] && o->strict)
                v->strict = o->strict;
            if (b->given[k] && (o->ctx || o->param))
                cJSON_AddTrueToObject(o->ctx ? v->ctx : v->params, o->key);
            continue;
        }
        const char *value;
        rc = dsf_plugins_option_value(p, o, b->given[k], NULL, &value, d);
        if (rc || !value)
            continue;
        if (o->ctx)
            cJSON_AddStringToObject(v->ctx, o->key, value);
        else if (o->param)
            cJSON_AddItemToObject(b->given[k] ? v->params : v->defaults,
                                  o->key, param_value(value));
    }
    return rc;
}

void dsf_plugin_opt_values_free(dsf_plugin_opt_values *v)
{
    cJSON_Delete(v->ctx);
    cJSON_Delete(v->params);
    cJSON_Delete(v->defaults);
    memset(v, 0, sizeof *v);
}

bool dsf_cli_prescan(dsf_cli_env *env, int argc, char **argv)
{
    dsf_diags ignored = DSF_DIAGS_INIT;
    bool help = false;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--"))
            break;
        help = help || !strcmp(w, "--help") || !strcmp(w, "-h");
        if (w[0] != '-' || w[1] != '-')
            continue;
        const char *eq = strchr(w, '=');
        size_t n = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
        for (const dsf_opt *o = dsf_common_opts; o->id; o++) {
            if (strlen(o->name) != n || strncmp(o->name, w + 2, n))
                continue;
            const char *arg = NULL;
            if (o->arg && eq)
                arg = eq + 1;
            else if (o->arg && i + 1 < argc)
                arg = argv[++i];
            else if (o->arg)
                break;
            dsf_cli_env_option(env, o->id, arg, &ignored);
            break;
        }
    }
    dsf_diags_free(&ignored);
    return help;
}

void dsf_plugin_opts_for_help(dsf_plugin_opts *b, dsf_plugin_env *pe,
                              const dsf_command *c, int argc, char **argv)
{
    memset(pe, 0, sizeof *pe);
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags ignored = DSF_DIAGS_INIT;
    bool loaded = false;
    if (dsf_cli_prescan(&env, argc, argv)) {
        env.offline = env.repo.offline = true;
        env.repo.progress = false;
        loaded = !dsf_cli_env_finish(&env, &ignored) &&
                 !dsf_plugin_env_load(pe, &env, &ignored) &&
                 !dsf_plugins_read_options(pe->plugins, &ignored) &&
                 !dsf_plugins_read_targets(pe->plugins, &ignored);
    }
    dsf_plugin_opts_init(b, c, loaded ? pe->plugins : NULL, true);
    dsf_diags_free(&ignored);
    dsf_cli_env_free(&env);
}

void dsf_plugin_opts_help_free(dsf_plugin_opts *b, dsf_plugin_env *pe)
{
    dsf_diags ignored = DSF_DIAGS_INIT;
    dsf_plugin_opts_free(b);
    if (pe->sources)
        dsf_plugin_env_free(pe, &ignored);
    dsf_diags_free(&ignored);
}
