#!/usr/bin/env bash
# Configures, builds and runs the full test suite (the README's test
# command), in the README's Release build with warnings as errors. With
# --sanitize: the same suite in an AddressSanitizer +
# UndefinedBehaviorSanitizer build (build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
opts=(-DCMAKE_BUILD_TYPE=Release -DDSF_WERROR=ON -DDSF_TESTS=ON)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  opts=(-DCMAKE_BUILD_TYPE=Debug -DDSF_SANITIZE=ON -DDSF_WERROR=ON
        -DDSF_TESTS=ON)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" "${opts[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
