#!/bin/sh
# fetch.sh -- time fetching a repository of 100 profiles from a local server,
# and compare with curl fetching the same files in the same run:
#   cold, format 1   repo update (empty cache and lock): index + 100 files
#   cold, format 2   repo path NAME (empty cache and lock): index + the
#                    newest release's 100 files (blobs/<sha256>)
#   curl -Z          the same 101 URLs as format 2, 16 at once (dsforge's
#                    limit), each written to a file
#   warm             pinned and cached: no request (see
#                    DSFORGE_REPO_CHECK_INTERVAL)
# Prints the medians, the cold/curl ratios (issue #15 wants <= 1.3x) and
# checks the cold target (< 0.5 s).
#
# Usage: contrib/bench/fetch.sh [path/to/dsforge]   (needs hyperfine, curl)
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dsforge=$(cd "$(dirname "${1:-build/dsforge}")" && pwd)/$(basename "${1:-build/dsforge}")
command -v hyperfine >/dev/null || { echo "hyperfine is needed" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is needed" >&2; exit 2; }
tmp=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
mkdir -p "$tmp/serve/repo/profiles" "$tmp/proj"
i=0
while [ $i -lt 100 ]; do
  n=$(printf 'p%03d' $i)
  printf 'return { name = "%s", version = "1.0.0", summary = "bench", params = { world_size = %d }, build = function(p) return { train_batch_size = 8 * p.world_size, train_micro_batch_size_per_gpu = 8, gradient_accumulation_steps = 1 } end }\n' "$n" $((i + 1)) > "$tmp/serve/repo/profiles/$n.lua"
  i=$((i + 1))
done
cp -r "$tmp/serve/repo" "$tmp/serve/repo2"
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" \
  XDG_STATE_HOME="$tmp/state" HOME="$tmp/home"
unset CI
"$dsforge" repo index "$tmp/serve/repo" --name bench >/dev/null
"$dsforge" repo index "$tmp/serve/repo2" --name bench2 --version 1.0.0 >/dev/null
python3 "$here/tests/http/server.py" "$tmp/serve" "$tmp/requests.log" > "$tmp/port" &
server=$!
while [ ! -s "$tmp/port" ]; do sleep 0.05; done
base="http://127.0.0.1:$(cut -d' ' -f2 "$tmp/port")"
cd "$tmp/proj"
"$dsforge" repo add --project bench "$base/repo" >/dev/null
"$dsforge" repo add --project bench2 "$base/repo2" >/dev/null
# curl's command line: the index and every blob, each to its own file
{
  echo "curl -Z --parallel-max 16 -s --fail --create-dirs \\"
  echo "  -o '$tmp/curl/index.json' '$base/repo2/index.json' \\"
  for b in $(ls "$tmp/serve/repo2/blobs"); do
    echo "  -o '$tmp/curl/$b' '$base/repo2/blobs/$b' \\"
  done
  echo "  2>/dev/null || exit 1"
} > "$tmp/curl.sh"
hyperfine --warmup 1 --runs 15 --export-json "$tmp/times.json" \
  --prepare "rm -rf '$tmp/cache' '$tmp/proj/dsforge.lock'" \
  -n "cold, format 1: repo update (index + 100 files)" \
  "'$dsforge' repo update bench --no-progress" \
  --prepare "rm -rf '$tmp/cache' '$tmp/proj/dsforge.lock'" \
  -n "cold, format 2: repo path (index + 100 blobs)" \
  "'$dsforge' repo path bench2 --no-progress" \
  --prepare "rm -rf '$tmp/curl'" \
  -n "curl -Z: the same 101 URLs" "sh '$tmp/curl.sh'" \
  --prepare ":" \
  -n "warm: pinned, no request" "'$dsforge' repo path bench/p000"
: > "$tmp/requests.log"
"$dsforge" repo path bench/p000 >/dev/null
echo "requests made by one warm run: $(wc -l < "$tmp/requests.log")"
# where a cold run waits: the directory flushes (fsync) of the cache's
# write path, counted and timed by strace when it is installed
if command -v strace >/dev/null; then
  rm -rf "$tmp/cache" "$tmp/proj/dsforge.lock"
  strace -f -T -e trace=fsync,fdatasync -o "$tmp/fsync.txt" \
    "$dsforge" repo path bench2 --no-progress >/dev/null
  awk -F'<' '/fsync|fdatasync/ {gsub(">", "", $NF); s += $NF; n++}
    END {printf "one cold format-2 run: %d fsyncs, %.0f ms waiting in them\n",
         n, s * 1000}' "$tmp/fsync.txt"
fi
python3 - "$tmp/times.json" <<'PY'
import json, sys
# the commands in the order given to hyperfine
c1, c2, curl, warm = [x["median"] for x in
                      json.load(open(sys.argv[1]))["results"]]
print("median: cold fetch format 1 %.0f ms, format 2 %.0f ms; curl -Z "
      "%.0f ms; warm %.0f ms" % (c1 * 1e3, c2 * 1e3, curl * 1e3, warm * 1e3))
print("cold / curl -Z: format 1 %.2fx, format 2 %.2fx (issue #15: <= 1.3x)"
      % (c1 / curl, c2 / curl))
ok = max(c1, c2) < 0.5
print("cold fetch < 0.5 s: %s" % ("yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
