-- plugins/deepspeed/sections_check.lua -- the checks DeepSpeedConfig runs
-- inside two sections it reads with plain dict code and hands on whole
-- (schema.lua: open sections): compression_training and data_efficiency
-- (issue 28; found unchecked by contrib/dsknow/coverage).
--
--   compression-config       compression/config.py
--   data-efficiency-config   runtime/data_pipeline/config.py
--
-- The rules are declared in rules_sections.lua; this module, their
-- checks by rule id, is loaded only when a config has one of the sections.
--
-- Every line cited is the same in each covered release (0.14.5 to 0.19.5)
-- unless said otherwise.

local dsversion = require("deepspeed.dsversion")

local type, ipairs, pairs, next, tostring, tonumber = type, ipairs, pairs, next, tostring, tonumber
local string, table, math = string, table, math
local dsforge = dsforge
local NULL = dsforge.null

local M = {}

local kind = dsforge.kind

-- A JSON object (not an array, even an empty one), else nil; Python's
-- truthiness of a JSON value (DeepSpeed's `if value:` on what
-- get_scalar_param returns, as given): ctor.lua's, which the rules load
-- with the plugin's rules anyway (instructions.sh: no change).
local ctor = require("deepspeed.ctor")
local obj, pytruthy = ctor.object, ctor.truthy

-- The Python type name of a JSON value, for AttributeError texts.
local function pytype(v)
  if v == NULL then return "NoneType" end
  if type(v) == "table" then return kind(v) == "array" and "list" or "dict" end
  if type(v) == "string" then return "str" end
  if type(v) == "boolean" then return "bool" end
  if type(v) == "number" then return math.type(v) == "integer" and "int" or "float" end
  return type(v)
end

local function show(v)
  if v == NULL then return "null" end
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then return kind(v) == "array" and "a list" or "an object" end
  return tostring(v)
end

local function emit(ctx, rule, path, message, fix)
  ctx.report { rule = rule, path = dsforge.array(path), message = message, fix = fix }
end

---------------------------------------------------------------------------
-- compression_training (compression/config.py get_compression_config:11-27)
---------------------------------------------------------------------------

-- Per technique, in the order DeepSpeed reads them: its shared_parameters
-- reader and the assert on its string choices (value must be one of the
-- list, the default applying when absent), the assert that an enabled
-- technique has different_groups, and the keys each group's params need
-- (the nested get_params of get_*_different_groups).
local TECHNIQUES = {
  { name = "weight_quantization", title = "Weigh Quantization", groups_assert = 74,
    choices = { { "quantization_type", "symmetric", { "symmetric", "asymmetric" }, 99, "weight quantize type" },
                { "rounding", "nearest", { "nearest", "stochastic" }, 104, "weight quantize rounding" } },
    params = { "start_bits", "target_bits" }, params_line = 135, what = "weight quantization" },
  { name = "activation_quantization", title = "Activation Quantization", groups_assert = 163,
    choices = { { "quantization_type", "symmetric", { "symmetric", "asymmetric" }, 177, "activation quantize type" },
                { "range_calibration", "dynamic", { "dynamic", "static" }, 182, "activation quantize range calibration" } },
    params = { "bits" }, params_line = 201, what = "activation quantization" },
  { name = "sparse_pruning", title = "Sparse Pruning", groups_assert = 226,
    choices = { { "method", "l1", { "l1", "topk", "snip_momentum" }, 241, "sparse pruning method" } },
    params = { "dense_ratio" }, params_line = 274, what = "sparse pruning" },
  { name = "row_pruning", title = "Row Pruning", groups_assert = 298,
    choices = { { "method", "l1", { "l1", "topk" }, 311, "row pruning method" } },
    params = { "dense_ratio" }, params_line = 328, what = "row pruning" },
  { name = "head_pruning", title = "Head Pruning", groups_assert = 351,
    choices = { { "method", "topk", { "l1", "topk" }, 365, "head pruning method" } },
    params = { "dense_ratio" }, params_line = 386, what = "head pruning" },
  { name = "channel_pruning", title = "Sparse Pruning", groups_assert = 409,
    choices = { { "method", "l1", { "l1", "topk" }, 423, "channel pruning method" } },
    params = { "dense_ratio" }, params_line = 440, what = "channel pruning" },
}

local RULE_C = "compression-config"

local function where(line) return "compression/config.py:" .. line end

-- Python's a <= b for two JSON values, or nil when Python raises TypeError.
local function py_le(a, b)
  local ta, tb = type(a), type(b)
  if (ta == "number" or ta == "boolean") and (tb == "number" or tb == "boolean") then
    a = (a == true and 1) or (a == false and 0) or a
    b = (b == true and 1) or (b == false and 0) or b
    return a <= b
  end
  if ta == "string" and tb == "string" then return a <= b end
  return nil
end

-- snip_momentum's extra shared parameters (get_sparse_pruning_shared_parameters:
-- dense_ratio asserted in (0, 1) at 251, schedule_offset <= schedule_offset_end
-- at 260, the end defaulting to the offset).
local function snip_momentum(ctx, base, shared)
  local dr = shared.dense_ratio
  if dr == nil then dr = 0.1 end
  local n = (dr == true and 1) or (dr == false and 0) or dr
  if type(n) ~= "number" then
    emit(ctx, RULE_C, { base[1], base[2], "shared_parameters", "dense_ratio" },
      base[2] .. ".shared_parameters.dense_ratio is " .. show(dr) .. ": DeepSpeed compares it with 0 ("
      .. where(251) .. ") and raises TypeError.", "give a number between 0 and 1 (exclusive)")
  elseif not (n > 0 and n < 1) then
    emit(ctx, RULE_C, { base[1], base[2], "shared_parameters", "dense_ratio" },
      base[2] .. ".shared_parameters.dense_ratio " .. show(dr) .. " with method snip_momentum: DeepSpeed"
      .. " asserts 0 < dense_ratio < 1 (" .. where(251) .. ": 'Invalid dense_ratio value. Must be less than 1').",
      "give a dense_ratio between 0 and 1 (exclusive), e.g. 0.1")
  end
  local off = shared.schedule_offset
  if off == nil then off = 1000 end
  local stop = shared.schedule_offset_end
  if stop == nil then stop = off end
  local le = py_le(off, stop)
  if le == false or (le == nil and obj(off) == nil and obj(stop) == nil) then
    emit(ctx, RULE_C, { base[1], base[2], "shared_parameters", "schedule_offset_end" },
      base[2] .. ".shared_parameters.schedule_offset " .. show(off) .. " and schedule_offset_end "
      .. show(stop) .. ": DeepSpeed asserts schedule_offset <= schedule_offset_end (" .. where(260)
      .. ": 'Invalid schedule_offset and schedule_offset_end values')"
      .. (le == nil and ", and comparing these values raises TypeError" or "") .. ".",
      "make schedule_offset_end at least schedule_offset")
  end
end

-- A technique's shared_parameters (get_*_shared_parameters); returns
-- whether it is enabled and its method, or nil after an error.
local function shared_parameters(ctx, t, sec)
  local base = { "compression_training", t.name }
  local shared = sec.shared_parameters
  if shared == nil then return false, nil end
  if not obj(shared) then
    emit(ctx, RULE_C, { base[1], base[2], "shared_parameters" }, t.name .. ".shared_parameters is "
      .. show(shared) .. ": DeepSpeed reads it with .get() and raises AttributeError: '" .. pytype(shared)
      .. "' object has no attribute 'get'.", "give shared_parameters as an object")
    return nil
  end
  local ok = true
  for _, c in ipairs(t.choices) do
    local key, default, allowed, line, label = c[1], c[2], c[3], c[4], c[5]
    local v = shared[key]
    if v == nil then v = default end
    local found = false
    for _, a in ipairs(allowed) do if v == a then found = true end end
    if not found then
      ok = false
      emit(ctx, RULE_C, { base[1], base[2], "shared_parameters", key }, t.name .. ".shared_parameters."
        .. key .. " is " .. show(v) .. ": DeepSpeed asserts it is one of " .. table.concat(allowed, ", ")
        .. " (" .. where(line) .. ": 'Invalid " .. label .. "').",
        "use one of " .. table.concat(allowed, ", ") .. " (default " .. default .. ")")
    end
  end
  local enabled = pytruthy(shared.enabled)
  local method = shared.method
  if method == nil then method = t.choices[1][1] == "method" and t.choices[1][2] or nil end
  if t.name == "sparse_pruning" and method == "snip_momentum" then snip_momentum(ctx, base, shared) end
  if t.name == "head_pruning" and enabled and shared.num_heads == nil then
    ok = false
    emit(ctx, RULE_C, { base[1], base[2], "shared_parameters", "enabled" }, "head_pruning is enabled"
      .. " (shared_parameters.enabled " .. show(shared.enabled) .. ") without shared_parameters.num_heads:"
      .. " DeepSpeed asserts 'num_heads must be specified for head pruning' (" .. where(371) .. ").",
      "add shared_parameters.num_heads (the model's attention heads)")
  end
  if not ok then return nil end
  return enabled, method
end

-- A technique's different_groups (get_*_different_groups: the dict is
-- indexed, iterated with .items(), each group's "params" indexed and
-- checked by the nested get_params).
local function different_groups(ctx, t, groups)
  local base = { "compression_training", t.name, "different_groups" }
  if not obj(groups) then
    emit(ctx, RULE_C, base, t.name .. ".different_groups is " .. show(groups) .. ": DeepSpeed iterates"
      .. " it with .items() and raises AttributeError: '" .. pytype(groups) .. "' object has no"
      .. " attribute 'items'.", "give different_groups as an object of named groups")
    return
  end
  local names = {}
  for k in pairs(groups) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local g = groups[k]
    local params = obj(g) and g.params
    if not obj(g) or params == nil then
      emit(ctx, RULE_C, { base[1], base[2], base[3], k }, t.name .. ".different_groups." .. k
        .. (obj(g) and " has no \"params\": DeepSpeed indexes group[\"params\"] and raises KeyError: 'params'."
            or " is " .. show(g) .. ": DeepSpeed indexes it with \"params\" and raises TypeError."),
        "give the group an object with \"params\" (and \"modules\")")
    elseif not obj(params) then
      emit(ctx, RULE_C, { base[1], base[2], base[3], k, "params" }, t.name .. ".different_groups." .. k
        .. ".params is " .. show(params) .. ": DeepSpeed calls its .keys() and raises AttributeError.",
        "give params as an object")
    else
      for _, need in ipairs(t.params) do
        if params[need] == nil then
          emit(ctx, RULE_C, { base[1], base[2], base[3], k, "params" }, t.name .. ".different_groups."
            .. k .. ".params has no " .. need .. ": DeepSpeed asserts '" .. need .. " must be specified for "
            .. t.what .. " group " .. k .. "' (" .. where(t.params_line) .. ").",
            "add " .. need .. " to the group's params")
          break
        end
      end
    end
  end
end

local function technique(ctx, t, sec)
  if not obj(sec) then
    emit(ctx, RULE_C, { "compression_training", t.name }, "compression_training." .. t.name .. " is "
      .. show(sec) .. ": DeepSpeed checks `\"shared_parameters\" in section.keys()` and raises"
      .. " AttributeError: '" .. pytype(sec) .. "' object has no attribute 'keys'.",
      "give " .. t.name .. " as an object with shared_parameters and different_groups")
    return
  end
  local enabled, method = shared_parameters(ctx, t, sec)
  if enabled == nil then return end
  if sec.different_groups == nil then
    local asserted = enabled and not (t.name == "sparse_pruning" and method == "snip_momentum")
    emit(ctx, RULE_C, { "compression_training", t.name }, "compression_training." .. t.name
      .. " has no different_groups: " .. (asserted
        and ("it is enabled, and DeepSpeed asserts '" .. t.title .. " is enabled"
             .. (t.name == "sparse_pruning" and " and not snip_momentum method" or "")
             .. ", different_groups must be specified' (" .. where(t.groups_assert) .. ").")
        or ("DeepSpeed indexes section[\"different_groups\"] whether or not the technique is"
            .. " enabled and raises KeyError: 'different_groups'.")),
      "add \"different_groups\" (an empty object {} when no group is needed), or remove " .. t.name)
    return
  end
  different_groups(ctx, t, sec.different_groups)
end

-- get_eigenvalue_config (runtime/config.py) asks get_quantize_enabled
-- (compression/config.py:56-62), which hands compression_training itself to
-- get_weight_quantization_shared_parameters: a shared_parameters key right
-- under compression_training is read like weight_quantization's (its
-- quantization_type and rounding asserted at :99 and :104), and when its
-- enabled is true the eigenvalue branch runs. Up to 0.19.2 that branch reads
-- param_dict[QUANTIZE_TRAINING], a name runtime/config.py never imports
-- (NameError, runtime/config.py:567 at 0.14.5, :569 at 0.16.9, :521 at
-- 0.19.2); from 0.19.5 it reads quantize_training.eigenvalue and asserts it
-- is not enabled (:538).
local EIGENVALUE_FIXED_SINCE = "0.19.5"

local function quantize_enabled(ctx, cfg, shared)
  local path = { "compression_training", "shared_parameters" }
  if not obj(shared) then
    emit(ctx, RULE_C, path, "compression_training.shared_parameters is " .. show(shared) .. ": DeepSpeed's"
      .. " get_quantize_enabled reads it with .get() and raises AttributeError.",
      "remove compression_training.shared_parameters (each technique has its own)")
    return
  end
  local t = TECHNIQUES[1]
  for _, c in ipairs(t.choices) do
    local v = shared[c[1]]
    if v == nil then v = c[2] end
    if v ~= c[3][1] and v ~= c[3][2] then
      emit(ctx, RULE_C, { path[1], path[2], c[1] }, "compression_training.shared_parameters." .. c[1] .. " is "
        .. show(v) .. ": DeepSpeed's get_quantize_enabled reads this section like weight_quantization's"
        .. " shared_parameters and asserts it is one of " .. table.concat(c[3], ", ") .. " ("
        .. where(c[4]) .. ").", "use one of " .. table.concat(c[3], ", ") .. ", or remove the key")
      return
    end
  end
  if not pytruthy(shared.enabled) then return end
  local rel = dsversion.checked(ctx)
  if dsversion.cmp(rel.version, EIGENVALUE_FIXED_SINCE) < 0 then
    emit(ctx, RULE_C, { path[1], path[2], "enabled" }, "compression_training.shared_parameters.enabled is "
      .. show(shared.enabled) .. ": DeepSpeed " .. rel.version .. "'s get_eigenvalue_config then reads"
      .. " param_dict[QUANTIZE_TRAINING], a name runtime/config.py does not define, and raises NameError"
      .. " (fixed in 0.19.5).", "remove compression_training.shared_parameters (each technique has its own)")
    return
  end
  local qt = obj(cfg) and cfg.quantize_training
  if qt == nil or qt == NULL then return end
  local ev = obj(qt) and qt.eigenvalue
  if not obj(qt) or (ev ~= nil and not obj(ev)) then
    emit(ctx, RULE_C, { "quantize_training" }, "quantize_training is read as an object with an eigenvalue"
      .. " object when compression_training.shared_parameters.enabled is on (runtime/config.py"
      .. " get_eigenvalue_enabled), and this one is not.", "give quantize_training.eigenvalue as an object")
  elseif ev and pytruthy(ev.enabled) then
    emit(ctx, RULE_C, { "quantize_training", "eigenvalue", "enabled" }, "quantize_training.eigenvalue.enabled"
      .. " with compression_training.shared_parameters.enabled: DeepSpeed asserts 'Eigenvalue based MoQ is"
      .. " temporarily disabled' (runtime/config.py:538 at 0.19.5).",
      "set quantize_training.eigenvalue.enabled to false")
  end
end

M.check = {}

M.check[RULE_C] = function(cfg, ctx)
  local ct = obj(cfg) and obj(cfg.compression_training)
  if not ct then return end
  for _, t in ipairs(TECHNIQUES) do
    if ct[t.name] ~= nil then technique(ctx, t, ct[t.name]) end
  end
  if ct.shared_parameters ~= nil then quantize_enabled(ctx, cfg, ct.shared_parameters) end
  -- get_layer_reduction_enabled:40-44 reads it with .get()
  local lr = ct.layer_reduction
  if lr ~= nil and not obj(lr) then
    emit(ctx, RULE_C, { "compression_training", "layer_reduction" }, "compression_training.layer_reduction is "
      .. show(lr) .. ": DeepSpeed reads it with .get() and raises AttributeError: '" .. pytype(lr)
      .. "' object has no attribute 'get'.", "give layer_reduction as an object with \"enabled\"")
  end
end

---------------------------------------------------------------------------
-- data_efficiency (runtime/data_pipeline/config.py get_data_efficiency_config)
---------------------------------------------------------------------------

local RULE_D = "data-efficiency-config"
-- get_dynamic_batching, first in the covered releases at 0.16.5
local DYNAMIC_BATCHING_SINCE = "0.16.5"

-- Does Python's int() take v (a JSON value)?
local function pyint_ok(v)
  if type(v) == "number" or type(v) == "boolean" then return true end
  if type(v) == "string" then
    return v:match("^%s*[+-]?%d+%s*$") ~= nil or v:match("^%s*[+-]?%d[%d_]*%d%s*$") ~= nil
      and not v:find("__", 1, true)
  end
  return false
end

local function data_sampling(ctx, rel, ds)
  local base = { "data_efficiency", "data_sampling" }
  local cl = ds.curriculum_learning
  if cl ~= nil then
    if not obj(cl) then
      emit(ctx, RULE_D, { base[1], base[2], "curriculum_learning" }, "data_sampling.curriculum_learning is "
        .. show(cl) .. ": DeepSpeed reads it with .get() and raises AttributeError.",
        "give curriculum_learning as an object")
    elseif pytruthy(cl.enabled) and cl.curriculum_metrics == nil then
      -- get_curriculum_learning: runtime/data_pipeline/config.py:83 at
      -- 0.14.5 and 0.15.4, :88 from 0.16.5
      local line = dsversion.cmp(rel.version, DYNAMIC_BATCHING_SINCE) >= 0 and 88 or 83
      emit(ctx, RULE_D, { base[1], base[2], "curriculum_learning", "enabled" }, "data_sampling.curriculum_learning"
        .. " is enabled (" .. show(cl.enabled) .. ") without curriculum_metrics: DeepSpeed asserts"
        .. " 'Curriculum learning is enabled, curriculum_metrics must be specified'"
        .. " (runtime/data_pipeline/config.py:" .. line .. "), whatever data_sampling.enabled says.",
        "add curriculum_learning.curriculum_metrics, or set curriculum_learning.enabled to false")
    end
  end
  if dsversion.cmp(rel.version, DYNAMIC_BATCHING_SINCE) < 0 then return end
  local db = ds.dynamic_batching
  if db == nil then return end
  local path = { base[1], base[2], "dynamic_batching" }
  if not obj(db) then
    emit(ctx, RULE_D, path, "data_sampling.dynamic_batching is " .. show(db) .. ": DeepSpeed "
      .. rel.version .. " copies it and reads it with .get(), which fails.", "give dynamic_batching as an object")
    return
  end
  -- get_dynamic_batching: runtime/data_pipeline/config.py:95-111 (int() of
  -- min_batch_size always, of max_batch_size when given, of max_tokens when
  -- enabled; the assert on max_tokens at 108)
  local ints = { "min_batch_size", "max_batch_size" }
  local enabled = pytruthy(db.enabled)
  if enabled then ints[#ints + 1] = "max_tokens" end
  for _, key in ipairs(ints) do
    local v = db[key]
    if v ~= nil and not pyint_ok(v) then
      emit(ctx, RULE_D, { path[1], path[2], path[3], key }, "data_sampling.dynamic_batching." .. key
        .. " is " .. show(v) .. ": DeepSpeed " .. rel.version .. " converts it with int(), which raises"
        .. " (runtime/data_pipeline/config.py get_dynamic_batching).", "give a whole number")
    end
  end
  if enabled and db.max_tokens == nil then
    emit(ctx, RULE_D, { path[1], path[2], path[3], "enabled" }, "data_sampling.dynamic_batching is enabled ("
      .. show(db.enabled) .. ") without max_tokens: DeepSpeed " .. rel.version .. " asserts 'Dynamic"
      .. " batching is enabled, so max_tokens must be specified' (runtime/data_pipeline/config.py:108).",
      "add dynamic_batching.max_tokens, or set dynamic_batching.enabled to false")
  end
end

M.check[RULE_D] = function(cfg, ctx)
  local de = obj(cfg) and obj(cfg.data_efficiency)
  if not de then return end
  local rel = dsversion.checked(ctx)
  for _, key in ipairs({ "data_sampling", "data_routing" }) do
    local v = de[key]
    if v ~= nil and not obj(v) then
      emit(ctx, RULE_D, { "data_efficiency", key }, "data_efficiency." .. key .. " is " .. show(v)
        .. ": DeepSpeed reads it as an object (.get(), item assignment) and fails.",
        "give " .. key .. " as an object with \"enabled\"")
    end
  end
  if obj(de.data_sampling) then data_sampling(ctx, rel, de.data_sampling) end
  local dr = obj(de.data_routing)
  if dr and dr.random_ltd ~= nil and not obj(dr.random_ltd) then
    emit(ctx, RULE_D, { "data_efficiency", "data_routing", "random_ltd" }, "data_routing.random_ltd is "
      .. show(dr.random_ltd) .. ": DeepSpeed reads it with .get() and raises AttributeError.",
      "give random_ltd as an object with \"enabled\"")
  end
end

---------------------------------------------------------------------------
-- elasticity (elasticity/config.py ElasticityConfig.__init__ and
-- elasticity/elasticity.py compute_elastic_config, which DeepSpeedConfig
-- runs only when elasticity.enabled is truthy; the same lines in every
-- covered release)
---------------------------------------------------------------------------

local RULE_E = "elasticity-config"
local LATEST_ELASTICITY_VERSION = 0.2 -- elasticity/constants.py

-- A JSON number or boolean as Python compares it, else nil.
local function pynumber(v)
  if v == true then return 1 end
  if v == false then return 0 end
  if type(v) == "number" then return v end
  return nil
end

local function elastic_value(ctx, e, key, default, bound, line, text)
  local v = e[key]
  if v == nil then v = default end
  local n = pynumber(v)
  local path = { "elasticity", key }
  if n == nil then return nil end -- not a number: the schema's type-mismatch
  if n < bound then
    emit(ctx, RULE_E, path, "elasticity." .. key .. " = " .. show(v) .. " with elasticity enabled: DeepSpeed"
      .. " raises ElasticityConfigError '" .. text .. "' (elasticity/config.py:" .. line .. ").",
      "give elasticity." .. key .. " >= " .. bound)
    return nil
  end
  return n
end

local function elasticity(ctx, e)
  local micro = e.micro_batch_sizes
  if type(micro) == "table" and kind(micro) == "array" then
    for i, m in ipairs(micro) do
      -- isinstance(m, int): bool is an int, and DeepSpeed's hjson reader
      -- turns a whole float (2.0, 1e3) into an int
      if not (type(m) == "boolean" or (type(m) == "number" and m == math.floor(m))) then
        emit(ctx, RULE_E, { "elasticity", "micro_batch_sizes", i }, "elasticity.micro_batch_sizes["
          .. (i - 1) .. "] is " .. show(m) .. ": DeepSpeed raises ElasticityConfigError 'Elasticity"
          .. " expected micro_batch_sizes to only contain a list of integers' (elasticity/config.py:70).",
          "list whole numbers (write 4, not 4.0)")
        break
      elseif pynumber(m) <= 0 then
        emit(ctx, RULE_E, { "elasticity", "micro_batch_sizes", i }, "elasticity.micro_batch_sizes["
          .. (i - 1) .. "] is " .. show(m) .. ": DeepSpeed raises ElasticityConfigError 'Elasticity"
          .. " expected micro_batch_sizes to only contain positive integers' (elasticity/config.py:74).",
          "list micro batch sizes > 0")
        break
      end
    end
  end
  local lo = elastic_value(ctx, e, "min_gpus", 1, 1, 81, "Elasticity min/max gpus must be > 0")
  local hi = elastic_value(ctx, e, "max_gpus", 10000, 1, 81, "Elasticity min/max gpus must be > 0")
  if lo and hi and hi < lo then
    emit(ctx, RULE_E, { "elasticity", "max_gpus" }, "elasticity.max_gpus " .. show(e.max_gpus == nil and 10000
      or e.max_gpus) .. " is below min_gpus " .. show(e.min_gpus) .. ": DeepSpeed raises"
      .. " ElasticityConfigError 'Elasticity min_gpus cannot be greater than max_gpus' (elasticity/config.py:84).",
      "make max_gpus at least min_gpus")
  end
  -- model_parallel_size and num_gpus_per_node >= 1 (elasticity/config.py:89
  -- and :94) are the schema's bounds (checked_when = "elasticity.enabled")
  local mp = pynumber(e.model_parallel_size == nil and 1 or e.model_parallel_size)
  elastic_value(ctx, e, "min_time", 0, 0, 99, "Elasticity min time needs to be >= 0")
  -- _get_compatible_gpus_v01 (elasticity/elasticity.py:108-110, reached
  -- by both versions): every micro batch <= max_train_batch_size
  local maxb = pynumber(e.max_train_batch_size)
  if maxb and type(micro) == "table" and kind(micro) == "array" then
    for i, m in ipairs(micro) do
      local n = pynumber(m)
      if n and n > maxb then
        emit(ctx, RULE_E, { "elasticity", "micro_batch_sizes", i }, "elasticity.micro_batch_sizes["
          .. (i - 1) .. "] = " .. show(m) .. " is above max_train_batch_size " .. show(e.max_train_batch_size)
          .. ": DeepSpeed raises ValueError 'All micro batches must be less than or equal to"
          .. " max_acceptable_batch_size' (elasticity/elasticity.py:109).",
          "keep every micro batch size at most max_train_batch_size")
        break
      end
    end
  end
  -- compute_elastic_config: float(version) (elasticity.py:291-299)
  local ver = e.version
  if ver == nil then ver = LATEST_ELASTICITY_VERSION end
  local vn = pynumber(ver)
  if vn == nil and type(ver) == "string" then vn = tonumber(ver) end
  if vn == nil then
    emit(ctx, RULE_E, { "elasticity", "version" }, "elasticity.version is " .. show(ver) .. ": DeepSpeed"
      .. " calls float() on it (elasticity/elasticity.py:292), which raises.", "give 0.1 or 0.2")
  elseif vn > LATEST_ELASTICITY_VERSION then
    emit(ctx, RULE_E, { "elasticity", "version" }, "elasticity.version " .. show(ver) .. ": DeepSpeed raises"
      .. " ElasticityConfigError 'Attempting to run elasticity version " .. tostring(ver) .. " but runtime only"
      .. " supports up to 0.2' (elasticity/elasticity.py:297).", "give version 0.2 (or 0.1)")
  elseif vn == 0.2 and mp and mp >= 1 and pynumber(e.num_gpus_per_node == nil and 1 or e.num_gpus_per_node)
      and pynumber(e.num_gpus_per_node == nil and 1 or e.num_gpus_per_node) >= 1
      and pynumber(e.num_gpus_per_node == nil and 1 or e.num_gpus_per_node) % mp ~= 0 then
    -- _get_compatible_gpus_v02 (elasticity/elasticity.py:140-144)
    emit(ctx, RULE_E, { "elasticity", "num_gpus_per_node" }, "elasticity.num_gpus_per_node "
      .. show(e.num_gpus_per_node == nil and 1 or e.num_gpus_per_node) .. " is not divisible by"
      .. " model_parallel_size " .. show(e.model_parallel_size) .. ": DeepSpeed's elasticity 0.2 raises"
      .. " ElasticityError (elasticity/elasticity.py:141).",
      "make num_gpus_per_node a multiple of model_parallel_size")
  elseif mp and mp > 1 and vn ~= 0.2 then
    emit(ctx, RULE_E, { "elasticity", "version" }, "elasticity.version " .. show(ver) .. " with"
      .. " model_parallel_size " .. show(e.model_parallel_size) .. ": DeepSpeed raises ElasticityConfigError"
      .. " 'Elasticity V" .. tostring(ver) .. " does not support model-parallel training'"
      .. " (elasticity/elasticity.py:292).", "use version 0.2 with model parallelism")
  elseif vn ~= 0.1 and vn ~= 0.2 then
    -- neither elastic algorithm (elasticity/elasticity.py:343)
    emit(ctx, RULE_E, { "elasticity", "version" }, "elasticity.version " .. show(ver) .. ": DeepSpeed has"
      .. " elastic logic for 0.1 and 0.2 only and raises NotImplementedError 'Unable to find elastic logic"
      .. " for version: " .. tostring(ver) .. "' (elasticity/elasticity.py:343).", "give version 0.2 (or 0.1)")
  end
end

-- The elastic batch DeepSpeed computes (elasticity/elasticity.py, the same
-- file in every covered release): compute_elastic_config with the
-- data-parallel world size, then DeepSpeedConfig.__init__ sets
-- train_batch_size, the micro batch and gas = final // (micro * world) and
-- runs _batch_assertion (runtime/config.py, its line per release below).
-- Python's // and % on numbers are Lua's; int() truncates.
local HCN_LIST = { 1, 2, 4, 6, 12, 24, 36, 48, 60, 120, 180, 240, 360, 720, 840, 1260, 1680, 2520, 5040,
  7560, 10080, 15120, 20160, 25200, 27720, 45360, 50400, 55440, 83160, 110880, 166320, 221760, 277200,
  332640, 498960, 554400, 665280, 720720 } -- elasticity.py:21-24 (HCN_LIST)

-- runtime/config.py: the line of `assert (train_batch > 0)` in
-- _batch_assertion per covered release (the next asserts follow at +2,
-- +4, +6)
local BATCH_ASSERT_LINE = { ["0.14.5"] = 921, ["0.15.4"] = 923, ["0.16.5"] = 924, ["0.16.9"] = 927,
  ["0.17.6"] = 878, ["0.18.9"] = 880, ["0.19.2"] = 895, ["0.19.5"] = 918 }

local function pyint(x)
  local t = x >= 0 and math.floor(x) or math.ceil(x)
  return math.tointeger(t) or t
end

local function gcd(a, b)
  while b ~= 0 do a, b = b, a % b end
  return a
end

-- get_candidate_batch_sizes (elasticity.py:27-39), a set as a list
local function candidate_batch_sizes(bases, maxb)
  local out, seen = {}, {}
  for _, base in ipairs(bases) do
    local c
    if base >= maxb then
      c = base
    else
      local value, index = maxb // base, 0
      for i, h in ipairs(HCN_LIST) do
        if h > value then index = i - 1; break end -- np.argmax: first True, 0 if none
      end
      c = HCN_LIST[index == 0 and #HCN_LIST or index] * base -- HCN_LIST[index - 1]
    end
    if not seen[c] then seen[c] = true; out[#out + 1] = c end
  end
  return out
end

-- get_valid_gpus (elasticity.py:42-61), sorted
local function valid_gpus(bs, micro, lo, hi)
  local set, out = {}, {}
  for _, m in ipairs(micro) do
    if bs % m == 0 then
      local maxg = bs // m
      if lo <= maxg and maxg <= hi then set[maxg] = true end
      for i = 1, maxg // 2 do
        if i > hi then break end
        if i >= lo and maxg % i == 0 then set[i] = true end
      end
    end
  end
  for g in pairs(set) do out[#out + 1] = g end
  table.sort(out)
  return out
end

-- get_best_candidates (elasticity.py:64-81): the candidate with the most
-- valid GPU counts, the largest (prefer_larger) or smallest among ties,
-- whatever the set's order; valid is nil when none is counted
local function best_candidate(cands, micro, lo, hi, prefer)
  local most, valid, final = 0, nil, micro[1]
  for _, m in ipairs(micro) do if m < final then final = m end end
  table.sort(cands)
  if prefer then -- the order that gives the same winner as any other
    local r = {}
    for i = #cands, 1, -1 do r[#r + 1] = cands[i] end
    cands = r
  end
  for _, bs in ipairs(cands) do
    local v = valid_gpus(bs, micro, lo, hi)
    if #v > most or (#v == most and ((prefer and bs > final) or (not prefer and bs < final))) then
      most, valid, final = #v, v, bs
    end
  end
  return final, valid
end

-- _get_compatible_gpus_v01 (elasticity.py:84-125); nil, why on a raise
local function gpus_v01(micro, maxb, lo, hi, prefer)
  local minm, l = micro[1], micro[1]
  for _, m in ipairs(micro) do
    if m < minm then minm = m end
    if m > maxb then
      return nil, "ValueError 'All micro batches must be less than or equal to max_acceptable_batch_size: "
        .. tostring(maxb) .. "' (elasticity/elasticity.py:109)"
    end
    l = l // gcd(l, m) * m
  end
  if lo == 0 then lo = 1 end
  if hi == 0 then hi = maxb // minm end
  local bases = {}
  for _, m in ipairs(micro) do bases[#bases + 1] = m end
  bases[#bases + 1] = l
  return best_candidate(candidate_batch_sizes(bases, maxb), micro, lo, hi, prefer)
end

-- _get_compatible_gpus_v02 (elasticity.py:128-187): final, valid, micro
local function gpus_v02(micro, maxb, current, lo, hi, prefer, per_node, mp)
  local function microbatch(final)
    local cand
    for _, m in ipairs(micro) do
      if final // current % m == 0 then
        if cand == nil then cand = m end
        if prefer and cand < m then cand = m end
      end
    end
    return cand
  end
  local dp_node = per_node // mp
  if dp_node < 1 or per_node % mp ~= 0 then return nil, nil end -- elasticity.py:140 raised
  local final, valid = gpus_v01(micro, pyint(maxb / dp_node), pyint(lo / per_node), pyint(hi / per_node), prefer)
  if final == nil then return nil, valid end
  if valid == nil then
    return nil, "TypeError: 'NoneType' object is not iterable (no candidate batch has a valid GPU count,"
      .. " elasticity/elasticity.py:167)"
  end
  final = pyint(final) * dp_node
  local dp_valid = {}
  for i, g in ipairs(valid) do dp_valid[i] = g * dp_node end
  for _, g in ipairs(dp_valid) do
    if g == current // mp then return final, dp_valid, microbatch(final) end
  end
  local dp_size = (current / per_node) * dp_node
  local best
  for _, m in ipairs(micro) do
    local min_bs = m * dp_size
    local c = math.floor(maxb / (min_bs + 0.0)) * min_bs
    if best == nil or (prefer and c > best) or (not prefer and c < best) then best = c end
  end
  return best, { dp_size }, microbatch(best)
end

local function elastic_batch(ctx, cfg, e)
  local p = ctx.params
  local world = type(p) == "table" and math.tointeger(p.world_size) or nil
  -- the world size DeepSpeedConfig passes is the data-parallel one; a
  -- sequence_parallel_size or data_parallel_size changes it (rules.lua
  -- dp_world): not computed here
  if not world or world < 1 or cfg.sequence_parallel_size ~= nil or cfg.data_parallel_size ~= nil then return end
  local micro = {}
  for i, m in ipairs(e.micro_batch_sizes) do micro[i] = pynumber(m) end
  local maxb = pynumber(e.max_train_batch_size)
  local lo = pynumber(e.min_gpus == nil and 1 or e.min_gpus)
  local hi = pynumber(e.max_gpus == nil and 10000 or e.max_gpus)
  local mp = pynumber(e.model_parallel_size == nil and 1 or e.model_parallel_size)
  local per_node = pynumber(e.num_gpus_per_node == nil and 1 or e.num_gpus_per_node)
  local ver = e.version == nil and LATEST_ELASTICITY_VERSION or pynumber(e.version) or tonumber(e.version)
  if #micro == 0 or not (maxb and lo and hi and mp and per_node and ver) then return end
  if math.type(maxb) ~= "integer" or math.type(lo) ~= "integer" or math.type(hi) ~= "integer"
      or math.type(mp) ~= "integer" or math.type(per_node) ~= "integer" then
    return -- whole numbers only: the arithmetic below is DeepSpeed's on ints
  end
  -- below 1 ElasticityConfig raises first (elasticity/config.py:81, :89,
  -- :94: elasticity() and the schema's bounds say so)
  if lo < 1 or hi < 1 or mp < 1 or per_node < 1 or maxb < 1 then return end
  for _, m in ipairs(micro) do
    if math.type(m) ~= "integer" or m < 1 then return end
  end
  local prefer = e.prefer_larger_batch == nil or pytruthy(e.prefer_larger_batch)
  local final, valid, why
  if ver == 0.1 then
    final, valid = gpus_v01(micro, maxb, lo, hi, prefer)
    if final == nil then why = valid end
  elseif ver == 0.2 then
    local mb
    if per_node % mp ~= 0 then return end -- elasticity.py:140 (elasticity())
    final, valid, mb = gpus_v02(micro, maxb, world, lo, hi, prefer, per_node, mp)
    if final == nil then why = valid end
  else
    return
  end
  local path = { "elasticity", "max_train_batch_size" }
  local head = "elasticity (version " .. tostring(ver) .. ", max_train_batch_size " .. tostring(maxb)
    .. ", micro_batch_sizes " .. table.concat(micro, ", ") .. ", min_gpus " .. tostring(lo) .. ", max_gpus "
    .. tostring(hi) .. ") at data-parallel world size " .. world
  local fix = "choose max_train_batch_size, micro_batch_sizes and min/max_gpus so that DeepSpeed's"
    .. " elastic batch fits this world size, or disable elasticity"
  if why then
    emit(ctx, RULE_E, path, head .. ": DeepSpeed raises " .. why .. ".", fix)
    return
  end
  if valid == nil then
    emit(ctx, RULE_E, path, head .. ": no candidate batch has a valid GPU count; DeepSpeed raises"
      .. " TypeError testing the world size against None (elasticity/elasticity.py:348).", fix)
    return
  end
  final = pyint(final)
  local ok = false
  for _, g in ipairs(valid) do if g == world then ok = true end end
  if not ok then
    local v = {}
    for i, g in ipairs(valid) do v[i] = tostring(pyint(g)) end
    emit(ctx, RULE_E, path, head .. ": the valid GPU counts are " .. table.concat(v, ", ")
      .. "; DeepSpeed raises ElasticityIncompatibleWorldSize 'World size (" .. world .. ") is not valid"
      .. " with the current list of valid GPU counts' (elasticity/elasticity.py:349).", fix)
    return
  end
  local sorted = {}
  for _, m in ipairs(micro) do sorted[#sorted + 1] = m end
  table.sort(sorted, function(a, b) return a > b end)
  local mb
  for _, m in ipairs(sorted) do
    if final // world % m == 0 then mb = m; break end
  end
  if mb == nil then
    emit(ctx, RULE_E, path, head .. ": the elastic batch is " .. final .. " and no micro batch size divides "
      .. final .. " // " .. world .. "; DeepSpeed asserts 'Unable to find divisible micro batch size'"
      .. " (elasticity/elasticity.py:358).", fix)
    return
  end
  -- DeepSpeedConfig.__init__: gas = final // (micro * world), then
  -- _batch_assertion
  local gas = final // (mb * world)
  local rel = dsversion.checked(ctx)
  local line = BATCH_ASSERT_LINE[rel.version]
  local at = line and (" (runtime/config.py:%d at %s)") or ""
  local said
  if final <= 0 then
    said = { "Train batch size: " .. final .. " has to be greater than 0", 0 }
  elseif gas <= 0 then
    said = { "Gradient accumulation steps: " .. gas .. " has to be greater than 0", 4 }
  elseif final ~= mb * gas * world then
    said = { "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *"
      .. " gradient_acc_step * world_size", 6 }
  end
  if said then
    emit(ctx, RULE_E, path, head .. ": DeepSpeed's elastic batch is train_batch_size " .. final
      .. ", micro batch " .. mb .. ", gradient_accumulation_steps " .. final .. " // (" .. mb .. " * "
      .. world .. ") = " .. gas .. ", and its batch assertion fails: '" .. said[1] .. "'"
      .. (line and string.format(at, line + said[2], rel.version) or "") .. ".", fix)
  end
end

M.check[RULE_E] = function(cfg, ctx)
  local e = obj(cfg) and obj(cfg.elasticity)
  if not e or not pytruthy(e.enabled) then return end
  -- without max_train_batch_size or micro_batch_sizes DeepSpeed stops
  -- before these checks (elasticity-missing)
  if e.max_train_batch_size == nil or e.micro_batch_sizes == nil then return end
  local raised = false
  elasticity(setmetatable({ report = function(f) raised = true; return ctx.report(f) end },
    { __index = ctx }), e)
  if not raised and type(e.micro_batch_sizes) == "table" and kind(e.micro_batch_sizes) == "array" then
    elastic_batch(ctx, cfg, e)
  end
end

---------------------------------------------------------------------------
-- scheduler.params lists (runtime/lr_schedules.py): WarmupLR (and
-- WarmupDecayLR, its subclass) passes warmup_min_lr and warmup_max_lr to
-- _format_param, LRRangeTest tests lr_range_test_min_lr itself: a list
-- must have len(optimizer.param_groups) values, else ValueError at
-- deepspeed.initialize (_scheduler_from_config). The engine verdicts
-- (tests/conformance/engine.json) assume one param group.
---------------------------------------------------------------------------

local GROUP_PARAMS = {
  WarmupLR = { "warmup_min_lr", "warmup_max_lr" },
  WarmupDecayLR = { "warmup_min_lr", "warmup_max_lr" },
  LRRangeTest = { "lr_range_test_min_lr" },
}
-- the raise, per covered release: WarmupLR._format_param and
-- LRRangeTest.__init__
local GROUP_RAISE = {
  WarmupLR = { ["0.14.5"] = 717, ["0.15.4"] = 717, ["0.16.5"] = 717, ["0.16.9"] = 717, ["0.17.6"] = 720,
               ["0.18.9"] = 724, ["0.19.2"] = 724, ["0.19.5"] = 755 },
  LRRangeTest = { ["0.14.5"] = 318, ["0.15.4"] = 324, ["0.16.5"] = 324, ["0.16.9"] = 324, ["0.17.6"] = 324,
                  ["0.18.9"] = 328, ["0.19.2"] = 328, ["0.19.5"] = 329 },
}
GROUP_RAISE.WarmupDecayLR = GROUP_RAISE.WarmupLR

M.check["scheduler-param-groups"] = function(cfg, ctx)
  local s = obj(cfg) and obj(cfg.scheduler)
  local p = s and obj(s.params)
  local keys = s and GROUP_PARAMS[s.type]
  if not (p and keys) then return end
  local rel = dsversion.checked(ctx)
  local line = GROUP_RAISE[s.type][rel.version]
  for _, key in ipairs(keys) do
    local v = p[key]
    if type(v) == "table" and kind(v) == "array" and #v ~= 1 then
      emit(ctx, "scheduler-param-groups", { "scheduler", "params", key }, "scheduler.params." .. key
        .. " is a list of " .. #v .. ": " .. s.type .. " takes a list only with one value per param group of"
        .. " the optimizer (one unless the training script builds groups), and raises ValueError 'expected 1"
        .. " ...' when deepspeed.initialize builds it (runtime/lr_schedules.py"
        .. (line and (":" .. line .. " at " .. rel.version) or "") .. ").",
        "give one number (DeepSpeed uses it for every param group)")
    end
  end
end

---------------------------------------------------------------------------
-- autotuning and checkpoint: two asserts DeepSpeedConfig runs on values
-- it otherwise reads with dict.get
---------------------------------------------------------------------------

M.check["autotuning-dirs"] = function(cfg, ctx)
  local a = obj(cfg) and obj(cfg.autotuning)
  if not a then return end
  -- DeepSpeedAutotuningConfig._initialize (autotuning/config.py:39 and
  -- :41): `assert self.results_dir, ...`, built by every DeepSpeedConfig
  for _, key in ipairs({ "results_dir", "exps_dir" }) do
    local v = a[key]
    if v ~= nil and not pytruthy(v) then
      emit(ctx, "autotuning-dirs", { "autotuning", key }, "autotuning." .. key .. " is " .. show(v)
        .. ", false in Python: DeepSpeed asserts '" .. key .. " cannot be empty' (autotuning/config.py:"
        .. (key == "results_dir" and 39 or 41) .. ") whether or not autotuning is enabled.",
        "give a directory name, or remove " .. key)
    end
  end
end

M.check["checkpoint-parallel-write"] = function(cfg, ctx)
  local c = obj(cfg) and obj(cfg.checkpoint)
  local pw = c and obj(c.parallel_write)
  if not pw or pw.pipeline_stage == nil then return end
  local v = pw.pipeline_stage
  -- get_checkpoint_parallel_write_pipeline: `if par_write_pipeline in
  -- [True, False]` (runtime/config.py:678 at 0.14.5, :680 at 0.16.9, :648
  -- at 0.19.5); Python's == lets 1, 0, 1.0 and 0.0 in
  if v == true or v == false or v == 1 or v == 0 then return end
  -- (the finding is on parallel_write: the generated data has that key
  -- but not pipeline_stage, which extract.py does not see read through
  -- the {} default of checkpoint_params.get(CHECKPOINT_PARALLEL_WRITE, {}))
  emit(ctx, "checkpoint-parallel-write", { "checkpoint", "parallel_write" },
    "checkpoint.parallel_write.pipeline_stage is " .. show(v) .. ": DeepSpeed raises DeepSpeedConfigError"
    .. " 'checkpoint::parallel_write::pipeline_stage value of ... is invalid, expecting: true or false'"
    .. " (runtime/config.py get_checkpoint_parallel_write_pipeline).",
    "set pipeline_stage to true or false")
end

return M
