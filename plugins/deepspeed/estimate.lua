-- plugins/deepspeed/estimate.lua -- the data behind `dsforge estimate`.
--
-- M.run(opts) -> result table. opts (from the command line):
--   model (catalog name) | hf_config (a decoded config.json table) |
--   params (+ largest_layer), gpus (per node, default 1), nodes (1),
--   stage, offload_optimizer, offload_param, zero_init, seq_len,
--   micro_batch, flash_attention (default true: no s^2 attention term),
--   ep_size (expert parallel size, default 1; deepspeed.moe),
--   finetune ("full"|"lora"|"qlora"), lora_rank (16), tp, sp (1).
-- finetune, tp and NVMe offload go through deepspeed.memory_terms (loaded
-- only then); sp divides the activations (deepspeed.activations).
-- Bad input is returned, not raised: { error = "...", hint = "...",
-- code = 2 (usage) or 3 (input) }, so the CLI can pick the exit code.

local memory = require("deepspeed.memory")
local models = require("deepspeed.models")
-- deepspeed.moe is loaded only for a model with experts or --ep-size.
-- deepspeed.activations is loaded only with --seq-len (below).

local M = {}

local function fail(code, msg, hint)
  return { error = msg, hint = hint, code = code }
end

local function model_of(opts)
  if opts.model then
    local m = models.get(opts.model)
    if not m then
      local s = models.suggest(opts.model)
      return nil, fail(2, "unknown model '" .. opts.model .. "'",
        (#s > 0 and ("did you mean: " .. table.concat(s, ", ") .. "? ") or "")
          .. "dsforge models lists the catalog; or pass a config.json path")
    end
    return m
  end
  if opts.hf_config then
    local ok, m = pcall(models.from_hf_config, opts.hf_config)
    if not ok then
      local msg = tostring(m):gsub("^[^:]*:%d+: ", "")
      -- models.lua's messages already start with "config.json"
      if not msg:find("^config%.json") then msg = "config.json: " .. msg end
      return nil, fail(3, msg,
        "a Hugging Face config.json needs hidden_size, num_hidden_layers, "
        .. "num_attention_heads, intermediate_size and vocab_size (or the GPT-2/T5 names)")
    end
    return m
  end
  local p = opts.params
  if math.type(p) ~= "integer" or p <= 0 then
    return nil, fail(2, "--params must be a positive whole number")
  end
  local L = opts.largest_layer or 0
  if math.type(L) ~= "integer" or L < 0 or L > p then
    return nil, fail(2, "--largest-layer must be a whole number between 0 and --params")
  end
  return { name = "custom", params = p, largest_layer = L }
end

function M.run(opts)
  local m, err = model_of(opts)
  if not m then return err end
  local n, nodes = opts.gpus or 1, opts.nodes or 1
  if math.type(n) ~= "integer" or n < 1 then return fail(2, "--gpus must be at least 1") end
  if math.type(nodes) ~= "integer" or nodes < 1 then return fail(2, "--nodes must be at least 1") end
  local out = {
    inputs = {
      model = m.name, params = m.params, largest_layer = m.largest_layer,
      gpus_per_node = n, nodes = nodes, seq_len = opts.seq_len, micro_batch = opts.micro_batch,
      ep_size = opts.ep_size, expert_params = m.expert_params, active_params = m.active_params,
      experts = m.experts, experts_per_token = m.experts_per_token,
      tp = opts.tp, sp = opts.sp,
    },
    rows = dsforge.array{},
  }
  local ep = opts.ep_size or 1
  if math.type(ep) ~= "integer" or ep < 1 then return fail(2, "--ep-size must be at least 1") end
  local moe = (m.experts or ep > 1) and require("deepspeed.moe") or nil
  local function states(o)
    if moe then return moe.estimate(o, m, ep) end
    return memory.estimate(o)
  end
  local tp, sp = opts.tp or 1, opts.sp or 1
  local lora = opts.finetune == "lora" or opts.finetune == "qlora"
  local nvme = opts.offload_optimizer == "nvme" or opts.offload_param == "nvme"
  if n % tp ~= 0 then return fail(2, ("--tp %d must divide --gpus %d"):format(tp, n)) end
  if (n * nodes) % sp ~= 0 then
    return fail(2, ("--sp %d must divide the GPU count %d"):format(sp, n * nodes))
  end
  if nvme and opts.stage ~= 3 then
    return fail(2, "NVMe offload needs --stage 3 (DeepSpeed's stages 1 and 2 treat nvme as cpu)")
  end
  if moe and (lora or tp > 1 or nvme) then
    -- (deepspeed.moe and deepspeed.memory_terms each model one of them)
    return fail(2, "--finetune, --tp and NVMe offload are not modelled for a mixture-of-experts "
      .. "model or --ep-size")
  end
  local rows
  if lora or tp > 1 or nvme then
    -- (dsforge's own terms: estimate_terms.lua, loaded only for them)
    local why
    rows, why = require("deepspeed.estimate_terms").rows(m, opts, n, nodes, tp, lora, nvme, out)
    if not rows then return fail(2, why) end
  elseif opts.stage ~= nil then
    local ok, est = pcall(states, {
      stage = opts.stage, params = m.params, largest_layer = m.largest_layer,
      gpus_per_node = n, nodes = nodes,
      offload_optimizer = opts.offload_optimizer or "none",
      offload_param = opts.offload_param or "none",
      zero_init = opts.zero_init ~= false,
    })
    if not ok then return fail(2, (tostring(est):gsub("^[^:]*:%d+: ", ""))) end
    -- (not `stage == 3 and zi or nil`: that drops zero_init = false)
    local zi = nil
    if opts.stage == 3 then zi = opts.zero_init ~= false end
    rows = { { stage = opts.stage, offload_optimizer = opts.offload_optimizer or "none",
      offload_param = opts.offload_param or "none",
      zero_init = zi,
      gpu = est.gpu, cpu = est.cpu } }
  elseif ep == 1 then
    rows = memory.all_cold(m.params, m.largest_layer, n, nodes)
  else
    local why
    rows, why = moe.all_rows(m, n, nodes, ep)
    if not rows then return fail(2, why) end
  end
  local act_plain, act_ckpt
  if opts.seq_len then
    if not m.hidden_size then
      return fail(2, "--seq-len needs a model with known dimensions (--model or a config.json)")
    end
    local a = { seq_len = opts.seq_len, micro_batch = opts.micro_batch or 1,
      hidden_size = m.hidden_size, layers = m.layers, heads = m.heads, vocab = m.vocab,
      flash_attention = opts.flash_attention ~= false }
    if sp > 1 then a.sp = sp end
    if tp > 1 then a.tp = tp end
    local activations = require("deepspeed.activations")
    local ok, v = pcall(activations.bytes, a)
    if not ok then return fail(2, (tostring(v):gsub("^[^:]*:%d+: ", ""))) end
    local extra = { model = m, seq_len = a.seq_len, micro_batch = a.micro_batch }
    act_plain = v + (moe and moe.activation_extra(extra) or 0)
    a.checkpointing, extra.checkpointing = true, true
    act_ckpt = activations.bytes(a) + (moe and moe.activation_extra(extra) or 0)
    out.activation_bytes = act_plain
    out.activation_bytes_checkpointed = act_ckpt
  end
  for _, r in ipairs(rows) do
    local row = { stage = r.stage, offload_optimizer = r.offload_optimizer,
      offload_param = r.offload_param, zero_init = r.zero_init,
      gpu_bytes = r.gpu, cpu_bytes = r.cpu, nvme_bytes = r.nvme,
      gpu_text = memory.format_gib(r.gpu), cpu_text = memory.format_gib(r.cpu) }
    if act_plain then
      row.gpu_total_bytes = r.gpu + act_plain
      row.gpu_total_checkpointed_bytes = r.gpu + act_ckpt
    end
    out.rows[#out.rows + 1] = row
  end
  return out
end

return M
