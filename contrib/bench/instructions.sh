#!/usr/bin/env bash
# contrib/bench/instructions.sh -- what the hot paths cost in instructions.
#
#   contrib/bench/instructions.sh [DSFORGE [BASE]]
#
# Runs each command once under callgrind (valgrind) and prints the
# instructions it executed, in millions: a count that does not depend on
# how busy the host is, so two binaries compare on a shared VM where
# wall-clock timings move by +-30 % (README.md, Speed). With BASE (another
# dsforge binary) each count is printed beside BASE's, with new/base.
#
#   --version, estimate, explain FILE, check FILE, gen 8xa100 (dry),
#   gen 8xa100 -o DIR, and one sweep variant: (a 200-variant matrix minus
#   a 100-variant one, -j 1) / 100
#
# FILE is a copy of a real-world config (REALWORLD, as in targets.sh) or,
# without them, the medium tier of 8xa100. Runs outside any source tree
# with DSFORGE_FULL_TEARDOWN=0 (what a user's run does at exit). Counts
# repeat within ~0.5 %: Lua seeds its string hashes per state. Exit 0, or
# 2 when it cannot run. Knobs: REALWORLD, TMPDIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
die() { printf 'instructions.sh: error: %s\n' "$*" >&2; exit 2; }
NEW=${1:-$root/build/dsforge}
BASE=${2:-}
REALWORLD=${REALWORLD:-${DSF_SHARED_DIR:-$root/../shared}/realworld-configs}
command -v valgrind >/dev/null ||
    die "valgrind not found (contrib/install-deps.sh --bench)"
for b in "$NEW" ${BASE:+"$BASE"}; do
    [[ -x $b ]] || die "no dsforge binary at '$b'"
done
NEW=$(realpath "$NEW")
[[ -n $BASE ]] && BASE=$(realpath "$BASE")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-instr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" # not a source tree: the built-in profiles and plugins
if [[ -f $REALWORLD/axolotl__zero3_bf16.json ]]; then
    cp "$REALWORLD/axolotl__zero3_bf16.json" one.json
else
    "$NEW" gen 8xa100 --tier medium --stdout > one.json ||
        die "cannot make a config to check"
fi

# ir BINARY ARGS...: the instructions BINARY ARGS executed (any exit
# status: check and explain exit 1 on a config with errors).
ir() {
    local out=$tmp/cg.out
    rm -f "$out"
    DSFORGE_FULL_TEARDOWN=0 valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$@" >/dev/null 2>"$tmp/cg.err" || true
    local n
    n=$(awk '/^summary:/ {print $2}' "$out" 2>/dev/null)
    [[ -n $n ]] || { cat "$tmp/cg.err" >&2; die "callgrind failed: $*"; }
    echo "$n"
}

MATRIX=(gen 8xa100 --tier medium -j 1
    --matrix micro_batch_size=1,2,3,4,5,6,7,8,9,10
    --matrix seq_len=512,768,1024,1536,2048,2560,3072,4096,6144,8192)
# measure BINARY NAME: one count per command, "NAME COUNT" lines.
measure() {
    local b=$1
    echo "--version $(ir "$b" --version)"
    echo "estimate $(ir "$b" estimate --model llama-2-7b --stage 3)"
    echo "explain $(ir "$b" explain one.json)"
    echo "check $(ir "$b" check one.json)"
    echo "gen $(ir "$b" gen 8xa100)"
    rm -rf out
    echo "gen-o $(ir "$b" gen 8xa100 -o out)"
    local m1 m2
    m1=$(ir "$b" "${MATRIX[@]}")
    m2=$(ir "$b" "${MATRIX[@]}" --matrix gradient_accumulation=1,2)
    echo "variant $(((m2 - m1) / 100))"
}

declare -A label=(
    [--version]='`--version`'
    [estimate]='`estimate --model llama-2-7b --stage 3`'
    [explain]='`explain FILE`'
    [check]='`check FILE`'
    [gen]='`gen 8xa100` (dry)'
    [gen-o]='`gen 8xa100 -o DIR`'
    [variant]='one sweep variant (`-j 1`)'
)
order=(--version estimate explain check gen gen-o variant)
declare -A new base
while read -r k v; do new[$k]=$v; done < <(measure "$NEW")
if [[ -n $BASE ]]; then
    while read -r k v; do base[$k]=$v; done < <(measure "$BASE")
fi

echo "== instructions (millions, callgrind): $NEW${BASE:+ against $BASE}"
if [[ -n $BASE ]]; then
    echo "| command | base | new | new/base |"
    echo "|---|---|---|---|"
else
    echo "| command | instructions |"
    echo "|---|---|"
fi
for k in "${order[@]}"; do
    if [[ -n $BASE ]]; then
        awk -v l="${label[$k]}" -v b="${base[$k]}" -v n="${new[$k]}" \
            'BEGIN { printf "| %s | %.3f M | %.3f M | %.3f |\n", l, b / 1e6, n / 1e6, n / b }'
    else
        awk -v l="${label[$k]}" -v n="${new[$k]}" \
            'BEGIN { printf "| %s | %.3f M |\n", l, n / 1e6 }'
    fi
done
