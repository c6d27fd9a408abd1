#!/usr/bin/env bash
# contrib/bench/cluster.sh -- what the cluster emitters cost on a large
# sweep (issue 31; see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/cluster.sh
#
# One hyperfine run, two commands, each writing into a fresh directory:
# a 10,000-variant matrix, `gen 8xa100 ... -o DIR`, without and with
# `--emit $EMIT` (default: every emitter of the cluster plugin this binary
# has: slurm-array, k8s, skypilot). Prints the ratio of the mean
# wall-clock times and of the mean CPU times (user + system), and the
# peak RSS of each (GNU time).
#
# Target (exit 1 and say so if missed): with/without <= 1.10 (wall-clock
# means): the job files are per run, their cost is not per variant.
#
# It also measures the floor any emitter that writes a file per variant
# (skypilot: one task YAML per variant, as issue 31 asks) cannot go below:
# a plugin made here whose emitter returns one constant 900-byte text per
# variant, so the run pays for creating and writing the files and nothing
# else (FLOOR=0 skips it).
# Builds nothing. Knobs: DSFORGE (default ./build/dsforge), EMIT, RUNS
# (5), WARMUP (1), PYTHON (python3), TMPDIR (where the outputs go).
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
TARGET=1.10

die() { printf 'cluster.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON" /usr/bin/time; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done
if [[ -z ${EMIT:-} ]]; then
    EMIT=$("$DSFORGE" plugins | "$PYTHON" -c '
import re, sys
names = []
for line in sys.stdin:
    m = re.match(r"    emitter (\S+)", line)
    if m:
        names.append(m.group(1))
want = [n for n in ("slurm-array", "k8s", "skypilot") if n in names]
print(",".join(want))')
fi
[[ -n $EMIT ]] || die "this dsforge has none of the cluster emitters"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-cluster.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# 10 x 10 x 10 x 10 = 10,000 variants of one tier.
MATRIX="--tier medium --matrix micro_batch_size=1,2,3,4,5,6,7,8,9,10"
MATRIX="$MATRIX --matrix gradient_accumulation=1,2,4,8,16,32,64,128,256,512"
MATRIX="$MATRIX --matrix learning_rate=1e-5,2e-5,3e-5,5e-5,1e-4,2e-4,3e-4,5e-4,1e-3,2e-3"
MATRIX="$MATRIX --matrix warmup_steps=10,20,30,40,50,60,70,80,90,100"
OPTS="--emit $EMIT --train-cmd train.py --emit-opt image=ghcr.io/example/train:1 --canary --max-parallel 8"

echo "== dsforge: $DSFORGE"
echo "== emitters: $EMIT"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), load $(cut -d' ' -f1-3 /proc/loadavg)"

# Both must work; peak RSS of each.
# shellcheck disable=SC2086 # MATRIX and OPTS are word lists
/usr/bin/time -f "%M" -o "$tmp/rss-plain" "$DSFORGE" gen 8xa100 $MATRIX -o "$tmp/check-plain" \
    >/dev/null || die "the plain run failed"
# shellcheck disable=SC2086
/usr/bin/time -f "%M" -o "$tmp/rss-emit" "$DSFORGE" gen 8xa100 $MATRIX $OPTS -o "$tmp/check-emit" \
    >/dev/null || die "the run with $EMIT failed"
plain=$(find "$tmp/check-plain" -type f | wc -l)
emitted=$(find "$tmp/check-emit" -type f | wc -l)
[[ $plain -eq 10001 ]] || die "expected 10,001 files without emitters, got $plain"
echo "  (checked: 10,000 variants; $plain files without, $emitted with;" \
    "peak RSS $(($(cat "$tmp/rss-plain") / 1024)) MiB without," \
    "$(($(cat "$tmp/rss-emit") / 1024)) MiB with)"
rm -rf "$tmp/check-plain" "$tmp/check-emit"
echo

echo "rm -rf '$tmp/plain' '$tmp/emit' '$tmp/floor'" > "$tmp/fresh.sh"
echo "== 10,000 variants written (hyperfine -N, warmup $WARMUP, runs $RUNS)"
floor=()
if [[ ${FLOOR:-1} != 0 ]]; then
    mkdir -p "$tmp/plugins/filefloor"
    cat >"$tmp/plugins/filefloor/init.lua" <<'LUA'
-- One constant 900-byte file per variant: what writing a file per
-- variant costs, with no work to make it (contrib/bench/cluster.sh).
local text = string.rep("#", 899) .. "\n"
return {
  name = "filefloor", interface = 1, version = "1.0.0",
  summary = "a constant file per variant (the benchmark's floor)",
  targets = { adds = { "deepspeed", "hf" } },
  emitters = { { name = "filefloor", summary = "a constant file per variant",
    file = "{profile}-{variant}.floor.yaml", emit = function() return text end } },
}
LUA
    floor=(-n "gen -o --emit filefloor"
           "$DSFORGE gen 8xa100 $MATRIX --emit filefloor -o $tmp/floor")
fi
DSFORGE_PLUGIN_PATH=$tmp/plugins${DSFORGE_PLUGIN_PATH:+:$DSFORGE_PLUGIN_PATH} \
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/written.json" \
    --prepare "bash $tmp/fresh.sh" \
    -n "gen -o" "$DSFORGE gen 8xa100 $MATRIX -o $tmp/plain" \
    -n "gen -o --emit $EMIT" "$DSFORGE gen 8xa100 $MATRIX $OPTS -o $tmp/emit" \
    "${floor[@]}"
echo

"$PYTHON" - "$tmp/written.json" "$TARGET" "$EMIT" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
target = float(sys.argv[2])
wall = r[1]["mean"] / r[0]["mean"]
cpu = (r[1]["user"] + r[1]["system"]) / (r[0]["user"] + r[0]["system"])
print("gen -o %.3f s, with --emit %s %.3f s: %.3fx wall-clock, %.3fx CPU"
      % (r[0]["mean"], sys.argv[3], r[1]["mean"], wall, cpu))
if len(r) > 2:
    print("floor: a constant file per variant (--emit filefloor) %.3f s: %.3fx wall-clock,"
          " %.3fx CPU" % (r[2]["mean"], r[2]["mean"] / r[0]["mean"],
                          (r[2]["user"] + r[2]["system"]) / (r[0]["user"] + r[0]["system"])))
if wall > target:
    print("MISSED: the cluster emitters add %.1f%% (target <= %.0f%%)"
          % ((wall - 1) * 100, (target - 1) * 100))
    sys.exit(1)
print("ok: the cluster emitters add %.1f%% (target <= %.0f%%)"
      % ((wall - 1) * 100, (target - 1) * 100))
EOF
