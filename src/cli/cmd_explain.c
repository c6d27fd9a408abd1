/* cmd_explain.c -- `dsforge explain FILE`: every key, what it means, its
** default, and whether the file changes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"
#include "json/jsonc.h"
#include "json/jsonout.h"


enum { OPT_LANG = 1 };
static const dsf_opt opts[] = {
    {"lang", 0, "en|zh", "language of the explanations (default en)",
     OPT_LANG, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_explain = {
    "explain", "explain every key of a config", "explain FILE [--lang en|zh]",
    "Walks through every key of a DeepSpeed config: its meaning, its "
    "default, and whether the file changes it (from the deepspeed plugin's "
    "schema).",
    opts, true, NULL, "file", NULL, run};

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void print_rows(const cJSON *rows, bool zh)
{
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(r, "path");
        dsf_buf p = DSF_BUF_INIT;
        for (const cJSON *k = path ? path->child : NULL; k; k = k->next) {
            if (cJSON_IsString(k)) {
                if (p.len)
                    dsf_buf_putc(&p, '.');
                dsf_buf_puts(&p, k->valuestring);
            } else {
                dsf_buf_printf(&p, "[%d]", (int)k->valuedouble - 1);
            }
        }
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(r, "value");
        char *v = val ? dsf_json_print(val, false) : NULL;
        const char *status = str(r, "status");
        const char *label =
            !strcmp(status, "changed")    ? (zh ? "已修改" : "changed")
            : !strcmp(status, "default")  ? (zh ? "同默认值" : "same as default")
            : !strcmp(status, "unknown")  ? (zh ? "DeepSpeed 不认识的键"
                                               : "not a DeepSpeed key")
                                          : (zh ? "无默认值" : "no default");
        /* value_text: the plugin's text for a value with no exact JSON
        ** form (an integral number beyond 2^53) */
        const char *vt = str(r, "value_text");
        printf("%s = %s  [%s", dsf_buf_str(&p), v ? v : *vt ? vt : "?",
               label);
        /* The default, unless there is none to name ("none"). */
        const char *dt = str(r, "default_text");
        if (*dt && strcmp(dt, "none") != 0)
            printf("; %s %s", zh ? "默认" : "default", dt);
        printf("]\n");
        const char *doc = str(r, "doc");
        if (*doc)
            printf("    %s\n", doc);
        free(v);
        dsf_buf_free(&p);
    }
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_explain, &env, &d);
    const char *file = NULL, *lang = "en";
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == DSF_OPT_POS && !file) {
            file = arg;
        } else if (id == DSF_OPT_POS) {
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "explain takes one FILE");
        } else if (id == OPT_LANG) {
            if (strcmp(arg, "en") && strcmp(arg, "zh"))
                rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                    "--lang must be 'en' or 'zh'");
            lang = arg;
        }
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc && !file)
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "explain needs a FILE");
    cJSON *doc = NULL;
    if (!rc)
        rc = dsf_json_load_file(&doc, NULL, file, &d);
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    if (!rc) {
        rc = dsf_cli_env_finish(&env, &d);
        if (!rc)
            rc = dsf_plugin_env_load(&pe, &env, &d);
    }
    if (!rc) {
        cJSON *args = cJSON_CreateArray(), *rows = NULL;
        cJSON_AddItemToArray(args, cJSON_Duplicate(doc, 1));
        cJSON_AddItemToArray(args, cJSON_CreateString(lang));
        rc = dsf_plugins_call(pe.plugins, "deepspeed.explain", "rows", args,
                              &rows, &d);
        if (!rc)
            print_rows(rows, !strcmp(lang, "zh"));
        cJSON_Delete(rows);
        cJSON_Delete(args);
    }
    cJSON_Delete(doc);
    dsf_plugin_env_free(&pe, &d);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
