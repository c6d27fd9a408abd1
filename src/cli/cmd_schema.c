/* cmd_schema.c -- `dsforge schema`: a JSON Schema of DeepSpeed's config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"
#include "json/jsonout.h"


static int run(int argc, char **argv);

const dsf_command dsf_cmd_schema = {
    "schema", "print a JSON Schema of DeepSpeed's config", "schema",
    "Prints a JSON Schema (draft 2020-12) of DeepSpeed's config, generated "
    "from the deepspeed plugin's schema, for editors and CI validators.",
    NULL, true, NULL, NULL, NULL, run};

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_schema, &env, &d);
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "schema takes no arguments");
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
    }
    if (!rc) {
        cJSON *args = cJSON_CreateArray(), *schema = NULL;
        rc = dsf_plugins_call(pe.plugins, "deepspeed.jsonschema", "generate",
                              args, &schema, &d);
        if (!rc) {
            char *s = dsf_json_print(schema, true);
            fputs(s, stdout);
            free(s);
        }
        cJSON_Delete(schema);
        cJSON_Delete(args);
    }
    dsf_plugin_env_free(&pe, &d);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
