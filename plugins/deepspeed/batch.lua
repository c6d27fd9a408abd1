-- deepspeed.batch: DeepSpeed's batch-size derivation, reproduced exactly.
--
-- Mirrors DeepSpeedConfig._set_batch_related_parameters followed by
-- DeepSpeedConfig._batch_assertion (deepspeed/runtime/config.py):
--   TB  = train_batch_size
--   MB  = train_micro_batch_size_per_gpu
--   GAS = gradient_accumulation_steps
--   W   = data-parallel world size
-- All divisions are Python floor divisions (Lua `//` floors the same way,
-- for integers and floats alike). Messages are DeepSpeed's own assertion
-- texts, with numbers printed the way Python prints them.

-- Globals used on every value of every variant, as upvalues (a global
-- read goes through the sandbox environment's metatable).
local type, rawget, rawset, next, ipairs, pairs = type, rawget, rawset, next, ipairs, pairs
local tostring, tonumber, math, string, table = tostring, tonumber, math, string, table
local dsforge = dsforge

local M = {}

local NULL = dsforge.null

M.TB = "train_batch_size"
M.MB = "train_micro_batch_size_per_gpu"
M.GAS = "gradient_accumulation_steps"
M.KEYS = { M.TB, M.MB, M.GAS }

M.MSG_MISSING =
  "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"

-- Python's str() of an int or float (repr of floats: shortest round-trip
-- form, "16.0" for integral values, exponent form from 1e16 up).
function M.pynum(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  if x == math.floor(x) and math.abs(x) < 1e16 then
    return string.format("%.1f", x)
  end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end
local pynum = M.pynum

local function is_num(v) return type(v) == "number" end

-- Python floor division, raising nothing: returns nil and Python's
-- ZeroDivisionError text when the divisor is zero.
local function floordiv(a, b)
  if b == 0 then
    if math.type(a) == "integer" and math.type(b) == "integer" then
      return nil, "integer division or modulo by zero"
    end
    return nil, "float floor division by zero"
  end
  return a // b
end

local function check_arg(v, name)
  if v ~= nil and not is_num(v) then
    error("deepspeed.batch.resolve: " .. name .. " must be a number or nil, got "
      .. type(v), 3)
  end
end

-- M.resolve(tb, mb, gas, w)
--   tb, mb, gas: numbers (integers normally) or nil for "not given".
--   w: data-parallel world size, an integer >= 1 (or the float DeepSpeed
--      computes as world_size / sequence_parallel_size).
-- Success: { train_batch_size, train_micro_batch_size_per_gpu,
--            gradient_accumulation_steps, derived = sorted key list }
-- Failure: nil, message, which
--   message: DeepSpeed's assertion text (or Python's ZeroDivisionError text,
--            prefixed "ZeroDivisionError: ", when DeepSpeed divides by zero);
--   which:   the key to blame (a key the caller gave when possible), or nil
--            when neither TB nor MB is given.
function M.resolve(tb, mb, gas, w)
  check_arg(tb, "train_batch_size")
  check_arg(mb, "train_micro_batch_size_per_gpu")
  check_arg(gas, "gradient_accumulation_steps")
  -- (a float when DeepSpeed divides the world size by
  -- sequence_parallel_size: Python's true division)
  if type(w) ~= "number" or not (w > 0) or w == math.huge then
    error("deepspeed.batch.resolve: world size must be a number > 0, got "
      .. tostring(w), 2)
  end

  local given = { [M.TB] = tb ~= nil, [M.MB] = mb ~= nil, [M.GAS] = gas ~= nil }
  local derived = {}
  local err

  -- _set_batch_related_parameters
  if tb ~= nil and mb ~= nil and gas ~= nil then
    -- nothing to derive
  elseif tb ~= nil and mb ~= nil then
    gas, err = floordiv(tb, mb)
    if gas == nil then return nil, "ZeroDivisionError: " .. err, M.MB end
    gas = gas // w
    derived[#derived + 1] = M.GAS
  elseif tb ~= nil and gas ~= nil then
    mb = tb // w
    mb, err = floordiv(mb, gas)
    if mb == nil then return nil, "ZeroDivisionError: " .. err, M.GAS end
    derived[#derived + 1] = M.MB
  elseif mb ~= nil and gas ~= nil then
    tb = mb * gas
    tb = tb * w
    derived[#derived + 1] = M.TB
  elseif tb ~= nil then
    gas = 1
    mb = tb // w
    derived[#derived + 1] = M.GAS
    derived[#derived + 1] = M.MB
  elseif mb ~= nil then
    tb = mb * w
    gas = 1
    derived[#derived + 1] = M.GAS
    derived[#derived + 1] = M.TB
  else
    return nil, M.MSG_MISSING, nil
  end
  table.sort(derived)

  local vals = { [M.TB] = tb, [M.MB] = mb, [M.GAS] = gas }

  -- The key to blame for a failed check on `key`: the key itself when the
  -- user gave it, otherwise the given input the derived value came from.
  local function blame(key)
    if given[key] then return key end
    if key == M.TB then
      if vals[M.MB] <= 0 then return M.MB end
      return M.GAS
    end
    local other = (key == M.MB) and M.GAS or M.MB
    if given[other] and vals[other] <= 0 then return other end
    return M.TB
  end

  -- _batch_assertion, in DeepSpeed's order
  if not (tb > 0) then
    return nil, "Train batch size: " .. pynum(tb) .. " has to be greater than 0",
      blame(M.TB)
  end
  if not (mb > 0) then
    return nil, "Micro batch size per gpu: " .. pynum(mb)
      .. " has to be greater than 0", blame(M.MB)
  end
  if not (gas > 0) then
    return nil, "Gradient accumulation steps: " .. pynum(gas)
      .. " has to be greater than 0", blame(M.GAS)
  end
  if tb ~= mb * gas * w then
    return nil, "Check batch related parameters. train_batch_size is not equal"
      .. " to micro_batch_per_gpu * gradient_acc_step * world_size "
      .. pynum(tb) .. " != " .. pynum(mb) .. " * " .. pynum(gas) .. " * "
      .. pynum(w), M.TB
  end

  return {
    train_batch_size = tb,
    train_micro_batch_size_per_gpu = mb,
    gradient_accumulation_steps = gas,
    derived = dsforge.array(derived),
  }
end

-- M.read(cfg) -> tb, mb, gas, bad
-- Reads the three batch keys the way DeepSpeed does (dict.get: a JSON null
-- is the same as a missing key). A bool is the number Python makes of it
-- (true 1, false 0: DeepSpeed's arithmetic and "> 0" assertions take bools
-- as ints). When a present value is not a number ("auto", a string, a
-- table) all three results are nil and `bad` names the first such key; the
-- caller should then not judge the batch.
function M.read(cfg)
  if type(cfg) ~= "table" or cfg == NULL then return nil, nil, nil, nil end
  local out = {}
  for i, k in ipairs(M.KEYS) do
    local v = rawget(cfg, k)
    if v == NULL then v = nil end
    if type(v) == "boolean" then v = v and 1 or 0 end
    if v ~= nil and not is_num(v) then return nil, nil, nil, k end
    out[i] = v
  end
  return out[1], out[2], out[3], nil
end

-- M.present(cfg) -> list of the batch keys present in cfg (even as null),
-- in DeepSpeed's order (the elasticity check uses `key in param_dict`).
function M.present(cfg)
  local out = {}
  if type(cfg) ~= "table" or cfg == NULL then return out end
  for _, k in ipairs(M.KEYS) do
    if rawget(cfg, k) ~= nil then out[#out + 1] = k end
  end
  return out
end

local function is_pos_int(v)
  return math.type(v) == "integer" and v > 0
    or (math.type(v) == "float" and v > 0 and v == math.floor(v))
end

local function int(v)
  return math.tointeger(v) or v
end

-- M.suggest(tb, mb, gas, w) -> one line with consistent values to use
-- instead of the given ones (for a failed resolve). Never raises for
-- numeric or nil inputs and w >= 1.
function M.suggest(tb, mb, gas, w)
  if tb == nil and mb == nil then
    return "add \"train_micro_batch_size_per_gpu\" (e.g. 1); DeepSpeed then derives"
      .. " train_batch_size = micro * gradient_accumulation_steps * " .. pynum(w)
  end
  for _, kv in ipairs({ { M.MB, mb }, { M.GAS, gas }, { M.TB, tb } }) do
    if kv[2] ~= nil and not is_pos_int(kv[2]) then
      return "set " .. kv[1] .. " to a positive integer"
    end
  end
  local pt = tb and int(tb)
  local pm = mb and int(mb)
  local pg = gas and int(gas)
  local function multiples(unit, what)
    if pt < unit then
      return "train_batch_size must be at least " .. what .. " = " .. pynum(unit)
        .. ": set it to " .. pynum(unit) .. " or a multiple of it"
    end
    local k = pt // unit
    return "train_batch_size must be a multiple of " .. what .. " = " .. pynum(unit)
      .. ": use " .. pynum(k * unit) .. " or " .. pynum((k + 1) * unit)
  end
  if pm and pg then
    local s = "set train_batch_size to micro * gas * world_size = "
      .. pynum(pm * pg * w)
    if pt and pt % (pm * w) == 0 then
      s = s .. ", or gradient_accumulation_steps to " .. pynum(pt // (pm * w))
    end
    return s .. " (or remove train_batch_size and let DeepSpeed derive it)"
  end
  if pm then
    local s = multiples(pm * w, "micro * world_size")
    if pt < pm * w and pt % w == 0 then
      s = s .. ", or lower train_micro_batch_size_per_gpu to " .. pynum(pt // w)
    end
    return s
  end
  return multiples(w * (pg or 1), pg and "world_size * gas" or "world_size")
end

-- The machine-readable fixes of M.suggest's advice (ctx.report's edit,
-- contrib/docs/plugins.md), when it is a number to set: a list of
-- alternatives, or nil.
function M.suggest_edits(tb, mb, gas, w)
  if tb == nil or not (is_pos_int(tb) and (mb == nil or is_pos_int(mb))
      and (gas == nil or is_pos_int(gas))) then
    return nil
  end
  local pt, pm, pg = int(tb), mb and int(mb), gas and int(gas)
  if pm and pg then
    local edits = { { op = "set", path = M.TB, value = pm * pg * w } }
    if pt % (pm * w) == 0 and pt // (pm * w) > 0 then
      edits[2] = { op = "set", path = M.GAS, value = pt // (pm * w) }
    end
    return edits
  end
  if pm then
    local unit = pm * w
    local k = pt // unit
    return { { op = "set", path = M.TB, value = (k > 0 and k or 1) * unit } }
  end
  return nil
end

return M
