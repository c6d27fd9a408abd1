/* cmd_plugins.c -- `dsforge plugins`: plugins, their rules and
** emitters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"
#include "json/jsonout.h"
#include "plugin/commands.h"
#include "plugin/emit.h"
#include "plugin/summary.h"


enum { OPT_JSON = 1 };
static const dsf_opt opts[] = {
    {"json", 0, NULL, "machine-readable output (with each rule's generic "
     "fix)", OPT_JSON, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_plugins = {
    "plugins", "list plugins and their rules", "plugins [--json]",
    "Lists the plugins on the plugin path (first directory wins for a "
    "name) and every rule they declare: id, severity, summary. Plugin "
    "path, highest first: --plugin-path DIRs, DSFORGE_PLUGIN_PATH, "
    "./plugins, $XDG_CONFIG_HOME/dsforge/plugins, built-in.",
    opts, true, NULL, NULL, NULL, run, NULL};

static void print_json(const dsf_plugins *plugins)
{
    size_t n, nr;
    const dsf_plugin_info *pi = dsf_plugins_list(plugins, &n);
    const dsf_rule *rules = dsf_plugins_rules(plugins, &nr);
    size_t ne;
    const dsf_emitter *em = dsf_plugins_emitters(plugins, &ne);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", pi[i].name);
        cJSON_AddStringToObject(o, "version", pi[i].version);
        cJSON_AddStringToObject(o, "summary", pi[i].summary);
        cJSON_AddStringToObject(o, "origin", pi[i].origin);
        cJSON_AddStringToObject(o, "dir", pi[i].dir);
        cJSON_AddBoolToObject(o, "used", true);
        cJSON *ra = cJSON_AddArrayToObject(o, "rules");
        for (size_t k = 0; k < nr; k++) {
            if (strcmp(rules[k].plugin, pi[i].name))
                continue;
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "id", rules[k].id);
            cJSON_AddStringToObject(r, "severity",
                                    dsf_severity_name(rules[k].severity));
            cJSON_AddStringToObject(r, "summary", rules[k].summary);
            if (rules[k].fix)
                cJSON_AddStringToObject(r, "fix", rules[k].fix);
            cJSON_AddItemToArray(ra, r);
        }
        cJSON *ea = cJSON_AddArrayToObject(o, "emitters");
        for (size_t k = 0; k < ne; k++) {
            if (strcmp(em[k].plugin, pi[i].name))
                continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", em[k].name);
            cJSON_AddStringToObject(e, "summary", em[k].summary);
            cJSON *fa = cJSON_AddArrayToObject(e, "files");
            for (size_t f = 0; f < em[k].nfiles; f++)
                cJSON_AddItemToArray(fa, cJSON_CreateString(em[k].files[f]));
            cJSON_AddItemToArray(ea, e);
        }
        cJSON_AddItemToArray(arr, o);
    }
    size_t ns;
    const dsf_plugin_shadowed *sh = dsf_plugins_shadowed(plugins, &ns);
    for (size_t i = 0; i < ns; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", sh[i].name);
        cJSON_AddStringToObject(o, "origin", sh[i].origin);
        cJSON_AddStringToObject(o, "dir", sh[i].dir);
        cJSON_AddBoolToObject(o, "used", false);
        cJSON_AddStringToObject(o, "reason", sh[i].reason);
        cJSON_AddItemToArray(arr, o);
    }
    char *s = dsf_json_print(arr, true);
    fputs(s, stdout);
    free(s);
    cJSON_Delete(arr);
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_plugins, &env, &d);
    int rc = 0, id;
    bool json = false;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == OPT_JSON) {
            json = true;
            continue;
        }
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "plugins takes no arguments");
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    if (!rc) {
        rc = dsf_cli_env_finish(&env, &d);
        if (!rc)
            rc = dsf_plugin_env_load(&pe, &env, &d);
        if (!rc)
            rc = dsf_plugins_load_rules(pe.plugins, &d);
        if (!rc) /* every declaration checked, as the commands that use
                 ** them read them */
            rc = dsf_plugins_read_commands(pe.plugins, &d);
        if (!rc)
            rc = dsf_plugins_read_summaries(pe.plugins, &d);
    }
    if (!rc && json) {
        print_json(pe.plugins);
    } else if (!rc) {
        size_t n, nr;
        const dsf_plugin_info *pi = dsf_plugins_list(pe.plugins, &n);
        const dsf_rule *rules = dsf_plugins_rules(pe.plugins, &nr);
        for (size_t i = 0; i < n; i++) {
            /* Script text goes through dsf_fputs_clean. */
            dsf_fputs_clean(pi[i].name, stdout, true);
            putchar(' ');
            dsf_fputs_clean(pi[i].version, stdout, true);
            printf(" (%s: ", pi[i].origin);
            dsf_fputs_clean(pi[i].dir, stdout, true);
            fputs(")\n  ", stdout);
            dsf_fputs_clean(pi[i].summary, stdout, true);
            putchar('\n');
            for (size_t k = 0; k < nr; k++)
                if (!strcmp(rules[k].plugin, pi[i].name)) {
                    dsf_buf rid = DSF_BUF_INIT;
                    dsf_text_clean(&rid, rules[k].id, true);
                    printf("    %-30s %-7s ", dsf_buf_str(&rid),
                           dsf_severity_name(rules[k].severity));
                    dsf_fputs_clean(rules[k].summary, stdout, true);
                    putchar('\n');
                    dsf_buf_free(&rid);
                }
            size_t ne;
            const dsf_emitter *em = dsf_plugins_emitters(pe.plugins, &ne);
            for (size_t k = 0; k < ne; k++)
                if (!strcmp(em[k].plugin, pi[i].name)) {
                    /* Names and patterns are checked at load: plain. */
                    printf("    emitter %-21s ", em[k].name);
                    dsf_fputs_clean(em[k].summary, stdout, true);
                    putchar('\n');
                }
        }
        size_t ns;
        const dsf_plugin_shadowed *sh = dsf_plugins_shadowed(pe.plugins,
                                                             &ns);
        for (size_t i = 0; i < ns; i++)
            printf("%s (%s: %s): not used\n  %s\n", sh[i].name,
                   sh[i].origin, sh[i].dir, sh[i].reason);
        dsf_cli_print_project();
    }
    dsf_plugin_env_free(&pe, &d);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
