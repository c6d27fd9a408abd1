/* cmd_plugins.c -- `dsforge plugins`: plugins and their rules. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"

static const char help[] =
    "Usage: dsforge plugins\n"
    "\n"
    "Lists the plugins on the plugin path (first directory wins for a\n"
    "name) and every rule they declare: id, severity, summary.\n"
    "\n" DSF_COMMON_HELP;

static const dsf_opt opts[] = {DSF_COMMON_OPTS, {NULL, 0, false, 0}};

int dsf_cmd_plugins(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_optparse p;
    dsf_optparse_init(&p, argc, argv, 1, "plugins");
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_opt_next(&p, opts, &arg, &d)) != DSF_OPT_END) {
        if (id < 0 && id != DSF_OPT_POS) {
            rc = id;
            break;
        }
        int c = dsf_cli_env_option(&env, id, arg, &d);
        if (c < 0)
            rc = c;
        if (c)
            continue;
        if (id == DSF_OPT_HELP) {
            fputs(help, stdout);
            return 0;
        }
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "plugins takes no arguments");
    }
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    if (!rc) {
        dsf_cli_env_finish(&env);
        rc = dsf_plugin_env_load(&pe, &env, &d);
    }
    if (!rc) {
        size_t n, nr;
        const dsf_plugin_info *pi = dsf_plugins_list(pe.plugins, &n);
        const dsf_rule *rules = dsf_plugins_rules(pe.plugins, &nr);
        for (size_t i = 0; i < n; i++) {
            printf("%s %s (%s: %s)\n  %s\n", pi[i].name, pi[i].version,
                   pi[i].origin, pi[i].dir, pi[i].summary);
            for (size_t k = 0; k < nr; k++)
                if (!strcmp(rules[k].plugin, pi[i].name))
                    printf("    %-30s %-7s %s\n", rules[k].id,
                           dsf_severity_name(rules[k].severity),
                           rules[k].summary);
        }
    }
    dsf_plugin_env_free(&pe, &d);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
