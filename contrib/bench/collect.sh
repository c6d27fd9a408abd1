#!/usr/bin/env bash
# contrib/bench/collect.sh -- what `dsforge collect` costs on a large
# sweep's results (issue 32; see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/collect.sh
#
# Builds a results tree of N variants (default 10,000; a 6-variant gen
# output whose manifest is replicated, tests/cli/results_tree.py), each
# with a LOG_BYTES (default 1 MiB) stdout.log in DeepSpeed's formats (hard
# links to one file: every variant's log is still opened and read whole,
# from the page cache, as grep reads it), dsf-run.json and
# trainer_state.json. Then one hyperfine run of two commands:
#   grep -r -c -F -e S1 -e S2 ... results/   (the readers' substrings)
#   dsforge collect DIR
# and the ratio of their mean wall-clock times (and of their CPU times:
# on a shared machine the wall-clock spread is wide), and collect's peak RSS
# (GNU time) with logs of LOG_BYTES and of LOG_BYTES/16: flat memory means
# the same peak whatever the log size.
#
# Target (exit 1 and say so if missed): collect/grep <= 2.0.
# Knobs: DSFORGE (./build/dsforge), N, LOG_BYTES, RUNS (5), WARMUP (1),
# PYTHON (python3), TMPDIR.
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
N=${N:-10000}
LOG_BYTES=${LOG_BYTES:-1048576}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
TARGET=2.0
HERE=$(cd "$(dirname "$0")/../.." && pwd)

die() { printf 'collect.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON" /usr/bin/time grep; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-collect.XXXXXX")
trap 'rm -rf "$work"' EXIT

tree() { # DIR LOG_BYTES
    "$DSFORGE" gen 8xa100 --matrix micro_batch_size=1,2 -o "$1" >/dev/null
    "$PYTHON" "$HERE/tests/cli/results_tree.py" "$1" --replicate "$N" \
        --link --log-bytes "$2"
}
tree "$work/big" "$LOG_BYTES"
tree "$work/small" $((LOG_BYTES / 16))

# the substrings of every variant reader that reads the logs, as grep -e
# arguments (the run readers read only the results root's own files)
mapfile -t needles < <("$PYTHON" - "$HERE/plugins/results/decl.lua" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
seen = []
for block in re.split(r"\n  \{\n", text)[1:]:
    if 'scope = "run"' in block:
        continue
    m = re.search(r"lines = (\{[^}]*\}|[A-Z_]+)", block)
    if not m:
        continue
    lst = m.group(1)
    if not lst.startswith("{"):
        lst = re.search(lst + r" = (\{[^}]*\})", text).group(1)
    for s in re.findall(r'"([^"]+)"', lst):
        if s not in seen:
            seen.append(s)
print("\n".join(seen))
PY
)
grep_args=()
for s in "${needles[@]}"; do grep_args+=(-e "$s"); done
printf 'substrings: %s\n' "${needles[*]}"

json="$work/hyperfine.json"
hyperfine --runs "$RUNS" --warmup "$WARMUP" --export-json "$json" \
    -n grep "grep -r -c -F $(printf '%q ' "${grep_args[@]}") $work/big/results >/dev/null" \
    -n collect "$DSFORGE collect $work/big >/dev/null"

rss() { /usr/bin/time -f %M "$DSFORGE" collect "$1" 2>&1 >/dev/null | tail -1; }
rss_big=$(rss "$work/big")
rss_small=$(rss "$work/small")

"$PYTHON" - "$json" "$TARGET" "$rss_big" "$rss_small" "$N" "$LOG_BYTES" <<'PY'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
res = {r["command"]: r["mean"] for r in rs}
cpu = {r["command"]: r["user"] + r["system"] for r in rs}
target = float(sys.argv[2])
ratio = res["collect"] / res["grep"]
print("%s variants, %s-byte logs: grep %.2f s, collect %.2f s, ratio %.2f (target <= %.2f)"
      % (sys.argv[5], sys.argv[6], res["grep"], res["collect"], ratio, target))
print("CPU time (user + system): grep %.2f s, collect %.2f s, ratio %.2f"
      % (cpu["grep"], cpu["collect"], cpu["collect"] / cpu["grep"]))
print("collect peak RSS: %s KiB with these logs, %s KiB with logs 16x smaller"
      % (sys.argv[3], sys.argv[4]))
if ratio > target:
    print("MISSED: collect is more than %.1fx grep" % target)
    sys.exit(1)
PY
