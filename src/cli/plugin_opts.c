/* plugin_opts.c -- see plugin_opts.h. */
#include "plugin_opts.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

void dsf_plugin_opts_init(dsf_plugin_opts *b, const dsf_command *c,
                          const dsf_plugins *p)
{
    memset(b, 0, sizeof *b);
    b->cmd = *c;
    if (!p)
        return;
    b->popts = dsf_plugins_options_for(p, c->name, &b->n);
    if (!b->n)
        return;
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
    b->cmd.opts = b->table;
    b->given = dsf_xcalloc(b->n, sizeof *b->given);
}

void dsf_plugin_opts_free(dsf_plugin_opts *b)
{
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
