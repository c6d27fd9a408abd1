#!/bin/sh
# `dsforge lsp` in Neovim's built-in LSP client, headless (see nvim.lua).
#   nvim.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when nvim is absent.
set -eu
dsforge=$1 src=$2 work=$3
if ! command -v nvim >/dev/null 2>&1; then
  echo "skipped: nvim is needed (contrib/install-deps.sh installs Debian's neovim)"
  exit 77
fi
mkdir -p "$work"
cat > "$work/ds_config.json" <<'JSON'
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 7},
  "gradient_clipping": 1.0,
  "gradient_accumulation_steps": 2
}
JSON
sh "$src/tests/lsp/mkout.sh" "$dsforge" "$work/def"
sed -e 's/"defp"/"nbroken"/' -e 's/stage = 2/stage = 7/' \
  "$work/def/profiles/defp.lua" > "$work/def/profiles/nbroken.lua"
cd "$work"
DSFORGE=$dsforge CONFIG=$work/ds_config.json DEF_OUT=$work/def/out \
  DEF_TEAM=$work/def/team.json DSFORGE_PATH=$work/def/profiles \
  DEF_BROKEN=$work/def/profiles/nbroken.lua \
  timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $src/tests/lsp/nvim.lua"
