-- plugins/deepspeed/commands_models.lua -- `dsforge models`: the model
-- catalog (deepspeed.catalog) as a table, or as JSON. Loaded only when
-- the command runs (commands.lua).

local M = {}

local models = require("deepspeed.models")

-- 6738415616 -> "6.74B"
local function count(n)
  if n >= 1e9 then return ("%.2fB"):format(n / 1e9) end
  return ("%.0fM"):format(n / 1e6)
end

local COLUMNS = { "name", "params", "hidden", "layers", "heads", "kv_heads", "vocab", "hf_id" }

function M.models(opts, args)
  if #args > 0 then
    return nil, { message = "models takes no arguments (got '" .. tostring(args[1]) .. "')",
      hint = "dsforge models [--json]", kind = "usage" }
  end
  local rows = {}
  for _, name in ipairs(models.names()) do
    local m = models.get(name)
    rows[#rows + 1] = {
      name = name, params = m.published_params or m.params, params_computed = m.params,
      hidden = m.hidden_size, layers = m.layers, heads = m.heads, kv_heads = m.kv_heads,
      vocab = m.vocab, hf_id = m.hf_id, arch = m.arch, source = m.source,
    }
  end
  if opts.json then return dsforge.array(rows) end
  local head = ("%-22s %8s %7s %6s %6s %4s %7s  %s"):format("MODEL", "PARAMS", "HIDDEN",
    "LAYERS", "HEADS", "KV", "VOCAB", "HUGGING FACE ID")
  local out = { head }
  for _, r in ipairs(rows) do
    out[#out + 1] = ("%-22s %8s %7d %6d %6d %4d %7d  %s"):format(r.name, count(r.params),
      r.hidden, r.layers, r.heads, r.kv_heads, r.vocab, r.hf_id or "-")
  end
  out[#out + 1] = ("%d models; PARAMS as published on the Hugging Face Hub (--json: also "
    .. "the count dsforge computes from the config, and the source of each figure). "
    .. "Use a name as --param model=NAME or estimate --model NAME, or give a "
    .. "config.json path instead."):format(#rows)
  return table.concat(out, "\n") .. "\n"
end

M.COLUMNS = COLUMNS
return M
