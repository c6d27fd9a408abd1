#!/bin/sh
# fetch.sh -- time fetching a repository of 100 profiles from a local server:
# cold (empty cache: one index + 100 files, concurrent transfers) and warm
# (pinned and cached: no request; see DSFORGE_REPO_CHECK_INTERVAL).
#
# Usage: contrib/bench/fetch.sh [path/to/dsforge]     (needs hyperfine)
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dsforge=$(cd "$(dirname "${1:-build/dsforge}")" && pwd)/$(basename "${1:-build/dsforge}")
command -v hyperfine >/dev/null || { echo "hyperfine is needed" >&2; exit 2; }
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
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
"$dsforge" repo index "$tmp/serve/repo" --name bench >/dev/null
python3 "$here/tests/http/server.py" "$tmp/serve" "$tmp/requests.log" > "$tmp/port" &
server=$!
while [ ! -s "$tmp/port" ]; do sleep 0.05; done
url="http://127.0.0.1:$(cut -d' ' -f2 "$tmp/port")/repo"
cd "$tmp/proj"
"$dsforge" repo add --project bench "$url" >/dev/null
hyperfine --warmup 1 --runs 10 \
  --prepare "rm -rf '$tmp/cache' '$tmp/proj/dsforge.lock'" \
  -n "cold: 1 index + 100 profiles" "'$dsforge' repo update bench --no-progress" \
  --prepare ":" \
  -n "warm: pinned, no request" "'$dsforge' repo path bench/p000"
: > "$tmp/requests.log"
"$dsforge" repo path bench/p000 >/dev/null
echo "requests made by one warm run:"
cat "$tmp/requests.log"
