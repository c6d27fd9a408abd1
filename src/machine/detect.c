/* detect.c -- see detect.h. */
#include "detect.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "machine/run.h"

/* A helper's output is a few lines per GPU. */
#define MAX_TOOL_OUTPUT (1u << 20)

static char *trimmed(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return dsf_xstrndup(s, n);
}

/* A whole number in s (spaces around allowed), or -1. */
static long long whole(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    return errno || *end ? -1 : v;
}

/* "8.0", "9.0", "12.1": MAJOR.MINOR. */
static bool compute_capability_ok(const char *s)
{
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p++ != '.' || !isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    return *p == '\0';
}

/* GPU memory a tool may report: up to 1 PiB, so every later product
** (bytes, a budget in GiB) stays an exact integer below 2^53. */
#define GPU_MIB_MAX (1LL << 30)

/* Takes name (text from a tool: cleaned here, where it enters, so no
** terminal control sequence reaches any output) and cc. */
static void add_gpu(dsf_machine *m, char *name, long long mib, char *cc)
{
    dsf_buf clean = DSF_BUF_INIT;
    dsf_text_clean(&clean, name, true);
    free(name);
    m->gpus = dsf_xrealloc(m->gpus, (m->ngpus + 1) * sizeof *m->gpus);
    m->gpus[m->ngpus++] = (dsf_gpu){dsf_xstrdup(dsf_buf_str(&clean)), mib,
                                    cc};
    dsf_buf_free(&clean);
}

static int bad_line(const char *tool, int line, const char *text, size_t n,
                    const char *what, dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, tool, line, 0,
                               "unexpected output: %s", what);
    dsf_diag_set_excerpt(g, text, n);
    dsf_diag_set_hint(g, "run '%s' yourself to see what it reports", tool);
    return DSF_EINPUT;
}

int dsf_machine_parse_nvidia(dsf_machine *m, const char *out, dsf_diags *d)
{
    int line = 0;
    for (const char *s = out; *s;) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        const char *start = s;
        line++;
        char *text = trimmed(s, n);
        s += n + (eol != NULL);
        if (!*text) {
            free(text);
            continue;
        }
        /* NAME, MEMORY_MIB, COMPUTE_CAP: split from the right, a name may
        ** hold a comma. */
        char *c2 = strrchr(text, ',');
        char *c1 = NULL;
        if (c2) {
            *c2 = '\0';
            c1 = strrchr(text, ',');
            *c2 = ',';
        }
        if (!c1) {
            free(text);
            return bad_line("nvidia-smi", line, start, n,
                            "expected 'name, memory MiB, compute "
                            "capability'", d);
        }
        *c1 = *c2 = '\0';
        char *name = trimmed(text, strlen(text));
        long long mib = whole(c1 + 1);
        char *cc = trimmed(c2 + 1, strlen(c2 + 1));
        free(text);
        const char *problem =
            !*name      ? "an empty GPU name"
            : mib <= 0  ? "the memory is not a whole number of MiB"
            : mib > GPU_MIB_MAX ? "the memory is more than 1 PiB"
            : !compute_capability_ok(cc)
                ? "the compute capability is not MAJOR.MINOR"
                : NULL;
        if (problem) {
            free(name);
            free(cc);
            return bad_line("nvidia-smi", line, start, n, problem, d);
        }
        add_gpu(m, name, mib, cc);
    }
    return 0;
}

/* The index of the column of header whose name matches one of names
** (case-insensitive), or -1. */
static int column(char **cols, int ncols, const char *const *names)
{
    for (const char *const *w = names; *w; w++)
        for (int i = 0; i < ncols; i++)
            if (!strcasecmp(cols[i], *w))
                return i;
    return -1;
}

/* Splits one CSV line (no quoting: rocm-smi writes none) into at most
** max trimmed fields; returns the count. */
static int split_csv(char **cols, int max, const char *s, size_t n)
{
    int k = 0;
    while (k < max) {
        const char *comma = memchr(s, ',', n);
        size_t len = comma ? (size_t)(comma - s) : n;
        cols[k++] = trimmed(s, len);
        if (!comma)
            break;
        n -= len + 1;
        s = comma + 1;
    }
    return k;
}

static void free_cols(char **cols, int n)
{
    for (int i = 0; i < n; i++)
        free(cols[i]);
}

int dsf_machine_parse_rocm(dsf_machine *m, const char *out, dsf_diags *d)
{
    static const char *const name_cols[] = {"Card series", "Card model",
                                            "Card SKU", NULL};
    static const char *const mem_cols[] = {"VRAM Total Memory (B)", NULL};
    enum { MAXC = 32 };
    char *head[MAXC];
    int nhead = 0, name_i = -1, mem_i = -1, line = 0;
    for (const char *s = out; *s;) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        const char *start = s;
        s += n + (eol != NULL);
        line++;
        if (!nhead) {
            /* Banners and warnings come before the header. */
            if (n < 7 || strncasecmp(start, "device,", 7) != 0)
                continue;
            nhead = split_csv(head, MAXC, start, n);
            name_i = column(head, nhead, name_cols);
            mem_i = column(head, nhead, mem_cols);
            if (name_i < 0 || mem_i < 0) {
                free_cols(head, nhead);
                return bad_line("rocm-smi", line, start, n,
                                "no product name or VRAM total column", d);
            }
            continue;
        }
        if (n == 0 || strncasecmp(start, "card", 4) != 0)
            continue;
        char *cols[MAXC];
        int nc = split_csv(cols, MAXC, start, n);
        long long bytes = nc == nhead ? whole(cols[mem_i]) : -1;
        if (bytes <= 0 || bytes / (1024 * 1024) > GPU_MIB_MAX) {
            free_cols(cols, nc);
            free_cols(head, nhead);
            return bad_line("rocm-smi", line, start, n,
                            "the VRAM total is not a whole number of bytes "
                            "up to 1 PiB",
                            d);
        }
        add_gpu(m, dsf_xstrdup(cols[name_i]), bytes / (1024 * 1024), NULL);
        free_cols(cols, nc);
    }
    free_cols(head, nhead);
    return 0;
}

/* nvidia-smi, then rocm-smi; the first that is installed decides. */
static int detect_gpus(dsf_machine *m, int timeout_ms, dsf_diags *d)
{
    const char *const nv[] = {"nvidia-smi",
                  "--query-gpu=name,memory.total,compute_cap",
                  "--format=csv,noheader,nounits", NULL};
    dsf_run_result r;
    int rc = dsf_run_capture(&r, nv, timeout_ms, MAX_TOOL_OUTPUT, d);
    if (rc)
        return rc;
    if (r.found) {
        m->gpu_source = "nvidia-smi";
        m->vendor = "nvidia";
        if (r.exit_status == 0)
            rc = dsf_machine_parse_nvidia(m, r.out, d);
        else if (!strstr(r.out, "No devices were found")) {
            size_t n = strcspn(r.out, "\n");
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                       "nvidia-smi failed (exit status %d)"
                                       "%s%.*s",
                                       r.exit_status, n ? ": " : "", (int)n,
                                       r.out);
            dsf_diag_set_hint(g, "dsforge asks for name, memory.total and "
                                 "compute_cap (a driver from 2021 or "
                                 "newer)");
            rc = DSF_EINPUT;
        }
        dsf_run_result_free(&r);
        return rc;
    }
    const char *const amd[] = {"rocm-smi", "--showproductname", "--showmeminfo", "vram",
                   "--csv", NULL};
    rc = dsf_run_capture(&r, amd, timeout_ms, MAX_TOOL_OUTPUT, d);
    if (rc || !r.found)
        return rc;
    m->gpu_source = "rocm-smi";
    m->vendor = "amd";
    if (r.exit_status == 0)
        rc = dsf_machine_parse_rocm(m, r.out, d);
    else
        rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                            "rocm-smi failed (exit status %d)",
                            r.exit_status);
    dsf_run_result_free(&r);
    return rc;
}

static long long host_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib > 0 ? kib * 1024 : 0;
}

size_t dsf_machine_smallest_gpu(const dsf_machine *m)
{
    size_t best = 0;
    for (size_t i = 1; i < m->ngpus; i++)
        if (m->gpus[i].memory_mib < m->gpus[best].memory_mib)
            best = i;
    return best;
}

/* Mixed GPUs: a plan for the smallest one holds on all of them. */
static void warn_mixed(const dsf_machine *m, dsf_diags *warnings)
{
    for (size_t i = 1; i < m->ngpus; i++) {
        const dsf_gpu *a = &m->gpus[0], *b = &m->gpus[i];
        if (a->memory_mib == b->memory_mib && !strcmp(a->name, b->name))
            continue;
        const dsf_gpu *s = &m->gpus[dsf_machine_smallest_gpu(m)];
        dsf_diag *g = dsf_diag_add(warnings, DSF_WARNING, NULL, 0, 0,
                                   "the GPUs differ (GPU 0: %s, %lld MiB; "
                                   "GPU %zu: %s, %lld MiB)", a->name,
                                   a->memory_mib, i, b->name, b->memory_mib);
        dsf_diag_set_hint(g, "plans use the smallest, %s with %lld MiB",
                          s->name, s->memory_mib);
        return;
    }
}

int dsf_machine_detect(dsf_machine *m, int timeout_ms, dsf_diags *warnings,
                       dsf_diags *d)
{
    memset(m, 0, sizeof *m);
    int rc = detect_gpus(m, timeout_ms, d);
    if (rc) {
        dsf_machine_free(m);
        return rc;
    }
    warn_mixed(m, warnings);
    m->host_memory_bytes = host_memory();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cpu_cores = cores > 0 ? cores : 1;
    return 0;
}

cJSON *dsf_machine_to_json(const dsf_machine *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
    for (size_t i = 0; i < m->ngpus; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "index", (double)i);
        cJSON_AddStringToObject(g, "name", m->gpus[i].name);
        cJSON_AddNumberToObject(g, "memory_mib",
                                (double)m->gpus[i].memory_mib);
        if (m->gpus[i].compute_capability)
            cJSON_AddStringToObject(g, "compute_capability",
                                    m->gpus[i].compute_capability);
        else
            cJSON_AddNullToObject(g, "compute_capability");
        cJSON_AddItemToArray(gpus, g);
    }
    cJSON_AddNumberToObject(o, "gpu_count", (double)m->ngpus);
    if (m->ngpus)
        cJSON_AddNumberToObject(
            o, "gpu_memory_mib_min",
            (double)m->gpus[dsf_machine_smallest_gpu(m)].memory_mib);
    else
        cJSON_AddNullToObject(o, "gpu_memory_mib_min");
    if (m->vendor)
        cJSON_AddStringToObject(o, "vendor", m->vendor);
    else
        cJSON_AddNullToObject(o, "vendor");
    if (m->gpu_source)
        cJSON_AddStringToObject(o, "source", m->gpu_source);
    else
        cJSON_AddNullToObject(o, "source");
    cJSON_AddNumberToObject(o, "host_memory_bytes",
                            (double)m->host_memory_bytes);
    cJSON_AddNumberToObject(o, "cpu_cores", (double)m->cpu_cores);
    return o;
}

void dsf_machine_free(dsf_machine *m)
{
    for (size_t i = 0; i < m->ngpus; i++) {
        free(m->gpus[i].name);
        free(m->gpus[i].compute_capability);
    }
    free(m->gpus);
    memset(m, 0, sizeof *m);
}
