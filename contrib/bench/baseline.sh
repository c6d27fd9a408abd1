#!/usr/bin/env bash
# contrib/bench/baseline.sh -- is this dsforge as fast as an earlier one?
#
#   contrib/bench/baseline.sh REV [DSFORGE]
#
# Builds REV (a commit or tag of this repository, Release, in a temporary
# directory) and times it against DSFORGE (default ./build/dsforge) in
# one hyperfine run each, A B A B: `gen 8xa100 -o DIR` into a fresh
# directory every run, `--version` and a one-file `check`. Prints the
# median of each and the ratio new/old. Exit 1 when `gen 8xa100 -o DIR`
# is more than TOLERANCE (default 5%) slower than REV; 2 when it cannot
# run. Knobs: RUNS (40), WARMUP (5), TOLERANCE (1.05), TMPDIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
die() { printf 'baseline.sh: error: %s\n' "$*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: baseline.sh REV [DSFORGE]"
REV=$1
NEW=${2:-$root/build/dsforge}
RUNS=${RUNS:-40}
WARMUP=${WARMUP:-5}
TOLERANCE=${TOLERANCE:-1.05}
command -v hyperfine >/dev/null || die "hyperfine not found (contrib/install-deps.sh --bench)"
[ -x "$NEW" ] || die "no dsforge at '$NEW'"
NEW=$(cd "$(dirname "$NEW")" && pwd)/$(basename "$NEW")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-base.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git -C "$root" archive "$REV" | tar -x -C "$tmp/src" || die "no revision '$REV'"
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
      -DDSF_TESTS=OFF >/dev/null || die "configuring $REV failed"
cmake --build "$tmp/build" -j"$(nproc)" --target dsforge >/dev/null ||
    die "building $REV failed"
OLD=$tmp/build/dsforge
# Kept: a binary from before the built-ins were embedded reads them from
# its source tree.

cd "$tmp"           # not a source tree: both use their built-in profiles
cat > one.json <<'JSON'
{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1,
 "gradient_accumulation_steps": 8, "bf16": {"enabled": true},
 "zero_optimization": {"stage": 3}}
JSON
printf 'rm -rf %s/o-old %s/o-new\n' "$tmp" "$tmp" > fresh.sh

echo "== old: $REV ($(git -C "$root" rev-parse --short "$REV")), new: $NEW"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version)"
summary=()
bench() {   # NAME OLD_CMD NEW_CMD
    hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --prepare "bash $tmp/fresh.sh" \
        --export-json "$tmp/$1.json" -n old "$2" -n new "$3" \
        >/dev/null 2>"$tmp/$1.err" || { cat "$tmp/$1.err" >&2; die "$1 failed"; }
    local line
    line=$(python3 - "$tmp/$1.json" "$1" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
old, new = r["old"]["median"], r["new"]["median"]
print(f"{sys.argv[2]:<10} old {old*1e3:7.2f} ms   new {new*1e3:7.2f} ms   new/old {new/old:5.2f}")
PY
)
    echo "$line"
    summary+=("$line")
}
bench gen "$OLD gen 8xa100 -o $tmp/o-old" "$NEW gen 8xa100 -o $tmp/o-new"
bench version "$OLD --version" "$NEW --version"
bench check "$OLD check $tmp/one.json --world-size 8" "$NEW check $tmp/one.json --world-size 8"
ratio=$(printf '%s\n' "${summary[0]}" | awk '{print $NF}')
if awk -v r="$ratio" -v t="$TOLERANCE" 'BEGIN { exit !(r > t) }'; then
    echo "gen 8xa100 -o DIR: new/old $ratio > $TOLERANCE: SLOWER"
    exit 1
fi
echo "gen 8xa100 -o DIR: new/old $ratio <= $TOLERANCE: ok"
