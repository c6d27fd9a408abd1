/* cmd_detect.c -- `dsforge detect`: the GPUs, host memory and CPU cores of
** this machine (machine/detect.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "core/error.h"
#include "json/jsonout.h"
#include "machine/detect.h"


enum { OPT_JSON = 1, OPT_TIMEOUT };


static const dsf_opt opts[] = {
    {"json", 0, NULL, "machine-readable output", OPT_JSON, NULL},
    {"timeout", 0, "MS", "time allowed to nvidia-smi/rocm-smi (default "
     "10000)", OPT_TIMEOUT, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_detect = {
    "detect", "show this machine's GPUs, memory and cores",
    "detect [--json] [--timeout MS]",
    "Prints this machine's GPUs (name, memory, compute capability), their "
    "count, host memory and CPU cores. GPUs come from nvidia-smi, or from "
    "rocm-smi when nvidia-smi is not installed; without either, or when "
    "they find no device, the machine has no GPU (exit 0). Output that "
    "cannot be read, or a tool that does not answer in time, is exit 3.",
    opts, false, NULL, NULL, NULL, run, NULL};

static void print_text(const dsf_machine *m)
{
    if (!m->ngpus)
        printf("GPUs: none found (%s)\n",
               m->gpu_source ? m->gpu_source
                             : "neither nvidia-smi nor rocm-smi is installed");
    else
        printf("GPUs: %zu (%s)\n", m->ngpus, m->gpu_source);
    for (size_t i = 0; i < m->ngpus; i++) {
        const dsf_gpu *g = &m->gpus[i];
        printf("  %-3zu %-32s %8lld MiB  %s\n", i, g->name, g->memory_mib,
               g->compute_capability ? g->compute_capability : "-");
    }
    if (m->host_memory_bytes)
        printf("host memory: %.1f GiB\n",
               (double)m->host_memory_bytes / (1024.0 * 1024 * 1024));
    else
        printf("host memory: unknown (/proc/meminfo unreadable)\n");
    printf("CPU cores: %ld\n", m->cpu_cores);
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_detect, &env, &d);
    bool json = false;
    long long timeout_ms = 10000;
    int rc = 0, id;
    const char *arg;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == OPT_JSON)
            json = true;
        else if (id == OPT_TIMEOUT)
            rc = dsf_opt_int(&timeout_ms, arg, 1, 600000, "--timeout", &d);
        else
            rc = dsf_diag_error(&d, DSF_EUSAGE, NULL, 0, 0,
                                "detect takes no arguments");
    }
    if (!rc)
        rc = cl.rc;
    if (cl.help_shown) {
        dsf_diags_free(&d);
        return 0;
    }
    dsf_machine m;
    if (!rc)
        rc = dsf_machine_detect(&m, (int)timeout_ms, &d, &d);
    if (!rc) {
        if (json) {
            cJSON *o = dsf_machine_to_json(&m);
            char *s = dsf_json_print(o, true);
            fputs(s, stdout);
            free(s);
            cJSON_Delete(o);
        } else {
            print_text(&m);
        }
        dsf_machine_free(&m);
    }
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
