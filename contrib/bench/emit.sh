#!/usr/bin/env bash
# contrib/bench/emit.sh -- what emitters cost (issue 12; see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/emit.sh
#
# One hyperfine run, two commands, each writing into a fresh directory:
# the 1,000-variant matrix of gen.sh, `gen 8xa100 ... -o DIR`, without and
# with `--emit hf-args,accelerate,launch --train-cmd ...` (4 more files
# per variant: 5,000 files instead of 1,000). Prints the ratio of the
# mean wall-clock times, and of the mean CPU times (user + system, less
# sensitive to a busy machine), and the same two ratios for dry runs
# (no -o: the emitters' own work, without the file system).
#
# Target (exit 1 and say so if missed): written, with/without <= 1.20
# (wall-clock means). Builds nothing. Knobs: DSFORGE (default
# ./build/dsforge), RUNS (10), WARMUP (2), PYTHON (python3), TMPDIR (where
# the outputs go: the file system matters).
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
TARGET=1.20

die() { printf 'emit.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON"; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-emit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Outside a source tree: the built-in profiles and plugins.
cd "$tmp"

# gen.sh's matrix: 10 x 10 x 10 = 1,000 variants of one tier.
MATRIX="--tier medium --matrix micro_batch_size=1,2,3,4,5,6,7,8,9,10"
MATRIX="$MATRIX --matrix gradient_accumulation=1,2,4,8,16,32,64,128,256,512"
MATRIX="$MATRIX --matrix learning_rate=1e-5,2e-5,3e-5,5e-5,1e-4,2e-4,3e-4,5e-4,1e-3,2e-3"
EMIT="--emit hf-args,accelerate,launch --train-cmd train.py"

echo "== dsforge: $DSFORGE"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== outputs under $tmp ($(stat -f -c %T "$tmp"))"

# Both must work, and write what they say.
# shellcheck disable=SC2086 # MATRIX and EMIT are word lists
"$DSFORGE" gen 8xa100 $MATRIX -o "$tmp/check-plain" >/dev/null ||
    die "the plain run failed"
# shellcheck disable=SC2086
"$DSFORGE" gen 8xa100 $MATRIX $EMIT -o "$tmp/check-emit" >/dev/null ||
    die "the run with emitters failed"
plain=$(find "$tmp/check-plain" -type f | wc -l)
emitted=$(find "$tmp/check-emit" -type f | wc -l)
[[ $plain -eq 1001 && $emitted -eq 5001 ]] ||
    die "expected 1,001 and 5,001 files, got $plain and $emitted"
rm -rf "$tmp/check-plain" "$tmp/check-emit"
echo "  (checked: 1,000 variants; 1,001 files without emitters, 5,001 with)"
echo

cat > "$tmp/fresh.sh" <<FRESH
rm -rf "$tmp/plain" "$tmp/emit"
FRESH

echo "== 1,000 variants written (hyperfine -N, warmup $WARMUP, runs $RUNS)"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/written.json" \
    --prepare "bash $tmp/fresh.sh" \
    -n "without emitters" "$DSFORGE gen 8xa100 $MATRIX -o $tmp/plain" \
    -n "with hf-args,accelerate,launch" "$DSFORGE gen 8xa100 $MATRIX $EMIT -o $tmp/emit"
echo
echo "== 1,000 variants, dry run (hyperfine -N, warmup $WARMUP, runs $RUNS)"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/dry.json" \
    -n "without emitters" "$DSFORGE gen 8xa100 $MATRIX" \
    -n "with hf-args,accelerate,launch" "$DSFORGE gen 8xa100 $MATRIX $EMIT"
echo

"$PYTHON" - "$tmp/written.json" "$tmp/dry.json" "$TARGET" "$((emitted - plain))" <<'EOF'
import json, sys

def ratios(path):
    r = json.load(open(path))["results"]
    wall = r[1]["mean"] / r[0]["mean"]
    cpu = (r[1]["user"] + r[1]["system"]) / (r[0]["user"] + r[0]["system"])
    return r, wall, cpu

target = float(sys.argv[3])
for name, path in (("written", sys.argv[1]), ("dry run", sys.argv[2])):
    r, wall, cpu = ratios(path)
    print("%-8s without %.3f s, with %.3f s: ratio %.2fx wall-clock, %.2fx CPU"
          " (user+sys %.3f s vs %.3f s)" % (
              name, r[0]["mean"], r[1]["mean"], wall, cpu,
              r[0]["user"] + r[0]["system"], r[1]["user"] + r[1]["system"]))
# Where the difference goes, per variant (CPU: user + system): the
# emitters' own work (the dry runs' difference) and the writing of their
# files (the rest of the written runs' difference), per extra file.
def cpu(path):
    r = json.load(open(path))["results"]
    return [x["user"] + x["system"] for x in r]
w0, w1 = cpu(sys.argv[1])
d0, d1 = cpu(sys.argv[2])
variants, extra_files = 1000, int(sys.argv[4])
print("per variant: %.3f ms written without emitters; emitters add %.3f ms:"
      " %.3f ms of their own work (dry), %.3f ms writing (%.1f us per extra"
      " file)" % (w0 / variants * 1e3, (w1 - w0) / variants * 1e3,
                  (d1 - d0) / variants * 1e3,
                  ((w1 - w0) - (d1 - d0)) / variants * 1e3,
                  ((w1 - w0) - (d1 - d0)) / extra_files * 1e6))
_, wall, _ = ratios(sys.argv[1])
if wall > target:
    print("MISSED: emitters cost %.2fx (target <= %.2fx)" % (wall, target))
    sys.exit(1)
print("ok: emitters cost %.2fx (target <= %.2fx)" % (wall, target))
EOF
