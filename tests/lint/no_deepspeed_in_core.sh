#!/bin/sh
# tests/lint/no_deepspeed_in_core.sh -- fails when a C file under src/ or
# CMakeLists.txt names a DeepSpeed config key, param, summary field, rule
# or plugin module, Hugging Face, accelerate, a launcher or a scheduler,
# also when the name is built at run time (string pieces joined, an
# option's name reused as a param's): the core knows plugins only through
# the declared interface (contrib/docs/plugins.md). Run by ctest as
# lint_no_deepspeed_in_core; tests/lint/test_core_names.sh shows it fails
# on planted examples. No name is allowed: the debt list of issue 35
# (core_names.py --debt) is empty and gone.
#   tests/lint/no_deepspeed_in_core.sh SOURCE_DIR
set -eu
root=${1:-.}
here=$(dirname "$0")
exec python3 "$here/core_names.py" "$root"
