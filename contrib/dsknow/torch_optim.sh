#!/bin/sh
# Regenerates plugins/deepspeed/torch_optim.lua from the python3-torch
# packages of Debian 12 (bookworm), 13 (trixie) and unstable (sid): the
# versions below are downloaded with apt-get under a private apt state in
# WORK (the system's sources and lists are not touched), unpacked there,
# and read by torch_optim.py. Writes the Lua file to stdout.
#
#   contrib/dsknow/torch_optim.sh [WORK] > plugins/deepspeed/torch_optim.lua
#
# WORK defaults to a new temporary directory (removed at the end). A
# version Debian has dropped from a suite can no longer be downloaded
# this way: move the pin to the suite's current version (apt-cache policy
# python3-torch with the same options) and re-run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 1 ]; then work=$1; keep=1; else work=$(mktemp -d); keep=0; fi
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
key=/usr/share/keyrings/debian-archive-keyring.gpg
{
  for suite in bookworm trixie sid; do
    echo "deb [signed-by=$key] http://deb.debian.org/debian $suite main"
  done
} > "$work/sources.list"
apt_opts="-o Dir::Etc::SourceList=$work/sources.list -o Dir::Etc::SourceParts=/nonexistent
  -o Dir::State::Lists=$work/lists -o Dir::Cache=$work/cache"
# shellcheck disable=SC2086
apt-get -qq $apt_opts update >&2
# download and unpack python3-torch=DEB once; print where it was read
fetch() {
  deb=$1 suite=$2
  if [ ! -d "$work/$deb" ]; then
    # shellcheck disable=SC2086
    (cd "$work" && apt-get -qq $apt_opts download "python3-torch=$deb" >&2)
    dpkg-deb -x "$work/python3-torch_${deb}_amd64.deb" "$work/$deb"
  fi
  sum=$(sha256sum "$work/python3-torch_${deb}_amd64.deb" | cut -c1-64)
  echo "$suite python3-torch $deb, /usr/lib/python3/dist-packages (python3-torch_${deb}_amd64.deb sha256 $sum)"
}
o1=$(fetch 1.13.1+dfsg-4 "Debian 12")
o2=$(fetch 2.6.0+dfsg-7 "Debian 13")
o3=$(fetch 2.14.1+dfsg-1 "Debian unstable")
dp=usr/lib/python3/dist-packages
status=0
python3 "$here/torch_optim.py" \
  --source 1.13.1 "$work/1.13.1+dfsg-4/$dp" "$o1" \
  --source 2.6.0 "$work/2.6.0+dfsg-7/$dp" "$o2" \
  --source 2.14.1 "$work/2.14.1+dfsg-1/$dp" "$o3" || status=$?
[ "$keep" = 1 ] || rm -rf "$work"
exit "$status"
