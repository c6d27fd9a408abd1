#!/usr/bin/env bash
# contrib/bench/gen.sh -- speed and memory of `dsforge gen` (see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/gen.sh
#
# 1. Checks that dsforge, the Python reference (seed 004's generator) and
#    the Jsonnet reference write the same three configs (JSON-equal).
# 2. hyperfine: `dsforge gen 8xa100` vs the two references, whole process.
# 3. hyperfine: a 1,000-variant matrix in one dsforge process.
# 4. /usr/bin/time -v: peak RSS of both dsforge runs.
#
# Targets (exit 1 and say which if missed): dsforge >= 5x faster than
# both references (median), matrix median < 1 s, peak RSS < 16 MiB.
# Builds nothing. Knobs: DSFORGE (default ./build/dsforge), RUNS (30),
# WARMUP (5), MATRIX_RUNS (10), MATRIX_WARMUP (2), PYTHON (the
# interpreter python3 runs), JSONNET (jsonnet), TMPDIR (where the outputs
# go: the file system matters, see README.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DSFORGE=${DSFORGE:-./build/dsforge}
# The interpreter itself, not a wrapper (a pyenv shim adds ~50 ms per run).
PYTHON=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)}
JSONNET=${JSONNET:-jsonnet}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-5}
MATRIX_RUNS=${MATRIX_RUNS:-10}
MATRIX_WARMUP=${MATRIX_WARMUP:-2}
SPEEDUP_TARGET=5
MATRIX_TARGET_S=1
RSS_TARGET_KIB=$((16 * 1024))

die() { printf 'gen.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON" "$JSONNET"; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (GNU time: apt-get install time)"

PY_REF=$here/reference/seed_generator.py
JN_REF=$here/reference/8xa100.jsonnet
TIERS=(small medium large)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-gen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Run from the temp dir: started in a source tree, dsforge would take
# ./profiles and ./plugins from the working directory instead of the
# built-in (precompiled) ones.
cd "$tmp"

# The three commands; each writes into its own (fresh) directory "$1".
run_dsforge() { "$DSFORGE" gen 8xa100 -o "$1" >/dev/null; }
run_python()  { "$PYTHON" "$PY_REF" "$1"; }
run_jsonnet() { mkdir -p "$1" && "$JSONNET" -m "$1" "$JN_REF" >/dev/null; }

# Matrix: 10 x 10 x 10 = 1,000 variants of one tier.
MATRIX_ARGS=(--tier medium
    --matrix micro_batch_size=1,2,3,4,5,6,7,8,9,10
    --matrix gradient_accumulation=1,2,4,8,16,32,64,128,256,512
    --matrix learning_rate=1e-5,2e-5,3e-5,5e-5,1e-4,2e-4,3e-4,5e-4,1e-3,2e-3)

echo "== dsforge: $DSFORGE"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), $PYTHON ($("$PYTHON" --version 2>&1)), $("$JSONNET" --version 2>&1 | head -n1)"
echo "== outputs under $tmp ($(stat -f -c %T "$tmp"))"
echo

# --- 1. equivalence -----------------------------------------------------
echo "== 1. equivalence of the three generators (JSON values)"
for impl in dsforge python jsonnet; do
    "run_$impl" "$tmp/verify-$impl" || die "$impl generator failed"
done
"$PYTHON" - "$tmp" "${TIERS[@]}" <<'EOF' || die "the three generators disagree (see above)"
import json, sys
tmp, tiers = sys.argv[1], sys.argv[2:]

def same(a, b, path="$"):
    # Strict JSON equality: true is not 1, 1 equals 1.0, key order ignored.
    if isinstance(a, bool) or isinstance(b, bool):
        ok = type(a) is type(b) and a == b
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        ok = a == b
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            print(f"  {path}: keys differ: only left {sorted(a.keys() - b.keys())},"
                  f" only right {sorted(b.keys() - a.keys())}")
            return False
        return all([same(a[k], b[k], f"{path}.{k}") for k in a])
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            print(f"  {path}: array lengths {len(a)} vs {len(b)}")
            return False
        return all([same(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b))])
    else:
        ok = type(a) is type(b) and a == b
    if not ok:
        print(f"  {path}: {json.dumps(a)} vs {json.dumps(b)}")
    return ok

bad = 0
for tier in tiers:
    name = f"8xa100-{tier}.json"
    docs = {}
    for impl in ("dsforge", "python", "jsonnet"):
        try:
            with open(f"{tmp}/verify-{impl}/{name}") as f:
                docs[impl] = json.load(f)
        except (OSError, ValueError) as e:
            print(f"  {impl}: {name}: {e}")
            bad += 1
    if len(docs) != 3:
        continue
    for ref in ("python", "jsonnet"):
        if same(docs["dsforge"], docs[ref]):
            print(f"  {name}: dsforge == {ref}")
        else:
            print(f"  {name}: dsforge != {ref}  <-- MISMATCH")
            bad += 1
sys.exit(1 if bad else 0)
EOF
echo

# --- 2. three tiers: dsforge vs the references ---------------------------
echo "== 2. three tiers, whole process (hyperfine -N, warmup $WARMUP, runs $RUNS)"
# Every run writes into fresh, empty directories (dsforge leaves a file
# that already holds the same bytes alone, which would make a re-run
# write nothing): all three pay for creating their files.
cat > "$tmp/fresh.sh" <<FRESH
rm -rf "$tmp/h-dsforge" "$tmp/h-python" "$tmp/h-jsonnet" "$tmp/matrix"
mkdir -p "$tmp/h-dsforge" "$tmp/h-python" "$tmp/h-jsonnet"
FRESH
fresh="bash $tmp/fresh.sh"   # hyperfine -N runs it without a shell
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/gen.json" \
    --prepare "$fresh" \
    -n dsforge "$DSFORGE gen 8xa100 -o $tmp/h-dsforge" \
    -n python  "$PYTHON $PY_REF $tmp/h-python" \
    -n jsonnet "$JSONNET -m $tmp/h-jsonnet $JN_REF"
echo

# --- 3. 1,000-variant matrix -------------------------------------------
echo "== 3. 1,000-variant matrix (hyperfine -N, warmup $MATRIX_WARMUP, runs $MATRIX_RUNS)"
"$DSFORGE" gen 8xa100 "${MATRIX_ARGS[@]}" -o "$tmp/matrix" >/dev/null 2>"$tmp/matrix.err" ||
    { cat "$tmp/matrix.err" >&2; die "the matrix run failed"; }
nvariants=$(find "$tmp/matrix" -name '8xa100-*.json' | wc -l)
[[ $nvariants -eq 1000 ]] || die "the matrix wrote $nvariants variants, not 1000"
echo "  (checked: $nvariants variant files + manifest.json)"
hyperfine -N --warmup "$MATRIX_WARMUP" --runs "$MATRIX_RUNS" --export-json "$tmp/matrix.json" \
    --prepare "$fresh" \
    -n "dsforge matrix x1000" "$DSFORGE gen 8xa100 ${MATRIX_ARGS[*]} -o $tmp/matrix"
echo

# --- 4. peak RSS ----------------------------------------------------------
# Maximum resident set size of the whole process (kbytes = KiB), one run
# each into a fresh directory.
peak_rss() {  # peak_rss OUTFILE CMD... -> prints KiB
    /usr/bin/time -v -o "$tmp/time.txt" "$@" >/dev/null 2>&1 ||
        { cat "$tmp/time.txt" >&2; die "command failed: $*"; }
    awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt"
}
echo "== 4. peak RSS (/usr/bin/time -v)"
rss_tiers=$(peak_rss "$DSFORGE" gen 8xa100 -o "$tmp/rss-tiers")
rss_matrix=$(peak_rss "$DSFORGE" gen 8xa100 "${MATRIX_ARGS[@]}" -o "$tmp/rss-matrix")
rss_python=$(peak_rss "$PYTHON" "$PY_REF" "$tmp/rss-python")
mkdir -p "$tmp/rss-jsonnet"
rss_jsonnet=$(peak_rss "$JSONNET" -m "$tmp/rss-jsonnet" "$JN_REF")
printf '  %-22s %8s KiB\n' "dsforge three tiers" "$rss_tiers" "dsforge matrix x1000" "$rss_matrix" \
    python "$rss_python" jsonnet "$rss_jsonnet"
echo

# --- summary --------------------------------------------------------------
"$PYTHON" - "$tmp/gen.json" "$tmp/matrix.json" "$SPEEDUP_TARGET" "$MATRIX_TARGET_S" \
    "$RSS_TARGET_KIB" "$rss_tiers" "$rss_matrix" "$rss_python" "$rss_jsonnet" <<'EOF'
import json, sys
gen, matrix = (json.load(open(p))["results"] for p in sys.argv[1:3])
speedup_t, matrix_t = float(sys.argv[3]), float(sys.argv[4])
rss_t, rss_tiers, rss_matrix, rss_py, rss_jn = map(int, sys.argv[5:10])
med = {r["command"]: r["median"] for r in gen}
sd = lambda r: r["stddev"] if r.get("stddev") is not None else 0.0
fails = []

print("== summary (medians, whole process)")
for r in gen:
    print(f"  {r['command']:<22} {r['median']*1e3:9.2f} ms  (mean {r['mean']*1e3:.2f} ± {sd(r)*1e3:.2f} ms)")
for ref in ("python", "jsonnet"):
    ratio = med[ref] / med["dsforge"]
    ok = ratio >= speedup_t
    print(f"  speed-up vs {ref:<8} {ratio:9.1f}x   target >= {speedup_t:g}x  {'OK' if ok else 'MISSED'}")
    if not ok:
        fails.append(f"dsforge gen is only {ratio:.1f}x faster than the {ref} reference (target {speedup_t:g}x)")
m = matrix[0]["median"]
ok = m < matrix_t
print(f"  matrix x1000           {m*1e3:9.2f} ms  (mean {matrix[0]['mean']*1e3:.2f} ± {sd(matrix[0])*1e3:.2f} ms)"
      f"   target < {matrix_t:g} s  {'OK' if ok else 'MISSED'}")
if not ok:
    fails.append(f"the 1,000-variant matrix takes {m:.3f} s (target < {matrix_t:g} s)")
for what, kib in (("three tiers", rss_tiers), ("matrix x1000", rss_matrix)):
    ok = kib < rss_t
    print(f"  peak RSS {what:<13} {kib/1024:9.2f} MiB   target < {rss_t/1024:g} MiB  {'OK' if ok else 'MISSED'}")
    if not ok:
        fails.append(f"peak RSS of dsforge gen ({what}) is {kib/1024:.2f} MiB (target < {rss_t/1024:g} MiB)")
print(f"  (for comparison: peak RSS python {rss_py/1024:.2f} MiB, jsonnet {rss_jn/1024:.2f} MiB)")
print()
if fails:
    print("TARGETS MISSED:")
    for f in fails:
        print("  - " + f)
    sys.exit(1)
print("all targets met")
EOF
