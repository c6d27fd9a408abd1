-- plugins/deepspeed/rules_steps.lua -- the bodies of two rules of
-- rules.lua, loaded only when a config needs them (rules.lua gates them
-- cheaply: a truthy optimizer.params.amsgrad; a float warmup_num_steps,
-- OneCycle or LRRangeTest), so the common check does not undump them.
--
--   M.amsgrad(cfg, ctx, rel, ot, params)   optimizer-amsgrad
--   M.scheduler(ctx, rel, t, params)       scheduler-step-count

local dsversion = require("deepspeed.dsversion")
local pynum = require("deepspeed.batch").pynum

local M = {}

local NULL = dsforge.null

local function is_num(v) return type(v) == "number" and v == v end

local function emit(ctx, rule, path, message, fix)
  ctx.report { rule = rule, path = dsforge.array(path), message = message, fix = fix }
end

local function fmt(v)
  if is_num(v) then return pynum(v) end
  if type(v) == "string" then return string.format("%q", v) end
  if v == NULL then return "null" end
  return tostring(v)
end

-- The DeepSpeed optimizer classes whose constructor raises for a truthy
-- amsgrad, in every covered release (0.14.5 to 0.19.5, the same lines):
-- ops/adam/fused_adam.py:87-88, ops/lamb/fused_lamb.py:55-56,
-- runtime/fp16/onebit/adam.py:61-62, runtime/fp16/onebit/lamb.py:82-83
-- (83-84 from 0.18.9), runtime/fp16/onebit/zoadam.py:74-75 (76-77 from
-- 0.16.5). DeepSpeedCPUAdam/DeepSpeedCPUAdagrad (offloaded) and the torch
-- classes take it.
local NO_AMSGRAD = {
  FusedAdam = "FusedAdam does not support the AMSGrad variant.",
  FusedLamb = "FusedLamb does not support the AMSGrad variant.",
  OnebitAdam = "1-bit Adam does not support the AMSGrad variant.",
  OnebitLamb = "1-bit Lamb does not support the AMSGrad variant.",
  ZeroOneAdam = "0/1 Adam does not support the AMSGrad variant.",
}

function M.amsgrad(cfg, ctx, rel, ot, params)
  local o = require("deepspeed.ctor").optimizer(cfg, rel)
  local text = o and not o.torch and NO_AMSGRAD[o.class]
  if not text then return end
  emit(ctx, "optimizer-amsgrad", { "optimizer", "params", "amsgrad" }, string.format(
    "optimizer %s with amsgrad %s: DeepSpeed %s builds %s, whose constructor raises"
    .. " RuntimeError '%s' at deepspeed.initialize", ot, fmt(params.amsgrad),
    rel.version, o.class, text),
    (o.class == "FusedAdam")
      and "remove amsgrad (or set it to false); for AMSGrad set optimizer.params.torch_adam to true (torch.optim.AdamW) or offload the optimizer to cpu (DeepSpeedCPUAdam)"
      or "remove amsgrad (or set it to false)")
end

-- A scheduler's step counts its constructor rejects, per release:
--   * WarmupLR (and WarmupDecayLR, its subclass) and WarmupCosineLR raise
--     ValueError "warmup_num_steps must be a positive integer" for a value
--     that is not a Python int, from 0.19.3 (runtime/lr_schedules.py:667
--     and 816 at v0.19.3, 695 and 844 at v0.19.5; a JSON 100.0 is a float);
--     before, they take max(2, warmup_num_steps) (lr_schedules.py:675 at
--     v0.19.2). The bound (> 0) is schema_check's (range_since).
--   * OneCycle raises ValueError for cycle_first_step_size <= 0 or
--     cycle_second_step_size < 0 from 0.19.4 (lr_schedules.py:491-494 at
--     v0.19.5); before, _initialize_cycle divides by their sum
--     (step_ratio = first / total_size, lr_schedules.py:486 at v0.19.2),
--     a ZeroDivisionError when it is 0.
--   * LRRangeTest: lr_range_test_step_size, the same releases (below).
local WARMUP_INT_SINCE = "0.19.3"
local ONECYCLE_CHECKED_SINCE = "0.19.4"
local WARMUP_SCHEDULERS = { WarmupLR = true, WarmupDecayLR = true, WarmupCosineLR = true }

function M.scheduler(ctx, rel, t, params)
  if WARMUP_SCHEDULERS[t] then
    local w = params.warmup_num_steps
    if math.type(w) == "float" and w == w and dsversion.cmp(rel.version, WARMUP_INT_SINCE) >= 0 then
      emit(ctx, "scheduler-step-count", { "scheduler", "params", "warmup_num_steps" }, string.format(
        "scheduler %s: warmup_num_steps %s is a float (JSON number with a fraction part or"
        .. " exponent): DeepSpeed %s tests isinstance(warmup_num_steps, int) and raises"
        .. " ValueError 'warmup_num_steps must be a positive integer, got %s' at"
        .. " deepspeed.initialize (releases before %s accept it)", t, pynum(w), rel.version,
        pynum(w), WARMUP_INT_SINCE),
        (w == math.floor(w) and w >= 1 and w < 2^53)
          and string.format("write it as an integer: \"warmup_num_steps\": %d", math.tointeger(w))
          or "give a whole number of steps >= 1")
    end
    return
  end
  if t == "LRRangeTest" then
    -- LRRangeTest raises ValueError for a step size that is not an int
    -- > 0 from 0.19.4 (lr_schedules.py:335-336 at v0.19.5); before, 0
    -- divides by zero at the first step (lr_schedules.py:344 and 347 at
    -- v0.19.2)
    local n = params.lr_range_test_step_size
    if not is_num(n) then return end
    local why
    if dsversion.cmp(rel.version, ONECYCLE_CHECKED_SINCE) >= 0 then
      if math.type(n) == "float" or n <= 0 then
        why = string.format("LRRangeTest constructor raises ValueError 'lr_range_test_step_size"
          .. " must be a positive integer, got %s' at deepspeed.initialize", pynum(n))
      end
    elseif n == 0 then
      why = "LRRangeTest divides by lr_range_test_step_size and raises ZeroDivisionError at"
        .. " the first step"
    end
    if why then
      emit(ctx, "scheduler-step-count", { "scheduler", "params", "lr_range_test_step_size" },
        string.format("scheduler LRRangeTest: lr_range_test_step_size %s: DeepSpeed %s's %s",
          pynum(n), rel.version, why),
        "set scheduler.params.lr_range_test_step_size to a whole number of steps > 0")
    end
    return
  end
  if t ~= "OneCycle" then return end
  local first = params.cycle_first_step_size
  if first == nil then first = 2000 end
  local second = params.cycle_second_step_size
  if second == nil or second == NULL then second = first end
  if not is_num(first) or not is_num(second) then return end
  local checked = dsversion.cmp(rel.version, ONECYCLE_CHECKED_SINCE) >= 0
  local key, why
  if checked and first <= 0 then
    key, why = "cycle_first_step_size", string.format("raises ValueError 'cycle_first_step_size"
      .. " must be positive, got %s'", pynum(first + 0.0))
  elseif checked and second < 0 then
    key, why = "cycle_second_step_size", string.format("raises ValueError 'cycle_second_step_size"
      .. " must be non-negative, got %s'", pynum(second + 0.0))
  elseif not checked and first + second == 0 then
    key, why = "cycle_first_step_size", "divides cycle_first_step_size by the cycle's length"
      .. " (cycle_first_step_size + cycle_second_step_size = 0) and raises ZeroDivisionError"
  end
  if not key then return end
  emit(ctx, "scheduler-step-count", { "scheduler", "params", key }, string.format(
    "scheduler OneCycle: %s %s: DeepSpeed %s's OneCycle constructor %s at deepspeed.initialize",
    key, pynum(params[key] == nil and first or params[key]), rel.version, why),
    "set scheduler.params." .. key .. " to the number of steps of that half of the cycle (> 0)")
end

return M
