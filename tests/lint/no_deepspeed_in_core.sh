#!/bin/sh
# tests/lint/no_deepspeed_in_core.sh -- fails when a C file under src/ names
# a DeepSpeed config key, param, summary field, rule or plugin module, or
# one of the launch plugin's emitters, launchers or params: the
# core knows plugins only through the declared interface
# (contrib/docs/plugins.md). Run by ctest as lint_no_deepspeed_in_core.
#   tests/lint/no_deepspeed_in_core.sh SOURCE_DIR
set -eu
src=${1:-.}/src
# The quoted names the core once read and must not again.
pattern='"deepspeed\.|"world_size"|"fits"|"fit_message"|"gpu_bytes"|"cpu_bytes"'
pattern="$pattern"'|"zero_optimization"|"offload_optimizer"|"offload_param"'
pattern="$pattern"'|"train_batch_size"|"train_micro_batch_size_per_gpu"'
pattern="$pattern"'|"gradient_accumulation_steps"|"bf16"|"fp16"|"gpu_mem_gb"'
pattern="$pattern"'|"memory-fit"|"hf_training_args"'
# ... nor the launch plugin's emitters, launchers or params (issue 12).
pattern="$pattern"'|"hf-args"|"hf_args|"accelerate"|"torchrun"|"slurm'
pattern="$pattern"'|"sbatch"|"srun"|"master_addr"|"hostfile"'
hits=$(grep -rnE --include='*.c' --include='*.h' "$pattern" "$src" || true)
if [ -n "$hits" ]; then
    echo "the core names plugin knowledge (declare it in the plugin):" >&2
    echo "$hits" >&2
    exit 1
fi
echo "no DeepSpeed names in $src"
