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

local COLUMNS = { "name", "params", "active_params", "experts", "hidden", "layers", "heads",
  "kv_heads", "vocab", "hf_id" }

-- "8/2": routed experts per MoE layer / routed experts per token; "64/6+2"
-- adds the shared experts every token also goes through; "-" for a dense model.
local function experts(m)
  if not m.experts then return "-" end
  local s = ("%d/%d"):format(m.experts, m.experts_per_token)
  if (m.shared_experts or 0) > 0 then s = s .. "+" .. m.shared_experts end
  return s
end

function M.models(opts, args)
  if #args > 0 then
    return nil, { message = "models takes no arguments (got '" .. tostring(args[1]) .. "')",
      hint = "dsforge models [--json]", kind = "usage" }
  end
  local rows, expert_text = {}, {}
  for _, name in ipairs(models.names()) do
    local m = models.get(name)
    rows[#rows + 1] = {
      name = name, params = m.published_params or m.params, params_computed = m.params,
      -- a dense model's every parameter is active
      active_params = m.active_params or m.params, experts = m.experts or 0,
      experts_per_token = m.experts_per_token or 0, shared_experts = m.shared_experts or 0,
      expert_params = m.expert_params or 0,
      hidden = m.hidden_size, layers = m.layers, heads = m.heads, kv_heads = m.kv_heads,
      vocab = m.vocab, hf_id = m.hf_id, arch = m.arch, source = m.source,
    }
    expert_text[#rows] = experts(m)
  end
  if opts.json then return dsforge.array(rows) end
  local head = ("%-18s %8s %8s %7s %6s %6s %5s %4s %7s  %s"):format("MODEL", "PARAMS",
    "ACTIVE", "EXPERTS", "HIDDEN", "LAYERS", "HEADS", "KV", "VOCAB", "HUGGING FACE ID")
  local out = { head }
  for i, r in ipairs(rows) do
    out[#out + 1] = ("%-18s %8s %8s %7s %6d %6d %5d %4d %7d  %s"):format(r.name,
      count(r.params), count(r.active_params), expert_text[i], r.hidden,
      r.layers, r.heads, r.kv_heads, r.vocab, r.hf_id or "-")
  end
  out[#out + 1] = ("%d models; PARAMS as published on the Hugging Face Hub (--json: also "
    .. "the count dsforge computes from the config, and the source of each figure); "
    .. "ACTIVE the parameters one token goes through; EXPERTS routed experts per layer / "
    .. "per token (+ shared experts), - for a dense model. "
    .. "Use a name as --param model=NAME or estimate --model NAME, or give a "
    .. "config.json path instead."):format(#rows)
  return table.concat(out, "\n") .. "\n"
end

M.COLUMNS = COLUMNS
return M
