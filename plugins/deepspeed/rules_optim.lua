-- plugins/deepspeed/rules_optim.lua -- the checks of the optimizer and
-- scheduler rules (their declarations, ids and texts are in rules.lua).
-- Loaded by rules.lua's optim_on the first time a config has an
-- "optimizer" or "scheduler" section.
--
-- API: returns { check = { [id] = function(cfg, ctx) } }: one check per
-- rule id, called as the rule's own (rules.lua keeps each declaration).

local R = require("deepspeed.rules")
local dsversion = require("deepspeed.dsversion")
local batch = require("deepspeed.batch")

local type, ipairs, pairs, math, string, table = type, ipairs, pairs, math, string, table
local dsforge = dsforge

local h = R.helpers
local obj, get, is_num, is_str, pybool, pytruthy = h.obj, h.get, h.is_num, h.is_str, h.pybool, h.pytruthy
local zero_stage, emit, release, fmt, case_match = h.zero_stage, h.emit, h.release, h.fmt, h.case_match
local ONEBIT, DS_SCHED, TORCH_SCHED = h.ONEBIT, h.DS_SCHED, h.TORCH_SCHED
local NULL = dsforge.null
local pynum = batch.pynum

local C = {}

-- optimizer.type (a string, else nil) and the optimizer section (an
-- object, else nil). Seven checks ask it of one config in turn: the last
-- config's answer is kept (the rules get one cfg table per variant). The
-- memory holds the tables weakly: it never keeps a config alive (a large
-- one checked before another would stay in the state's budget), and a
-- collected config's entry is cleared, so a new table at its address is
-- never taken for it.
local last = setmetatable({}, { __mode = "v" })
local function optimizer_type(cfg)
  if cfg ~= last.cfg then
    local opt = obj(get(obj(cfg), "optimizer"))
    local t = get(opt, "type")
    last.cfg, last.type, last.opt = cfg, is_str(t) and t or nil, opt
  end
  return last.type, last.opt
end

-- optimizer.params.max_grad_norm is reported by schema_check (rejected-key).

-- scheduler.params / optimizer.params are passed to the constructor as
-- keyword arguments (runtime/engine.py): an unknown one is a TypeError at
-- deepspeed.initialize. The constructors per release come from
-- dsdata/ (contrib/dsknow/extract.py).
-- origin: where the signature comes from ("DeepSpeed 0.19.5", or "torch
-- 1.13.1, 2.6.0, 2.14.1; torch/optim/sgd.py:29 in 2.14.1": for a torch
-- class, allowed is every argument any covered torch release takes).
-- The set of a constructor's argument names, made once per list (the
-- lists are the release data's, the same for every variant of a run, or
-- constants of deepspeed.ctor's; weak keys all the same).
local names_of = setmetatable({}, { __mode = "k" })
local function arg_names(list)
  local names = names_of[list]
  if not names then
    names = {}
    for _, a in ipairs(list) do names[a] = true end
    names_of[list] = names
  end
  return names
end

local NO_NAMES = {}
local SKIP_OPTIMIZER = { max_grad_norm = true }

-- Whether key is a keyword check_kwargs reports: a string neither list
-- names nor skip holds.
local function unknown(key, names, more, skip)
  return type(key) == "string" and not names[key] and not more[key] and not skip[key]
end

-- params' keys that args (and more, when given: the keywords the engine
-- pops before calling the constructor) do not name, each a finding. The
-- usual config has none: that is found with pairs, and only a config with
-- one pays for the sorted keys (the findings' order) and the candidates.
local function check_kwargs(ctx, section, t, cls, params, args, more, skip, origin)
  local names = arg_names(args)
  local more_names = more and arg_names(more) or NO_NAMES
  local any = false
  for key in pairs(params) do
    if unknown(key, names, more_names, skip) then any = true break end
  end
  if not any then return end
  local allowed = {}
  for _, a in ipairs(args) do allowed[#allowed + 1] = a end
  for _, a in ipairs(more or NO_NAMES) do allowed[#allowed + 1] = a end
  for _, key in ipairs(dsforge.sorted_keys(params)) do
    if unknown(key, names, more_names, skip) then
      -- (the candidates only for a finding)
      local cands = dsforge.array {}
      for _, a in ipairs(allowed) do cands[#cands + 1] = a end
      local s = require("deepspeed.schema_check").suggest(key, cands)
      emit(ctx, "constructor-args", { section, "params", key }, string.format(
        "%s %s: %s.__init__ (%s) has no argument %q, so deepspeed.initialize raises \z
        TypeError (DeepSpeed passes %s.params as keyword arguments)%s",
        section, t, cls, origin, key, section, s and string.format("; did you mean %q?", s) or ""),
        s and string.format("rename it to %q", s) or ("remove it; " .. cls .. " takes: " .. table.concat(allowed, ", ")))
    end
  end
end

-- A keyword only some covered torch releases take (ctor's `only`): valid
-- with those, a TypeError with the others. The user names no torch
-- release, so this is a note naming them, never an error.
local function torch_only_notes(ctx, section, t, c, params)
  if not c.only then return end
  for _, key in ipairs(dsforge.sorted_keys(params)) do
    local vs = type(key) == "string" and c.only[key]
    if vs then
      local all, which, other = c.releases, nil, nil
      if vs[#vs] == all[#all] then
        which, other = "torch >= " .. vs[1], "an older torch"
      elseif vs[1] == all[1] then
        which, other = "torch <= " .. vs[#vs], "a newer torch"
      else
        which, other = "torch " .. table.concat(vs, ", "), "another torch"
      end
      emit(ctx, "constructor-args", { section, "params", key }, string.format(
        "%s %s: of the covered torch releases that have %s (%s), only %s takes %q; \z
        with %s deepspeed.initialize raises TypeError",
        section, t, c.class, table.concat(all, ", "), which, key, other),
        string.format("keep it if you run %s; otherwise remove it", which), "note")
    end
  end
end

-- The required arguments of constructor c (ctor.lua's) that section's
-- params (a table, or nil when none are given) lack: a TypeError at
-- deepspeed.initialize each.
local function missing_args(ctx, section, t, c, params)
  for _, key in ipairs(c.required) do
    if not params or params[key] == nil then
      emit(ctx, "constructor-args", params and { section, "params" } or { section }, string.format(
        "%s %s: %s.__init__ (%s) requires %q and %s.params does not give it, so \z
        deepspeed.initialize raises TypeError", section, t, c.class, c.origin, key, section),
        string.format("add \"%s\" to %s.params", key, section))
    end
  end
end

C["constructor-args"] = function(cfg, ctx)
  local rel = release(ctx)
  local data = dsversion.data(rel)
  local sch = obj(get(obj(cfg), "scheduler"))
  local t = get(sch, "type")
  local raw = get(sch, "params")
  local params = obj(raw)
  local sc = obj(cfg) and require("deepspeed.ctor").scheduler(cfg, rel)
  if sc and params then
    check_kwargs(ctx, "scheduler", t, sc.class, params, sc.args, nil, NO_NAMES, sc.origin)
    torch_only_notes(ctx, "scheduler", t, sc, params)
  end
  -- torch's required arguments (DeepSpeed's: scheduler-missing-param)
  if sc and sc.torch and (raw == nil or raw == NULL or params) then
    missing_args(ctx, "scheduler", t, sc, params)
  end
  -- the class the engine builds from optimizer.type (deepspeed.ctor)
  local ot, opt = optimizer_type(cfg)
  local o = obj(cfg) and require("deepspeed.ctor").optimizer(cfg, rel)
  if not o then return end
  raw = get(opt, "params")
  params = obj(raw)
  if params then
    -- max_grad_norm: schema_check's rejected-key says why
    check_kwargs(ctx, "optimizer", ot, o.class, params, o.args, o.popped, SKIP_OPTIMIZER, o.origin)
    torch_only_notes(ctx, "optimizer", ot, o, params)
  end
  -- a required argument missing (params absent or null: none given)
  if raw ~= nil and raw ~= NULL and not params then return end
  missing_args(ctx, "optimizer", ot, o, params)
end

-- optimizer.params.amsgrad with a class whose constructor raises for it
-- (FusedAdam, FusedLamb, 1-bit Adam/Lamb, 0/1 Adam): rules_steps.lua,
-- loaded when amsgrad is truthy.
C["optimizer-amsgrad"] = function(cfg, ctx)
  local ot, opt = optimizer_type(cfg)
  local params = obj(get(opt, "params"))
  if not params or not pytruthy(params.amsgrad) then return end
  require("deepspeed.rules_steps").amsgrad(cfg, ctx, release(ctx), ot, params)
end

C["unknown-optimizer"] = function(cfg, ctx)
  local t = optimizer_type(cfg)
  if not t or t == "auto" or R.classify_optimizer(t) then return end
  local fix
  local torch_name = case_match(t, R.TORCH_OPTIMIZERS)
  if t:lower() == "fusedadam" or t:lower() == "deepspeedcpuadam" then
    fix = "use \"type\": \"AdamW\" (or \"Adam\"): DeepSpeed builds FusedAdam from it, \z
      or DeepSpeedCPUAdam when the optimizer is offloaded"
  elseif t:lower() == "fusedlamb" then
    fix = "use \"type\": \"Lamb\" (DeepSpeed builds FusedLamb from it)"
  elseif torch_name then
    fix = "use \"type\": \"" .. torch_name .. "\" (torch.optim names are case-sensitive)"
  else
    fix = "use one of DeepSpeed's built-ins (" .. table.concat(R.DS_OPTIMIZERS, ", ")
      .. ", any case) or a torch.optim class (" .. table.concat(R.TORCH_OPTIMIZERS, ", ") .. ")"
  end
  emit(ctx, "unknown-optimizer", { "optimizer", "type" }, "optimizer type \"" .. t
    .. "\" is not a DeepSpeed built-in (matched case-insensitively) nor a torch.optim \z
    class (matched case-sensitively): DeepSpeed asserts '" .. t .. " is not a \z
    supported DeepSpeed Optimizer' (or fails with AttributeError). A warning, not an \z
    error, because torch.optim's contents depend on the torch version.", fix)
end

C["untested-optimizer"] = function(cfg, ctx)
  local stage = zero_stage(cfg)
  if stage == nil or stage == 0 then return end
  local t = optimizer_type(cfg)
  local c = R.classify_optimizer(t)
  if not c or c.zero_supported or ONEBIT[c.name] then return end
  if pytruthy(cfg.zero_allow_untested_optimizer) then return end
  emit(ctx, "untested-optimizer", { "optimizer", "type" }, "optimizer \"" .. t
    .. "\" (" .. c.class .. ") with ZeRO stage " .. stage .. " is not in DeepSpeed's \z
    ZERO_SUPPORTED_OPTIMIZERS: DeepSpeed asserts 'You are using an untested ZeRO \z
    Optimizer. Please add <\"zero_allow_untested_optimizer\": true> in the \z
    configuration file to use it.'",
    "add \"zero_allow_untested_optimizer\": true at the top level (DeepSpeed then only \z
    warns), or switch to AdamW")
end

C["onebit-with-zero"] = function(cfg, ctx)
  local stage = zero_stage(cfg)
  if stage == nil or stage == 0 then return end
  local t = optimizer_type(cfg)
  local text = t and ONEBIT[t:lower()]
  if not text then return end
  emit(ctx, "onebit-with-zero", { "optimizer", "type" }, "optimizer \"" .. t
    .. "\" with ZeRO stage " .. stage .. ": DeepSpeed asserts '" .. text .. "'.",
    "set zero_optimization.stage to 0 to keep " .. t .. ", or use AdamW with ZeRO")
end

C["lamb-static-loss-scale"] = function(cfg, ctx)
  local t = optimizer_type(cfg)
  if not t then return end
  local low = t:lower()
  if low ~= "lamb" and low ~= "onebitlamb" then return end
  local fp = obj(cfg.fp16)
  if not fp or pybool(fp.enabled) ~= true then return end
  local ls = fp.loss_scale
  if not is_num(ls) or ls == 0 then return end
  emit(ctx, "lamb-static-loss-scale", { "fp16", "loss_scale" }, "optimizer \"" .. t
    .. "\" with a static fp16.loss_scale " .. pynum(ls) .. ": DeepSpeed asserts 'DeepSpeed "
    .. low .. " optimizer requires dynamic loss scaling'.",
    "set fp16.loss_scale to 0 (dynamic loss scaling)")
end

C["adam-is-adamw"] = function(cfg, ctx)
  local t, opt = optimizer_type(cfg)
  if not t or t:lower() ~= "adam" then return end
  local params = obj(get(opt, "params"))
  if not params or params.adam_w_mode ~= nil then return end
  local wd = params.weight_decay
  if wd == nil or wd == NULL or (is_num(wd) and wd == 0) then return end
  emit(ctx, "adam-is-adamw", { "optimizer", "type" }, "optimizer \"" .. t
    .. "\" with weight_decay " .. fmt(wd) .. ": DeepSpeed's adam_w_mode defaults to true, \z
    so \"Adam\" applies decoupled weight decay exactly like AdamW, not the L2 penalty \z
    of torch.optim.Adam.",
    "write \"type\": \"AdamW\" to say what runs, or add \"adam_w_mode\": false to \z
    optimizer.params for classic Adam")
end


-- scheduler ----------------------------------------------------------------

local SCHED_REQUIRED = {
  OneCycle = { "cycle_min_lr", "cycle_max_lr" },
  WarmupDecayLR = { "total_num_steps" },
  WarmupCosineLR = { "total_num_steps" },
}

C["scheduler-missing-param"] = function(cfg, ctx)
  local sch = obj(get(obj(cfg), "scheduler"))
  local t = get(sch, "type")
  if not is_str(t) then return end
  local ctor = dsversion.data(release(ctx)).schedulers[t]
  local required = ctor and ctor.required or SCHED_REQUIRED[t]
  if not required then return end
  local params = sch.params
  if params == nil or params == NULL then params = {} end
  params = obj(params)
  if not params then return end
  for _, key in ipairs(required) do
    local v = params[key]
    local why
    if v == nil then
      why = "is missing: DeepSpeed calls " .. t .. "(optimizer, **params) and the \z
        constructor has no default for it (TypeError)"
    elseif v == NULL then
      why = "is null: DeepSpeed passes None to " .. t .. " and the LR arithmetic crashes"
    elseif v == "auto" and ctx.target ~= "hf" then
      why = "is \"auto\", which only the Hugging Face Trainer replaces: plain DeepSpeed \z
        passes the string to " .. t .. " and crashes"
    end
    if why then
      local fix
      if key == "total_num_steps" then
        fix = "set scheduler.params.total_num_steps to the number of optimizer steps \z
          in the run" .. (ctx.target == "hf" and " (or \"auto\" to let the HF Trainer fill it)" or "")
      else
        fix = "set scheduler.params." .. key .. " to a learning rate (e.g. "
          .. (key == "cycle_min_lr" and "1e-5" or "1e-4") .. ")"
      end
      emit(ctx, "scheduler-missing-param", { "scheduler", "params", key },
        "scheduler " .. t .. ": params." .. key .. " " .. why .. ".", fix)
    end
  end
end

C["unknown-scheduler"] = function(cfg, ctx)
  local sch = obj(get(obj(cfg), "scheduler"))
  local t = get(sch, "type")
  if not is_str(t) or t == "auto" or DS_SCHED[t] or TORCH_SCHED[t] then return end
  local fix
  local m = case_match(t, R.DS_SCHEDULERS) or case_match(t, R.TORCH_SCHEDULERS)
  if m then
    fix = "use \"type\": \"" .. m .. "\" (scheduler names are case-sensitive)"
  else
    fix = "use one of DeepSpeed's " .. table.concat(R.DS_SCHEDULERS, ", ")
      .. " or a torch.optim.lr_scheduler class (" .. table.concat(R.TORCH_SCHEDULERS, ", ") .. ")"
  end
  emit(ctx, "unknown-scheduler", { "scheduler", "type" }, "scheduler type \"" .. t
    .. "\" is not in deepspeed.runtime.lr_schedules nor torch.optim.lr_scheduler (both \z
    looked up case-sensitively): DeepSpeed asserts 'DeepSpeed does not recognize LR \z
    scheduler " .. t .. "'.", fix)
end

C["scheduler-warmup-exceeds-total"] = function(cfg, ctx)
  local sch = obj(get(obj(cfg), "scheduler"))
  local t = get(sch, "type")
  if t ~= "WarmupDecayLR" and t ~= "WarmupCosineLR" then return end
  local params = obj(sch.params)
  local total = get(params, "total_num_steps")
  if not is_num(total) then return end
  local warm = get(params, "warmup_num_steps")
  local defaulted = false
  if warm == nil then warm, defaulted = 1000, true end
  if not is_num(warm) or warm <= total then return end
  emit(ctx, "scheduler-warmup-exceeds-total", { "scheduler", "params",
    defaulted and "total_num_steps" or "warmup_num_steps" },
    "scheduler " .. t .. ": warmup_num_steps " .. pynum(warm)
    .. (defaulted and " (the default)" or "") .. " exceeds total_num_steps "
    .. pynum(total) .. ": DeepSpeed only logs a warning, and the run ends before the \z
    warmup finishes, so the learning rate never reaches its peak nor decays.",
    "set scheduler.params.warmup_num_steps below total_num_steps (commonly 1-10% of it)",
    nil, { "warmup_steps", "num_training_steps" })
end

-- A scheduler's step counts its constructor rejects, per release
-- (rules_steps.lua, loaded for a float warmup_num_steps, OneCycle and
-- LRRangeTest).
local WARMUP_SCHEDULERS = { WarmupLR = true, WarmupDecayLR = true, WarmupCosineLR = true }

C["scheduler-step-count"] = function(cfg, ctx)
  local sch = obj(get(obj(cfg), "scheduler"))
  local t = get(sch, "type")
  local params = obj(get(sch, "params"))
  if not params or not is_str(t) then return end
  if WARMUP_SCHEDULERS[t] then
    if math.type(params.warmup_num_steps) ~= "float" then return end
  elseif t ~= "OneCycle" and t ~= "LRRangeTest" then
    return
  end
  require("deepspeed.rules_steps").scheduler(ctx, release(ctx), t, params)
end

return { check = C }
