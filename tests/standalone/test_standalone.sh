#!/usr/bin/env bash
# The README's promise "the binary alone is the whole installation":
# dsforge built with cJSON compiled in (contrib/cjson-source.sh, Debian's
# source package) runs in a root that holds nothing but it and libc, and
# generates the default profile's tiers there; the ordinary build (cJSON
# shared) fails in the same root, so the check can fail.
#   test_standalone.sh SOURCE_DIR WORK_DIR SHARED_BINARY
# Exit 77 (skipped) when not root (chroot) or when Debian's source
# archive cannot be reached.
set -euo pipefail
src=$1 work=$2 shared=$3
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: chroot needs root"; exit 77
fi
mkdir -p "$work"
if [ ! -f "$work/cjson/cJSON.c" ]; then
  if ! "$src/contrib/cjson-source.sh" "$work/cjson" >"$work/fetch.log" 2>&1
  then
    cat "$work/fetch.log"; echo "skipped: Debian's source archive"; exit 77
  fi
fi
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DDSF_CJSON_SOURCE="$work/cjson" >/dev/null
cmake --build "$work/build" --target dsforge -j2 >/dev/null
bin=$work/build/dsforge
if readelf -d "$bin" | grep NEEDED | grep -v -E 'lib(c|m)\.so\.6'; then
  echo "FAIL: the standalone binary needs more than libc and libm"; exit 1
fi
# a root with the binary and the C library only
root=$work/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/tmp"
libs=$(ldd "$bin" | awk '/=>/ {print $3} /ld-linux/ && !/=>/ {print $1}')
for l in $libs; do
  mkdir -p "$root$(dirname "$l")"
  cp -L "$l" "$root$l"
done
cp "$bin" "$root/bin/dsforge"
cp "$shared" "$root/bin/dsforge-shared"
run() { chroot "$root" /bin/"$@"; }
if run dsforge-shared --version >/dev/null 2>&1; then
  echo "FAIL: the shared-cJSON binary ran without libcjson: the root is not bare"
  exit 1
fi
run dsforge --version
run dsforge gen 8xa100 -o /tmp/out >/dev/null
for t in small medium large; do
  [ -s "$root/tmp/out/8xa100-$t.json" ] || { echo "FAIL: no $t.json"; exit 1; }
done
cmp "$root/tmp/out/8xa100-medium.json" <("$shared" gen 8xa100 --tier medium --stdout)
echo "1 passed, 0 failed"
