-- launch.trainer: the Hugging Face Trainer side of a DeepSpeed config.
--
-- Independent of the deepspeed plugin's hf.lua on purpose: this module is
-- written in TrainingArguments' own names, transcribed from the Python
-- sources, so a test can check one against the other.
--
-- Sources (huggingface/transformers):
--   src/transformers/training_args.py  TrainingArguments field defaults;
--       get_warmup_steps(n) = warmup_steps if warmup_steps > 0
--                             else ceil(n * warmup_ratio)            (v4)
--   src/transformers/integrations/deepspeed.py
--       HfTrainerDeepSpeedConfig.fill_match(key, hf_val, hf_key, must_match)
--       HfTrainerDeepSpeedConfig.trainer_config_process(args, auto_find_batch_size)
--       HfTrainerDeepSpeedConfig.trainer_config_finalize(args, model, n)
--   src/transformers/trainer.py  num_training_steps = max_steps when
--       max_steps > 0, else epochs * update steps per epoch (data dependent).
--
-- API
--   M.DEFAULTS                          TrainingArguments defaults used here
--   M.training_args(variant)            -> args | nil, message
--       variant = { config = DeepSpeed config (either target),
--                   params = the variant's profile params,
--                   deepspeed_file = "name.json" (optional) }
--   M.fill(config, args, world_size, opts) -> result
--       opts = { hidden_size = int, num_training_steps = int (used when
--                args.max_steps is not > 0), auto_find_batch_size = bool }
--       result = { config = the filled copy, mismatches = { {path, ds,
--         hf, hf_key, message} ... }, error = ValueError text or nil,
--         unfilled = { {path, reason} ... }, dtype = "bf16"|"fp16"|"fp32",
--         num_training_steps = n or nil }
--   M.with_defaults(args)               copy with defaults for unset fields

local type, rawget, ipairs = type, rawget, ipairs
local math, string, table = math, string, table
local dsforge = dsforge
local py = require("launch.py")
local NULL = dsforge.null

local M = {}

-- transformers/training_args.py, class TrainingArguments (v4.x defaults).
M.DEFAULTS = {
  per_device_train_batch_size = 8,
  gradient_accumulation_steps = 1,
  learning_rate = 5e-5,
  weight_decay = 0.0,
  adam_beta1 = 0.9,
  adam_beta2 = 0.999,
  adam_epsilon = 1e-8,
  max_grad_norm = 1.0,
  max_steps = -1,
  warmup_steps = 0,
  warmup_ratio = 0.0,
  lr_scheduler_type = "linear",
  bf16 = false,
  fp16 = false,
  bf16_full_eval = false,
  fp16_full_eval = false,
  gradient_checkpointing = false,
  save_on_each_node = false,
  auto_find_batch_size = false,
}

function M.with_defaults(args)
  local out = {}
  for _, k in ipairs(dsforge.sorted_keys(M.DEFAULTS)) do out[k] = M.DEFAULTS[k] end
  for _, k in ipairs(dsforge.sorted_keys(args or {})) do out[k] = args[k] end
  return out
end

local function is_num(v) return type(v) == "number" and v == v end

local function copy(v)
  if type(v) ~= "table" or v == NULL or v == dsforge.delete then return v end
  local out = {}
  for _, k in ipairs(dsforge.sorted_keys(v)) do out[k] = copy(rawget(v, k)) end
  if #dsforge.sorted_keys(v) == 0 then
    return dsforge.kind(v) == "array" and dsforge.array(out) or dsforge.object(out)
  end
  return out
end

-- HfDeepSpeedConfig.find_config_node: the dict holding the last key, or nil
-- when an intermediate key is missing (or not a dict).
-- (Paths are split once: the same few are read for every variant.)
local split_cache = {}
local function split(path)
  local parts = split_cache[path]
  if not parts then
    parts = {}
    for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
    split_cache[path] = parts
  end
  return parts
end

local function node(cfg, path)
  local parts = split(path)
  local n = cfg
  for i = 1, #parts - 1 do
    if not py.is_object(n) then return nil end
    n = rawget(n, parts[i])
  end
  if not py.is_object(n) then return nil end
  return n, parts[#parts]
end

-- What node and rawget give, walked directly (every variant reads some 20
-- paths): null and delete are light userdata, not tables, and a string
-- key of a JSON array is nil, so for reading only the type needs checking.
local function get(cfg, path)
  local parts = split(path)
  local n = cfg
  for i = 1, #parts do
    if type(n) ~= "table" then return nil end
    n = rawget(n, parts[i])
  end
  if n == NULL then return nil end
  return n
end
M.get = get

---------------------------------------------------------------------------
-- fill: what the Trainer does to the config
---------------------------------------------------------------------------

function M.fill(config, args, world_size, opts)
  opts = opts or {}
  local a = M.with_defaults(args)
  local cfg = copy(config)
  local mismatches, unfilled = {}, {}

  -- fill_match(ds_key_long, hf_val, hf_key, must_match=True)
  local function fill_match(path, hf_val, hf_key, must_match)
    local n, k = node(cfg, path)
    if not n then return end
    local v = rawget(n, k)
    if v == "auto" then
      if hf_val == nil then
        unfilled[#unfilled + 1] = { path = path, reason = hf_key .. " is unknown" }
      else
        n[k] = hf_val
      end
      return
    end
    if must_match == false or hf_val == nil then return end
    if v ~= nil and v ~= NULL and not py.eq(v, hf_val) then
      mismatches[#mismatches + 1] = { path = path, ds = v, hf = hf_val, hf_key = hf_key,
        message = "- ds " .. path .. "=" .. py.str(v) .. " vs hf " .. hf_key .. "=" .. py.str(hf_val) }
    end
  end
  local function fill_only(path, v) fill_match(path, v, "(fill only)", false) end

  -- trainer_config_process(args, auto_find_batch_size)
  local afbs = opts.auto_find_batch_size or a.auto_find_batch_size == true
  local tb = world_size and world_size * a.per_device_train_batch_size
    * a.gradient_accumulation_steps or nil
  fill_match("train_micro_batch_size_per_gpu", a.per_device_train_batch_size,
    "per_device_train_batch_size", not afbs)
  fill_match("gradient_accumulation_steps", a.gradient_accumulation_steps,
    "gradient_accumulation_steps")
  fill_match("train_batch_size", tb, "train_batch_size (calculated)", not afbs)
  fill_match("gradient_clipping", a.max_grad_norm, "max_grad_norm")
  fill_match("optimizer.params.lr", a.learning_rate, "learning_rate")
  fill_match("optimizer.params.betas", dsforge.array({ a.adam_beta1, a.adam_beta2 }),
    "adam_beta1+adam_beta2")
  fill_match("optimizer.params.eps", a.adam_epsilon, "adam_epsilon")
  fill_match("optimizer.params.weight_decay", a.weight_decay, "weight_decay")
  fill_only("scheduler.params.warmup_min_lr", 0) -- "not a trainer arg"
  fill_match("scheduler.params.warmup_max_lr", a.learning_rate, "learning_rate")
  if a.save_on_each_node then
    if not py.is_object(rawget(cfg, "checkpoint")) then cfg.checkpoint = dsforge.object({}) end
    cfg.checkpoint.use_node_local_storage = a.save_on_each_node
  end
  -- Current releases: fp16.enabled <- fp16 or fp16_full_eval (older ones also
  -- required the amp backend and filled amp.* for apex).
  fill_match("fp16.enabled", (a.fp16 or a.fp16_full_eval) == true, "fp16|fp16_full_eval")
  fill_match("bf16.enabled", (a.bf16 or a.bf16_full_eval) == true, "bf16|bf16_full_eval")
  -- dtype: is_true("bf16.enabled") -> bf16; is_false("fp16.enabled") -> fp32;
  -- else fp16 (a missing fp16.enabled is neither true nor false).
  local function pybool(v)
    return not (v == false or v == 0 or v == "" or v == NULL)
  end
  local dtype
  local bfe, fpe = get(cfg, "bf16.enabled"), get(cfg, "fp16.enabled")
  if bfe ~= nil and pybool(bfe) then dtype = "bf16"
  elseif fpe ~= nil and not pybool(fpe) then dtype = "fp32"
  else dtype = "fp16" end

  -- trainer_config_finalize(args, model, num_training_steps)
  local h = opts.hidden_size
  local zero = get(cfg, "zero_optimization")
  local hkeys = { "zero_optimization.reduce_bucket_size",
    "zero_optimization.stage3_prefetch_bucket_size",
    "zero_optimization.stage3_param_persistence_threshold" }
  local any_auto = false
  for _, k in ipairs(hkeys) do if get(cfg, k) == "auto" then any_auto = true end end
  if any_auto and h == nil then
    for _, k in ipairs(hkeys) do
      if get(cfg, k) == "auto" then
        unfilled[#unfilled + 1] = { path = k, reason = "the model's hidden_size is unknown" }
      end
    end
  elseif any_auto then
    fill_only("zero_optimization.reduce_bucket_size", h * h)
    if py.is_object(zero) and rawget(zero, "stage") == 3 then
      -- Current releases write int(0.9 * h * h); before v4.46 a float.
      fill_only("zero_optimization.stage3_prefetch_bucket_size", math.floor(0.9 * h * h))
      fill_only("zero_optimization.stage3_param_persistence_threshold", 10 * h)
    end
  end
  local n
  if is_num(a.max_steps) and a.max_steps > 0 then n = a.max_steps
  else n = opts.num_training_steps end
  fill_match("scheduler.params.total_num_steps", n, "num_training_steps (calculated)")
  local warm
  if is_num(a.warmup_steps) and a.warmup_steps > 0 then warm = a.warmup_steps
  elseif n ~= nil then warm = math.tointeger(math.ceil(n * a.warmup_ratio))
  elseif a.warmup_ratio == 0 then warm = 0 -- ceil(n * 0) whatever n is
  end
  fill_match("scheduler.params.warmup_num_steps", warm, "warmup_steps")

  local err
  if #mismatches > 0 then
    local lines = {}
    for _, m in ipairs(mismatches) do lines[#lines + 1] = m.message end
    err = "Please correct the following DeepSpeed config values that mismatch TrainingArguments"
      .. " values:\n" .. table.concat(lines, "\n")
      .. "\nThe easiest method is to set these DeepSpeed config values to 'auto'."
  end
  return { config = cfg, mismatches = dsforge.array(mismatches), error = err,
    unfilled = dsforge.array(unfilled), dtype = dtype, num_training_steps = n }
end

---------------------------------------------------------------------------
-- training_args: the TrainingArguments that reproduce a variant
---------------------------------------------------------------------------

local function pick(a, b, c)
  if a ~= nil and a ~= NULL and a ~= "auto" then return a end
  if b ~= nil and b ~= NULL and b ~= "auto" then return b end
  if c ~= nil and c ~= NULL and c ~= "auto" then return c end
  return nil
end

local function int(v) return math.tointeger(v) or v end

-- { config path, the argument that fills it, an alternative, the param }
local NEEDED = {
  { "optimizer.params.lr", "learning_rate", nil, "learning_rate" },
  { "scheduler.params.warmup_max_lr", "learning_rate", nil, "learning_rate" },
  { "optimizer.params.betas", "adam_beta1", nil, "adam_beta1/adam_beta2" },
  { "optimizer.params.betas", "adam_beta2", nil, "adam_beta1/adam_beta2" },
  { "optimizer.params.eps", "adam_epsilon", nil, "adam_epsilon" },
  { "optimizer.params.weight_decay", "weight_decay", nil, "weight_decay" },
  { "gradient_clipping", "max_grad_norm", nil, "max_grad_norm" },
  { "scheduler.params.total_num_steps", "max_steps", nil, "num_training_steps" },
  { "scheduler.params.warmup_num_steps", "warmup_steps", "warmup_ratio", "warmup_steps" },
}

function M.training_args(variant)
  if type(variant) ~= "table" or not py.is_object(variant.config) then
    return nil, "launch.trainer.training_args: variant.config must be a JSON object"
  end
  local c, p = variant.config, variant.params or {}
  local w = p.world_size
  local out = {}
  if variant.deepspeed_file ~= nil then out.deepspeed = variant.deepspeed_file end

  local mb = pick(get(c, "train_micro_batch_size_per_gpu"), p.micro_batch_size)
  local gas = pick(get(c, "gradient_accumulation_steps"), p.gradient_accumulation)
  local tb = pick(get(c, "train_batch_size"))
  if mb == nil and tb ~= nil and gas ~= nil and w ~= nil then mb = tb // (gas * w) end
  if gas == nil and tb ~= nil and mb ~= nil and w ~= nil then gas = tb // (mb * w) end
  if gas == nil and mb ~= nil then gas = 1 end
  if mb == nil then
    return nil, "the micro batch is unknown: neither train_micro_batch_size_per_gpu nor"
      .. " the micro_batch_size param is set"
  end
  if tb ~= nil and w ~= nil and tb ~= mb * gas * w then
    return nil, string.format("train_batch_size %s is not %s * %s * world_size %s",
      py.num(tb), py.num(mb), py.num(gas), py.num(w))
  end
  out.per_device_train_batch_size = int(mb)
  out.gradient_accumulation_steps = int(gas)

  out.learning_rate = pick(get(c, "optimizer.params.lr"), get(c, "scheduler.params.warmup_max_lr"),
    p.learning_rate)
  local betas = get(c, "optimizer.params.betas")
  if py.is_array(betas) and #betas == 2 then
    out.adam_beta1, out.adam_beta2 = betas[1], betas[2]
  else
    out.adam_beta1, out.adam_beta2 = p.adam_beta1, p.adam_beta2
  end
  out.adam_epsilon = pick(get(c, "optimizer.params.eps"), p.adam_epsilon)
  out.weight_decay = pick(get(c, "optimizer.params.weight_decay"), p.weight_decay)
  out.max_grad_norm = pick(get(c, "gradient_clipping"), p.max_grad_norm)

  local steps = pick(get(c, "scheduler.params.total_num_steps"), p.num_training_steps, p.max_steps)
  if steps ~= nil then out.max_steps = int(steps) end
  local warm = pick(get(c, "scheduler.params.warmup_num_steps"), p.warmup_steps)
  if warm ~= nil then out.warmup_steps = int(warm)
  elseif p.warmup_ratio ~= nil then out.warmup_ratio = p.warmup_ratio end
  -- Without a DeepSpeed scheduler the Trainer builds its own from
  -- lr_scheduler_type (integrations/deepspeed.py deepspeed_optim_sched).
  if get(c, "scheduler") == nil then
    out.lr_scheduler_type = p.lr_scheduler_type or M.DEFAULTS.lr_scheduler_type
  end

  local bf, fp = get(c, "bf16.enabled"), get(c, "fp16.enabled")
  if bf == "auto" or fp == "auto" or bf == nil and fp == nil then
    out.bf16 = p.precision == "bf16"
    out.fp16 = p.precision == "fp16"
  else
    out.bf16 = bf == true or bf == 1
    out.fp16 = fp == true or fp == 1
  end
  local gc = p.gradient_checkpointing
  if gc == nil then gc = p.activation_checkpointing end
  out.gradient_checkpointing = gc == true

  -- An "auto" the Trainer fills must get the profile's value, never a
  -- TrainingArguments default nobody chose.
  for _, need in ipairs(NEEDED) do
    if out[need[2]] == nil and (need[3] == nil or out[need[3]] == nil) and get(c, need[1]) == "auto" then
      return nil, string.format("%s is \"auto\" and the profile has no %s param: the Trainer"
        .. " would fill it from its default", need[1], need[4])
    end
  end
  return out
end

return M
