#!/usr/bin/env bash
# contrib/bench/large-object.sh -- `dsforge check` of a config whose one
# object has many keys, against `jq empty` on the same file (issue 30; see
# README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/large-object.sh
#
# 1. Makes configs of "train_batch_size" plus N unknown top-level keys,
#    one a line ("unknown_key_0000042": 42), for each N of SIZES.
# 2. hyperfine, per size, in one run: `dsforge check FILE` and
#    `jq empty FILE` (the reference: a reader doing nothing per key but
#    parse it). check prints 100 of the N unknown-key warnings and counts
#    the rest (stderr to /dev/null here; the text is composed anyway).
# 3. Prints each size's medians, check/jq, and check's time per key.
#
# Targets (exit 1 if missed): linear, each size's time per key within
# 1.5x of the smallest size's (a quadratic reader doubles it per doubling
# of N); and check within 2x of jq at the largest size (issue 30's "Done
# when").
# Builds nothing. Knobs: DSFORGE (default ./build/dsforge), SIZES
# (default "10000 100000 1000000": issue 30 asks for a million, about 2 s
# a run), RUNS (3), WARMUP (1), PYTHON.
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
SIZES=${SIZES:-10000 100000 1000000}
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-1}
LINEAR_SLACK=1.5
JQ_TARGET=2

die() { printf 'large-object.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine jq "$PYTHON"; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-large.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# (from the temp dir: in a source tree dsforge would take ./plugins)
cd "$tmp"

echo "== dsforge: $DSFORGE"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), $(jq --version)"

for n in $SIZES; do
    "$PYTHON" - "$n" "keys-$n.json" <<'EOF'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write('{\n "train_batch_size": 8')
    for i in range(n):
        f.write(',\n "unknown_key_%07d": %d' % (i, i))
    f.write("\n}\n")
EOF
    # a correct run first: exit 0, the count of what was not shown
    "$DSFORGE" check "keys-$n.json" 2>"out-$n.txt" ||
        die "check of $n keys exited $?"
    grep -q "more warnings not shown" "out-$n.txt" ||
        die "check of $n keys: no count of the warnings not shown"
    hyperfine -N --runs "$RUNS" --warmup "$WARMUP" --style basic \
        --export-json "h-$n.json" \
        -n "check $n" "$DSFORGE check keys-$n.json" \
        -n "jq $n" "jq empty keys-$n.json" >/dev/null 2>&1 ||
        die "hyperfine failed at $n keys"
done

"$PYTHON" - "$LINEAR_SLACK" "$JQ_TARGET" $SIZES <<'EOF'
import json, sys
slack, jq_target = float(sys.argv[1]), float(sys.argv[2])
sizes = [int(s) for s in sys.argv[3:]]
ok = True
base = None
print("%10s %10s %10s %8s %12s %8s" % ("keys", "check s", "jq s", "check/jq",
                                         "us per key", "vs first"))
for n in sizes:
    runs = {r["command"]: r for r in json.load(open("h-%d.json" % n))["results"]}
    c, j = runs["check %d" % n]["median"], runs["jq %d" % n]["median"]
    per = c / n * 1e6
    base = base or per
    print("%10d %10.3f %10.3f %8.2f %12.2f %8.2f" % (n, c, j, c / j, per,
                                                   per / base))
    if per / base > slack:
        print("  MISSED: time per key grew %.2fx (linear: <= %.1fx)"
              % (per / base, slack))
        ok = False
last = sizes[-1]
runs = {r["command"]: r for r in json.load(open("h-%d.json" % last))["results"]}
ratio = runs["check %d" % last]["median"] / runs["jq %d" % last]["median"]
if ratio > jq_target:
    print("  MISSED: check is %.1fx jq empty at %d keys (target <= %gx)"
          % (ratio, last, jq_target))
    ok = False
sys.exit(0 if ok else 1)
EOF
