#!/bin/sh
# A gen -o output for the real clients' go-to-definition checks: the
# profile WORKDIR/profiles/defp.lua, the -f file WORKDIR/team.json and the
# edit zero_optimization.stage=1, generated into WORKDIR/out
# (out/defp-default.json and its manifest.json).
#   mkout.sh DSFORGE WORKDIR
set -eu
dsforge=$1 work=$2
mkdir -p "$work/profiles"
rm -rf "$work/out"
cat > "$work/profiles/defp.lua" <<'LUA'
return {
  name = "defp",
  summary = "go to definition",
  params = { world_size = 1 },
  build = function(p)
    return {
      train_micro_batch_size_per_gpu = 2,
      gradient_clipping = 1.0,
      optimizer = { type = "AdamW", params = { lr = 1e-4 } },
      zero_optimization = { stage = 2, overlap_comm = true },
    }
  end,
}
LUA
cat > "$work/team.json" <<'JSON'
{
  // the team's clipping
  "gradient_clipping": 0.5
}
JSON
"$dsforge" gen defp --profile-path "$work/profiles" -f "$work/team.json" \
  zero_optimization.stage=1 -o "$work/out" >/dev/null 2>&1
