#!/usr/bin/env bash
# Runs the README's Quick start command verbatim in a fresh clone of the
# committed tree (HEAD), and checks what it promises: the three tiers of
# 8xa100 and a manifest in out/. Used by CI; needs root for its package
# install step (as a user, run it after contrib/install-deps.sh has run:
# the install step then only prints and fails, so set DSF_QS_SKIP_DEPS=1).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=$(awk '/^## Quick start/{q=1} q&&/^```sh/{f=1;next} f&&/^```/{exit} f' README.md)
if [ -z "$cmd" ]; then
  echo "quickstart: README.md has no sh block under '## Quick start'" >&2
  exit 1
fi
if [ -n "${DSF_QS_SKIP_DEPS:-}" ]; then
  cmd=$(printf '%s\n' "$cmd" | sed 's#contrib/install-deps.sh *&& *##')
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/dsforge-quickstart.XXXXXX")
trap 'rm -rf "$root"' EXIT
git clone -q . "$root/clone"
echo "quickstart: running in a fresh clone: $cmd"
(cd "$root/clone" && bash -euo pipefail -c "$cmd")
for f in 8xa100-small.json 8xa100-medium.json 8xa100-large.json manifest.json; do
  if [ ! -s "$root/clone/out/$f" ]; then
    echo "quickstart: out/$f was not written" >&2
    exit 1
  fi
done
echo "quickstart: ok"
