#!/bin/sh
# Re-runs the extractor on a covered DeepSpeed release (default: the newest,
# the last line of releases.txt) and compares its output byte for byte with
# the committed plugins/deepspeed/dsdata/vX_Y_Z.lua (exit 0: identical).
#   DS_GIT=... HJSON_GIT=... contrib/dsknow/reproduce.sh [TAG]
# DS_GIT, HJSON_GIT: git directories of deepspeedai/DeepSpeed and
# hjson/hjson-py (any clone; e.g. /work/.mirror/deepspeedai+DeepSpeed/repo).
# The dsclient setup unpacks the tag once under $DSCLIENT_HOME (default
# ~/.cache/dsclient/TAG); see contrib/dsknow/README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${DS_GIT:?set DS_GIT to a git directory of deepspeedai/DeepSpeed}"
: "${HJSON_GIT:?set HJSON_GIT to a git directory of hjson/hjson-py}"
tag=${1:-$(tail -n 1 "$here/releases.txt")}
setup=${DSCLIENT_SETUP:-$root/../shared/tools/dsclient/setup.sh}
[ -f "$setup" ] || setup=$root/../../shared/tools/dsclient/setup.sh
eval "$(sh "$setup" "$DS_GIT" "$HJSON_GIT" "$tag" | tail -n 1)"
export DSCHECK_DS_ROOT DSCHECK_HJSON DSCHECK_DEBROOT
committed=$root/plugins/deepspeed/dsdata/$(echo "$tag" | tr . _).lua
out=$(mktemp)
trap 'rm -f "$out"' EXIT
python3 "$here/extract.py" --git "$DS_GIT" --tag "$tag" > "$out"
if cmp "$out" "$committed"; then
  echo "$tag: the extractor reproduces $(basename "$committed") byte for byte ($(wc -c < "$committed") bytes)"
else
  diff -u "$committed" "$out" | head -n 40 >&2
  exit 1
fi
