#!/bin/sh
# Every built-in profile and tier (and a --matrix sweep) emitted with
# --emit skypilot, each task YAML read by PyYAML and validated against
# SkyPilot's own task and resources schemas (tests/cluster/schemas, made by
# sky_schema.py) with ajv from npm, installed into WORKDIR (under the build
# tree) from tests/cluster/package.json, never into the repository.
#   sky_run.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when node or npm is absent.
set -eu
dsforge=$1 src=$2 work=$3
sh "$src/tests/npm-install.sh" "$src/tests/cluster/package.json" "$work" || exit $?
rm -rf "$work/sky"
mkdir -p "$work/sky"
dirs=
for p in $("$dsforge" list | awk 'NR > 1 { print $1 }'); do
  "$dsforge" gen "$p" -o "$work/sky/$p" --emit skypilot --train-cmd 'train.py --x 1' >/dev/null
  dirs="$dirs $work/sky/$p"
done
[ -n "$dirs" ] || { echo "FAIL: dsforge list named no profile"; exit 1; }
"$dsforge" gen 8xa100 --matrix micro_batch_size=1,2 --matrix zero_stage=2,3 \
  -o "$work/sky/matrix" --emit skypilot --train-cmd 'train.py --x 1' >/dev/null
# shellcheck disable=SC2086
python3 "$src/tests/cluster/sky_yaml.py" $dirs "$work/sky/matrix" > "$work/sky/docs.json"
NODE_PATH="$work/node_modules" node "$src/tests/cluster/sky_validate.js" \
  "$src/tests/cluster/schemas/skypilot-task.json" \
  "$src/tests/cluster/schemas/skypilot-resources.json" < "$work/sky/docs.json"
# The validator refuses what SkyPilot refuses: each of these edits of the
# first task must fail (a task schema error, a resources schema error, a
# task name sky/task.py refuses).
for edit in 'd["envs"]["1BAD"] = "x"' 'd["resources"]["accelerators"] = 8' \
    'd["resources"]["infra"] = "nocloud"' 'd["name"] = "Bad name"' 'd["num_nodes"] = "2"'; do
  python3 -c "import json, sys
docs = json.load(open(sys.argv[1]))[:1]
d = docs[0]['doc']
$edit
json.dump(docs, sys.stdout)" "$work/sky/docs.json" > "$work/sky/bad.json"
  if NODE_PATH="$work/node_modules" node "$src/tests/cluster/sky_validate.js" \
      "$src/tests/cluster/schemas/skypilot-task.json" \
      "$src/tests/cluster/schemas/skypilot-resources.json" < "$work/sky/bad.json" >/dev/null; then
    echo "FAIL: the validator took a task edited by: $edit"; exit 1
  fi
done
echo "the validator refuses 5 edited tasks"
