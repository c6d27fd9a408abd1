/*
** detect.h -- the machine dsforge runs on: its GPUs (nvidia-smi, or
** rocm-smi for AMD), host memory (/proc/meminfo) and CPU cores.
**
** Facts only: which params they fill and what they imply (bf16 from
** compute capability 8.0, say) is plugin knowledge, not the core's.
*/
#ifndef DSF_DETECT_H
#define DSF_DETECT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"

typedef struct dsf_gpu {
    char *name;
    long long memory_mib;
    char *compute_capability;  /* "8.0" (NVIDIA), or NULL when unknown */
} dsf_gpu;

typedef struct dsf_machine {
    const char *gpu_source;    /* "nvidia-smi", "rocm-smi" or NULL */
    const char *vendor;        /* "nvidia", "amd" or NULL */
    dsf_gpu *gpus;
    size_t ngpus;
    long long host_memory_bytes;  /* 0 when /proc/meminfo is unreadable */
    long cpu_cores;
} dsf_machine;

/* Detects the machine. A missing nvidia-smi/rocm-smi, or one that says it
** found no device, is a machine without GPUs (0, not an error); output
** that cannot be parsed is DSF_EINPUT naming the tool and the line; a tool
** that does not finish within timeout_ms is DSF_EINPUT. Differences
** between the GPUs are warnings in warnings. *m is freed with
** dsf_machine_free. */
int dsf_machine_detect(dsf_machine *m, int timeout_ms, dsf_diags *warnings,
                       dsf_diags *d);

/* Parses nvidia-smi --query-gpu=name,memory.total,compute_cap
** --format=csv,noheader,nounits output into m's GPUs (exposed for tests). */
int dsf_machine_parse_nvidia(dsf_machine *m, const char *out, dsf_diags *d);

/* Parses rocm-smi --showproductname --showmeminfo vram --csv output. */
int dsf_machine_parse_rocm(dsf_machine *m, const char *out, dsf_diags *d);

/* The index of the GPU with the least memory (0 when there is none). */
size_t dsf_machine_smallest_gpu(const dsf_machine *m);

/* The machine as JSON (caller deletes): gpus, gpu_count, vendor, source,
** gpu_memory_mib_min, host_memory_bytes, cpu_cores. */
cJSON *dsf_machine_to_json(const dsf_machine *m);

void dsf_machine_free(dsf_machine *m);

#endif
