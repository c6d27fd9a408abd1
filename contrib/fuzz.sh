#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and fuzzes each for
# SECONDS (default 60), starting from the seed corpus tests/fuzz/corpus/
# <target> and keeping new inputs in build-fuzz/corpus/<target> (minimise
# and copy the useful ones into the seed corpus by hand).
#   contrib/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DDSF_FUZZ=ON \
  -DDSF_WERROR=ON -DDSF_TESTS=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)"
for t in jsonc bridge edit sandbox index lock manifest; do
  echo "== fuzz_$t for ${seconds}s"
  mkdir -p "build-fuzz/corpus/$t"
  build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t"
done
