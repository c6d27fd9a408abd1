-- deepspeed.rules: cross-field checks and lint for DeepSpeed configs.
--
-- Every rule is grounded in DeepSpeed's own behaviour (reference:
-- docs deepspeed.md, DeepSpeed runtime/config.py, runtime/engine.py,
-- runtime/zero/config.py, runtime/lr_schedules.py). Single-key problems
-- (unknown keys, types, enums, ranges, deprecated keys, "auto" outside the
-- HF Trainer) belong to schema_check.lua and are deliberately skipped here:
-- a rule ignores any value whose type it does not expect.
--
-- Exported: M.rules (the rule list the C core runs), plus the helpers
-- M.zero_stage, M.pybool, M.classify_optimizer, M.DS_SCHEDULERS,
-- M.TORCH_SCHEDULERS, M.DS_OPTIMIZERS, M.TORCH_OPTIMIZERS, and
-- M.helpers (what rules_optim.lua, the optimizer and scheduler rules'
-- checks, shares with this file).

local batch = require("deepspeed.batch")
local dsversion = require("deepspeed.dsversion")

-- Globals used on every value of every variant, as upvalues (a global
-- read goes through the sandbox environment's metatable).
local type, rawset, next, ipairs, pairs = type, rawset, next, ipairs, pairs
local tostring, tonumber, math, string, table = tostring, tonumber, math, string, table
local dsforge = dsforge

local M = {}

local NULL = dsforge.null
local pynum = batch.pynum

---------------------------------------------------------------------------
-- Value helpers (never raise)
---------------------------------------------------------------------------

-- A JSON object (a table that is not null, not the delete marker and has
-- no array part), else nil.
--
-- The tables the rules read are the config's and ctx's (dsf_json_push:
-- their only metatable is the object/array marker, with no __index), so
-- t[k] reads them as rawget(t, k) does, without a call.
local function obj(v)
  -- (null and the delete marker are light userdata, never tables)
  if type(v) ~= "table" then return nil end
  if v[1] ~= nil then return nil end
  return v
end

-- t[k] when t is a JSON object, else nil.
local function get(t, k)
  if obj(t) == nil then return nil end
  return t[k]
end

local function is_num(v) return type(v) == "number" and v == v end
local function is_str(v) return type(v) == "string" end

-- pydantic v2 (lax mode) bool coercion: true/false, 0/1, 0.0/1.0 and the
-- strings 0 off f false n no / 1 on t true y yes (any case). Anything else
-- (including "auto", which DeepSpeed's models drop) gives nil.
local TRUE_WORDS = { ["1"] = true, on = true, t = true, ["true"] = true, y = true, yes = true }
local FALSE_WORDS = { ["0"] = true, off = true, f = true, ["false"] = true, n = true, no = true }
local function pybool(v)
  if v == true or v == false then return v end
  if is_num(v) then
    if v == 1 then return true end
    if v == 0 then return false end
    return nil
  end
  if is_str(v) then
    local s = v:lower():match("^%s*(.-)%s*$")
    if TRUE_WORDS[s] then return true end
    if FALSE_WORDS[s] then return false end
  end
  return nil
end
M.pybool = pybool

-- Python truthiness, for the sections DeepSpeed reads with dict.get.
local function pytruthy(v)
  if v == nil or v == NULL or v == false then return false end
  if is_num(v) then return v ~= 0 end
  if is_str(v) then return v ~= "" end
  if type(v) == "table" then return next(v) ~= nil end
  return true
end

-- The effective ZeRO stage (0-3), or nil when it cannot be known (invalid
-- value, null). Missing means 0; "auto" is dropped by pydantic, so 0;
-- pydantic accepts 2, "2", 2.0 and true (=1); legacy
-- "zero_optimization": true/false means stage 1/0.
local function zero_stage(cfg)
  if not obj(cfg) then return nil end
  local z = cfg.zero_optimization
  if z == nil then return 0 end
  if z == true then return 1 end
  if z == false then return 0 end
  if not obj(z) then return nil end
  local s = z.stage
  if s == nil or s == "auto" then return 0 end
  if s == true then return 1 end
  if s == false then return 0 end
  if is_num(s) then
    local i = math.tointeger(s)
    if i and i >= 0 and i <= 3 then return i end
    return nil
  end
  if is_str(s) then
    local d = s:match("^%s*([0-3])%s*$")
    if d then return tonumber(d) end
  end
  return nil
end
M.zero_stage = zero_stage

-- In the rules below, the stage of the config being checked: sixteen rules
-- ask for it, so it is computed once per config (rules never change the
-- config they check; M.zero_stage stays a plain function for the callers
-- that build configs).
local stage_of = setmetatable({}, { __mode = "k" })
local plain_zero_stage = zero_stage
zero_stage = function(cfg)
  if type(cfg) ~= "table" then return plain_zero_stage(cfg) end
  local s = stage_of[cfg]
  if s == nil then
    s = plain_zero_stage(cfg) or false
    stage_of[cfg] = s
  end
  return s or nil
end

local function zero_section(cfg)
  return obj(get(cfg, "zero_optimization"))
end

-- bf16 wins over the old name bfloat16 when both are present. A null bf16
-- is absent where the release reads it with a pydantic model
-- (get_bfloat16_config tests `is None`, 0.17 on): bfloat16 is read then.
-- Releases that read it with dict.get fail on the null (type-mismatch).
local bf16_null_absent -- set below, once release() is defined
local function bf16_section(cfg, ctx)
  local b = cfg.bf16
  if b == NULL and bf16_null_absent(ctx) then return obj(cfg.bfloat16), "bfloat16" end
  if b ~= nil then return obj(b), "bf16" end
  return obj(cfg.bfloat16), "bfloat16"
end

-- elasticity is read with dict.get (elasticity/config.py): any truthy
-- value turns it on, "auto" included.
local function elasticity_enabled(cfg)
  local e = obj(cfg.elasticity)
  if not e then return false end
  return pytruthy(e.enabled)
end

local function offload_device(sec)
  local s = obj(sec)
  if not s then return nil end
  local d = s.device
  if d == "cpu" or d == "nvme" then return d end
  return nil
end

-- Calls fn(key, section, device) for each ZeRO offload section that
-- offloads (device cpu or nvme), optimizer first.
local function each_offload(cfg, fn)
  local z = zero_section(cfg)
  if not z then return end
  for _, key in ipairs({ "offload_optimizer", "offload_param" }) do
    local sec = obj(z[key])
    local dev = offload_device(sec)
    if dev then fn(key, sec, dev) end
  end
end

local function fmt(v)
  if is_num(v) then return pynum(v) end
  if is_str(v) then return string.format("%q", v) end
  if v == NULL then return "null" end
  return tostring(v)
end

-- The data-parallel size: the world_size param (gen: the variant's; check:
-- --world-size), 1 when absent or not a whole number >= 1.
local function valid_world(ctx)
  local p = ctx.params
  local w = type(p) == "table" and math.tointeger(p.world_size) or nil
  if w and w >= 1 then return w end
  return 1
end

---------------------------------------------------------------------------
-- Optimizer and scheduler names
---------------------------------------------------------------------------

-- DeepSpeed's built-in optimizer names (matched case-insensitively).
M.DS_OPTIMIZERS = { "adagrad", "adam", "adamw", "lamb", "lion", "muadam",
  "muadamw", "muon", "musgd", "onebitadam", "onebitlamb", "zerooneadam" }
-- torch.optim optimizer classes (looked up case-sensitively with getattr).
M.TORCH_OPTIMIZERS = { "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam",
  "AdamW", "Adamax", "LBFGS", "Muon", "NAdam", "RAdam", "RMSprop", "Rprop",
  "SGD", "SparseAdam" }
-- deepspeed.runtime.lr_schedules classes (VALID_LR_SCHEDULES).
M.DS_SCHEDULERS = { "LRRangeTest", "OneCycle", "WarmupCosineLR",
  "WarmupDecayLR", "WarmupLR" }
-- torch.optim.lr_scheduler classes.
M.TORCH_SCHEDULERS = { "ChainedScheduler", "ConstantLR",
  "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
  "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
  "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau",
  "SequentialLR", "StepLR", "_LRScheduler" }

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end
local DS_OPT = set_of(M.DS_OPTIMIZERS)
local TORCH_OPT = set_of(M.TORCH_OPTIMIZERS)
local DS_SCHED = set_of(M.DS_SCHEDULERS)
local TORCH_SCHED = set_of(M.TORCH_SCHEDULERS)

-- The class each built-in resolves to, and whether that class is in
-- ZERO_SUPPORTED_OPTIMIZERS (torch Adam/AdamW/Adagrad, FusedAdam,
-- DeepSpeedCPUAdam, DeepSpeedCPUAdagrad, DeepSpeedCPULion, FusedLion, Muon).
local DS_OPT_CLASS = {
  adam = { "FusedAdam (DeepSpeedCPUAdam with offload)", true },
  adamw = { "FusedAdam (DeepSpeedCPUAdam with offload)", true },
  adagrad = { "torch.optim.Adagrad (DeepSpeedCPUAdagrad with offload)", true },
  lion = { "FusedLion (DeepSpeedCPULion with offload)", true },
  muon = { "Muon", true },
  lamb = { "FusedLamb", false },
  muadam = { "mup.MuAdam", false },
  muadamw = { "mup.MuAdamW", false },
  musgd = { "mup.MuSGD", false },
  onebitadam = { "OnebitAdam", false },
  zerooneadam = { "ZeroOneAdam", false },
  onebitlamb = { "OnebitLamb", false },
}
local TORCH_ZERO_OK = { Adam = true, AdamW = true, Adagrad = true }

local ONEBIT = {
  onebitadam = "1bit-Adam is not compatible with ZeRO",
  zerooneadam = "0/1 Adam is not compatible with ZeRO",
  onebitlamb = "1bit-Lamb is not compatible with ZeRO",
}

-- M.classify_optimizer(name) -> { kind = "deepspeed"|"torch", name =,
-- class =, zero_supported = bool } or nil when DeepSpeed cannot build it.
function M.classify_optimizer(name)
  if not is_str(name) then return nil end
  local low = name:lower()
  if DS_OPT[low] then
    local c = DS_OPT_CLASS[low]
    return { kind = "deepspeed", name = low, class = c[1], zero_supported = c[2] }
  end
  if TORCH_OPT[name] then
    return { kind = "torch", name = name, class = "torch.optim." .. name,
      zero_supported = TORCH_ZERO_OK[name] == true }
  end
  return nil
end

local function case_match(name, list)
  local low = name:lower()
  for _, v in ipairs(list) do
    if v:lower() == low then return v end
  end
  return nil
end

---------------------------------------------------------------------------
-- Rule table
---------------------------------------------------------------------------

local rules = {}
local function def(r) rules[#rules + 1] = r end

-- The covered DeepSpeed release the check is for (ctx.ds_version, else the
-- profile's ds_version param, else the newest; schema_check reports a bad
-- one).
-- (once per ctx: a config's rules share it and never change it)
local release_of = setmetatable({}, { __mode = "k" })
local function release(ctx)
  local rel = release_of[ctx]
  if rel then return rel end
  rel = dsversion.checked(ctx)
  release_of[ctx] = rel
  return rel
end

-- The dotted keys whose "auto" the Hugging Face Trainer replaces
-- (hf.auto_keys), loaded when a rule first meets "auto" at --target hf.
local trainer_fills
local function filled_by_trainer(dp)
  if not trainer_fills then
    trainer_fills = {}
    for _, k in ipairs(require("deepspeed.hf").auto_keys) do trainer_fills[k.path] = true end
  end
  return trainer_fills[dp] == true
end

-- Is the flag v at the dotted key dp on, as the chosen release reads it? A
-- pydantic model coerces it (pybool; "auto" is dropped, so the default
-- false applies); a dict.get read tests Python truthiness ("auto", "no"
-- are true). At --target hf an "auto" the Trainer fills never reaches
-- DeepSpeed, at any release: the Trainer writes its TrainingArguments value
-- there first (fp16.enabled from fp16, bf16.enabled from bf16: the
-- TrainingArguments refuse fp16 together with bf16, so the two filled flags
-- are never both true), so the flag is not known to be on.
local function flag_on(ctx, dp, v)
  if v == "auto" and ctx.target == "hf" and filled_by_trainer(dp) then return false end
  local k = dsversion.data(release(ctx)).keys[dp]
  if k and k.src == "dict" then return pytruthy(v) end
  return pybool(v) == true
end

bf16_null_absent = function(ctx)
  local k = dsversion.data(release(ctx)).keys.bf16
  return k ~= nil and k.src == "pydantic"
end

-- Does the chosen release read the dotted key dp at all?
local function reads(ctx, dp)
  return dsversion.reads(release(ctx), dp)
end

-- params: the profile params the finding depends on (gen blames the
-- --param or --matrix argument that set one), or nil; edit: the
-- machine-readable fix (an edit or a list of alternatives), or nil.
local function emit(ctx, rule, path, message, fix, severity, params, edit)
  ctx.report {
    rule = rule,
    path = dsforge.array(path),
    message = message,
    fix = fix,
    severity = severity,
    param = params,
    edit = edit,
  }
end

-- batch ------------------------------------------------------------------

local function derivation_text(key, tb, mb, gas, w, res)
  if key == batch.GAS then
    if tb ~= nil and mb ~= nil then
      return "gradient_accumulation_steps = train_batch_size // micro // world_size = "
        .. pynum(tb) .. " // " .. pynum(mb) .. " // " .. pynum(w) .. " = "
        .. pynum(res.gradient_accumulation_steps)
    end
    return "gradient_accumulation_steps = 1 (only one of train_batch_size and \z
      train_micro_batch_size_per_gpu is given)"
  elseif key == batch.MB then
    if gas ~= nil then
      return "train_micro_batch_size_per_gpu = train_batch_size // world_size // gas = "
        .. pynum(tb) .. " // " .. pynum(w) .. " // " .. pynum(gas) .. " = "
        .. pynum(res.train_micro_batch_size_per_gpu)
    end
    return "train_micro_batch_size_per_gpu = train_batch_size // world_size = "
      .. pynum(tb) .. " // " .. pynum(w) .. " = " .. pynum(res.train_micro_batch_size_per_gpu)
  end
  if gas ~= nil then
    return "train_batch_size = micro * gas * world_size = " .. pynum(mb) .. " * "
      .. pynum(gas) .. " * " .. pynum(w) .. " = " .. pynum(res.train_batch_size)
  end
  return "train_batch_size = micro * world_size = " .. pynum(mb) .. " * " .. pynum(w)
    .. " = " .. pynum(res.train_batch_size)
end

-- The data-parallel world size DeepSpeedConfig uses (runtime/config.py),
-- from the world size (the processes launched: the world_size param, check's
-- --world-size) and the config, when no mpu is passed to
-- deepspeed.initialize:
--   * "sequence_parallel_size" and "data_parallel_size" both in the config
--     (a dict): deepspeed.initialize builds a device mesh of (dp, sp)
--     (deepspeed/__init__.py:159-162 at v0.15.4, 203-206 at v0.19.5; not in
--     v0.14.5) and DeepSpeedConfig takes the size of its data_parallel
--     group (runtime/config.py:726-727 at v0.15.4, 705-706 at v0.19.5):
--     data_parallel_size;
--   * "sequence_parallel_size" alone, from 0.17.0 (PR #7268):
--     world_size = dist.get_world_size() / config["sequence_parallel_size"],
--     a true division (runtime/config.py:679-680 at v0.17.6, 709-710 at
--     v0.19.5), inside a bare `try/except` that makes the world size 1 when
--     it raises (null, 0, a string: config.py:683-685 at v0.17.6).
-- The config is a dict there at --target hf (the Trainer and accelerate
-- pass one) and, at --target deepspeed, from 0.18.6, whose
-- deepspeed.initialize loads a path into a dict first (__init__.py:179-180
-- at v0.18.9); before, a path is tested as a string (`key in "ds.json"`),
-- so the world size is not divided.
-- Returns the size and, when the config changed it, the words saying how.
local MESH_FROM_CONFIG_SINCE = "0.15.0"
local SP_DIVIDES_SINCE = "0.17.0"
local CONFIG_ALWAYS_DICT_SINCE = "0.18.6"
local function dp_world(cfg, ctx)
  local w = valid_world(ctx)
  local sp = cfg.sequence_parallel_size
  if sp == nil then return w end
  local v = release(ctx).version
  if ctx.target ~= "hf" and dsversion.cmp(v, CONFIG_ALWAYS_DICT_SINCE) < 0 then return w end
  local dp = cfg.data_parallel_size
  if dp ~= nil then
    if dsversion.cmp(v, MESH_FROM_CONFIG_SINCE) < 0 then return w end
    local n = math.tointeger(dp)
    if n and n >= 1 then
      return n, "data_parallel_size " .. pynum(dp) .. " (DeepSpeed builds a device mesh of \z
        data_parallel_size x sequence_parallel_size and uses its data-parallel group)"
    end
    return w
  end
  if dsversion.cmp(v, SP_DIVIDES_SINCE) < 0 then return w end
  if sp == true then sp = 1 end
  if is_num(sp) and sp ~= 0 then
    return w / sp, string.format("world size %s / sequence_parallel_size %s (DeepSpeed %s \z
      divides the world size by it)", pynum(w), pynum(sp), v)
  end
  return 1, string.format("1: DeepSpeed %s computes world_size / sequence_parallel_size, \z
    which raises for sequence_parallel_size %s, and its bare except then sets the \z
    world size to 1", v, fmt(sp))
end

def {
  id = "batch-identity",
  severity = "error",
  summary = "train_batch_size, micro batch and gradient accumulation must satisfy \z
    DeepSpeed's batch derivation and train_batch_size == micro * gas * world_size",
  fix = "make train_batch_size = train_micro_batch_size_per_gpu * \z
    gradient_accumulation_steps * data-parallel world size, or give only two of them",
  check = function(cfg, ctx)
    if not obj(cfg) or elasticity_enabled(cfg) then return end
    local w, how = dp_world(cfg, ctx)
    local at -- (the words, made only for a finding)
    local tb, mb, gas, bad = batch.read(cfg)
    if bad or (tb == nil and mb == nil) then return end
    -- Under the Trainer, accelerate's DeepSpeedPlugin.__post_init__
    -- (utils/dataclasses.py) inserts "gradient_accumulation_steps": 1 when
    -- the key is absent, so DeepSpeed never derives it.
    local inserted = ctx.target == "hf" and cfg[batch.GAS] == nil
    if inserted then gas = 1 end
    local res, msg, which = batch.resolve(tb, mb, gas, w)
    if not res or #res.derived > 0 then
      at = " at data-parallel world size " .. pynum(w) .. (how and (" = " .. how) or "")
    end
    if not res then
      local what
      if msg:find("^ZeroDivisionError") then
        what = "DeepSpeed crashes while deriving the batch sizes (" .. msg .. ")"
      else
        what = "DeepSpeed rejects the batch sizes with AssertionError '" .. msg .. "'"
      end
      if inserted then
        what = "gradient_accumulation_steps is absent, so accelerate (used by the Hugging Face \z
          Trainer) inserts \"gradient_accumulation_steps\": 1 and " .. what
      end
      local fix, edit
      if math.tointeger(w) then
        fix = batch.suggest(tb, mb, gas, math.tointeger(w))
        edit = batch.suggest_edits(tb, mb, gas, math.tointeger(w))
      else
        fix = "make sequence_parallel_size divide the world size " .. pynum(valid_world(ctx))
      end
      emit(ctx, "batch-identity", { which }, what .. at .. ". DeepSpeed derives missing values with floor division and then \z
        requires every value > 0 and train_batch_size == micro * gas * world_size; \z
        the world size is the data-parallel size, so the same file can pass on one \z
        GPU count and fail on another.", fix, nil, nil, edit)
      return
    end
    for _, key in ipairs(res.derived) do
      local v = res[key]
      emit(ctx, "batch-derived", { key }, "DeepSpeed derives "
        .. derivation_text(key, tb, mb, gas, w, res) .. at
        .. "; with another world size it derives a different value.",
        "to pin it, add \"" .. key .. "\": " .. pynum(v), "note")
    end
  end,
}

def {
  id = "batch-derived",
  severity = "note",
  summary = "which batch values DeepSpeed derives from the given ones, and to what",
  fix = "state the derived value explicitly if it must not depend on the world size",
}

def {
  id = "batch-missing",
  severity = "error",
  summary = "neither train_batch_size nor train_micro_batch_size_per_gpu is set (the HF Trainer does not add them either)",
  fix = "add train_micro_batch_size_per_gpu (and optionally gradient_accumulation_steps)",
  check = function(cfg, ctx)
    if not obj(cfg) or elasticity_enabled(cfg) then return end
    local tb, mb = cfg[batch.TB], cfg[batch.MB]
    if (tb ~= nil and tb ~= NULL) or (mb ~= nil and mb ~= NULL) then return end
    -- The Hugging Face Trainer only replaces "auto" (fill_match in
    -- transformers' integrations/deepspeed.py); it never adds a missing key.
    emit(ctx, "batch-missing", { batch.MB }, "neither train_batch_size nor \z
      train_micro_batch_size_per_gpu is set: DeepSpeed raises AssertionError '"
      .. batch.MSG_MISSING .. "' (gradient_accumulation_steps alone is not enough)."
      .. (ctx.target == "hf" and " The Hugging Face Trainer only replaces \"auto\" values; it \z
        does not add a missing key, so write \"auto\" to let it fill the batch sizes." or ""),
      batch.suggest(nil, nil, nil, valid_world(ctx) or 1))
  end,
}

-- precision ----------------------------------------------------------------

def {
  id = "precision-conflict",
  severity = "error",
  summary = "fp16 and bf16 enabled together",
  fix = "enable only one of fp16.enabled and bf16.enabled",
  check = function(cfg, ctx)
    if not obj(cfg) then return end
    local fp = obj(cfg.fp16)
    local bf, bkey = bf16_section(cfg, ctx)
    if not fp or not bf then return end
    if not flag_on(ctx, "fp16.enabled", fp.enabled)
       or not flag_on(ctx, bkey .. ".enabled", bf.enabled) then
      return
    end
    emit(ctx, "precision-conflict", { bkey, "enabled" }, "fp16.enabled and " .. bkey
      .. ".enabled are both true: DeepSpeed raises AssertionError 'bfloat16 and fp16 \z
      modes cannot be simultaneously enabled' while reading the config.",
      "keep one: set fp16.enabled to false for bf16 training (Ampere or newer GPUs), or "
      .. bkey .. ".enabled to false for fp16 training")
  end,
}

def {
  id = "master-weights-stage",
  severity = "error",
  summary = "fp16/bf16 master-weights options need ZeRO stage 1-3; bf16_optimizer_states \z
    also needs bf16_master_weights_and_grads",
  fix = "use ZeRO stage 1-3 (and bf16_master_weights_and_grads with bf16_optimizer_states), \z
    or remove the option",
  check = function(cfg, ctx)
    if not obj(cfg) then return end
    local stage = zero_stage(cfg)
    if stage == nil then return end
    local fp = obj(cfg.fp16)
    -- (a key the release does not read cannot fail: version-key says so)
    if fp and stage == 0 and pybool(fp.fp16_master_weights_and_grads) == true
       and reads(ctx, "fp16.fp16_master_weights_and_grads") then
      emit(ctx, "master-weights-stage", { "fp16", "fp16_master_weights_and_grads" },
        "fp16.fp16_master_weights_and_grads is true at ZeRO stage 0: DeepSpeed's config \z
        check requires ZeRO stage 1-3 for it and refuses the config.",
        "set zero_optimization.stage to 1, 2 or 3, or remove fp16_master_weights_and_grads")
    end
    local bf, bkey = bf16_section(cfg, ctx)
    if not bf then return end
    local master = pybool(bf.bf16_master_weights_and_grads) == true
      and reads(ctx, bkey .. ".bf16_master_weights_and_grads")
    if stage == 0 and master then
      emit(ctx, "master-weights-stage", { bkey, "bf16_master_weights_and_grads" },
        bkey .. ".bf16_master_weights_and_grads is true at ZeRO stage 0: DeepSpeed's config \z
        check requires ZeRO stage 1-3 for it and refuses the config.",
        "set zero_optimization.stage to 1, 2 or 3, or remove bf16_master_weights_and_grads")
    end
    if pybool(bf.bf16_optimizer_states) == true and (stage == 0 or not master)
       and reads(ctx, bkey .. ".bf16_optimizer_states") then
      local need = {}
      if stage == 0 then need[#need + 1] = "ZeRO stage 1-3" end
      if not master then need[#need + 1] = bkey .. ".bf16_master_weights_and_grads: true" end
      emit(ctx, "master-weights-stage", { bkey, "bf16_optimizer_states" },
        bkey .. ".bf16_optimizer_states is true without " .. table.concat(need, " and ")
        .. ": DeepSpeed's config check requires both and refuses the config.",
        "add " .. table.concat(need, " and ") .. ", or remove bf16_optimizer_states")
    end
  end,
}

-- apex amp is on (a literal true-ish value; "auto" is HF's to decide).
local function amp_enabled(cfg)
  if not obj(cfg) then return false end
  local amp = obj(cfg.amp)
  if not amp then return false end
  local en = amp.enabled
  return en ~= "auto" and pytruthy(en)
end

-- Sections DeepSpeedConfig takes apart without a default: runtime/config.py
-- get_amp_params and data_pipeline/config.py get_curriculum_params_legacy
-- copy the section and pop "enabled" (KeyError when it is missing);
-- get_optimizer_name/get_scheduler_name call param_dict[key].keys() once
-- the key is present, so a JSON null fails (AttributeError).
local POPS_ENABLED = { "amp", "curriculum_learning" }
local KEYS_CALLED = { "optimizer", "scheduler" }

def {
  id = "section-shape",
  severity = "error",
  summary = "amp or curriculum_learning without \"enabled\", or optimizer/scheduler set to null (DeepSpeed's config parser fails)",
  fix = "add \"enabled\" to the section, or remove the key",
  check = function(cfg, ctx)
    if not obj(cfg) then return end
    for _, key in ipairs(POPS_ENABLED) do
      local sec = obj(cfg[key])
      if sec and sec.enabled == nil then
        emit(ctx, "section-shape", { key }, key .. " has no \"enabled\" key: DeepSpeed copies the \z
          section and pops \"enabled\" from it, which fails with KeyError: 'enabled'.",
          "add \"enabled\": false (or true) to " .. key .. ", or remove the section")
      end
    end
    for _, key in ipairs(KEYS_CALLED) do
      if cfg[key] == NULL then
        emit(ctx, "section-shape", { key }, key .. " is null: DeepSpeed checks `\"type\" in \z
          param_dict[\"" .. key .. "\"].keys()` once the key is present, which fails with \z
          AttributeError: 'NoneType' object has no attribute 'keys'.",
          "remove \"" .. key .. "\" (or give an object with \"type\" and \"params\")")
      end
    end
  end,
}

-- DeepSpeedFP16Config's model validator (runtime/precision_config.py, first
-- in the covered releases at 0.19.5): with dynamic loss scaling
-- (loss_scale 0, the default) loss_scale_window and min_loss_scale must be
-- > 0. Older releases accept the file and fail later in the loss scaler.
local FP16_SCALE_CHECKED_SINCE = "0.19.5"

def {
  id = "fp16-dynamic-scale",
  severity = "error",
  summary = "fp16 dynamic loss scaling with min_loss_scale or loss_scale_window <= 0 (rejected by DeepSpeed's parser from 0.19.5)",
  fix = "give min_loss_scale and loss_scale_window values > 0",
  check = function(cfg, ctx)
    local fp = obj(get(obj(cfg), "fp16"))
    if not fp or pybool(fp.enabled) ~= true then return end
    local rel = release(ctx)
    if dsversion.cmp(rel.version, FP16_SCALE_CHECKED_SINCE) < 0 then return end
    local ls = fp.loss_scale
    if ls ~= nil and ls ~= 0 then return end
    for _, key in ipairs({ "loss_scale_window", "min_loss_scale" }) do
      local v = fp[key]
      if is_num(v) and v <= 0 then
        emit(ctx, "fp16-dynamic-scale", { "fp16", key }, "fp16." .. key .. " = " .. tostring(v)
          .. " with dynamic loss scaling (loss_scale 0): DeepSpeed " .. rel.version
          .. " rejects it (ValueError 'fp16." .. key .. " must be > 0 when dynamic loss scaling \z
          is enabled'); releases before " .. FP16_SCALE_CHECKED_SINCE
          .. " accept it and the loss scaler then misbehaves.",
          "set fp16." .. key .. " to a value > 0 (DeepSpeed's default: "
          .. (key == "min_loss_scale" and "1" or "1000") .. ")")
      end
    end
  end,
}

def {
  id = "amp-with-zero",
  severity = "error",
  summary = "apex amp enabled together with ZeRO",
  fix = "disable amp and use fp16 (or bf16) mode with ZeRO",
  check = function(cfg, ctx)
    if not amp_enabled(cfg) then return end
    local stage = zero_stage(cfg)
    if stage == nil or stage == 0 then return end
    emit(ctx, "amp-with-zero", { "amp", "enabled" }, "amp.enabled with ZeRO stage "
      .. stage .. ": DeepSpeed asserts 'Amp and ZeRO are not currently compatible, please \z
      use (legacy) fp16 mode which performs similar to amp opt_mode=O2'.",
      "remove the amp section and set \"fp16\": {\"enabled\": true} (or bf16)")
  end,
}

def {
  id = "amp-with-fp16",
  severity = "error",
  summary = "apex amp enabled together with fp16 or bf16 mode",
  fix = "use either amp or DeepSpeed's fp16/bf16 mode, not both",
  check = function(cfg, ctx)
    if not amp_enabled(cfg) then return end
    if zero_stage(cfg) ~= 0 then return end -- with ZeRO, amp-with-zero fires first
    local fp = obj(cfg.fp16)
    local bf, bkey = bf16_section(cfg, ctx)
    local which
    if fp and flag_on(ctx, "fp16.enabled", fp.enabled) then which = "fp16"
    elseif bf and flag_on(ctx, bkey .. ".enabled", bf.enabled) then which = bkey end
    if not which then return end
    emit(ctx, "amp-with-fp16", { which, "enabled" }, "amp.enabled and " .. which
      .. ".enabled are both on: DeepSpeed raises NotImplementedError 'Cannot enable both \z
      amp with (legacy) fp16 or bfloat16 mode'.",
      "drop the amp section (DeepSpeed's " .. which .. " mode replaces it) or set "
      .. which .. ".enabled to false")
  end,
}

-- ZeRO offload ------------------------------------------------------------

def {
  id = "offload-param-ignored",
  severity = "warning",
  summary = "offload_param below ZeRO stage 3 is accepted and silently ignored",
  fix = "use ZeRO stage 3 to offload parameters, or remove offload_param",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage ~= 1 and stage ~= 2 then return end
    local z = zero_section(cfg)
    local dev = offload_device(get(z, "offload_param"))
    if not dev then return end
    emit(ctx, "offload-param-ignored", { "zero_optimization", "offload_param" },
      "offload_param (device " .. dev .. ") has no effect at ZeRO stage " .. stage
      .. ": DeepSpeed accepts it, but only stage 3 partitions parameters and the stage \z
      1/2 optimizer never receives offload_param, so parameters stay on the GPU and \z
      the memory this section seems to save is not saved.",
      "set zero_optimization.stage to 3 to offload parameters, or remove offload_param \z
      (offload_optimizer works at stages 1-3)")
  end,
}

def {
  id = "offload-requires-zero",
  severity = "warning",
  summary = "offload_optimizer/offload_param with device cpu/nvme at ZeRO stage 0",
  fix = "enable ZeRO (stage 1-3 for offload_optimizer, 3 for offload_param) or remove the offload section",
  check = function(cfg, ctx)
    if zero_stage(cfg) ~= 0 then return end
    each_offload(cfg, function(key, _, dev)
      local need = key == "offload_param" and "3" or "1, 2 or 3"
      emit(ctx, "offload-requires-zero", { "zero_optimization", key }, key
        .. " (device " .. dev .. ") at ZeRO stage 0: offloading is done by the ZeRO \z
        optimizers, which stage 0 does not use, so this does not offload anything \z
        (DeepSpeed issue #1403).",
        "set zero_optimization.stage to " .. need .. ", or remove " .. key)
    end)
  end,
}

def {
  id = "partial-offload-stage",
  severity = "error",
  summary = "offload_optimizer.ratio < 1 (partial offload) needs ZeRO stage 3",
  fix = "use ZeRO stage 3 or remove offload_optimizer.ratio",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage == nil or stage == 3 then return end
    local oo = obj(get(zero_section(cfg), "offload_optimizer"))
    local ratio = get(oo, "ratio")
    if not is_num(ratio) or ratio >= 1 then return end
    -- DeepSpeedZeroConfig.offload_ratio_check: a model_validator reading
    -- self.offload_optimizer from 0.15 (runtime/zero/config.py:330-334 at
    -- v0.15.4, 388-392 at v0.19.5); the pydantic 1 releases' root_validator
    -- reads getattr(values, "offload_optimizer", {}) of the values dict,
    -- always {}, so the assertion never runs (zero/config.py:319-323 at
    -- v0.14.5) and stages 1-2 offload every optimizer state
    local rel = release(ctx)
    if dsversion.data(rel).pydantic == 1 then
      emit(ctx, "partial-offload-stage", { "zero_optimization", "offload_optimizer", "ratio" },
        "offload_optimizer.ratio " .. pynum(ratio) .. " at ZeRO stage " .. stage
        .. ": partial offload is a ZeRO-3 feature; DeepSpeed " .. rel.version .. " does not \z
        check it (its validator reads the values dict with getattr, which always gives {}) \z
        and offloads every optimizer state; newer releases raise 'Partial offloading \z
        only supported for ZeRO Stage 3.'",
        "set zero_optimization.stage to 3, or remove ratio (default 1.0 offloads all \z
        optimizer states)", "warning")
      return
    end
    emit(ctx, "partial-offload-stage", { "zero_optimization", "offload_optimizer", "ratio" },
      "offload_optimizer.ratio " .. pynum(ratio) .. " at ZeRO stage " .. stage
      .. ": DeepSpeed's ZeRO config validator raises 'Partial offloading only supported \z
      for ZeRO Stage 3.'",
      "set zero_optimization.stage to 3, or remove ratio (default 1.0 offloads all \z
      optimizer states)")
  end,
}

def {
  id = "offload-pin-memory",
  severity = "note",
  summary = "CPU offload with pin_memory false",
  fix = "set pin_memory to true if host RAM and the memlock limit allow it",
  check = function(cfg, ctx)
    each_offload(cfg, function(key, sec, dev)
      if dev == "cpu" and pybool(sec.pin_memory) == false then
        emit(ctx, "offload-pin-memory", { "zero_optimization", key, "pin_memory" },
          key .. " offloads to cpu with pin_memory false: host-device copies go \z
          through pageable memory and are slower. (Pinned memory is the default \z
          since DeepSpeed v0.19.5; it is page-locked, so it can exhaust host RAM or \z
          the container's memlock limit, which is a valid reason to keep false.)",
          "set zero_optimization." .. key .. ".pin_memory to true if host RAM and \z
          `ulimit -l` allow it; otherwise keep false")
      end
    end)
  end,
}

def {
  id = "offload-pin-memory-default",
  severity = "note",
  summary = "CPU offload without pin_memory: its default changed from false to true in v0.19.5",
  fix = "state pin_memory explicitly",
  check = function(cfg, ctx)
    each_offload(cfg, function(key, sec, dev)
      if dev == "cpu" and sec.pin_memory == nil then
        emit(ctx, "offload-pin-memory-default", { "zero_optimization", key },
          key .. " offloads to cpu without pin_memory: DeepSpeed < v0.19.5 uses pageable \z
          memory, v0.19.5+ pins it (page-locked host memory can exhaust host RAM or \z
          the memlock limit), so the same file behaves differently across versions.",
          "add \"pin_memory\": true (faster copies) or false (safer on memory-tight \z
          hosts) to zero_optimization." .. key)
      end
    end)
  end,
}

-- ZeRO knobs ---------------------------------------------------------------

def {
  id = "reduce-bucket-zero",
  severity = "error",
  summary = "zero_optimization.reduce_bucket_size 0 passes validation but crashes",
  fix = "use a positive reduce_bucket_size (default 5e8 elements)",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage == nil or stage == 0 then return end
    local v = get(zero_section(cfg), "reduce_bucket_size")
    if not is_num(v) or v ~= 0 then return end
    emit(ctx, "reduce-bucket-zero", { "zero_optimization", "reduce_bucket_size" },
      "reduce_bucket_size is 0: DeepSpeed's validator accepts it (ge=0) but ZeRO divides \z
      by it during backward and training crashes with ZeroDivisionError \z
      (DeepSpeed issue #8260).",
      "remove reduce_bucket_size (default 5e8 elements) or set a positive element count \z
      such as hidden_size * hidden_size")
  end,
}

local BUCKET_LOW, BUCKET_HIGH = 1e6, 2e9

def {
  id = "bucket-size",
  severity = "warning",
  summary = "ZeRO bucket sizes far from sensible (below 1e6 or above 2e9 elements)",
  fix = "use a bucket size between 1e6 and 2e9 elements (default 5e8; hidden_size^2 is a common choice)",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage == nil or stage == 0 then return end
    local z = zero_section(cfg)
    if not z then return end
    local keys = { "reduce_bucket_size" }
    if stage <= 2 then keys[#keys + 1] = "allgather_bucket_size" end
    if stage == 3 then
      keys[#keys + 1] = "stage3_prefetch_bucket_size"
      keys[#keys + 1] = "prefetch_bucket_size"
    end
    for _, key in ipairs(keys) do
      local v = z[key]
      if is_num(v) and not (key == "reduce_bucket_size" and v == 0) then
        local fix = "set zero_optimization." .. key .. " between 1e6 and 2e9 elements \z
          (DeepSpeed's default is " .. ((key:find("prefetch")) and "5e7" or "5e8") .. ")"
        if v < BUCKET_LOW then
          emit(ctx, "bucket-size", { "zero_optimization", key }, key .. " is "
            .. pynum(v) .. " elements (the unit is elements, not bytes): buckets this small \z
            split communication into many tiny collectives whose launch latency \z
            dominates, so bandwidth is wasted.", fix)
        elseif v > BUCKET_HIGH then
          emit(ctx, "bucket-size", { "zero_optimization", key }, key .. " is "
            .. pynum(v) .. " elements: each bucket buffer takes " .. pynum(v)
            .. " x 2 bytes (fp16/bf16) or x 4 bytes (fp32) of GPU memory, several GB, \z
            and overlap_comm allocates more than one such buffer.", fix)
        end
      end
    end
  end,
}

def {
  id = "overlap-comm-off",
  severity = "warning",
  summary = "overlap_comm false (or left at its false default) at ZeRO stage 2/3",
  fix = "set zero_optimization.overlap_comm to true",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage ~= 2 and stage ~= 3 then return end
    local z = zero_section(cfg)
    local v = get(z, "overlap_comm")
    local what = stage == 2 and "gradient reduce-scatter" or
      "parameter all-gather and gradient reduce-scatter"
    if pybool(v) == false then
      emit(ctx, "overlap-comm-off", { "zero_optimization", "overlap_comm" },
        "overlap_comm is false at ZeRO stage " .. stage .. ": " .. what .. " does not \z
        overlap with the backward pass, so communication time adds directly to \z
        every step" .. (stage == 3 and " (stage 3 defaults it to true)" or "") .. ".",
        "set zero_optimization.overlap_comm to true; it needs extra bucket buffers, so \z
        lower reduce_bucket_size/allgather_bucket_size if GPU memory is tight")
    elseif v == nil and stage == 2 and z then
      emit(ctx, "overlap-comm-off", { "zero_optimization", "overlap_comm" },
        "overlap_comm is not set at ZeRO stage 2: DeepSpeed's validator defaults it to \z
        (stage == 3), i.e. false, so gradient reduce-scatter does not overlap with \z
        the backward pass.",
        "add \"overlap_comm\": true to zero_optimization (or false to make the choice explicit)",
        "note")
    end
  end,
}

def {
  id = "overlap-comm-ignored",
  severity = "note",
  summary = "overlap_comm true at ZeRO stage 1, where DeepSpeed forces it off",
  fix = "remove overlap_comm, or use ZeRO stage 2 to overlap gradient reduction",
  check = function(cfg, ctx)
    if zero_stage(cfg) ~= 1 then return end
    if pybool(get(zero_section(cfg), "overlap_comm")) ~= true then return end
    emit(ctx, "overlap-comm-ignored", { "zero_optimization", "overlap_comm" },
      "overlap_comm is true at ZeRO stage 1: DeepSpeed forces it to false there \z
      ('Overlap and contiguous grads are meaningless in stage 1 and are ignored'), \z
      so the setting does nothing.",
      "remove overlap_comm, or use ZeRO stage 2 if you want gradient reduction overlapped")
  end,
}

local STAGE3_ONLY = {
  "allgather_sequential", "gather_16bit_weights_on_model_save",
  "max_live_parameters", "max_reuse_distance", "model_persistence_threshold",
  "module_granularity_threshold", "param_persistence_threshold",
  "prefetch_bucket_size", "stage3_allgather_sequential",
  "stage3_gather_16bit_weights_on_model_save",
  "stage3_gather_fp16_weights_on_model_save", "stage3_max_live_parameters",
  "stage3_max_reuse_distance", "stage3_model_persistence_threshold",
  "stage3_module_granularity_threshold", "stage3_param_persistence_threshold",
  "stage3_prefetch_bucket_size", "stage3_use_all_reduce_for_fetch_params",
  "sub_group_size", "use_all_reduce_for_fetch_params",
}

def {
  id = "stage3-option-ignored",
  severity = "note",
  summary = "ZeRO-3-only options set below stage 3 have no effect",
  fix = "remove the stage-3 options or switch to ZeRO stage 3",
  check = function(cfg, ctx)
    local stage = zero_stage(cfg)
    if stage == nil or stage == 3 then return end
    local z = zero_section(cfg)
    if not z then return end
    local found = {}
    for _, key in ipairs(STAGE3_ONLY) do
      local v = z[key]
      if v ~= nil and v ~= NULL and v ~= "auto" then found[#found + 1] = key end
    end
    if #found == 0 then return end
    emit(ctx, "stage3-option-ignored", { "zero_optimization", found[1] },
      table.concat(found, ", ") .. (#found == 1 and " is" or " are") .. " set at ZeRO stage "
      .. stage .. ": only the stage-3 engine reads " .. (#found == 1 and "it" or "them")
      .. ", so the value does nothing here.",
      "remove " .. table.concat(found, ", ") .. ", or set zero_optimization.stage to 3")
  end,
}

-- gradient_allreduce_op and its checks (runtime/config.py:234-241 and
-- 1029-1035 at DeepSpeed master edaa72212) are in no covered release: a
-- release that does not read the key ignores it (version-key says so), so
-- the checks apply where the release reads it, or when the version asked
-- for is at least the schema's first release reading it, past the newest
-- covered one ("next").
local function allreduce_op_read(ctx)
  if reads(ctx, "gradient_allreduce_op") then return true end
  local _, asked = dsversion.checked(ctx)
  if type(asked) ~= "string" or dsversion.cmp(asked:gsub("^v", ""), dsversion.newest.version) <= 0 then
    return false
  end
  local node = require("deepspeed.schema").root.fields.gradient_allreduce_op
  local since = node and node.since
  return since ~= nil and dsversion.cmp(asked:gsub("^v", ""), since) >= 0
end

def {
  id = "allreduce-sum-stage3",
  severity = "error",
  summary = "gradient_allreduce_op \"sum\" with ZeRO stage 3",
  fix = "use the default gradient_allreduce_op \"mean\" with ZeRO stage 3",
  check = function(cfg, ctx)
    local op = get(obj(cfg), "gradient_allreduce_op")
    if not is_str(op) or op:lower() ~= "sum" or zero_stage(cfg) ~= 3 then return end
    if not allreduce_op_read(ctx) then return end
    emit(ctx, "allreduce-sum-stage3", { "gradient_allreduce_op" },
      "gradient_allreduce_op \"" .. op .. "\" with ZeRO stage 3: DeepSpeed rejects \"sum\" \z
      gradient reduction at stage 3 (it only supports mean there).",
      "remove gradient_allreduce_op (default \"mean\"), or use ZeRO stage 1/2 for sum reduction")
  end,
}

def {
  id = "allreduce-sum-unsupported",
  severity = "error",
  summary = "gradient_allreduce_op \"sum\" with zenflow or compile.deepcompile",
  fix = "use the default gradient_allreduce_op \"mean\"",
  check = function(cfg, ctx)
    local op = get(obj(cfg), "gradient_allreduce_op")
    if not is_str(op) or op:lower() ~= "sum" then return end
    if not allreduce_op_read(ctx) then return end
    local z = zero_section(cfg)
    local zen = get(z, "zenflow")
    if obj(zen) then
      emit(ctx, "allreduce-sum-unsupported", { "gradient_allreduce_op" },
        "gradient_allreduce_op \"" .. op .. "\" with zero_optimization.zenflow: DeepSpeed \z
        rejects sum reduction together with ZenFlow.",
        "remove gradient_allreduce_op (default \"mean\") or the zenflow section")
    end
    local comp = obj(cfg.compile)
    if comp and pybool(comp.deepcompile) == true then
      emit(ctx, "allreduce-sum-unsupported", { "gradient_allreduce_op" },
        "gradient_allreduce_op \"" .. op .. "\" with compile.deepcompile: DeepSpeed \z
        rejects sum reduction together with DeepCompile.",
        "remove gradient_allreduce_op (default \"mean\") or set compile.deepcompile to false")
    end
  end,
}

-- optimizer ------------------------------------------------------------------

-- The optimizer and scheduler rules' checks are in rules_optim.lua, loaded
-- only when a config has one of those sections: most real configs have
-- neither (the Hugging Face Trainer builds both), and then the checks cost
-- no start-up. Each check there returns at once without its section, so
-- this gate changes no finding.
local optim
local function optim_on(sections, id)
  return function(cfg, ctx)
    if type(cfg) ~= "table" then return end
    for i = 1, #sections do
      if cfg[sections[i]] ~= nil then
        optim = optim or require("deepspeed.rules_optim")
        return optim.check[id](cfg, ctx)
      end
    end
  end
end

def {
  id = "constructor-args",
  severity = "error",
  summary = "scheduler.params / optimizer.params keys that the chosen type's constructor (torch.optim's too) does not take, or a required argument missing (TypeError at deepspeed.initialize)",
  fix = "use the constructor's argument names (did-you-mean in the message), remove the key, or add the missing argument",
  check = optim_on({ "optimizer", "scheduler" }, "constructor-args"),
}
def {
  id = "optimizer-amsgrad",
  severity = "error",
  summary = "optimizer.params.amsgrad true with an optimizer DeepSpeed builds without AMSGrad (FusedAdam, FusedLamb, 1-bit Adam/Lamb, 0/1 Adam): RuntimeError at deepspeed.initialize",
  fix = "remove amsgrad, offload the optimizer (DeepSpeedCPUAdam takes it) or set torch_adam: true",
  check = optim_on({ "optimizer" }, "optimizer-amsgrad"),
}
def {
  id = "unknown-optimizer",
  severity = "warning",
  summary = "optimizer.type is neither a DeepSpeed built-in nor a torch.optim class",
  fix = "use a DeepSpeed optimizer name (Adam, AdamW, Lamb, Lion, Adagrad, ...) or a torch.optim class name",
  check = optim_on({ "optimizer" }, "unknown-optimizer"),
}
def {
  id = "untested-optimizer",
  severity = "error",
  summary = "ZeRO with an optimizer outside ZERO_SUPPORTED_OPTIMIZERS needs zero_allow_untested_optimizer",
  fix = "add \"zero_allow_untested_optimizer\": true, or use a ZeRO-tested optimizer (Adam/AdamW/Adagrad/Lion)",
  check = optim_on({ "optimizer" }, "untested-optimizer"),
}
def {
  id = "onebit-with-zero",
  severity = "error",
  summary = "1-bit Adam, 0/1 Adam and 1-bit Lamb cannot be used with ZeRO",
  fix = "use ZeRO stage 0 with these optimizers, or switch to Adam/AdamW/Lamb",
  check = optim_on({ "optimizer" }, "onebit-with-zero"),
}
def {
  id = "lamb-static-loss-scale",
  severity = "error",
  summary = "Lamb / OneBitLamb require dynamic fp16 loss scaling",
  fix = "set fp16.loss_scale to 0 (dynamic)",
  check = optim_on({ "optimizer" }, "lamb-static-loss-scale"),
}
def {
  id = "adam-is-adamw",
  severity = "note",
  summary = "DeepSpeed's \"Adam\" applies decoupled (AdamW) weight decay unless adam_w_mode is false",
  fix = "write \"AdamW\", or set optimizer.params.adam_w_mode to false for L2-style Adam",
  check = optim_on({ "optimizer" }, "adam-is-adamw"),
}
def {
  id = "zero-no-optimizer",
  severity = "warning",
  summary = "ZeRO stage 1/2 without an optimizer section (plain DeepSpeed)",
  fix = "add an optimizer section, or pass an optimizer to deepspeed.initialize",
  check = function(cfg, ctx)
    if ctx.target ~= "deepspeed" or not obj(cfg) then return end
    local stage = zero_stage(cfg)
    if stage ~= 1 and stage ~= 2 then return end
    local opt = cfg.optimizer
    if opt ~= nil and opt ~= NULL then return end
    emit(ctx, "zero-no-optimizer", { "optimizer" }, "ZeRO stage " .. stage
      .. " without an optimizer section: unless the training script passes an optimizer \z
      to deepspeed.initialize, DeepSpeed asserts 'zero stage " .. stage
      .. " requires an optimizer'.",
      "add \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": 1e-4}} (or pass \z
      optimizer= to deepspeed.initialize)")
  end,
}
def {
  id = "scheduler-missing-param",
  severity = "error",
  summary = "OneCycle needs cycle_min_lr/cycle_max_lr; WarmupDecayLR/WarmupCosineLR need total_num_steps",
  fix = "add the required scheduler.params entries",
  check = optim_on({ "scheduler" }, "scheduler-missing-param"),
}
def {
  id = "unknown-scheduler",
  severity = "error",
  summary = "scheduler.type is neither a DeepSpeed lr_schedules class nor a torch.optim.lr_scheduler class",
  fix = "use WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle, LRRangeTest or a torch.optim.lr_scheduler class",
  check = optim_on({ "scheduler" }, "unknown-scheduler"),
}
def {
  id = "scheduler-warmup-exceeds-total",
  severity = "warning",
  summary = "warmup_num_steps larger than total_num_steps in WarmupDecayLR/WarmupCosineLR",
  fix = "make warmup_num_steps smaller than total_num_steps",
  check = optim_on({ "scheduler" }, "scheduler-warmup-exceeds-total"),
}
def {
  id = "scheduler-step-count",
  severity = "error",
  summary = "a scheduler step count the constructor rejects: warmup_num_steps not an integer (from 0.19.3), OneCycle cycle_first_step_size <= 0 or its cycle of 0 steps, LRRangeTest lr_range_test_step_size 0 (or not an integer > 0 from 0.19.4)",
  fix = "give whole positive step counts (write 100, not 100.0)",
  check = optim_on({ "scheduler" }, "scheduler-step-count"),
}
-- misc -----------------------------------------------------------------------

-- elasticity/config.py ElasticityConfig.__init__: with elasticity enabled,
-- max_train_batch_size and micro_batch_sizes must be present.
local ELASTIC_REQUIRED = { "max_train_batch_size", "micro_batch_sizes" }

def {
  id = "elasticity-missing",
  severity = "error",
  summary = "elasticity enabled (any truthy value, \"auto\" included) without max_train_batch_size or micro_batch_sizes",
  fix = "add elasticity.max_train_batch_size and elasticity.micro_batch_sizes, or disable elasticity",
  check = function(cfg, ctx)
    if not obj(cfg) or not elasticity_enabled(cfg) then return end
    local e = obj(cfg.elasticity)
    for _, key in ipairs(ELASTIC_REQUIRED) do
      if e[key] == nil then
        emit(ctx, "elasticity-missing", { "elasticity", "enabled" }, "elasticity.enabled is "
          .. fmt(e.enabled) .. " (true for Python) and elasticity." .. key
          .. " is missing: DeepSpeed raises ElasticityConfigError 'Elasticity config missing "
          .. key .. "' while reading the config.",
          "add elasticity." .. key .. ", or set elasticity.enabled to false")
        return
      end
    end
  end,
}

def {
  id = "elasticity-batch",
  severity = "error",
  summary = "elasticity enabled while batch keys are set, without ignore_non_elastic_batch_info",
  fix = "remove the batch keys or set elasticity.ignore_non_elastic_batch_info to true",
  check = function(cfg, ctx)
    if not obj(cfg) or not elasticity_enabled(cfg) then return end
    local e = obj(cfg.elasticity)
    if pytruthy(e.ignore_non_elastic_batch_info) then return end
    local present = batch.present(cfg)
    if #present == 0 then return end
    emit(ctx, "elasticity-batch", { present[1] }, "elasticity is enabled and "
      .. table.concat(present, ", ") .. (#present == 1 and " is" or " are") .. " set: \z
      DeepSpeed raises ElasticityConfigError 'One or more batch related parameters \z
      were found in your ds_config ... These parameters *will not be used* since \z
      elastic training is enabled'.",
      "remove " .. table.concat(present, ", ") .. ", or set \z
      elasticity.ignore_non_elastic_batch_info to true to let elasticity override them")
  end,
}

def {
  id = "steps-per-print",
  severity = "warning",
  summary = "steps_per_print 0 (ZeroDivisionError at the first step), below 10 (logging overhead) or above 10000 (practically never prints)",
  fix = "remove steps_per_print (default: no periodic print) or use a value such as 100",
  check = function(cfg, ctx)
    local v = get(obj(cfg), "steps_per_print")
    if not is_num(v) then return end
    if v <= 0 then
      -- runtime/engine.py: `(self.global_steps + 1) % self.steps_per_print() == 0`
      -- in the step path; 0 divides by zero, negatives print at wrong steps.
      emit(ctx, "steps-per-print", { "steps_per_print" }, "steps_per_print " .. pynum(v)
        .. (v == 0 and ": DeepSpeed computes (global_steps + 1) % steps_per_print after every \z
          optimizer step (runtime/engine.py), so training stops with ZeroDivisionError at the first step."
          or ": not a positive interval; DeepSpeed takes (global_steps + 1) % steps_per_print \z
          after every optimizer step (runtime/engine.py) and prints at meaningless steps."),
        "remove steps_per_print (no periodic print) or use a positive interval such as 100",
        v == 0 and "error" or "warning")
    elseif v < 10 and not (ctx.mode == "gen" and ctx.params
        and (tonumber(ctx.params.probe_steps) or 0) > 0) then
      -- (gen --probe prints every step on purpose: a short run measured
      -- step by step)
      emit(ctx, "steps-per-print", { "steps_per_print" }, "steps_per_print " .. pynum(v)
        .. ": DeepSpeed logs step, learning rate and loss-scale information every "
        .. pynum(v) .. " step(s), which floods the log and adds host work to nearly every \z
        step. Since v0.15.2 the default is None (no periodic print).",
        "use a larger interval such as 100, or remove steps_per_print")
    elseif v > 10000 and ctx.target == "deepspeed" then
      emit(ctx, "steps-per-print", { "steps_per_print" }, "steps_per_print " .. pynum(v)
        .. ": DeepSpeed practically never prints its periodic progress line. If the aim \z
        is silence, note the default is already None (no periodic print) since v0.15.2.",
        "remove steps_per_print for no periodic print, or use a reachable interval such as 100")
    end
  end,
}

def {
  id = "gradient-clipping-negative",
  severity = "warning",
  summary = "gradient_clipping below 0: DeepSpeed only clips when the value is > 0, so a negative value silently disables clipping",
  fix = "use 0.0 to disable clipping explicitly, or a positive norm such as 1.0",
  check = function(cfg, ctx)
    local v = get(obj(cfg), "gradient_clipping")
    if not is_num(v) or v >= 0 then return end
    -- runtime/engine.py and runtime/zero/*: every use is `if self.gradient_clipping() > 0`.
    emit(ctx, "gradient-clipping-negative", { "gradient_clipping" }, "gradient_clipping " .. pynum(v)
      .. ": DeepSpeed clips only when gradient_clipping > 0 (runtime/engine.py), so this disables \z
      clipping, the same as 0.0.",
      "use 0.0 to disable clipping explicitly, or a positive norm such as 1.0")
  end,
}

def {
  id = "gradient-clipping-default",
  severity = "note",
  summary = "gradient_clipping unset: its default changed from 0.0 (off) to 1.0 in v0.19.3",
  fix = "set gradient_clipping explicitly",
  check = function(cfg, ctx)
    if ctx.target ~= "deepspeed" or not obj(cfg) then return end
    if cfg.gradient_clipping ~= nil then return end
    local rel = release(ctx)
    local k = dsversion.data(rel).keys.gradient_clipping
    local d = k and k.d
    emit(ctx, "gradient-clipping-default", { "gradient_clipping" },
      "gradient_clipping is not set: DeepSpeed < v0.19.3 does not clip (default 0.0), \z
      v0.19.3+ clips the gradient norm at 1.0, so the same file trains differently \z
      across versions" .. (is_num(d) and string.format(" (DeepSpeed %s, the release checked \z
        against, uses %s).", rel.version, pynum(d)) or "."),
      "add \"gradient_clipping\": 1.0 (or 0.0 to disable clipping)")
  end,
}

def {
  id = "probe-config",
  severity = "warning",
  summary = "autotuning.enabled: DeepSpeed ends the run after end_profile_step + 1 steps (a \z
    probe, as gen --probe makes), so the config does not train",
  fix = "use the config generated without --probe for training",
  check = function(cfg, ctx)
    if not obj(cfg) then return end
    local at = obj(cfg.autotuning)
    if not at or at.enabled ~= true then return end
    -- gen --probe asked for it: the variant is meant to end early
    if ctx.mode == "gen" and ctx.params and (tonumber(ctx.params.probe_steps) or 0) > 0 then return end
    local stop = at.end_profile_step
    emit(ctx, "probe-config", { "autotuning", "enabled" },
      string.format("autotuning is enabled: DeepSpeed writes its metric file and calls exit() at \z
        global step %s (end_profile_step + 1, runtime/engine.py _autotuning_exit), so a \z
        training run with this config stops there; it is a probe (gen --probe), not a \z
        training config", is_num(stop) and pynum(stop + 1) or "6 (end_profile_step 5 + 1)"),
      "use the config generated without --probe for training, or remove the autotuning section")
  end,
}

-- At --target hf the Hugging Face Trainer (and Accelerate) load the config
-- with Python's json.load, which rejects the comments and trailing commas
-- DeepSpeed's hjson reader (and dsforge) accept. check only: the core
-- hands a rule the file's text as ctx.json_extension (plugins.md, Rules);
-- gen writes plain JSON.
def{
  id = "hf-json-load",
  severity = "error",
  summary = "at --target hf, the file must be plain JSON (json.load)",
  fix = "remove comments and trailing commas: the file must be plain JSON for the Trainer",
  check = function(_, ctx)
    if ctx.target ~= "hf" or not ctx.json_extension then return end
    local what, line, col = ctx.json_extension()
    if not what then return end
    ctx.report{
      at = { line, col },
      message = what .. ": the Hugging Face Trainer (and Accelerate) load the \z
        DeepSpeed config with Python's json.load, which rejects it \z
        (json.decoder.JSONDecodeError), though DeepSpeed's own hjson \z
        reader accepts it",
    }
  end,
}

M.rules = rules

-- What rules_optim.lua's checks share with the rules here (read when
-- that module loads).
M.helpers = {
  obj = obj, get = get, is_num = is_num, is_str = is_str, pybool = pybool,
  pytruthy = pytruthy, zero_stage = zero_stage, emit = emit, release = release,
  fmt = fmt, case_match = case_match, ONEBIT = ONEBIT, DS_SCHED = DS_SCHED,
  TORCH_SCHED = TORCH_SCHED,
}

return M
