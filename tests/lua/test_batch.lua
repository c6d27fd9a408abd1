-- Unit tests for plugins/deepspeed/batch.lua (DeepSpeed's batch derivation).

local TB = "train_batch_size"
local MB = "train_micro_batch_size_per_gpu"
local GAS = "gradient_accumulation_steps"
local MISSING = "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"

-- Independent reference for the expected verdict: DeepSpeed's
-- _set_batch_related_parameters + _batch_assertion written out per case.
local function reference(tb, mb, gas, w)
  if tb and mb and gas then
  elseif tb and mb then gas = tb // mb // w
  elseif tb and gas then mb = tb // w // gas
  elseif mb and gas then tb = mb * gas * w
  elseif tb then gas = 1; mb = tb // w
  elseif mb then tb = mb * w; gas = 1
  else return "missing" end
  if tb <= 0 or mb <= 0 or gas <= 0 then return "nonpositive" end
  if tb ~= mb * gas * w then return "unequal" end
  return { tb, mb, gas }
end

local function check_against_reference(tb, mb, gas, w)
  local batch = require("deepspeed.batch")
  local res, msg, which = batch.resolve(tb, mb, gas, w)
  local want = reference(tb, mb, gas, w)
  local label = ("tb=%s mb=%s gas=%s w=%d"):format(tostring(tb), tostring(mb), tostring(gas), w)
  if type(want) == "table" then
    T.truthy(res, label .. " should resolve, got: " .. tostring(msg))
    T.eq({ res[TB], res[MB], res[GAS] }, want, label)
    for _, k in ipairs(res.derived) do
      T.truthy((k == TB and tb == nil) or (k == MB and mb == nil) or (k == GAS and gas == nil),
        label .. ": " .. k .. " reported as derived but was given")
    end
  else
    T.eq(res, nil, label .. " should fail")
    T.truthy(type(msg) == "string" and #msg > 0, label)
    if want == "missing" then
      T.eq(msg, MISSING, label)
      T.eq(which, nil, label)
    elseif want == "unequal" then
      T.truthy(msg:find("Check batch related parameters", 1, true), label .. ": " .. msg)
      T.eq(which, TB, label)
    else
      T.truthy(msg:find("has to be greater than 0", 1, true), label .. ": " .. msg)
      T.truthy(which == TB or which == MB or which == GAS, label)
    end
  end
end

return {
  upstream_cases_all_three_given_world_2 = function()
    local batch = require("deepspeed.batch")
    local r = batch.resolve(32, 16, 1, 2)
    T.eq(r, { train_batch_size = 32, train_micro_batch_size_per_gpu = 16,
              gradient_accumulation_steps = 1, derived = {} })
    r = batch.resolve(32, 8, 2, 2)
    T.eq(r, { train_batch_size = 32, train_micro_batch_size_per_gpu = 8,
              gradient_accumulation_steps = 2, derived = {} })
    local res, msg, which = batch.resolve(33, 17, 2, 2)
    T.eq(res, nil)
    T.eq(msg, "Check batch related parameters. train_batch_size is not equal to "
      .. "micro_batch_per_gpu * gradient_acc_step * world_size 33 != 17 * 2 * 2")
    T.eq(which, TB)
    res, msg, which = batch.resolve(32, 18, 1, 2)
    T.eq(res, nil)
    T.eq(msg, "Check batch related parameters. train_batch_size is not equal to "
      .. "micro_batch_per_gpu * gradient_acc_step * world_size 32 != 18 * 1 * 2")
    T.eq(which, TB)
  end,

  upstream_subcases_two_given_world_2 = function()
    local batch = require("deepspeed.batch")
    -- success cases: TB+MB, TB+GAS, MB+GAS
    T.eq(batch.resolve(32, 16, nil, 2), { train_batch_size = 32,
      train_micro_batch_size_per_gpu = 16, gradient_accumulation_steps = 1, derived = { GAS } })
    T.eq(batch.resolve(32, 8, nil, 2).gradient_accumulation_steps, 2)
    T.eq(batch.resolve(32, nil, 1, 2), { train_batch_size = 32,
      train_micro_batch_size_per_gpu = 16, gradient_accumulation_steps = 1, derived = { MB } })
    T.eq(batch.resolve(32, nil, 2, 2).train_micro_batch_size_per_gpu, 8)
    T.eq(batch.resolve(nil, 16, 1, 2), { train_batch_size = 32,
      train_micro_batch_size_per_gpu = 16, gradient_accumulation_steps = 1, derived = { TB } })
    T.eq(batch.resolve(nil, 8, 2, 2).train_batch_size, 32)
    -- failing cases: TB+MB floors GAS to 0 (33//17//2 = 0, 32//18//2 = 0)
    local res, msg, which = batch.resolve(33, 17, nil, 2)
    T.eq(res, nil)
    T.eq(msg, "Gradient accumulation steps: 0 has to be greater than 0")
    T.eq(which, TB)
    res, msg = batch.resolve(32, 18, nil, 2)
    T.eq(msg, "Gradient accumulation steps: 0 has to be greater than 0")
    -- TB+GAS where GAS does not divide: MB = 33//2//2 = 8, 8*2*2 = 32 != 33
    res, msg, which = batch.resolve(33, nil, 2, 2)
    T.eq(res, nil)
    T.eq(msg, "Check batch related parameters. train_batch_size is not equal to "
      .. "micro_batch_per_gpu * gradient_acc_step * world_size 33 != 8 * 2 * 2")
    T.eq(which, TB)
  end,

  upstream_subcases_one_given_world_2 = function()
    local batch = require("deepspeed.batch")
    T.eq(batch.resolve(nil, 16, nil, 2), { train_batch_size = 32,
      train_micro_batch_size_per_gpu = 16, gradient_accumulation_steps = 1,
      derived = { GAS, TB } })
    T.eq(batch.resolve(32, nil, nil, 2), { train_batch_size = 32,
      train_micro_batch_size_per_gpu = 16, gradient_accumulation_steps = 1,
      derived = { GAS, MB } })
  end,

  none_given_or_only_gas_gives_deepspeed_message = function()
    local batch = require("deepspeed.batch")
    for _, w in ipairs({ 1, 2, 8 }) do
      for _, gas in ipairs({ false, 1, 4 }) do
        local res, msg, which = batch.resolve(nil, nil, gas or nil, w)
        T.eq(res, nil)
        T.eq(msg, MISSING)
        T.eq(which, nil)
      end
    end
  end,

  only_train_batch_size_64_world_1 = function()
    local batch = require("deepspeed.batch")
    T.eq(batch.resolve(64, nil, nil, 1), { train_batch_size = 64,
      train_micro_batch_size_per_gpu = 64, gradient_accumulation_steps = 1,
      derived = { GAS, MB } })
  end,

  floor_to_zero_is_caught_by_positive_check = function()
    local batch = require("deepspeed.batch")
    local res, msg, which = batch.resolve(8, 16, nil, 1)
    T.eq(res, nil)
    T.eq(msg, "Gradient accumulation steps: 0 has to be greater than 0")
    T.eq(which, TB)
    -- TB+GAS: MB = 3 // 4 // 1 = 0
    res, msg, which = batch.resolve(3, nil, 1, 4)
    T.eq(msg, "Micro batch size per gpu: 0 has to be greater than 0")
    T.eq(which, TB)
    -- only TB smaller than the world size
    res, msg, which = batch.resolve(2, nil, nil, 4)
    T.eq(msg, "Micro batch size per gpu: 0 has to be greater than 0")
    T.eq(which, TB)
  end,

  remainder_is_caught_by_equality = function()
    local batch = require("deepspeed.batch")
    local res, msg, which = batch.resolve(10, nil, nil, 4)
    T.eq(res, nil)
    T.eq(msg, "Check batch related parameters. train_batch_size is not equal to "
      .. "micro_batch_per_gpu * gradient_acc_step * world_size 10 != 2 * 1 * 4")
    T.eq(which, TB)
  end,

  positive_checks_run_in_deepspeed_order = function()
    local batch = require("deepspeed.batch")
    local _, msg, which = batch.resolve(0, 0, 0, 1)
    T.eq(msg, "Train batch size: 0 has to be greater than 0")
    T.eq(which, TB)
    _, msg, which = batch.resolve(4, -1, 0, 1)
    T.eq(msg, "Micro batch size per gpu: -1 has to be greater than 0")
    T.eq(which, MB)
    _, msg, which = batch.resolve(4, 4, -2, 1)
    T.eq(msg, "Gradient accumulation steps: -2 has to be greater than 0")
    T.eq(which, GAS)
    -- MB+GAS: derived TB = -2 * 3 * 2 = -12 fails first; blame the given MB
    _, msg, which = batch.resolve(nil, -2, 3, 2)
    T.eq(msg, "Train batch size: -12 has to be greater than 0")
    T.eq(which, MB)
    _, msg, which = batch.resolve(nil, 2, -3, 2)
    T.eq(msg, "Train batch size: -12 has to be greater than 0")
    T.eq(which, GAS)
    -- TB+GAS with a negative GAS: MB = 8 // 1 // -2 = -4 fails; blame GAS
    _, msg, which = batch.resolve(8, nil, -2, 1)
    T.eq(msg, "Micro batch size per gpu: -4 has to be greater than 0")
    T.eq(which, GAS)
  end,

  zero_divisor_is_python_zero_division = function()
    local batch = require("deepspeed.batch")
    local res, msg, which = batch.resolve(32, 0, nil, 2)
    T.eq(res, nil)
    T.eq(msg, "ZeroDivisionError: integer division or modulo by zero")
    T.eq(which, MB)
    res, msg, which = batch.resolve(32, nil, 0, 2)
    T.eq(msg, "ZeroDivisionError: integer division or modulo by zero")
    T.eq(which, GAS)
    res, msg = batch.resolve(32.0, nil, 0.0, 2)
    T.eq(msg, "ZeroDivisionError: float floor division by zero")
    -- all three given: no division happens, the > 0 check reports it
    res, msg, which = batch.resolve(32, 0, 1, 2)
    T.eq(msg, "Micro batch size per gpu: 0 has to be greater than 0")
    T.eq(which, MB)
  end,

  floats_behave_like_python_floats = function()
    local batch = require("deepspeed.batch")
    -- top-level scalars are not type-checked: 16.0 passes
    local r = batch.resolve(16.0, 4, nil, 2)
    T.eq(r.gradient_accumulation_steps, 2)
    T.eq(math.type(r.gradient_accumulation_steps), "float")
    local _, msg = batch.resolve(33.0, 17.0, 2, 2)
    T.eq(msg, "Check batch related parameters. train_batch_size is not equal to "
      .. "micro_batch_per_gpu * gradient_acc_step * world_size 33.0 != 17.0 * 2 * 2")
    _, msg = batch.resolve(16.5, 4, 2, 2)
    T.truthy(msg:find("16.5 != 4 * 2 * 2", 1, true), msg)
  end,

  every_combination_matches_reference_at_several_world_sizes = function()
    local tbs = { false, 1, 8, 10, 16, 32, 33, 64, 256 }
    local mbs = { false, 1, 2, 4, 8, 16, 17, 18 }
    local gass = { false, 1, 2, 3, 4 }
    local n = 0
    for _, w in ipairs({ 1, 2, 3, 4, 8 }) do
      for _, tb in ipairs(tbs) do
        for _, mb in ipairs(mbs) do
          for _, gas in ipairs(gass) do
            check_against_reference(tb or nil, mb or nil, gas or nil, w)
            n = n + 1
          end
        end
      end
    end
    T.eq(n, 5 * 9 * 8 * 5)
  end,

  derived_lists_per_combination = function()
    local batch = require("deepspeed.batch")
    T.eq(batch.resolve(16, 2, 2, 4).derived, {})
    T.eq(batch.resolve(16, 2, nil, 4).derived, { GAS })
    T.eq(batch.resolve(16, nil, 2, 4).derived, { MB })
    T.eq(batch.resolve(nil, 2, 2, 4).derived, { TB })
    T.eq(batch.resolve(16, nil, nil, 4).derived, { GAS, MB })
    T.eq(batch.resolve(nil, 2, nil, 4).derived, { GAS, TB })
  end,

  bad_arguments_raise = function()
    local batch = require("deepspeed.batch")
    T.errors(function() batch.resolve("auto", 1, 1, 1) end, "must be a number or nil")
    T.errors(function() batch.resolve(1, 1, 1, 0) end, "world size must be a number > 0")
    T.errors(function() batch.resolve(1, 1, 1, -2) end, "world size must be a number > 0")
    T.errors(function() batch.resolve(1, 1, 1, 0 / 0) end, "world size must be a number > 0")
    T.errors(function() batch.resolve(1, 1, 1, "8") end, "world size must be a number > 0")
  end,

  -- DeepSpeed's world_size / sequence_parallel_size is a float (Python's
  -- true division, runtime/config.py:680 at v0.17.6): the derivation and
  -- the assertion text follow it
  float_world_size_as_python_computes_it = function()
    local batch = require("deepspeed.batch")
    local r = batch.resolve(32, 2, nil, 4.0)
    T.eq(r.gradient_accumulation_steps, 4.0)
    T.eq(math.type(r.gradient_accumulation_steps), "float")
    local ok, msg = batch.resolve(32, 2, 2, 4.0)
    T.eq(ok, nil)
    T.truthy(msg:find("32 != 2 * 2 * 4.0", 1, true), msg)
    ok, msg = batch.resolve(32, 2, 2, 8 / 3)
    T.eq(ok, nil)
    T.truthy(msg:find("* 2.6666666666666665", 1, true), msg)
  end,

  pynum_prints_like_python = function()
    local batch = require("deepspeed.batch")
    T.eq(batch.pynum(16), "16")
    T.eq(batch.pynum(16.0), "16.0")
    T.eq(batch.pynum(500000000.0), "500000000.0")
    T.eq(batch.pynum(0.1), "0.1")
    T.eq(batch.pynum(1e20), "1e+20")
    T.eq(batch.pynum(-3), "-3")
  end,

  read_treats_null_as_missing_and_flags_non_numbers = function()
    local batch = require("deepspeed.batch")
    local tb, mb, gas, bad = batch.read({ train_batch_size = 32, gradient_accumulation_steps = dsforge.null })
    T.eq({ tb, mb, gas, bad }, { 32 })
    tb, mb, gas, bad = batch.read({ train_batch_size = "auto", train_micro_batch_size_per_gpu = 4 })
    T.eq(tb, nil); T.eq(mb, nil); T.eq(gas, nil)
    T.eq(bad, TB)
    -- bools are the ints Python makes of them (DeepSpeed computes with them)
    tb, mb, gas, bad = batch.read({ train_micro_batch_size_per_gpu = true, train_batch_size = false })
    T.eq({ tb, mb, gas, bad }, { 0, 1 })
    tb, mb, gas, bad = batch.read({ train_micro_batch_size_per_gpu = { 1 } })
    T.eq(bad, MB)
    T.eq(batch.present({ train_batch_size = dsforge.null, gradient_accumulation_steps = 2 }), { TB, GAS })
    T.eq(batch.present("not a table"), {})
  end,

  suggest_gives_consistent_values = function()
    local batch = require("deepspeed.batch")
    T.eq(batch.suggest(33, 17, 2, 2),
      "set train_batch_size to micro * gas * world_size = 68 (or remove train_batch_size and let DeepSpeed derive it)")
    T.eq(batch.suggest(32, 8, 3, 2),
      "set train_batch_size to micro * gas * world_size = 48, or gradient_accumulation_steps to 2 (or remove train_batch_size and let DeepSpeed derive it)")
    T.eq(batch.suggest(8, 16, nil, 1),
      "train_batch_size must be at least micro * world_size = 16: set it to 16 or a multiple of it, or lower train_micro_batch_size_per_gpu to 8")
    T.eq(batch.suggest(10, nil, nil, 4),
      "train_batch_size must be a multiple of world_size = 4: use 8 or 12")
    T.eq(batch.suggest(33, nil, 2, 2),
      "train_batch_size must be a multiple of world_size * gas = 4: use 32 or 36")
    T.eq(batch.suggest(32, 0, nil, 2), "set train_micro_batch_size_per_gpu to a positive integer")
    T.truthy(batch.suggest(nil, nil, 4, 8):find("train_micro_batch_size_per_gpu", 1, true))
    -- every suggested total really resolves
    for _, w in ipairs({ 1, 2, 4, 8 }) do
      for _, c in ipairs({ { 33, 17, 2 }, { 32, 18, 1 }, { 30, 4, 3 } }) do
        local s = batch.suggest(c[1], c[2], c[3], w)
        local total = tonumber(s:match("= (%d+)"))
        if batch.resolve(c[1], c[2], c[3], w) == nil then
          T.truthy(batch.resolve(total, c[2], c[3], w), s)
        end
      end
    end
  end,
}
