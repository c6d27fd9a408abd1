#!/usr/bin/env bash
# contrib/bench/diff.sh -- `dsforge diff DIR_A DIR_B` on two 1,000-variant
# `gen -o` output directories, variant by variant (see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/diff.sh
#
# 1. Makes two output directories of the same 1,000-variant matrix
#    (8xa100, 3 tiers x micro batch x ZeRO stage x offload x a swept
#    bucket size): B differs from A by one edit and one param, so every
#    pair of variants differs in a few paths.
# 2. hyperfine: `dsforge diff A B` (and `--format json`), whole process.
#
# Target (exit 1 if missed): median < 1 s for each.
# Builds nothing. Knobs: DSFORGE (default ./build/dsforge), RUNS (10),
# WARMUP (2), PYTHON.
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
TARGET_S=1

die() { printf 'diff.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON"; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" # not a source tree: the built-in profiles are used

echo "== dsforge: $DSFORGE"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), files in $tmp"
echo

# 3 tiers x 4 x 3 x 3 x 10 = 1,080 variants; the first 1,000 are not picked
# apart, the whole directory is compared.
matrix=(--matrix micro_batch_size=1,2,4,8 --matrix zero_stage=1,2,3
        --matrix offload=none,optimizer,all
        --matrix zero_optimization.reduce_bucket_size=1e7,2e7,3e7,4e7,5e7,6e7,7e7,8e7,9e7,1e8)
echo "== 1. two output directories"
"$DSFORGE" gen 8xa100 "${matrix[@]}" -o A >/dev/null 2>"$tmp/gen.err" ||
    { tail "$tmp/gen.err" >&2; die "gen A failed"; }
"$DSFORGE" gen 8xa100 "${matrix[@]}" --param gradient_accumulation=4 \
    steps_per_print=50 -o B >/dev/null 2>"$tmp/gen.err" ||
    { tail "$tmp/gen.err" >&2; die "gen B failed"; }
nv=$(ls A | grep -c '\.json$')
nv=$((nv - 1))
echo "  $nv variants in each; $(du -sk A | cut -f1) KiB per directory"
set +e
"$DSFORGE" diff A B >"$tmp/diff.out" 2>"$tmp/diff.err"
status=$?
set -e
[[ $status -eq 1 ]] || { tail "$tmp/diff.err" >&2; die "diff A B exited with $status, not 1"; }
echo "  $(tail -n 1 "$tmp/diff.out")"
echo

echo "== 2. diff A B (hyperfine -N, warmup $WARMUP, runs $RUNS)"
hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/diff.json" \
    -n "diff x$nv" "$DSFORGE diff $tmp/A $tmp/B" \
    -n "diff --format json x$nv" "$DSFORGE diff --format json $tmp/A $tmp/B"
echo

"$PYTHON" - "$tmp/diff.json" "$TARGET_S" "$nv" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
target, n = float(sys.argv[2]), int(sys.argv[3])
fails = []
print("== summary (whole process)")
for r in results:
    ok = r["median"] < target
    print(f"  {r['command']:<24} median {r['median']*1e3:8.1f} ms"
          f"  ({r['median']/n*1e6:.0f} µs/pair)   target < {target:g} s  {'OK' if ok else 'MISSED'}")
    if not ok:
        fails.append(f"{r['command']} takes {r['median']:.3f} s")
if fails:
    print("TARGETS MISSED:")
    for f in fails:
        print("  - " + f)
    sys.exit(1)
print("all targets met")
PY
