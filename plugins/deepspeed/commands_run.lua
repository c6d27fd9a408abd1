-- plugins/deepspeed/commands_run.lua -- what the estimate command the
-- deepspeed plugin declares (commands.lua) does when it runs: loaded by
-- that command, not when the plugin is declared (issue 15); explain and
-- schema are in commands_doc.lua. M.estimate(opts, args, ctx) returns the
-- text to print (or a table, printed as JSON), or nil and an error table.

local M = {}

local function usage(msg, hint)
  return nil, { message = msg, hint = hint, kind = "usage" }
end

-- A whole number in [min, max], as the C commands read them.
local function whole(opt, s, min, max)
  local v = s:match("^%-?%d+$") and math.tointeger(tonumber(s))
  if not v or v < min or v > max then
    return nil, string.format("--%s: '%s' is not a whole number between %d and %d",
      opt, s, min, max)
  end
  return v
end

local SUFFIX = { k = 3, m = 6, b = 9, t = 12 }

-- A count such as a model's parameters: 7000000000, 7e9, 7B, 7b, 1.3B,
-- 350M, 125k, 0.5T; the value must be whole and in [min, max]. Exact
-- integer arithmetic: 1.3B is 1300000000, never 1299999999.
function M.parse_count(s, min, max)
  if type(s) ~= "string" then return nil end
  local int, frac, exp, suf = s:match("^(%d*)%.?(%d*)([eE]?[+-]?%d*)([kKmMbBtT]?)$")
  if not int then return nil end
  local digits = int .. frac
  if digits == "" or #digits > 18 then return nil end
  if int == "" and not s:find("^%.") then return nil end
  local e = 0
  if exp ~= "" then
    local n = exp:match("^[eE]([+-]?%d+)$")
    if not n or #n > 4 then return nil end
    e = math.tointeger(tonumber(n))
  end
  e = e + (SUFFIX[suf:lower()] or 0) - #frac
  local v = math.tointeger(tonumber(digits))
  while e < 0 do
    if v % 10 ~= 0 then return nil end
    v, e = v // 10, e + 1
  end
  while e > 0 do
    if v > max // 10 then return nil end
    v, e = v * 10, e - 1
  end
  if v < min or v > max then return nil end
  return v
end

local function count(opt, s, min, max)
  local v = M.parse_count(s, min, max)
  if not v then
    return nil, string.format("--%s: '%s' is not a count between %d and %d", opt, s, min, max),
      "write it as 7000000000, 7e9, 7B, 1.3B or 350M"
  end
  return v
end

local function one_of(opt, s, a, b)
  if s ~= a and s ~= b then
    return nil, string.format("--%s must be '%s' or '%s'", opt, a, b)
  end
  return s
end

local function gib(bytes) return string.format("%.2f", bytes / 1073741824.0) end

local function estimate_table(res)
  local i = res.inputs
  local out = {
    "Estimated memory needed for params, optim states and gradients for a:",
    string.format("HW: Setup with %d node%s, %d GPU%s per node.", i.nodes,
      i.nodes > 1 and "s" or "", i.gpus_per_node, i.gpus_per_node > 1 and "s" or ""),
    -- truncated like DeepSpeed's int(total_params/1e6)
    string.format("SW: Model with %dM total params, %dM largest layer params.",
      i.params // 1000000, i.largest_layer // 1000000),
  }
  if i.experts then
    -- a mixture-of-experts model (deepspeed.moe): what the rows assume
    out[#out + 1] = string.format("MoE: %d experts per layer, %d per token; %dM active params, "
      .. "%dM in experts; expert parallel size %d.", i.experts, i.experts_per_token,
      i.active_params // 1000000, i.expert_params // 1000000, i.ep_size or 1)
  end
  if i.trainable_params then
    out[#out + 1] = string.format("%s r=%d: %dM trainable params, base weights in %d bits.",
      i.finetune == "qlora" and "QLoRA" or "LoRA", i.lora_rank, i.trainable_params // 1000000,
      i.base_bits)
  end
  if (i.tp or 1) > 1 then
    out[#out + 1] = string.format("AutoTP %d: each GPU holds 1/%d of every layer.", i.tp, i.tp)
  end
  out[#out + 1] = "  per CPU  |  per GPU |   Options"
  for _, r in ipairs(res.rows) do
    local zi = ""
    if r.zero_init ~= nil then zi = r.zero_init and " zero_init=1" or " zero_init=0" end
    out[#out + 1] = string.format("  %8s | %8s | ZeRO-%d offload_optimizer=%s offload_param=%s%s",
      r.cpu_text, r.gpu_text, r.stage, r.offload_optimizer, r.offload_param, zi)
    if r.nvme_bytes then
      out[#out + 1] = string.format("  NVMe per node: %sGB (ZeRO-Infinity swap files)",
        gib(r.nvme_bytes))
    end
  end
  if res.activation_bytes then
    out[#out + 1] = string.format("Activations per GPU: %sGB (with activation "
      .. "checkpointing: %sGB); add them to the per-GPU column.",
      gib(res.activation_bytes), gib(res.activation_bytes_checkpointed))
  end
  return table.concat(out, "\n") .. "\n"
end

function M.estimate(opts, args, ctx)
  if #args > 0 then return usage("unexpected argument '" .. args[1] .. "'") end
  local o, hf_path = {}, nil
  local function num(opt, key, min, max, reader)
    local s = opts[opt]
    if s == nil then return true end
    local v, err, hint = (reader or whole)(opt, s, min, max)
    if not v then return false, err, hint end
    o[key] = v
    return true
  end
  local checks = {
    { "params", "params", 1, 1000000000000000, count },
    { "largest-layer", "largest_layer", 0, 1000000000000000, count },
    { "gpus", "gpus", 1, 1000000 }, { "nodes", "nodes", 1, 1000000 },
    { "stage", "stage", 0, 3 }, { "seq-len", "seq_len", 1, 100000000 },
    { "micro-batch", "micro_batch", 1, 1000000 }, { "ep-size", "ep_size", 1, 65536 },
    { "lora-rank", "lora_rank", 1, 4096 }, { "tp", "tp", 1, 1024 }, { "sp", "sp", 1, 1048576 },
  }
  for _, c in ipairs(checks) do
    local ok, err, hint = num(c[1], c[2], c[3], c[4], c[5])
    if not ok then return usage(err, hint) end
  end
  for _, c in ipairs({ { "zero-init", "zero_init" }, { "flash-attention", "flash_attention" } }) do
    if opts[c[1]] ~= nil then
      local v, err = one_of(c[1], opts[c[1]], "0", "1")
      if not v then return usage(err) end
      o[c[2]] = v == "1"
    end
  end
  for _, c in ipairs({ { "offload-optimizer", "offload_optimizer" }, { "offload-param", "offload_param" } }) do
    if opts[c[1]] ~= nil then
      local v = opts[c[1]]
      if v ~= "none" and v ~= "cpu" and v ~= "nvme" then
        return usage(string.format("--%s must be 'none', 'cpu' or 'nvme'", c[1]))
      end
      o[c[2]] = v
    end
  end
  if opts.finetune ~= nil then
    local v = opts.finetune
    if v ~= "full" and v ~= "lora" and v ~= "qlora" then
      return usage("--finetune must be 'full', 'lora' or 'qlora'")
    end
    o.finetune = v
  end
  if o.lora_rank and (o.finetune or "full") == "full" then
    return usage("--lora-rank goes with --finetune lora|qlora")
  end
  local model = opts.model
  if model then
    -- a file when it looks like one or exists; otherwise a catalog name
    -- or Hub id (meta-llama/Llama-2-7b-hf)
    if model:sub(-5) == ".json" or ctx.is_file(model) then
      local cfg, err = ctx.read_json(model)
      if cfg == nil then return nil, err end
      o.hf_config, hf_path = cfg, model
    else
      o.model = model
    end
  end
  if not o.model and not o.hf_config and not o.params then
    return usage("estimate needs --model or --params",
      "try 'dsforge estimate --model llama-2-7b --gpus 8'")
  end
  if o.micro_batch and not o.seq_len then
    return usage("--micro-batch goes with --seq-len")
  end
  local res = require("deepspeed.estimate").run(o)
  if res.error then
    local input = res.code == 3
    -- an input error is about the config.json: name the file
    return nil, { message = res.error, hint = res.hint,
      kind = input and "input" or "usage", file = input and hf_path or nil }
  end
  if opts.json then return res end
  return estimate_table(res)
end

return M
