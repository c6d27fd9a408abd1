#!/usr/bin/env bash
# Builds everything (the tool and every test) in every build type a user
# can choose, with GCC and with clang, warnings as errors: a warning that
# only an optimisation level or one compiler reports fails here, not on a
# user's machine. Builds only; contrib/test.sh runs the suite.
#   contrib/build-matrix.sh [COMPILER...]   (default: gcc clang)
set -euo pipefail
cd "$(dirname "$0")/.."
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(gcc clang)
types=(Debug Release RelWithDebInfo MinSizeRel)
root=$(mktemp -d "${TMPDIR:-/tmp}/dsforge-matrix.XXXXXX")
trap 'rm -rf "$root"' EXIT
failed=0
for cc in "${compilers[@]}"; do
  if ! command -v "$cc" >/dev/null; then
    echo "build-matrix: $cc is not installed" >&2
    exit 1
  fi
  for type in "${types[@]}"; do
    dir="$root/$cc-$type"
    if CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" \
         -DDSF_WERROR=ON -DDSF_TESTS=ON >"$dir.log" 2>&1 &&
       cmake --build "$dir" -j"$(nproc)" >>"$dir.log" 2>&1; then
      echo "build-matrix: $cc $type: ok"
    else
      echo "build-matrix: $cc $type: FAILED" >&2
      grep -E 'error|warning' "$dir.log" | head -20 >&2
      failed=1
    fi
  done
done
exit $failed
