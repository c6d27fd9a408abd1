#!/usr/bin/env bash
# contrib/bench/check.sh -- speed and memory of `dsforge check` on 1,000
# config files in one process (see README.md).
#
#   DSFORGE=/path/to/dsforge contrib/bench/check.sh
#
# 1. Makes 1,000 varied DeepSpeed configs in a temp dir: the built-in
#    profiles x tiers x a ZeRO-stage/precision/offload matrix, at both
#    --target deepspeed and --target hf (world size 8), plus copies of
#    the real-world configs in $REALWORLD (default
#    ../shared/realworld-configs next to the repository; skipped when absent).
# 2. hyperfine: `dsforge check --target hf --world-size 8 <1,000 files>`.
# 3. /usr/bin/time -v: peak RSS of that run.
# 4. hyperfine: the same check at every covered DeepSpeed release
#    (--ds-version V for each V of plugins/deepspeed/dsdata/index.lua),
#    printed per version (wall-clock median, and the mean CPU time, user +
#    system, which a loaded machine does not inflate).
#
# Targets (exit 1 if missed): median < 1 s; at every version, median
# < 0.5 s (issue 10). Peak RSS is reported against the 16 MiB budget of
# gen (exit 1 too if above).
# Builds nothing. Knobs: DSFORGE (default ./build/dsforge), RUNS (10),
# WARMUP (2), NFILES (1000), REALWORLD, REALWORLD_COPIES (10), PYTHON,
# VERSION_RUNS (5).
set -euo pipefail

DSFORGE=${DSFORGE:-./build/dsforge}
PYTHON=${PYTHON:-python3}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
NFILES=${NFILES:-1000}
REALWORLD=${REALWORLD:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/realworld-configs}
REALWORLD_COPIES=${REALWORLD_COPIES:-10}
TARGET_S=1
VERSION_TARGET_S=0.5
VERSION_RUNS=${VERSION_RUNS:-5}
INDEX=$(cd "$(dirname "$0")/../.." && pwd)/plugins/deepspeed/dsdata/index.lua
RSS_TARGET_KIB=$((16 * 1024))
PROFILES=(8xa100 base high-performance long-sequence small-gpu-offload)

die() { printf 'check.sh: error: %s\n' "$*" >&2; exit 2; }

[[ -x $DSFORGE ]] || die "no dsforge binary at '$DSFORGE' (set DSFORGE=...)"
DSFORGE=$(cd "$(dirname "$DSFORGE")" && pwd)/$(basename "$DSFORGE")
for tool in hyperfine "$PYTHON"; do
    command -v "$tool" >/dev/null || die "'$tool' not found"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (GNU time: apt-get install time)"

[[ $REALWORLD = /* ]] || REALWORLD=$PWD/$REALWORLD

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsf-bench-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Run from the temp dir: started in a source tree, dsforge would take
# ./profiles and ./plugins from the working directory instead of the
# built-in (precompiled) ones.
cd "$tmp"

echo "== dsforge: $DSFORGE"
echo "== $(nproc) CPUs, $(uname -sr), $(hyperfine --version), files in $tmp ($(stat -f -c %T "$tmp"))"
echo

# --- 1. the corpus -------------------------------------------------------
echo "== 1. making $NFILES config files"
mkdir -p "$tmp/gen" "$tmp/files"
for profile in "${PROFILES[@]}"; do
    for target in deepspeed hf; do
        # a profile whose planner refuses some ZeRO stage (long-sequence:
        # nothing fits its 8B model at ZeRO-0 on 80 GiB) gets the stage
        # its planner picks
        for stages in "--matrix zero_stage=0,1,2,3" ""; do
            # shellcheck disable=SC2086
            "$DSFORGE" gen "$profile" --target "$target" --param world_size=8 \
                $stages --matrix precision=bf16,fp16,fp32 \
                --matrix offload=none,optimizer,all \
                -o "$tmp/gen/$profile-$target" >/dev/null 2>"$tmp/gen.err" && break
            [[ -n $stages ]] && grep -q "nothing fits" "$tmp/gen.err" ||
                { cat "$tmp/gen.err" >&2; die "dsforge gen $profile --target $target failed"; }
        done
    done
done
nreal=0
if [[ -d $REALWORLD ]]; then
    for ((copy = 1; copy <= REALWORLD_COPIES; copy++)); do
        for f in "$REALWORLD"/*.json; do
            [[ -e $f ]] || continue
            cp "$f" "$tmp/files/rw$copy-$(basename "$f")"
            nreal=$((nreal + 1))
        done
    done
fi
# Fill up to NFILES with generated variants, picked evenly (seeded) over
# all profiles, tiers, targets and matrix points.
"$PYTHON" - "$tmp/gen" "$tmp/files" $((NFILES - nreal)) <<'EOF'
import os, random, shutil, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pool = sorted(os.path.join(d, f) for d, _, fs in os.walk(src)
              for f in fs if f.endswith(".json") and f != "manifest.json")
if not pool:
    sys.exit("no generated variants")
# fewer variants than needed (a profile that refuses part of the matrix):
# every one, then copies (check does the same work for a copy)
picks = random.Random(1000).sample(pool * (n // len(pool) + 1), n)
for i, p in enumerate(picks):
    target = os.path.basename(os.path.dirname(p)).rsplit("-", 1)[1]
    shutil.copy(p, os.path.join(dst, f"{target}-{i:04d}-{os.path.basename(p)}"))
EOF
mapfile -t FILES < <(find "$tmp/files" -name '*.json' | sort)
[[ ${#FILES[@]} -eq $NFILES ]] || die "made ${#FILES[@]} files, not $NFILES"
echo "  $NFILES files: $nreal real-world copies ($REALWORLD), $((NFILES - nreal)) generated;" \
    "$(du -sk "$tmp/files" | cut -f1) KiB"

# One run first: the exit status must be 0 (clean) or 1 (findings), not
# 3 (unreadable file) or worse; the findings are summarised.
set +e
"$DSFORGE" check --target hf --world-size 8 "${FILES[@]}" >"$tmp/check.out" 2>&1
status=$?
set -e
[[ $status -le 1 ]] || { tail -n 20 "$tmp/check.out" >&2; die "dsforge check exited with $status"; }
echo "  dsforge check exit status $status; findings by rule:"
grep -oE '\[[a-z0-9-]+\]$' "$tmp/check.out" | sort | uniq -c | sort -rn | head -n 8 |
    sed 's/^/   /' || true
echo

# --- 2. timing ------------------------------------------------------------
echo "== 2. check of $NFILES files in one process (hyperfine -N, warmup $WARMUP, runs $RUNS)"
printf '%s\n' "${FILES[@]}" >"$tmp/list"
ignore=()
[[ $status -eq 0 ]] || ignore=(-i)   # exit 1 = findings, expected
# hyperfine -N splits the command on whitespace; the temp paths have none.
hyperfine -N "${ignore[@]}" --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/check.json" \
    -n "dsforge check x$NFILES" "$DSFORGE check --target hf --world-size 8 ${FILES[*]}"
echo

# --- 3. peak RSS ------------------------------------------------------------
echo "== 3. peak RSS (/usr/bin/time -v)"
/usr/bin/time -v -o "$tmp/time.txt" "$DSFORGE" check --target hf --world-size 8 "${FILES[@]}" \
    >/dev/null 2>&1 || true
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
[[ -n $rss ]] || die "no RSS from /usr/bin/time"
echo "  dsforge check x$NFILES: $rss KiB"
echo

# --- 4. every covered DeepSpeed release ------------------------------------
mapfile -t VERSIONS < <(grep -oE '\{ version = "[0-9.]+"' "$INDEX" | grep -oE '[0-9]+\.[0-9]+\.[0-9]+')
[[ ${#VERSIONS[@]} -gt 0 ]] || die "no covered release in $INDEX"
echo "== 4. check of $NFILES files at each covered DeepSpeed release (${VERSIONS[*]}; runs $VERSION_RUNS)"
for v in "${VERSIONS[@]}"; do
    set +e
    "$DSFORGE" check --ds-version "$v" --target hf --world-size 8 "${FILES[@]}" >/dev/null 2>&1
    vs=$?
    set -e
    [[ $vs -le 1 ]] || die "dsforge check --ds-version $v exited with $vs"
    vignore=()
    [[ $vs -eq 0 ]] || vignore=(-i)
    hyperfine -N "${vignore[@]}" --warmup 1 --runs "$VERSION_RUNS" --style none \
        --export-json "$tmp/check-$v.json" \
        "$DSFORGE check --ds-version $v --target hf --world-size 8 ${FILES[*]}" >/dev/null
done
echo

"$PYTHON" - "$tmp/check.json" "$TARGET_S" "$rss" "$RSS_TARGET_KIB" "$NFILES" \
    "$VERSION_TARGET_S" "$tmp" "${VERSIONS[@]}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
target, rss, rss_t, n = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
vtarget, tmp, versions = float(sys.argv[6]), sys.argv[7], sys.argv[8:]
sd = r["stddev"] or 0.0
fails = []
ok = r["median"] < target
print("== summary (whole process)")
print(f"  check x{n}   median {r['median']*1e3:8.1f} ms  (mean {r['mean']*1e3:.1f} ± {sd*1e3:.1f} ms,"
      f" {r['median']/n*1e6:.0f} µs/file)   target < {target:g} s  {'OK' if ok else 'MISSED'}")
if not ok:
    fails.append(f"check of {n} files takes {r['median']:.3f} s (target < {target:g} s)")
ok = rss < rss_t
print(f"  peak RSS     {rss/1024:8.2f} MiB   budget < {rss_t/1024:g} MiB  {'OK' if ok else 'MISSED'}")
if not ok:
    fails.append(f"peak RSS of check is {rss/1024:.2f} MiB (budget < {rss_t/1024:g} MiB)")
for v in versions:
    rv = json.load(open(f"{tmp}/check-{v}.json"))["results"][0]
    ok = rv["median"] < vtarget
    cpu = rv["user"] + rv["system"]
    print(f"  --ds-version {v:<7} median {rv['median']*1e3:8.1f} ms  ({rv['median']/n*1e6:.0f} µs/file;"
          f" CPU {cpu*1e3:.0f} ms)   target < {vtarget:g} s  {'OK' if ok else 'MISSED'}")
    if not ok:
        fails.append(f"check of {n} files at --ds-version {v} takes {rv['median']:.3f} s (target < {vtarget:g} s)")
print()
if fails:
    print("TARGETS MISSED:")
    for f in fails:
        print("  - " + f)
    sys.exit(1)
print("all targets met")
EOF
