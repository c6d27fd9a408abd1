#!/bin/sh
# Covers one more DeepSpeed release, in one command (issue 28):
#   DS_GIT=... HJSON_GIT=... contrib/dsknow/add-release.sh vX.Y.Z [BUILD_DIR]
# DS_GIT, HJSON_GIT: git directories of deepspeedai/DeepSpeed and
# hjson/hjson-py (any clone, e.g. /work/.mirror/deepspeedai+DeepSpeed/repo);
# BUILD_DIR: the CMake build tree of dsforge (default build/).
#
#   1. releases.txt gets the tag (in version order; already there: kept);
#   2. extract: plugins/deepspeed/dsdata/vX_Y_Z.lua, index.lua, releases.lua;
#   3. build: dsforge embeds the data files, so it is rebuilt (-j2);
#   4. record: DeepSpeed's verdicts on the conformance corpus at every release;
#   5. engine.json: entries carried to the release (engine_lines.py, which
#      prints what it could not carry);
#   6. coverage: the reports of DeepSpeed's own checks, every release;
#   7. replay: tests/conformance (DeepSpeed's verdict against dsforge's at
#      every release) and coverage.py --check.
# Exit 0 when every step passes; the first failing step stops it (a
# disagreement in 7 is a rule to write, or an allow.json entry with its
# reason and DeepSpeed's source line). Nothing is committed.
set -eu
tag=${1:?usage: add-release.sh vX.Y.Z [BUILD_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${2:-$root/build}
: "${DS_GIT:?set DS_GIT to a git directory of deepspeedai/DeepSpeed}"
: "${HJSON_GIT:?set HJSON_GIT to a git directory of hjson/hjson-py}"
case $tag in
  v[0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "add-release.sh: $tag is not a release tag vX.Y.Z" >&2; exit 2 ;;
esac
git --git-dir="$DS_GIT" rev-parse -q --verify "refs/tags/$tag" >/dev/null || {
  echo "add-release.sh: $DS_GIT has no tag $tag" >&2; exit 2; }
setup=${DSCLIENT_SETUP:-$root/../shared/tools/dsclient/setup.sh}
[ -f "$setup" ] || setup=$root/../../shared/tools/dsclient/setup.sh

echo "== 1. releases.txt"
{ cat "$here/releases.txt"; echo "$tag"; } | sort -u -t. -k1.2,1n -k2,2n -k3,3n \
  > "$here/releases.txt.tmp"
mv "$here/releases.txt.tmp" "$here/releases.txt"

echo "== 2. extract $tag"
eval "$(sh "$setup" "$DS_GIT" "$HJSON_GIT" "$tag" | tail -n 1)"
export DSCHECK_DS_ROOT DSCHECK_HJSON DSCHECK_DEBROOT
data=$root/plugins/deepspeed/dsdata
out=$data/$(echo "$tag" | tr . _).lua
python3 "$here/extract.py" --git "$DS_GIT" --tag "$tag" > "$out.tmp"
mv "$out.tmp" "$out"
python3 "$here/index.py" "$data" > "$data/index.lua.tmp"
python3 "$here/index.py" "$data" --releases > "$data/releases.lua.tmp"
mv "$data/index.lua.tmp" "$data/index.lua"
mv "$data/releases.lua.tmp" "$data/releases.lua"

echo "== 3. build $build"
cmake --build "$build" -j2 >/dev/null

echo "== 4. record"
python3 "$here/record.py" "$DS_GIT" "$HJSON_GIT"

echo "== 5. engine.json"
python3 "$here/engine_lines.py" "$DS_GIT" "${tag#v}"

echo "== 6. coverage"
python3 "$here/coverage.py" "$DS_GIT" "$HJSON_GIT" --dsforge "$build/dsforge"

echo "== 7. replay"
(cd "$root/tests/conformance" && DSFORGE="$build/dsforge" python3 -m unittest -q test_conformance)
python3 "$here/coverage.py" --check --dsforge "$build/dsforge" >/dev/null
echo "$tag is covered: commit releases.txt, dsdata/, tests/conformance/ and coverage/"
