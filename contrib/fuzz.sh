#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and fuzzes each for
# SECONDS (default 60), starting from the seed corpus tests/fuzz/corpus/
# <target> and keeping new inputs in build-fuzz/corpus/<target> (minimise
# and copy the useful ones into the seed corpus by hand).
#   contrib/fuzz.sh [SECONDS]
#   contrib/fuzz.sh --release     10 minutes each: what every release runs
#                                 (the threat model's fuzzing bound)
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  --release) seconds=600 ;;
  ''|*[!0-9]*) [ -z "${1:-}" ] || { echo "usage: contrib/fuzz.sh [SECONDS|--release]" >&2; exit 2; }
               seconds=60 ;;
  *) seconds=$1 ;;
esac
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DDSF_FUZZ=ON \
  -DDSF_WERROR=ON -DDSF_TESTS=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)"
for t in jsonc bridge edit sandbox index lock manifest lsp scan; do
  echo "== fuzz_$t for ${seconds}s"
  mkdir -p "build-fuzz/corpus/$t"
  build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t"
done
