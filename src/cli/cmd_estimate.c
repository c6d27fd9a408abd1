/* cmd_estimate.c -- `dsforge estimate`: model-state (and activation)
** memory per GPU and per CPU node, as DeepSpeed's estimators compute it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "cli/plugin_env.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "json/jsonc.h"
#include "json/jsonout.h"


enum {
    OPT_MODEL = 1,
    OPT_PARAMS,
    OPT_LARGEST,
    OPT_GPUS,
    OPT_NODES,
    OPT_STAGE,
    OPT_OFF_OPT,
    OPT_OFF_PARAM,
    OPT_ZERO_INIT,
    OPT_SEQ,
    OPT_MICRO,
    OPT_FLASH,
    OPT_JSON
};


static const dsf_opt opts[] = {
    {"model", 0, "NAME|FILE", "a catalog model (e.g. llama-2-7b) or a "
     "Hugging Face config.json", OPT_MODEL, "file"},
    {"params", 0, "N", "total parameters (instead of --model): 7000000000, "
     "7e9, 7B, 1.3B, 350M", OPT_PARAMS, NULL},
    {"largest-layer", 0, "N", "parameters of the largest layer (same "
     "spellings)", OPT_LARGEST, NULL},
    {"gpus", 0, "N", "GPUs per node (default 1)", OPT_GPUS, NULL},
    {"nodes", 0, "N", "nodes (default 1)", OPT_NODES, NULL},
    {"stage", 0, "0|1|2|3", "only this ZeRO stage's row", OPT_STAGE, NULL},
    {"offload-optimizer", 0, "none|cpu", "with --stage: optimizer offload",
     OPT_OFF_OPT, NULL},
    {"offload-param", 0, "none|cpu", "with --stage 3: parameter offload",
     OPT_OFF_PARAM, NULL},
    {"zero-init", 0, "0|1", "with --stage 3: zero.Init (default 1)",
     OPT_ZERO_INIT, NULL},
    {"seq-len", 0, "N", "add the activation memory for this sequence "
     "length", OPT_SEQ, NULL},
    {"micro-batch", 0, "N", "micro batch per GPU for the activations "
     "(default 1)", OPT_MICRO, NULL},
    {"flash-attention", 0, "0|1", "0 counts the s x s attention scores of "
     "eager attention (default 1)", OPT_FLASH, NULL},
    {"json", 0, NULL, "bytes as JSON, with the inputs echoed", OPT_JSON,
     NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_estimate = {
    "estimate", "estimate memory per GPU and CPU",
    "estimate (--model NAME|FILE | --params N [--largest-layer N]) [options]",
    "Without --stage: a table of every ZeRO stage and offload choice, like "
    "DeepSpeed's estimate_zero3_model_states_mem_needs_all_cold (bytes / "
    "2^30, printed as GB). With --stage: that one row. --seq-len adds the "
    "activation memory per GPU (Korthikanti et al. 2022), with and without "
    "activation checkpointing; --flash-attention 0 counts the s x s "
    "attention scores of eager attention (default 1: FlashAttention/SDPA).",
    opts, true, NULL, NULL, NULL, run};

static int add_int(cJSON *o, const char *key, const char *arg, long long min,
                   long long max, const char *opt, dsf_diags *d)
{
    long long v;
    bool count = !strcmp(key, "params") || !strcmp(key, "largest_layer");
    if ((count ? dsf_opt_count : dsf_opt_int)(&v, arg, min, max, opt, d))
        return DSF_EUSAGE;
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON *n = cJSON_CreateNumber((double)v);
    n->valuestring = NULL;
    cJSON_AddItemToObject(o, key, n);
    return 0;
}

static const char *row_label(const cJSON *r)
{
    static char buf[96];
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(r, "zero_init");
    snprintf(buf, sizeof buf, "ZeRO-%d offload_optimizer=%s offload_param=%s%s",
             (int)cJSON_GetObjectItemCaseSensitive(r, "stage")->valuedouble,
             cJSON_GetObjectItemCaseSensitive(r, "offload_optimizer")
                 ->valuestring,
             cJSON_GetObjectItemCaseSensitive(r, "offload_param")->valuestring,
             cJSON_IsBool(z) ? (cJSON_IsTrue(z) ? " zero_init=1"
                                                : " zero_init=0")
                             : "");
    return buf;
}

static void print_table(const cJSON *res)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(res, "inputs");
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(res,
                                                        "activation_bytes");
    const cJSON *actc = cJSON_GetObjectItemCaseSensitive(
        res, "activation_bytes_checkpointed");
    printf("Estimated memory needed for params, optim states and gradients "
           "for a:\nHW: Setup with %d node%s, %d GPU%s per node.\n"
           "SW: Model with %lldM total params, %lldM largest layer params.\n",
           (int)cJSON_GetObjectItemCaseSensitive(in, "nodes")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(in, "nodes")->valuedouble > 1
               ? "s" : "",
           (int)cJSON_GetObjectItemCaseSensitive(in, "gpus_per_node")
               ->valuedouble,
           cJSON_GetObjectItemCaseSensitive(in, "gpus_per_node")->valuedouble
                   > 1 ? "s" : "",
           /* truncated like DeepSpeed's int(total_params/1e6) */
           (long long)(cJSON_GetObjectItemCaseSensitive(in, "params")
                           ->valuedouble / 1e6),
           (long long)(cJSON_GetObjectItemCaseSensitive(in, "largest_layer")
                           ->valuedouble / 1e6));
    printf("  per CPU  |  per GPU |   Options\n");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(res, "rows");
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next)
        printf("  %8s | %8s | %s\n",
               cJSON_GetObjectItemCaseSensitive(r, "cpu_text")->valuestring,
               cJSON_GetObjectItemCaseSensitive(r, "gpu_text")->valuestring,
               row_label(r));
    if (cJSON_IsNumber(act))
        printf("Activations per GPU: %.2fGB (with activation checkpointing: "
               "%.2fGB); add them to the per-GPU column.\n",
               act->valuedouble / 1073741824.0,
               actc->valuedouble / 1073741824.0);
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_estimate, &env, &d);
    cJSON *o = cJSON_CreateObject();
    bool json = false;
    const char *hf_path = NULL; /* the config.json given to --model */
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        switch (id) {
        case OPT_MODEL:
            /* the last --model wins */
            cJSON_DeleteItemFromObjectCaseSensitive(o, "hf_config");
            cJSON_DeleteItemFromObjectCaseSensitive(o, "model");
            hf_path = NULL;
            /* a file when it looks like one or exists; otherwise a
            ** catalog name or Hub id (meta-llama/Llama-2-7b-hf) */
            if ((strlen(arg) >= 5 && !strcmp(arg + strlen(arg) - 5, ".json"))
                || dsf_is_file(arg)) {
                cJSON *hc;
                rc = dsf_json_load_file(&hc, NULL, arg, &d);
                if (!rc) {
                    cJSON_AddItemToObject(o, "hf_config", hc);
                    hf_path = arg;
                }
            } else {
                cJSON_AddStringToObject(o, "model", arg);
            }
            break;
        case OPT_PARAMS:
            rc = add_int(o, "params", arg, 1, (long long)1e15, "--params", &d);
            break;
        case OPT_LARGEST:
            rc = add_int(o, "largest_layer", arg, 0, (long long)1e15,
                         "--largest-layer", &d);
            break;
        case OPT_GPUS:
            rc = add_int(o, "gpus", arg, 1, 1000000, "--gpus", &d);
            break;
        case OPT_NODES:
            rc = add_int(o, "nodes", arg, 1, 1000000, "--nodes", &d);
            break;
        case OPT_STAGE:
            rc = add_int(o, "stage", arg, 0, 3, "--stage", &d);
            break;
        case OPT_SEQ:
            rc = add_int(o, "seq_len", arg, 1, 100000000, "--seq-len", &d);
            break;
        case OPT_MICRO:
            rc = add_int(o, "micro_batch", arg, 1, 1000000, "--micro-batch",
                         &d);
            break;
        case OPT_ZERO_INIT:
        case OPT_FLASH: {
            const char *name = id == OPT_FLASH ? "flash_attention"
                                               : "zero_init";
            if (strcmp(arg, "0") && strcmp(arg, "1"))
                rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                    "--%s must be 0 or 1",
                                    id == OPT_FLASH ? "flash-attention"
                                                    : "zero-init");
            cJSON_DeleteItemFromObjectCaseSensitive(o, name);
            cJSON_AddBoolToObject(o, name, !strcmp(arg, "1"));
            break;
        }
        case OPT_OFF_OPT:
        case OPT_OFF_PARAM:
            if (strcmp(arg, "none") && strcmp(arg, "cpu"))
                rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                    "%s must be 'none' or 'cpu'",
                                    id == OPT_OFF_OPT ? "--offload-optimizer"
                                                      : "--offload-param");
            cJSON_AddStringToObject(o, id == OPT_OFF_OPT ? "offload_optimizer"
                                                         : "offload_param",
                                    arg);
            break;
        case OPT_JSON:
            json = true;
            break;
        default:
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "unexpected argument '%s'", arg);
        }
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        cJSON_Delete(o);
        dsf_diags_free(&d);
        return 0;
    }
    if (!rc && !cJSON_GetObjectItem(o, "model") &&
        !cJSON_GetObjectItem(o, "hf_config") &&
        !cJSON_GetObjectItem(o, "params")) {
        dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0,
                                   "estimate needs --model or --params");
        dsf_diag_set_hint(g, "try 'dsforge estimate --model llama-2-7b "
                             "--gpus 8'");
        rc = DSF_EUSAGE;
    }
    if (!rc && cJSON_GetObjectItem(o, "micro_batch") &&
        !cJSON_GetObjectItem(o, "seq_len"))
        rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                            "--micro-batch goes with --seq-len");
    dsf_plugin_env pe;
    memset(&pe, 0, sizeof pe);
    if (!rc) {
        rc = dsf_cli_env_finish(&env, &d);
        if (!rc)
            rc = dsf_plugin_env_load(&pe, &env, &d);
    }
    if (!rc) {
        cJSON *args = cJSON_CreateArray(), *res = NULL;
        cJSON_AddItemToArray(args, cJSON_Duplicate(o, 1));
        rc = dsf_plugins_call(pe.plugins, "deepspeed.estimate", "run", args,
                              &res, &d);
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(res, "error");
        if (!rc && cJSON_IsString(err)) {
            const cJSON *code = cJSON_GetObjectItemCaseSensitive(res, "code");
            const cJSON *hint = cJSON_GetObjectItemCaseSensitive(res, "hint");
            bool input = cJSON_IsNumber(code) && code->valuedouble == 3;
            /* an input error is about the config.json: name the file */
            dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, input ? hf_path : NULL,
                                       0, 0, "%s", err->valuestring);
            if (cJSON_IsString(hint))
                dsf_diag_set_hint(g, "%s", hint->valuestring);
            rc = input ? DSF_EINPUT : DSF_EUSAGE;
        } else if (!rc && json) {
            char *s = dsf_json_print(res, true);
            fputs(s, stdout);
            free(s);
        } else if (!rc) {
            print_table(res);
        }
        cJSON_Delete(res);
        cJSON_Delete(args);
    }
    cJSON_Delete(o);
    dsf_plugin_env_free(&pe, &d);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
