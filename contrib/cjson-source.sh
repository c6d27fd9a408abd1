#!/usr/bin/env bash
# Fetches Debian's cJSON source package (with Debian's patches applied:
# the same code as libcjson1) into DIR, for a dsforge binary that stands
# alone (cJSON compiled in):
#   contrib/cjson-source.sh DIR
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDSF_CJSON_SOURCE=DIR
# cJSON's source is not kept in this repository: it comes from the Debian
# archive the machine already uses (a private deb-src list; the system's
# apt configuration is not changed). Needs dpkg-dev (dpkg-source).
set -euo pipefail
dir=${1:?usage: contrib/cjson-source.sh DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/lists/partial" "$work/archives/partial"
# the deb lines of the system's Debian sources, as deb-src
for f in /etc/apt/sources.list.d/*.sources; do
  grep -q '^Types:.*\bdeb\b' "$f" || continue
  sed 's/^Types:.*/Types: deb-src/' "$f" > "$work/parts/$(basename "$f")"
done
if [ -f /etc/apt/sources.list ]; then
  sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$work/parts/list.list"
fi
apt=(apt-get -qq -o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null
     -o "Dir::Etc::SourceParts=$work/parts"
     -o "Dir::State::Lists=$work/lists"
     -o "Dir::Cache::Archives=$work/archives")
"${apt[@]}" update
# the same version as the installed libcjson-dev, so headers and code agree
ver=$(dpkg-query -W -f='${source:Version}' libcjson-dev 2>/dev/null || true)
(cd "$work" && "${apt[@]}" source --download-only "cjson${ver:+=$ver}")
rm -rf "$dir"
# apt checked the files against the archive's signed index; dpkg-source
# checks them against the .dsc (its own gpg note on the signature, which
# needs the uploader's key, is kept out of the way unless it fails)
dpkg-source -q -x "$work"/cjson_*.dsc "$dir" >"$work/log" 2>&1 ||
  { cat "$work/log" >&2; exit 1; }
mkdir -p "$dir/include/cjson"
cp "$dir/cJSON.h" "$dir/include/cjson/cJSON.h"
echo "dsforge: cJSON $(sed -n 's/^#define CJSON_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' "$dir/cJSON.h" | paste -sd.) source in $dir"
