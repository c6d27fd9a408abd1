-- deepspeed.hf: the Hugging Face Trainer's handling of "auto" values.
--
-- Reproduces transformers' HfTrainerDeepSpeedConfig.trainer_config_process
-- and trainer_config_finalize (src/transformers/integrations/deepspeed.py):
--   fill_match(key, v): a config value "auto" becomes v; otherwise a non-null
--     value that differs from v (Python ==) is a mismatch, and the Trainer
--     raises ValueError listing all mismatches at the end of finalize;
--   fill_only(key, v): "auto" becomes v, nothing is compared.
-- Keys are only filled when they are present: HF never adds a missing key.
--
-- API
--   M.auto_keys                       list of { path, inputs, match, description }
--   M.resolve(cfg, inputs)            -> new_cfg, missing, mismatches
--   M.training_args(cfg, params)      -> args | nil, message
--   M.optimizer_args(cfg)             -> table of optimizer TrainingArguments
--   M.TRAINING_DEFAULTS, M.with_defaults(inputs)

-- Globals used on every value of every variant, as upvalues (a global
-- read goes through the sandbox environment's metatable).
local type, rawget, rawset, next, ipairs, pairs = type, rawget, rawset, next, ipairs, pairs
local tostring, tonumber, math, string, table = tostring, tonumber, math, string, table
local dsforge = dsforge

local M = {}

local NULL = dsforge.null
local pynum = require("deepspeed.batch").pynum
local batch = require("deepspeed.batch")

-- (null and the delete marker are light userdata, never tables: a table
-- is neither, with no comparison)
local function obj(v)
  if type(v) ~= "table" then return nil end
  if rawget(v, 1) ~= nil then return nil end
  return v
end

local function is_num(v) return type(v) == "number" and v == v end

---------------------------------------------------------------------------
-- What HF fills
---------------------------------------------------------------------------

-- (its own module, so that explain names what "auto" becomes without
-- loading this one)
M.auto_keys = require("deepspeed.hf_auto")

-- transformers.TrainingArguments defaults, in this module's input names.
M.TRAINING_DEFAULTS = {
  micro_batch_size = 8, gradient_accumulation = 1, max_grad_norm = 1.0,
  learning_rate = 5e-5, adam_beta1 = 0.9, adam_beta2 = 0.999, adam_epsilon = 1e-8,
  weight_decay = 0.0, precision = "fp32", warmup_steps = 0, warmup_ratio = 0.0,
  save_on_each_node = false,
}

-- A copy of inputs with TrainingArguments defaults for the unset fields
-- (world_size, hidden_size and num_training_steps have no default).
function M.with_defaults(inputs)
  local out = {}
  for _, k in ipairs(dsforge.sorted_keys(inputs or {})) do out[k] = inputs[k] end
  for _, k in ipairs(dsforge.sorted_keys(M.TRAINING_DEFAULTS)) do
    if out[k] == nil then out[k] = M.TRAINING_DEFAULTS[k] end
  end
  return out
end

local NUMERIC_INPUTS = { "world_size", "micro_batch_size", "gradient_accumulation",
  "max_grad_norm", "learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon",
  "weight_decay", "hidden_size", "num_training_steps", "warmup_steps", "warmup_ratio" }
local INTEGER_INPUTS = { world_size = true, micro_batch_size = true,
  gradient_accumulation = true, hidden_size = true, num_training_steps = true,
  warmup_steps = true }
local PRECISIONS = { bf16 = true, fp16 = true, fp32 = true }

local function check_inputs(inputs)
  if type(inputs) ~= "table" then
    error("deepspeed.hf.resolve: inputs must be a table or nil", 3)
  end
  for _, k in ipairs(NUMERIC_INPUTS) do
    local v = inputs[k]
    if v ~= nil then
      if not is_num(v) then
        error("deepspeed.hf.resolve: inputs." .. k .. " must be a number, got " .. type(v), 3)
      end
      if INTEGER_INPUTS[k] and math.tointeger(v) == nil then
        error("deepspeed.hf.resolve: inputs." .. k .. " must be an integer, got " .. pynum(v), 3)
      end
    end
  end
  local p = inputs.precision
  if p ~= nil and not PRECISIONS[p] then
    error("deepspeed.hf.resolve: inputs.precision must be \"bf16\", \"fp16\" or \"fp32\", got "
      .. tostring(p), 3)
  end
  for _, k in ipairs({ "save_on_each_node", "auto_find_batch_size" }) do
    if inputs[k] ~= nil and type(inputs[k]) ~= "boolean" then
      error("deepspeed.hf.resolve: inputs." .. k .. " must be a boolean", 3)
    end
  end
end

---------------------------------------------------------------------------
-- Helpers
---------------------------------------------------------------------------

local function deepcopy(v)
  if type(v) ~= "table" then return v end -- (null, delete: not tables)
  local out = {}
  for _, k in ipairs(dsforge.sorted_keys(v)) do out[k] = deepcopy(rawget(v, k)) end
  if next(v) == nil then
    if dsforge.kind(v) == "object" then return dsforge.object(out) end
    return dsforge.array(out)
  end
  return out
end

local function is_array(t)
  return type(t) == "table" and t ~= NULL and (rawget(t, 1) ~= nil
    or (next(t) == nil and dsforge.kind(t) == "array"))
end

-- Python ==, for JSON values against the values HF computes.
local function pyeq(a, b)
  if a == NULL or b == NULL then return a == b end
  local ta, tb = type(a), type(b)
  if ta == "boolean" and tb == "number" then return (a and 1 or 0) == b end
  if ta == "number" and tb == "boolean" then return a == (b and 1 or 0) end
  if ta ~= tb then return false end
  if ta ~= "table" then return a == b end
  if is_array(a) ~= is_array(b) then return false end
  if is_array(a) then
    if #a ~= #b then return false end
    for i = 1, #a do if not pyeq(a[i], b[i]) then return false end end
    return true
  end
  for _, k in ipairs(dsforge.sorted_keys(a)) do
    if b[k] == nil or not pyeq(a[k], b[k]) then return false end
  end
  for _, k in ipairs(dsforge.sorted_keys(b)) do
    if a[k] == nil then return false end
  end
  return true
end
M.pyeq = pyeq

-- Python str() of a JSON value, as HF's mismatch message prints it.
local function pystr(v)
  if v == NULL then return "None" end
  if v == true then return "True" end
  if v == false then return "False" end
  if is_num(v) then return pynum(v) end
  if type(v) == "string" then return v end
  if type(v) == "table" then
    local parts = {}
    if is_array(v) then
      for i = 1, #v do parts[#parts + 1] = (type(v[i]) == "string") and ("'" .. v[i] .. "'") or pystr(v[i]) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    for _, k in ipairs(dsforge.sorted_keys(v)) do
      parts[#parts + 1] = "'" .. tostring(k) .. "': " .. pystr(v[k])
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

local function split(path)
  local parts = {}
  for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
  return parts
end

-- HF's find_config_node: the object holding the last key, or nil when an
-- intermediate node is missing (HF then skips the key).
local split_cache = {}
local function find_node(cfg, path)
  -- The same few dozen paths are looked up for every variant of a sweep.
  local parts = split_cache[path]
  if not parts then
    parts = split(path)
    split_cache[path] = parts
  end
  local node = obj(cfg)
  for i = 1, #parts - 1 do
    if not node then return nil end
    node = obj(rawget(node, parts[i]))
  end
  if not node then return nil end
  return node, parts[#parts]
end

local PYDANTIC_SECTIONS = {
  zero_optimization = true, fp16 = true, bf16 = true, bfloat16 = true,
  comms_logger = true, tensorboard = true, wandb = true, csv_monitor = true,
  comet = true, hybrid_engine = true, compile = true, tensor_parallel = true,
  weight_quantization = true,
}

local function unfilled_reason(path, first, stage)
  if path == "zero_optimization.stage3_prefetch_bucket_size"
    or path == "zero_optimization.stage3_param_persistence_threshold" then
    return "the HF Trainer fills this only when zero_optimization.stage is 3 (it is "
      .. (stage == nil and "not set" or pystr(stage))
      .. "); DeepSpeed then drops \"auto\" and uses its default"
  end
  if path == "amp.enabled" or path == "amp.opt_level" then
    return "only older transformers releases (apex backend) filled amp.*; current ones"
      .. " leave \"auto\", which DeepSpeed reads as a truthy value"
  end
  if path == "checkpoint.use_node_local_storage" then
    return "the HF Trainer sets this only when save_on_each_node is true"
  end
  local why
  if PYDANTIC_SECTIONS[first] then
    why = "DeepSpeed silently drops \"auto\" in " .. first .. " and uses the default"
  else
    why = "DeepSpeed receives the string \"auto\" and fails or misreads it"
  end
  return "the HF Trainer does not fill this key; " .. why
end

---------------------------------------------------------------------------
-- resolve
---------------------------------------------------------------------------

-- M.resolve(cfg, inputs) -> new_cfg, missing, mismatches
--   new_cfg:    deep copy of cfg with every "auto" the Trainer would fill
--               replaced by its value (cfg itself is not modified).
--   missing:    sorted list of { path = "a.b.c", needs = "input name" } for
--               each "auto" left because an input is nil (one entry per
--               missing input), and { path, needs = nil, reason } for each
--               "auto" the Trainer never fills. Paths are dotted; array
--               elements are written "key[i]" with a 0-based i.
--   mismatches: sorted list of { path, config, hf, hf_name, message } for
--               each concrete value the Trainer would compare and find
--               different from TrainingArguments (it then raises ValueError).
-- inputs: world_size, micro_batch_size, gradient_accumulation, max_grad_norm,
--   learning_rate, adam_beta1, adam_beta2, adam_epsilon, weight_decay,
--   precision ("bf16"|"fp16"|"fp32"), hidden_size, num_training_steps,
--   warmup_steps, warmup_ratio, save_on_each_node, auto_find_batch_size;
--   nil means unknown (use M.with_defaults for TrainingArguments defaults).
--   warmup_steps counts as 0 when only warmup_ratio is given.
-- The path of key k below the value at path prefix ("" for the top):
-- "a.b", "a[0]" (0-based). Memoised for the run: a sweep's variants have
-- the same few dozen paths.
local child_paths = {}
local function child_path(prefix, k)
  local t = child_paths[prefix]
  if not t then
    t = {}
    child_paths[prefix] = t
  end
  local p = t[k]
  if not p then
    if type(k) == "number" then
      p = prefix .. "[" .. (k - 1) .. "]"
    elseif prefix == "" then
      p = tostring(k)
    else
      p = prefix .. "." .. tostring(k)
    end
    t[k] = p
  end
  return p
end

-- Every "auto" below cfg, as { node, key, path, first } (node[key] is
-- the "auto"; first the top-level key): one walk, in no particular order
-- (the caller sorts what it reports).
local function find_autos(cfg)
  local autos = {}
  local function walk(v, prefix, first)
    for k, x in next, v do
      if x == "auto" then
        autos[#autos + 1] = { node = v, key = k, path = child_path(prefix, k),
          first = first or k }
      elseif type(x) == "table" then -- (null, delete: not tables)
        walk(x, child_path(prefix, k), first or k)
      end
    end
  end
  if obj(cfg) then walk(cfg, "", nil) end
  return autos
end
M.find_autos = find_autos

local resolve_in
local NONE = {} -- never written

function M.resolve(cfg, inputs)
  inputs = inputs or {}
  check_inputs(inputs)
  local new = deepcopy(cfg)
  return resolve_in(new, inputs, find_autos(new))
end

-- M.resolve_own(cfg, inputs, autos) -> cfg, missing, mismatches: M.resolve
-- on a config the caller owns, filled in place (no copy); autos is
-- M.find_autos(cfg).
function M.resolve_own(cfg, inputs, autos)
  inputs = inputs or {}
  check_inputs(inputs)
  return resolve_in(cfg, inputs, autos)
end

resolve_in = function(new, inputs, autos)
  local missing, mismatches, handled = {}, {}, {}

  -- The inputs of a value that are missing (one shared empty list when
  -- none is: the common case, made without a table).
  local function need(...)
    local out = NONE
    for i = 1, select("#", ...) do
      local name = select(i, ...)
      if inputs[name] == nil then
        if out == NONE then out = {} end
        out[#out + 1] = name
      end
    end
    return out
  end

  local function fill(path, value, needs, must_match, hf_name)
    local node, key = find_node(new, path)
    if not node then return end
    local v = rawget(node, key)
    if v == "auto" then
      handled[path] = true
      if #needs == 0 then
        node[key] = value
      else
        for _, n in ipairs(needs) do missing[#missing + 1] = { path = path, needs = n } end
      end
    elseif must_match and #needs == 0 and v ~= nil and v ~= NULL and not pyeq(v, value) then
      mismatches[#mismatches + 1] = { path = path, config = v, hf = value, hf_name = hf_name,
        message = "- ds " .. path .. "=" .. pystr(v) .. " vs hf " .. hf_name .. "=" .. pystr(value) }
    end
  end

  local I = inputs
  local match_batch = I.auto_find_batch_size ~= true

  -- trainer_config_process
  fill("train_micro_batch_size_per_gpu", I.micro_batch_size, need("micro_batch_size"),
    match_batch, "per_device_train_batch_size")
  fill("gradient_accumulation_steps", I.gradient_accumulation, need("gradient_accumulation"),
    true, "gradient_accumulation_steps")
  local tb_needs = need("world_size", "micro_batch_size", "gradient_accumulation")
  fill("train_batch_size", #tb_needs == 0
    and I.world_size * I.micro_batch_size * I.gradient_accumulation or nil,
    tb_needs, match_batch, "train_batch_size (calculated)")
  fill("gradient_clipping", I.max_grad_norm, need("max_grad_norm"), true, "max_grad_norm")
  fill("optimizer.params.lr", I.learning_rate, need("learning_rate"), true, "learning_rate")
  local beta_needs = need("adam_beta1", "adam_beta2")
  fill("optimizer.params.betas", #beta_needs == 0
    and dsforge.array({ I.adam_beta1, I.adam_beta2 }) or nil, beta_needs, true,
    "adam_beta1+adam_beta2")
  fill("optimizer.params.eps", I.adam_epsilon, need("adam_epsilon"), true, "adam_epsilon")
  fill("optimizer.params.weight_decay", I.weight_decay, need("weight_decay"), true, "weight_decay")
  fill("scheduler.params.warmup_min_lr", 0, {}, false)
  fill("scheduler.params.warmup_max_lr", I.learning_rate, need("learning_rate"), true, "learning_rate")

  local replaced_checkpoint = false
  if I.save_on_each_node == true and obj(new) then
    local ck = rawget(new, "checkpoint")
    if not obj(ck) then
      ck = dsforge.object({})
      new.checkpoint = ck
      replaced_checkpoint = true
    end
    ck.use_node_local_storage = true
  else
    local node, key = find_node(new, "checkpoint.use_node_local_storage")
    if node and rawget(node, key) == "auto" and I.save_on_each_node == nil then
      handled["checkpoint.use_node_local_storage"] = true
      missing[#missing + 1] = { path = "checkpoint.use_node_local_storage", needs = "save_on_each_node" }
    end
  end

  local p = I.precision
  fill("fp16.enabled", p == "fp16", need("precision"), true, "fp16|fp16_full_eval")
  fill("bf16.enabled", p == "bf16", need("precision"), true, "bf16|bf16_full_eval")

  -- trainer_config_finalize
  local h = I.hidden_size
  local zero = obj(obj(new) and rawget(new, "zero_optimization"))
  local stage = zero and rawget(zero, "stage")
  local is_zero3 = is_num(stage) and stage == 3
  fill("zero_optimization.reduce_bucket_size", h and h * h, need("hidden_size"), false)
  if is_zero3 then
    fill("zero_optimization.stage3_prefetch_bucket_size", h and math.floor(0.9 * h * h),
      need("hidden_size"), false)
    fill("zero_optimization.stage3_param_persistence_threshold", h and 10 * h,
      need("hidden_size"), false)
  end
  fill("scheduler.params.total_num_steps", I.num_training_steps, need("num_training_steps"),
    true, "num_training_steps (calculated)")

  local ws, wr, n = I.warmup_steps, I.warmup_ratio, I.num_training_steps
  if ws == nil and wr ~= nil then ws = 0 end
  local warm, warm_needs
  if ws == nil then
    warm_needs = { "warmup_steps" }
  elseif ws > 0 then
    warm, warm_needs = ws, {}
  else
    warm_needs = need("num_training_steps", "warmup_ratio")
    if #warm_needs == 0 then warm = math.ceil(n * wr) end
  end
  fill("scheduler.params.warmup_num_steps", warm, warm_needs, true, "warmup_steps")

  -- every other "auto" stays "auto"
  for _, a in ipairs(autos) do
    if rawget(a.node, a.key) == "auto" and not handled[a.path]
      and not (replaced_checkpoint and a.first == "checkpoint") then
      missing[#missing + 1] = { path = a.path, reason = unfilled_reason(a.path, a.first, stage) }
    end
  end

  table.sort(missing, function(a, b)
    if a.path ~= b.path then return a.path < b.path end
    return (a.needs or "") < (b.needs or "")
  end)
  table.sort(mismatches, function(a, b) return a.path < b.path end)
  return new, dsforge.array(missing), dsforge.array(mismatches)
end

---------------------------------------------------------------------------
-- TrainingArguments from a resolved config
---------------------------------------------------------------------------

-- A precision flag as the Trainer compares it (Python ==): JSON booleans
-- and 0/1 work; missing means false; anything else can never match.
local function flag(cfg, section)
  local sec = obj(rawget(cfg, section))
  if not sec then return false end
  local v = rawget(sec, "enabled")
  if v == nil or v == NULL then return false end
  if v == true or v == false then return v end
  if is_num(v) and (v == 0 or v == 1) then return v == 1 end
  if v == "auto" then
    return nil, section .. ".enabled is still \"auto\": call hf.resolve with a precision first"
  end
  return nil, section .. ".enabled is " .. pystr(v) .. ": the HF Trainer compares it with =="
    .. " against a Python bool, so no TrainingArguments can match it; use true or false"
end

-- M.training_args(cfg, params) -> args | nil, message
-- args = { per_device_train_batch_size, gradient_accumulation_steps, bf16,
--          fp16, gradient_checkpointing, max_grad_norm }, the
-- TrainingArguments that match the (resolved) DeepSpeed config, so the
-- Trainer finds no mismatch. params: { gradient_checkpointing = bool
-- (default false), world_size = integer (needed to derive a missing micro
-- batch or accumulation value, and to check train_batch_size) }.
function M.training_args(cfg, params)
  params = params or {}
  if not obj(cfg) then return nil, "the config is not a JSON object" end
  local tb, mb, gas, bad = batch.read(cfg)
  if bad then
    return nil, bad .. " is " .. pystr(rawget(cfg, bad))
      .. ", not a number: resolve the config (hf.resolve) first"
  end
  local w = params.world_size
  if w ~= nil and (math.tointeger(w) == nil or w < 1) then
    return nil, "params.world_size must be an integer >= 1"
  end
  if w ~= nil then
    local res, msg = batch.resolve(tb, mb, gas, math.tointeger(w))
    if not res then return nil, "DeepSpeed rejects the batch sizes: " .. msg end
    mb, gas = res.train_micro_batch_size_per_gpu, res.gradient_accumulation_steps
  else
    if tb == nil and mb == nil then return nil, batch.MSG_MISSING end
    if mb == nil then
      return nil, "train_micro_batch_size_per_gpu is derived from train_batch_size:"
        .. " pass params.world_size"
    end
    if gas == nil then
      if tb ~= nil then
        return nil, "gradient_accumulation_steps is derived from train_batch_size:"
          .. " pass params.world_size"
      end
      gas = 1
    end
  end

  local bf16, e1 = flag(cfg, "bf16")
  if bf16 == nil then return nil, e1 end
  if rawget(cfg, "bf16") == nil and rawget(cfg, "bfloat16") ~= nil then
    bf16, e1 = flag(cfg, "bfloat16")
    if bf16 == nil then return nil, e1 end
  end
  local fp16, e2 = flag(cfg, "fp16")
  if fp16 == nil then return nil, e2 end
  if bf16 and fp16 then
    return nil, "fp16 and bf16 are both enabled; DeepSpeed refuses that"
  end

  local clip = rawget(cfg, "gradient_clipping")
  if clip == "auto" then
    return nil, "gradient_clipping is still \"auto\": call hf.resolve with max_grad_norm first"
  end
  local max_grad_norm = 1.0
  if is_num(clip) then max_grad_norm = clip
  elseif clip ~= nil and clip ~= NULL then
    return nil, "gradient_clipping is " .. pystr(clip) .. ", not a number"
  end

  return {
    per_device_train_batch_size = math.tointeger(mb) or mb,
    gradient_accumulation_steps = math.tointeger(gas) or gas,
    bf16 = bf16,
    fp16 = fp16,
    gradient_checkpointing = params.gradient_checkpointing == true,
    max_grad_norm = max_grad_norm,
  }
end

-- M.optimizer_args(cfg) -> { learning_rate, adam_beta1, adam_beta2,
-- adam_epsilon, weight_decay } holding only the values present as numbers
-- in optimizer.params (the Trainer compares these too).
function M.optimizer_args(cfg)
  local out = {}
  local params = obj(obj(cfg) and obj(rawget(cfg, "optimizer")) and rawget(cfg.optimizer, "params"))
  if not params then return out end
  local function num(k) local v = rawget(params, k); return is_num(v) and v or nil end
  out.learning_rate = num("lr")
  out.adam_epsilon = num("eps")
  out.weight_decay = num("weight_decay")
  local betas = rawget(params, "betas")
  if is_array(betas) and #betas == 2 and is_num(betas[1]) and is_num(betas[2]) then
    out.adam_beta1, out.adam_beta2 = betas[1], betas[2]
  end
  return out
end

return M
