/* cmd_lsp.c -- `dsforge lsp`: the language server (lsp/lsp.h) on
** standard input and output, with the plugins of the plugin path. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/plugin_env.h"
#include "cli/opts.h"
#include "core/error.h"
#include "cli/plugin_opts.h"
#include "plugin/targets.h"
#include "lsp/lsp.h"

enum { OPT_STDIO = 1 };

static const dsf_opt opts[] = {
    {"stdio", 0, NULL,
     "talk over standard input and output (the default and only way; "
     "accepted because editors' LSP clients pass it)", OPT_STDIO, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_lsp = {
    "lsp", "language server for @F configs (editors)",
    "lsp [--stdio]",
    "Runs a Language Server (LSP 3.17) over standard input and output for "
    "an editor: the findings of `dsforge check` (every rule of every "
    "plugin) as diagnostics while a @F JSON config is edited, the "
    "`explain` text of the key under the cursor on hover, the keys "
    "and values the schema allows as completions, the rules' fixes as "
    "quick fixes (code actions), the global batch and the memory per GPU "
    "as inlay hints, go to definition from a value of a `gen -o` output to "
    "the profile line or -f file that set it, and gen's diagnostics for a "
    "profile (.lua) when it is opened or saved. The plugins are loaded "
    "once, at start. The client's settings {\"dsforge\": {\"dsVersion\": "
    "\"X.Y.Z\", \"target\": TARGET, \"worldSize\": N, "
    "\"params\": {...}}} (as "
    "initializationOptions or workspace/didChangeConfiguration) choose the "
    "release, the target and the world size the rules check at; the "
    "client's locale (zh...) the language of the hover text. See "
    "contrib/docs/lsp.md.",
    opts, true,
    "Exit status: 0 after the client's shutdown and exit, 1 when the "
    "client exits without shutdown or goes away (its end of standard "
    "input closes), 2 a usage error, 3 or 5 the plugins cannot be loaded.",
    NULL, NULL, run, NULL};

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_plugin_opts help; /* --help: the texts the plugins give */
    dsf_plugin_env hpe;
    dsf_plugin_opts_for_help(&help, &hpe, &dsf_cmd_lsp, argc, argv);
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &help.cmd, &env, &d);
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END)
        if (id == DSF_OPT_POS)
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "lsp takes no arguments");
    if (!rc)
        rc = cl.rc;
    dsf_plugin_opts_help_free(&help, &hpe);
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    int status = -1;
    dsf_plugin_opts po; /* check's: their environment variables, as check */
    memset(&po, 0, sizeof po);
    dsf_plugin_opt_values pv;
    memset(&pv, 0, sizeof pv);
    if (!rc) {
        rc = dsf_cli_env_finish(&env, &d);
        if (!rc)
            rc = dsf_plugin_env_load(&pe, &env, &d);
        if (!rc)
            rc = dsf_plugins_load_rules(pe.plugins, &d);
        if (!rc) /* the targets the rules are judged at */
            rc = dsf_plugins_read_targets(pe.plugins, &d);
        if (!rc)
            rc = dsf_plugins_read_options(pe.plugins, &d);
        if (!rc) {
            dsf_plugin_opts_init(&po, &dsf_cmd_check, pe.plugins, false);
            rc = dsf_plugin_opts_values(&po, pe.plugins, &pv, &d);
        }
    }
    if (!rc) {
        /* the plugins' load notices, before the session */
        dsf_diags_print(&pe.warnings, stderr, env.color);
        dsf_diags_free(&pe.warnings);
        dsf_lsp_env le = {&env.profile_dirs, &env.plugin_dirs, env.limits,
                          &env.repo};
        status = dsf_lsp_serve(pe.plugins, pv.ctx, &le, STDIN_FILENO,
                               STDOUT_FILENO);
    }
    dsf_plugin_opt_values_free(&pv);
    dsf_plugin_opts_free(&po);
    dsf_plugin_env_free(&pe, &d);
    int ex = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status >= 0 ? status : ex;
}
