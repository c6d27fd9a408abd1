-- Tests for deepspeed.schema, deepspeed.schema_check, deepspeed.jsonschema
-- and deepspeed.explain.

local NULL = dsforge.null

local function sc() return require("deepspeed.schema_check") end

-- Runs the check and returns the findings (in emission order).
local function run(cfg, target, ds_version)
  local found = {}
  local ctx = { params = { world_size = 8 }, target = target or "deepspeed",
               ds_version = ds_version,
                report = function(f) found[#found + 1] = f end }
  sc().check(cfg, ctx)
  return found
end

local function path_is(f, path)
  if #f.path ~= #path then return false end
  for i = 1, #path do
    if f.path[i] ~= path[i] then return false end
  end
  return true
end

local function find(found, rule, path)
  for _, f in ipairs(found) do
    if f.rule == rule and (path == nil or path_is(f, path)) then return f end
  end
  return nil
end

local function count(found, rule, severity)
  local n = 0
  for _, f in ipairs(found) do
    if (rule == nil or f.rule == rule) and (severity == nil or f.severity == severity) then n = n + 1 end
  end
  return n
end

local function errors(found) return count(found, nil, "error") end

local function show(found)
  local out = {}
  for _, f in ipairs(found) do
    out[#out + 1] = f.rule .. "@" .. table.concat((function()
      local p = {}
      for i, x in ipairs(f.path) do p[i] = tostring(x) end
      return p
    end)(), ".") .. ": " .. f.message
  end
  return table.concat(out, "\n")
end

local function contains(s, needle) return type(s) == "string" and s:find(needle, 1, true) ~= nil end

---------------------------------------------------------------------------
-- real-world configs: shared ones from tests/lua/fixtures/configs.lua, and
-- llama-factory's autotp config, which only this suite uses
---------------------------------------------------------------------------

local fixtures = require("fixtures.configs")
local function llava_zero3_offload() return fixtures.real("llava__zero3_offload") end
local function llamafactory_z3_fp8() return fixtures.real("llama-factory__ds_z3_fp8_config") end
local function axolotl_zero3_bf16_offload_all()
  return fixtures.real("axolotl__zero3_bf16_cpuoffload_all")
end
local seed002_zero2 = fixtures.seed002_zero2

local function llamafactory_z2_autotp()
  return {
    _comment = "suooprted model list: https://www.deepspeed.ai/tutorials/automatic-tensor-parallelism/#supported-models",
    train_batch_size = "auto",
    train_micro_batch_size_per_gpu = "auto",
    gradient_accumulation_steps = "auto",
    gradient_clipping = "auto",
    zero_allow_untested_optimizer = true,
    fp16 = { enabled = "auto", loss_scale = 0, loss_scale_window = 1000, initial_scale_power = 16,
             hysteresis = 2, min_loss_scale = 1 },
    bf16 = { enabled = "auto" },
    zero_optimization = {
      stage = 2,
      allgather_partitions = true,
      allgather_bucket_size = 5e8,
      overlap_comm = false,
      reduce_scatter = true,
      reduce_bucket_size = 5e8,
      contiguous_gradients = true,
      round_robin_gradients = true,
    },
    tensor_parallel = { autotp_size = 2 },
  }
end

---------------------------------------------------------------------------
-- a minimal JSON Schema validator (the keywords jsonschema.lua emits)
---------------------------------------------------------------------------

local function json_kind(v)
  if v == NULL then return "null" end
  local t = type(v)
  if t == "boolean" then return "boolean" end
  if t == "string" then return "string" end
  if t == "number" then
    if v == math.floor(v) then return "integer" end
    return "number"
  end
  if t == "table" then
    if next(v) == nil then return "empty" end
    return dsforge.kind(v)
  end
  return t
end

local function type_ok(want, v)
  local k = json_kind(v)
  if want == k then return true end
  if want == "number" and k == "integer" then return true end
  if k == "empty" and (want == "object" or want == "array") then return true end
  return false
end

local function jeq(a, b)
  if type(a) == "number" and type(b) == "number" then return a == b end
  return a == b
end

local validate
validate = function(s, v)
  if s == true then return true end
  if s == false then return false end
  if s.const ~= nil and not jeq(v, s.const) then return false end
  if s.type ~= nil then
    local types = type(s.type) == "table" and s.type or { s.type }
    local any = false
    for _, t in ipairs(types) do if type_ok(t, v) then any = true end end
    if not any then return false end
  end
  if s.enum then
    local any = false
    for _, e in ipairs(s.enum) do if jeq(e, v) then any = true end end
    if not any then return false end
  end
  if type(v) == "number" then
    if s.minimum and v < s.minimum then return false end
    if s.maximum and v > s.maximum then return false end
    if s.exclusiveMinimum and v <= s.exclusiveMinimum then return false end
    if s.exclusiveMaximum and v >= s.exclusiveMaximum then return false end
  end
  if s.anyOf then
    local any = false
    for _, sub in ipairs(s.anyOf) do if validate(sub, v) then any = true end end
    if not any then return false end
  end
  if s.allOf then
    for _, sub in ipairs(s.allOf) do if not validate(sub, v) then return false end end
  end
  if s["not"] ~= nil and validate(s["not"], v) then return false end
  local k = json_kind(v)
  if k == "object" or k == "empty" then
    if s.required then
      for _, r in ipairs(s.required) do if type(v) ~= "table" or v[r] == nil then return false end end
    end
    if type(v) == "table" then
      for _, key in ipairs(dsforge.sorted_keys(v)) do
        local sub = s.properties and s.properties[key]
        if sub ~= nil then
          if not validate(sub, v[key]) then return false end
        elseif s.additionalProperties ~= nil then
          if not validate(s.additionalProperties, v[key]) then return false end
        end
      end
    end
  end
  if k == "array" and s.items then
    for i = 1, #v do if not validate(s.items, v[i]) then return false end end
  end
  return true
end

---------------------------------------------------------------------------
-- schema well-formedness
---------------------------------------------------------------------------

local VALID_TYPES = { object = true, map = true, array = true, int = true, float = true,
                      bool = true, string = true, any = true }

local function walk_schema(fn)
  local schema = require("deepspeed.schema")
  local seen = {}
  local function visit(node, path)
    if seen[node] then return end
    seen[node] = true
    fn(node, path)
    if node.fields then
      for _, k in ipairs(dsforge.sorted_keys(node.fields)) do
        local p = {}
        for i, x in ipairs(path) do p[i] = x end
        p[#p + 1] = k
        visit(node.fields[k], p)
      end
    end
    if node.items then visit(node.items, path) end
    if node.values then visit(node.values, path) end
  end
  visit(schema.root, {})
end

return {
  schema_version_and_root = function()
    local schema = require("deepspeed.schema")
    T.eq(schema.deepspeed_version, "0.19.6")
    T.eq(schema.root.type, "object")
    T.falsy(schema.root.strict, "the top level is lenient")
  end,

  schema_sections_are_built_on_first_read = function()
    -- The built-in schema (the snapshot embedded for this very file,
    -- src/tools/snapshot.lua) builds a top-level section's fields and doc
    -- when one is first read: the node's other keys are there before.
    local schema = require("deepspeed.schema")
    local node = schema.root.fields.autotuning
    T.truthy(getmetatable(node) ~= nil, "autotuning not built before its first read")
    T.eq(rawget(node, "fields"), nil)
    T.eq(rawget(node, "doc"), nil)
    T.eq(node.type, "object")
    T.eq(node.aliases, nil)
    T.truthy(getmetatable(node) ~= nil, "reading other keys builds nothing")
    local fields = node.fields
    T.eq(type(fields), "table")
    T.eq(getmetatable(node), nil)
    T.eq(rawget(node, "fields"), fields)
    T.eq(type(rawget(node, "doc")), "table")
    T.eq(node.fields, fields)
    T.eq(fields.enabled.type, "bool")
    -- the doc builds it too, and so does pairs(); other sections wait
    local comet, timers = schema.root.fields.comet, schema.root.fields.timers
    T.eq(type(comet.doc.en), "string")
    T.eq(type(rawget(comet, "fields")), "table")
    local keys = {}
    for k in pairs(timers) do keys[#keys + 1] = k end
    table.sort(keys)
    T.eq(keys, { "doc", "fields", "type" })
    T.truthy(getmetatable(schema.root.fields.zero_optimization) ~= nil)
    -- the schema walk builds only the sections a config has
    local zero = schema.root.fields.zero_optimization
    run({ train_batch_size = 8, zero_optimization = { stage = 2 } })
    T.eq(getmetatable(zero), nil)
    T.truthy(getmetatable(schema.root.fields.flops_profiler) ~= nil)
  end,

  schema_every_node_has_type_and_both_docs = function()
    local n = 0
    walk_schema(function(node, path)
      n = n + 1
      local where = table.concat(path, ".")
      local types = type(node.type) == "table" and node.type or { node.type }
      T.truthy(#types > 0, "type at " .. where)
      for _, t in ipairs(types) do T.truthy(VALID_TYPES[t], "valid type at " .. where .. ": " .. tostring(t)) end
      T.truthy(type(node.doc) == "table", "doc at " .. where)
      T.truthy(type(node.doc.en) == "string" and #node.doc.en > 0, "doc.en at " .. where)
      T.truthy(type(node.doc.zh) == "string" and #node.doc.zh > 0, "doc.zh at " .. where)
      if node.type == "object" then T.truthy(type(node.fields) == "table", "fields at " .. where) end
      if node.enum then T.truthy(#node.enum > 0, "enum at " .. where) end
    end)
    T.truthy(n > 250, "the schema covers the whole config (" .. n .. " nodes)")
  end,

  schema_defaults_are_valid_values = function()
    -- every default passes the checker's own rules for its node
    local check = sc()
    walk_schema(function(node, path)
      if node.default ~= nil and #path > 0 then
        local parent = check.resolve({ table.unpack(path, 1, #path - 1) })
        local cfg, cur = {}, nil
        cur = cfg
        for i = 1, #path - 1 do cur[path[i]] = {}; cur = cur[path[i]] end
        cur[path[#path]] = node.default
        local found = run(cfg, "deepspeed")
        local bad = {}
        for _, f in ipairs(found) do
          -- (version-key: keys newer than the newest covered release)
          if f.rule ~= "deprecated-key" and f.rule ~= "deprecated-with-replacement"
             and f.rule ~= "version-key" then bad[#bad + 1] = f end
        end
        T.eq(#bad, 0, "default of " .. table.concat(path, ".") .. " (parent " .. tostring(parent and parent.type) .. "): " .. show(bad))
      end
    end)
  end,

  schema_hf_auto_keys_exist_and_match = function()
    local schema = require("deepspeed.schema")
    local check = sc()
    local listed = {}
    for _, p in ipairs(schema.hf_auto_paths) do
      local node = check.resolve(p)
      T.truthy(node, "hf_auto path exists: " .. table.concat(p, "."))
      T.truthy(node.hf_auto, "hf_auto set on " .. table.concat(p, "."))
      if node.hf_auto_key then T.eq(node.hf_auto_key, p[#p], "spelling of " .. table.concat(p, ".")) end
      listed[node] = true
    end
    T.eq(#schema.hf_auto_paths, 21)
    walk_schema(function(node, path)
      if node.hf_auto then T.truthy(listed[node], "hf_auto node is listed: " .. table.concat(path, ".")) end
    end)
  end,

  schema_current_defaults = function()
    local check = sc()
    T.eq(check.resolve({ "zero_optimization", "stage3_prefetch_bucket_size" }).default, 50000000)
    T.eq(check.resolve({ "zero_optimization", "prefetch_bucket_size" }).default, 50000000)
    T.eq(check.resolve({ "zero_optimization", "reduce_bucket_size" }).default, 500000000)
    local oc = check.resolve({ "zero_optimization", "overlap_comm" })
    T.eq(oc.default, nil)
    T.truthy(contains(check.default_text(oc, "en"), "stage == 3"))
    T.eq(check.resolve({ "zero_optimization", "offload_param", "device" }).default, "none")
    T.eq(check.resolve({ "zero_optimization", "offload_param", "pin_memory" }).default, true)
    T.eq(check.resolve({ "zero_optimization", "offload_optimizer", "pin_memory" }).default, true)
    T.eq(check.resolve({ "gradient_clipping" }).default, 1.0)
    T.eq(check.resolve({ "steps_per_print" }).default, nil)
    T.eq(check.resolve({ "bf16", "check_grad_overflow" }).default, true)
    T.eq(check.resolve({ "bf16", "immediate_grad_update" }).default, false)
    T.eq(check.default_text(check.resolve({ "zero_optimization", "model_persistence_threshold" }), "en"), "sys.maxsize")
    T.eq(check.resolve({ "aio", "block_size" }).default, 1048576)
    T.truthy(check.resolve({ "zero_optimization", "offload_param" }).strict)
    T.falsy(check.resolve({ "activation_checkpointing" }).strict)
    -- the seeds' error: ZeRO-2 does not partition parameters
    T.truthy(contains(check.resolve({ "zero_optimization", "stage" }).doc.zh, "ZeRO-2 不切分参数"))
  end,

  ---------------------------------------------------------------------------
  -- rules
  ---------------------------------------------------------------------------

  rules_are_declared_and_complete = function()
    local check = sc()
    local ids = {}
    for _, r in ipairs(check.rules) do
      T.truthy(type(r.id) == "string" and #r.id > 0)
      T.truthy(r.severity == "error" or r.severity == "warning" or r.severity == "note", r.id)
      T.truthy(type(r.summary) == "string" and #r.summary > 0, r.id)
      T.truthy(type(r.fix) == "string" and #r.fix > 0, r.id)
      ids[r.id] = true
    end
    for _, id in ipairs({ "unknown-key", "type-mismatch", "invalid-value", "out-of-range", "deprecated-key",
                          "deprecated-with-replacement", "alias-with-field", "auto-value", "rejected-key" }) do
      T.truthy(ids[id], "declared: " .. id)
    end
    T.truthy(type(check.rules[1].check) == "function")
    -- every finding of a noisy config uses a declared id and a full shape
    local cfg = seed002_zero2()
    cfg.zero_optimization.stage = 7
    cfg.zero_optimization.offload_parm = {}
    cfg.zero_optimization.cpu_offload = true
    cfg.zero_optimization.prefetch_bucket_size = 1
    cfg.zero_optimization.stage3_prefetch_bucket_size = 2
    cfg.optimizer.params.max_grad_norm = 1.0
    cfg.fp16.loss_scale = -1
    local found = run(cfg, "deepspeed")
    T.truthy(#found > 8)
    for _, f in ipairs(found) do
      T.truthy(ids[f.rule], "declared id " .. tostring(f.rule))
      T.truthy(f.severity == "error" or f.severity == "warning", "severity")
      T.truthy(type(f.message) == "string" and #f.message > 10)
      T.truthy(type(f.fix) == "string" and #f.fix > 0)
      T.truthy(type(f.path) == "table")
    end
  end,

  rule_check_function_reports_through_ctx = function()
    local check = sc()
    local found = {}
    check.rules[1].check({ zero_optimization = { stag = 1 } },
      { world_size = 1, target = "deepspeed", report = function(f) found[#found + 1] = f end })
    T.eq(#found, 1)
    T.eq(found[1].rule, "unknown-key")
  end,

  clean_config_has_no_findings = function()
    local found = run({
      train_batch_size = 64, train_micro_batch_size_per_gpu = 4, gradient_accumulation_steps = 2,
      gradient_clipping = 1.0, steps_per_print = 100,
      bf16 = { enabled = true },
      optimizer = { type = "AdamW", params = { lr = 2e-5, betas = { 0.9, 0.95 }, eps = 1e-8, weight_decay = 0.1 } },
      scheduler = { type = "WarmupLR", params = { warmup_min_lr = 0, warmup_max_lr = 2e-5, warmup_num_steps = 100 } },
      zero_optimization = { stage = 3, overlap_comm = true, stage3_prefetch_bucket_size = 50000000,
        offload_param = { device = "nvme", nvme_path = "/local_nvme", buffer_count = 5 },
        offload_optimizer = { device = "cpu", ratio = 0.5 } },
      pipeline = { stages = "auto" },
      checkpoint = { tag_validation = "warn" },
      communication_data_type = "BF16",
      tensorboard = { enabled = true, output_path = "runs/" },
      compile = { deepcompile = true, passes = { "z3" } },
    }, "deepspeed")
    T.eq(#found, 0, show(found))
  end,

  unknown_key_in_strict_section_is_error_with_suggestion = function()
    local found = run({ zero_optimization = { stage = 2, offload_parm = { device = "cpu" } } })
    local f = find(found, "unknown-key", { "zero_optimization", "offload_parm" })
    T.truthy(f, show(found))
    T.eq(f.severity, "error")
    T.truthy(contains(f.message, "rejects"))
    T.truthy(contains(f.message, "did you mean \"offload_param\"?"))
    T.eq(f.fix, "rename it to \"offload_param\"")
    T.eq(#found, 1)
  end,

  unknown_key_suggests_aliases = function()
    local found = run({ zero_optimization = { stage3_prefetch_bucket_sise = 1000 } })
    local f = find(found, "unknown-key")
    T.truthy(contains(f.message, "did you mean \"stage3_prefetch_bucket_size\"?"), f.message)
    -- bf16 is strict since v0.17.1: an fp16-only key is rejected
    found = run({ bf16 = { enabled = true, loss_scale = 0 } })
    f = find(found, "unknown-key", { "bf16", "loss_scale" })
    T.eq(f.severity, "error")
  end,

  unknown_key_top_level_is_warning = function()
    local found = run({ train_batch_size = 8, min_lr = 5e-7, _comment = "x" })
    T.eq(count(found, "unknown-key", "warning"), 2, show(found))
    T.eq(errors(found), 0)
    local f = find(found, "unknown-key", { "min_lr" })
    T.truthy(contains(f.message, "silently ignores"))
    -- no suggestion when nothing is close
    T.falsy(contains(f.message, "did you mean"))
  end,

  unknown_key_top_level_typo_suggestion = function()
    local found = run({ train_batch_sise = 8 })
    local f = find(found, "unknown-key", { "train_batch_sise" })
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "did you mean \"train_batch_size\"?"), f.message)
  end,

  unknown_key_lenient_section_is_warning = function()
    local found = run({ activation_checkpointing = { partition_activation = true } })
    local f = find(found, "unknown-key", { "activation_checkpointing", "partition_activation" })
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "did you mean \"partition_activations\"?"))
  end,

  unknown_key_misplaced_section_hint = function()
    local found = run({ zero_optimization = { stage = 3, aio = { block_size = 1048576 } } })
    local f = find(found, "unknown-key", { "zero_optimization", "aio" })
    T.eq(f.severity, "error")
    T.truthy(contains(f.message, "top-level section"), f.message)
    found = run({ stage3_max_live_parameters = 1000000000 })
    f = find(found, "unknown-key", { "stage3_max_live_parameters" })
    T.truthy(contains(f.message, "zero_optimization"), f.message)
    T.eq(f.fix, "move it to zero_optimization")
  end,

  open_sections_report_no_unknown_keys = function()
    local found = run({
      compression_training = { weight_quantization = { shared_parameters = { enabled = true } } },
      optimizer = { type = "SGD", params = { lr = 0.1, momentum = 0.9, nesterov = true } },
      amp = { enabled = false, opt_level = "O1", loss_scale = "dynamic" },
      data_efficiency = { enabled = true },
    })
    T.eq(#found, 0, show(found))
  end,

  pydantic_int_coercion = function()
    for _, v in ipairs({ 500000000, 5e8, "500", true, 7.0 }) do
      local found = run({ zero_optimization = { reduce_bucket_size = v } })
      T.eq(#found, 0, "accepted " .. tostring(v) .. ": " .. show(found))
    end
    local found = run({ zero_optimization = { stage3_prefetch_bucket_size = 15099494.4 } })
    local f = find(found, "type-mismatch", { "zero_optimization", "stage3_prefetch_bucket_size" })
    T.truthy(f, show(found))
    T.truthy(contains(f.message, "int_from_float"))
    found = run({ zero_optimization = { reduce_bucket_size = "5e8" } })
    f = find(found, "type-mismatch", { "zero_optimization", "reduce_bucket_size" })
    T.truthy(f and contains(f.message, "int_parsing"), show(found))
    found = run({ zero_optimization = { reduce_bucket_size = { 1 } } })
    T.truthy(find(found, "type-mismatch"))
  end,

  pydantic_bool_coercion = function()
    for _, v in ipairs({ true, false, "true", "false", "yes", "no", 1, 0, "on", "0" }) do
      local found = run({ zero_optimization = { contiguous_gradients = v } })
      T.eq(#found, 0, "accepted " .. tostring(v))
    end
    for _, v in ipairs({ 2, "maybe", 0.5, { true } }) do
      local found = run({ zero_optimization = { contiguous_gradients = v } })
      local f = find(found, "type-mismatch", { "zero_optimization", "contiguous_gradients" })
      T.truthy(f, "rejected " .. tostring(v))
      T.eq(f.severity, "error")
    end
  end,

  pydantic_stage_coercion = function()
    for _, v in ipairs({ 2, "2", 2.0, true, 0, 3 }) do
      local found = run({ zero_optimization = { stage = v } })
      T.eq(#found, 0, "stage " .. tostring(v) .. ": " .. show(found))
    end
    local found = run({ zero_optimization = { stage = 4 } })
    local f = find(found, "invalid-value", { "zero_optimization", "stage" })
    T.truthy(f, show(found))
    T.eq(f.severity, "error")
    found = run({ zero_optimization = { stage = -1 } })
    T.truthy(find(found, "invalid-value", { "zero_optimization", "stage" }))
    found = run({ zero_optimization = { stage = 2.5 } })
    T.truthy(find(found, "type-mismatch", { "zero_optimization", "stage" }))
  end,

  pydantic_string_and_float_fields = function()
    local found = run({ tensorboard = { enabled = true, output_path = 5 } })
    T.truthy(find(found, "type-mismatch", { "tensorboard", "output_path" }), show(found))
    found = run({ fp16 = { loss_scale = "128" } })
    T.eq(#found, 0, show(found))
    found = run({ fp16 = { loss_scale = true } })
    T.truthy(find(found, "type-mismatch", { "fp16", "loss_scale" }))
    found = run({ fp16 = { loss_scale_window = false } })
    T.truthy(find(found, "type-mismatch", { "fp16", "loss_scale_window" }))
    found = run({ fp16 = { loss_scale_window = 0.5 } })
    T.truthy(find(found, "type-mismatch", { "fp16", "loss_scale_window" }))
  end,

  top_level_no_coercion = function()
    T.eq(#run({ train_batch_size = 16.0 }), 0)
    T.eq(#run({ steps_per_print = 1e5, train_batch_size = NULL }), 0)
    local found = run({ train_batch_size = "16" })
    local f = find(found, "type-mismatch", { "train_batch_size" })
    T.truthy(f, show(found))
    T.eq(f.severity, "error")
    T.truthy(contains(f.message, "no type conversion"))
    found = run({ gradient_clipping = "1.0" })
    T.truthy(find(found, "type-mismatch", { "gradient_clipping" }))
    found = run({ wall_clock_breakdown = "false" })
    f = find(found, "type-mismatch", { "wall_clock_breakdown" })
    T.truthy(f and contains(f.message, "true"), show(found))
    found = run({ train_batch_size = 16.5 })
    T.truthy(find(found, "type-mismatch", { "train_batch_size" }))
    found = run({ fp16 = NULL })
    T.truthy(find(found, "type-mismatch", { "fp16" }))
    found = run({ activation_checkpointing = { number_checkpoints = 4, cpu_checkpointing = 1 } })
    T.eq(#found, 0, show(found))
  end,

  invalid_value_enum_with_case_suggestion = function()
    local found = run({ zero_optimization = { offload_param = { device = "CPU" } } })
    local f = find(found, "invalid-value", { "zero_optimization", "offload_param", "device" })
    T.truthy(f, show(found))
    T.truthy(contains(f.message, "did you mean \"cpu\"?"))
    T.eq(f.fix, "use \"cpu\"")
    found = run({ zero_optimization = { offload_optimizer = { device = "gpu" } } })
    T.truthy(find(found, "invalid-value"))
    -- case-insensitive enums
    -- (gradient_allreduce_op is read from DeepSpeed 0.19.6 on)
    local fs = run({ gradient_allreduce_op = "SUM", checkpoint = { tag_validation = "fail" } }, nil, "0.19.6")
    T.eq(#fs - count(fs, "ds-version"), 0)  -- only the note: 0.19.6 is newer than the newest covered
    found = run({ gradient_allreduce_op = "max" }, nil, "0.19.6")
    f = find(found, "invalid-value", { "gradient_allreduce_op" })
    T.eq(f.severity, "error")
    -- a release that does not read the key does not check its value
    found = run({ gradient_allreduce_op = "max" })
    T.eq(find(found, "invalid-value", { "gradient_allreduce_op" }), nil, show(found))
    T.eq(find(found, "version-key", { "gradient_allreduce_op" }).severity, "warning")
    found = run({ communication_data_type = "fp8" })
    T.truthy(find(found, "invalid-value", { "communication_data_type" }))
    -- warning-only enums
    found = run({ scheduler = { type = "WarmupLR", params = { warmup_type = "cosine" } } })
    f = find(found, "invalid-value", { "scheduler", "params", "warmup_type" })
    T.eq(f.severity, "warning")
  end,

  out_of_range = function()
    local found = run({ zero_optimization = { stage = 3, offload_optimizer = { device = "cpu", ratio = 1.5 } } })
    local f = find(found, "out-of-range", { "zero_optimization", "offload_optimizer", "ratio" })
    T.truthy(f, show(found))
    T.truthy(contains(f.message, "<= 1"))
    found = run({ zero_optimization = { reduce_bucket_size = -1 } })
    T.truthy(find(found, "out-of-range", { "zero_optimization", "reduce_bucket_size" }))
    found = run({ zero_optimization = { zenflow = { topk_ratio = 0 } } })
    T.truthy(find(found, "out-of-range", { "zero_optimization", "zenflow", "topk_ratio" }))
    found = run({ train_micro_batch_size_per_gpu = 0 })
    T.truthy(find(found, "out-of-range", { "train_micro_batch_size_per_gpu" }))
    T.eq(#run({ zero_optimization = { stage = 3, offload_optimizer = { ratio = 0.3 }, reduce_bucket_size = 0 } }), 0)
    T.eq(#run({ zero_optimization = { mics_shard_size = -1, module_granularity_threshold = -5 } }), 0)
  end,

  -- a bound DeepSpeed checks only from a release on (range_since): an
  -- error from that release, a warning before it (the release accepts it)
  out_of_range_follows_the_release = function()
    local dv = require("deepspeed.dsversion")
    -- fp16.loss_scale >= 0: DeepSpeedFP16Config._validate_loss_scale,
    -- precision_config.py:129-130 from 0.18.8 (0.17.6 has no bound)
    local ls = { fp16 = { enabled = true, loss_scale = -1 } }
    -- warmup_num_steps > 0: WarmupLR.__init__ from 0.19.3 (lr_schedules.py:695
    -- at v0.19.5); 0.19.2 takes max(2, warmup_num_steps)
    local wu = { scheduler = { type = "WarmupLR", params = { warmup_num_steps = 0 } } }
    for _, rel in ipairs(dv.releases) do
      local f = find(run(ls, nil, rel.version), "out-of-range", { "fp16", "loss_scale" })
      T.truthy(f, rel.version)
      T.eq(f.severity, dv.cmp(rel.version, "0.18.8") >= 0 and "error" or "warning", rel.version .. ": " .. f.message)
      f = find(run(wu, nil, rel.version), "out-of-range", { "scheduler", "params", "warmup_num_steps" })
      T.truthy(f, rel.version)
      T.eq(f.severity, dv.cmp(rel.version, "0.19.3") >= 0 and "error" or "warning", rel.version .. ": " .. f.message)
    end
    local f = find(run(ls, nil, "0.17.6"), "out-of-range", { "fp16", "loss_scale" })
    T.truthy(contains(f.message, "from 0.18.8") and contains(f.message, "DeepSpeed 0.17.6 does not check it"), f.message)
    f = find(run(wu, nil, "0.19.2"), "out-of-range", { "scheduler", "params", "warmup_num_steps" })
    T.truthy(contains(f.message, "max(2, warmup_num_steps)"), f.message)
  end,

  -- bools and inf/nan are a validator's refusal (fp16.loss_scale from 0.18.8,
  -- precision_config.py:120-131 at v0.19.5; loss_scale_window and
  -- min_loss_scale from 0.19.3, 165-179): pydantic's lax mode takes a bool
  -- before (true is 1)
  no_bool_follows_the_release = function()
    local function sev(cfg, v, key)
      local f = find(run(cfg, nil, v), "type-mismatch", { "fp16", key })
      return f and f.severity or "none"
    end
    local ls = { fp16 = { enabled = true, loss_scale = true } }
    T.eq(sev(ls, "0.17.6", "loss_scale"), "none")
    T.eq(sev(ls, "0.18.9", "loss_scale"), "error")
    T.eq(sev(ls, "0.19.5", "loss_scale"), "error")
    for _, key in ipairs({ "min_loss_scale", "loss_scale_window" }) do
      local c = { fp16 = { enabled = true, [key] = false } }
      T.eq(sev(c, "0.18.9", key), "none", key)
      T.eq(sev(c, "0.19.2", key), "none", key)
      T.eq(sev(c, "0.19.5", key), "error", key)
    end
  end,

  -- the old name seq_parallel_comm_data_type, read up to 0.15.4, is
  -- checked as its new name (get_communication_data_type raises ValueError,
  -- runtime/config.py:265 at v0.14.5)
  renamed_key_value_checked_where_read = function()
    local bad = { seq_parallel_comm_data_type = "int8" }
    for _, v in ipairs({ "0.14.5", "0.15.4" }) do
      local f = find(run(bad, nil, v), "invalid-value", { "seq_parallel_comm_data_type" })
      T.truthy(f, v)
      T.eq(f.severity, "error")
    end
    T.falsy(find(run(bad, nil, "0.16.5"), "invalid-value"))
    T.eq(errors(run({ seq_parallel_comm_data_type = "BF16" }, nil, "0.14.5")), 0)
  end,

  deprecated_key_and_replacement = function()
    local found = run({ zero_optimization = { stage = 3, cpu_offload = true } })
    local f = find(found, "deprecated-key", { "zero_optimization", "cpu_offload" })
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "offload_optimizer"))
    T.eq(count(found, nil, "error"), 0)
    found = run({ zero_optimization = { stage = 3, cpu_offload = true, offload_optimizer = { device = "cpu" } } })
    f = find(found, "deprecated-with-replacement", { "zero_optimization", "cpu_offload" })
    T.eq(f.severity, "error")
    T.truthy(contains(f.message, "AssertionError"))
    -- the replacement given through its alias also counts
    found = run({ zero_optimization = { stage3_gather_fp16_weights_on_model_save = true,
                                        stage3_gather_16bit_weights_on_model_save = true } })
    T.truthy(find(found, "deprecated-with-replacement"), show(found))
    -- cpu_offload_use_pin_memory only warns, even with the new sections
    found = run({ zero_optimization = { cpu_offload_use_pin_memory = true, offload_param = { device = "cpu" } } })
    T.truthy(find(found, "deprecated-key"))
    T.falsy(find(found, "deprecated-with-replacement"))
    -- bfloat16 + bf16: bf16 wins, a warning
    found = run({ bf16 = { enabled = true }, bfloat16 = { enabled = false } })
    f = find(found, "deprecated-with-replacement", { "bfloat16" })
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "ignores \"bfloat16\""))
  end,

  legacy_bool_zero_optimization = function()
    local found = run({ zero_optimization = true, allgather_size = 200000000 })
    local f = find(found, "deprecated-key", { "zero_optimization" })
    T.truthy(f and contains(f.message, "stage 1"), show(found))
    T.truthy(find(found, "deprecated-key", { "allgather_size" }))
    T.eq(errors(found), 0)
  end,

  alias_with_field = function()
    local found = run({ zero_optimization = { stage3_prefetch_bucket_size = 50000000, prefetch_bucket_size = 50000000 } })
    local f = find(found, "alias-with-field")
    T.truthy(f, show(found))
    T.eq(f.severity, "error")
    T.truthy(contains(f.message, "prefetch_bucket_size"))
    -- one spelling alone is fine, either way
    T.eq(#run({ zero_optimization = { stage3_max_live_parameters = 1e9 } }), 0)
    T.eq(#run({ zero_optimization = { max_live_parameters = 1e9 } }), 0)
    found = run({ tensor_parallel = { tp = { tp_size = 2 }, tensor_parallel = { tp_size = 2 } } })
    T.truthy(find(found, "alias-with-field"))
  end,

  rejected_key = function()
    local found = run({ optimizer = { type = "AdamW", params = { lr = 1e-4, max_grad_norm = 1.0 } } })
    local f = find(found, "rejected-key", { "optimizer", "params", "max_grad_norm" })
    T.truthy(f, show(found))
    T.truthy(contains(f.message, "gradient_clipping"))
  end,

  auto_value_hf_target = function()
    T.eq(#run(llava_zero3_offload(), "hf"), 0)
    local found = run({ zero_optimization = { stage = "auto" } }, "hf")
    local f = find(found, "auto-value", { "zero_optimization", "stage" })
    T.truthy(f, show(found))
    -- DeepSpeed's pydantic model drops it: the default applies (a warning)
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "Hugging Face does not fill"))
    T.truthy(contains(f.message, "stage = 0"))
    -- HF fills only the stage3_ spelling
    found = run({ zero_optimization = { stage = 3, prefetch_bucket_size = "auto" } }, "hf")
    f = find(found, "auto-value", { "zero_optimization", "prefetch_bucket_size" })
    T.truthy(f and contains(f.message, "stage3_prefetch_bucket_size"), show(found))
    -- the old bf16 name is not filled
    found = run({ bfloat16 = { enabled = "auto" } }, "hf")
    T.truthy(find(found, "auto-value", { "bfloat16", "enabled" }))
  end,

  auto_value_deepspeed_target = function()
    -- a pydantic model drops "auto": a warning naming the default
    local found = run({ zero_optimization = { stage = "auto" } }, "deepspeed")
    local f = find(found, "auto-value", { "zero_optimization", "stage" })
    T.truthy(contains(f.message, "stage = 0"), f.message)
    T.eq(f.severity, "warning")
    found = run({ fp16 = { enabled = "auto" } }, "deepspeed")
    f = find(found, "auto-value", { "fp16", "enabled" })
    T.truthy(contains(f.message, "enabled = false"), f.message)
    T.eq(f.severity, "warning")
    -- ... whose default is the release's (pin_memory: false before 0.19.5)
    found = run({ zero_optimization = { stage = 3, offload_param = { device = "cpu", pin_memory = "auto" } } },
      "deepspeed", "0.16.9")
    f = find(found, "auto-value", { "zero_optimization", "offload_param", "pin_memory" })
    T.truthy(contains(f.message, "pin_memory = false"), f.message)
    -- fp16 is read with dict.get before 0.17.1: "auto" is kept, and is true
    found = run({ fp16 = { enabled = "auto" } }, "deepspeed", "0.16.9")
    f = find(found, "auto-value", { "fp16", "enabled" })
    T.truthy(contains(f.message, "acts as true"), f.message)
    T.eq(f.severity, "warning")
    -- a plain pydantic model (comms_logger at 0.14.5) does not drop it
    found = run({ comms_logger = { enabled = "auto" } }, "deepspeed", "0.14.5")
    f = find(found, "auto-value", { "comms_logger", "enabled" })
    T.truthy(contains(f.message, "ValidationError"), f.message)
    T.eq(f.severity, "error")
    -- dict reads DeepSpeed computes with: an error (an engine verdict in
    -- tests/conformance/engine.json), or `x | y` in DeepSpeedConfig
    for _, key in ipairs({ "steps_per_print", "gradient_clipping", "gradient_predivide_factor", "wall_clock_breakdown" }) do
      found = run({ [key] = "auto" }, "deepspeed")
      T.eq(find(found, "auto-value", { key }).severity, "error", key)
    end
    -- a number only a feature the config does not enable computes with
    found = run({ aio = { block_size = "auto" } }, "deepspeed")
    f = find(found, "auto-value", { "aio", "block_size" })
    T.eq(f.severity, "warning")
    T.truthy(contains(f.message, "NVMe"), f.message)
    found = run({ aio = { block_size = "auto" },
                  zero_optimization = { stage = 3, offload_param = { device = "nvme", nvme_path = "/n" } } }, "deepspeed")
    T.eq(find(found, "auto-value", { "aio", "block_size" }).severity, "error")
    found = run({ train_batch_size = "auto", train_micro_batch_size_per_gpu = "auto",
                  gradient_accumulation_steps = "auto" }, "deepspeed")
    T.eq(#found, 3, show(found))
    T.eq(count(found, "auto-value", "error"), 3)
    T.truthy(contains(found[1].message, "TypeError"))
    -- nested pydantic models drop "auto" too (their __init__ runs)
    found = run({ zero_optimization = { offload_param = { pin_memory = "auto" } } }, "deepspeed")
    f = find(found, "auto-value", { "zero_optimization", "offload_param", "pin_memory" })
    T.truthy(contains(f.message, "pin_memory = true"), f.message)
    T.eq(f.severity, "warning")
    -- lenient bools: the string is true in Python
    found = run({ checkpoint = { use_node_local_storage = "auto" } }, "deepspeed")
    f = find(found, "auto-value", { "checkpoint", "use_node_local_storage" })
    T.truthy(contains(f.message, "acts as true"), f.message)
    T.eq(f.severity, "warning")
    found = run({ optimizer = { type = "AdamW", params = { betas = "auto" } } }, "deepspeed")
    f = find(found, "auto-value", { "optimizer", "params", "betas" })
    T.truthy(contains(f.message, "list"), f.message)
    -- "auto" that DeepSpeed itself accepts is no finding
    T.eq(#run({ pipeline = { stages = "auto" },
                zero_optimization = { stage = 2, zenflow = { select_strategy = "auto", select_interval = "auto" } } },
              "deepspeed"), 0)
  end,

  realworld_configs_clean_for_hf = function()
    local configs = { llava_zero3_offload = llava_zero3_offload(), llamafactory_z3_fp8 = llamafactory_z3_fp8(),
                      axolotl_zero3_bf16_offload_all = axolotl_zero3_bf16_offload_all(),
                      llamafactory_z2_autotp = llamafactory_z2_autotp() }
    for _, name in ipairs(dsforge.sorted_keys(configs)) do
      local found = run(configs[name], "hf")
      T.eq(errors(found), 0, name .. ": " .. show(found))
    end
    local found = run(llamafactory_z3_fp8(), "hf")
    T.eq(count(found, "unknown-key", "warning"), 2)
    T.truthy(find(found, "unknown-key", { "comms_config" }))
    T.truthy(find(found, "unknown-key", { "monitor_config" }))
    found = run(llamafactory_z2_autotp(), "hf")
    T.eq(#found, 1)
    T.truthy(find(found, "unknown-key", { "_comment" }))
  end,

  realworld_configs_at_deepspeed_target_flag_auto = function()
    local found = run(llava_zero3_offload(), "deepspeed")
    -- 4 top-level batch/clip keys, 4 optimizer params, 3 scheduler params
    -- fail; fp16/bf16 enabled and 3 zero keys are dropped by the pydantic
    -- models (the defaults apply)
    T.eq(count(found, "auto-value", "error"), 11, show(found))
    T.eq(count(found, "auto-value", "warning"), 5, show(found))
    T.eq(#found, 16)
  end,

  seed002_zero2_example = function()
    local found = run(seed002_zero2(), "hf")
    T.eq(errors(found), 0, show(found))
    T.eq(#found, 1, show(found))
    T.truthy(find(found, "unknown-key", { "min_lr" }))
  end,

  never_raises_on_odd_shapes = function()
    local odd = {
      "x", 5, 5.5, true, NULL, { 1, 2, 3 }, dsforge.object {}, dsforge.array {},
      { zero_optimization = { 1, 2 } }, { zero_optimization = "3" }, { zero_optimization = NULL },
      { zero_optimization = { offload_param = { 1 } } }, { zero_optimization = { offload_param = "cpu" } },
      { optimizer = "Adam" }, { optimizer = { params = { 1, 2 } } }, { optimizer = { params = { betas = { "a", NULL } } } },
      { fp16 = { enabled = { x = { y = { z = 1 } } } } }, { compile = { passes = { 1, "z9", NULL } } },
      { elasticity = { micro_batch_sizes = "2,4" } }, { zero_optimization = { leaf_module = { classes = { 5 } } } },
      { tensor_parallel = { tp = NULL } }, { timers = { throughput = { enabled = "auto" } } },
      { zero_optimization = { stage = { 2 } } }, { comms_logger = { prof_ops = "all_reduce" } },
      { train_batch_size = { 8 } }, { pipeline = { stages = true } }, { sparse_attention = { block = "16" } },
    }
    for i, cfg in ipairs(odd) do
      local ok, err = pcall(run, cfg, "deepspeed")
      T.truthy(ok, "case " .. i .. ": " .. tostring(err))
      ok, err = pcall(run, cfg, "hf")
      T.truthy(ok, "case " .. i .. " hf: " .. tostring(err))
      ok, err = pcall(function() return require("deepspeed.explain").rows(cfg, "zh") end)
      T.truthy(ok, "explain case " .. i .. ": " .. tostring(err))
    end
    local found = run("x")
    T.eq(found[1].rule, "type-mismatch")
    found = run({ compile = { passes = { 1, "z9" } } })
    T.truthy(find(found, "type-mismatch", { "compile", "passes", 1 }), show(found))
    T.truthy(find(found, "invalid-value", { "compile", "passes", 2 }), show(found))
  end,

  findings_are_deterministic = function()
    local function flat(found)
      local out = {}
      for _, f in ipairs(found) do out[#out + 1] = f.rule .. "|" .. f.message end
      return out
    end
    local cfg = seed002_zero2()
    cfg.zero_optimization.offload_parm = {}
    cfg.zero_optimization.stage3_prefetch_bucket_size = 15099494.4
    cfg.foo = 1
    cfg.bar = 2
    local a = flat(run(cfg, "deepspeed"))
    for _ = 1, 5 do T.eq(flat(run(cfg, "deepspeed")), a) end
  end,

  did_you_mean_distance = function()
    local check = sc()
    T.eq(check.levenshtein("kitten", "sitting"), 3)
    T.eq(check.suggest("offload_parm", { "offload_optimizer", "offload_param" }), "offload_param")
    T.eq(check.suggest("CPU", { "cpu", "none", "nvme" }), "cpu")
    T.eq(check.suggest("comms_config", { "comms_logger", "compile" }), nil)
    T.eq(check.suggest("stge", { "stage" }), "stage")
  end,

  -- The bounded distance agrees with the full one wherever it is within
  -- the bound, and says "over" (bound + 1) everywhere else; the bounded
  -- suggestion equals a full search over the same candidates.
  did_you_mean_bounded_equals_full = function()
    local check = sc()
    local words = { "", "a", "ab", "ba", "stage", "stge", "sgate", "offload_param",
      "offload_parm", "offload_optimizer", "train_batch_size", "train_batch_sise",
      "trian_batch_size", "gradient_clipping", "gradient_accumulation_steps",
      "zero_optimization", "zero_optimisation", "bf16", "fp16", "kitten", "sitting" }
    for _, a in ipairs(words) do
      for _, b in ipairs(words) do
        local full = check.levenshtein(a, b)
        for bound = 0, 4 do
          local want = full <= bound and full or bound + 1
          T.eq(check.levenshtein_within(a, b, bound), want,
               string.format("%q %q bound %d", a, b, bound))
        end
      end
    end
    local function full_suggest(word, cands)
      local lw, limit = word:lower(), math.max(1, math.min(3, #word // 4))
      local best, bestd
      for _, c in ipairs(cands) do
        if c ~= word then
          local d = check.levenshtein(lw, c:lower())
          if d <= limit and (bestd == nil or d < bestd) then best, bestd = c, d end
        end
      end
      return best
    end
    local cands = {}
    for _, w in ipairs(words) do cands[#cands + 1] = w end
    table.sort(cands)
    for _, w in ipairs(words) do
      for _, probe in ipairs({ w, w .. "x", "x" .. w, w:sub(2), w:upper() }) do
        T.eq(check.suggest(probe, cands), full_suggest(probe, cands), probe)
      end
    end
  end,

  -- The advice after an unknown key (did you mean, wrong section, renamed)
  -- depends only on the schema node and the key: the search runs once per
  -- (node, key) in a run, however many configs carry the key, and every
  -- config gets the same message.
  unknown_key_advice_searched_once_per_node_and_key = function()
    local check = sc()
    local calls, real = {}, check.suggest
    check.suggest = function(word, cands)
      calls[word] = (calls[word] or 0) + 1
      return real(word, cands)
    end
    local ok, err = pcall(function()
      local cfg = { train_batch_sze = 8, _comment_advice_probe = "x",
        zero_optimization = { stage = 1, overlap_com = true } }
      local first = show(run(cfg, "deepspeed"))
      T.truthy(contains(first, "did you mean \"train_batch_size\""), first)
      T.truthy(contains(first, "did you mean \"overlap_comm\""), first)
      for _ = 1, 3 do T.eq(show(run(cfg, "deepspeed")), first) end
      T.eq(calls.train_batch_sze, 1)
      T.eq(calls._comment_advice_probe, 1)
      T.eq(calls.overlap_com, 1)
      -- the same key in another section is another search
      run({ zero_optimization = { train_batch_sze = 8 } }, "deepspeed")
      T.eq(calls.train_batch_sze, 2)
    end)
    check.suggest = real
    if not ok then error(err, 0) end
  end,

  ---------------------------------------------------------------------------
  -- jsonschema
  ---------------------------------------------------------------------------

  jsonschema_structure = function()
    local js = require("deepspeed.jsonschema").generate()
    T.eq(js["$schema"], "https://json-schema.org/draft/2020-12/schema")
    T.eq(js["$id"], "https://dsforge.dev/schema/deepspeed.json")
    T.truthy(type(js.title) == "string" and type(js.description) == "string")
    T.eq(js.type, "object")
    T.eq(js.additionalProperties, true)
    local zero = js.properties.zero_optimization
    T.eq(zero.additionalProperties, false)
    T.eq(zero.type, { "object", "boolean" })
    T.eq(zero.properties.stage.type, "integer")
    T.eq(zero.properties.stage.enum, { 0, 1, 2, 3 })
    T.eq(zero.properties.stage.default, 0)
    T.truthy(zero.properties.prefetch_bucket_size and zero.properties.stage3_prefetch_bucket_size)
    -- "auto" exactly on the HF keys (and only on the spelling HF fills)
    local function allows_auto(s)
      for _, alt in ipairs(s.anyOf or {}) do if alt.const == "auto" then return true end end
      return false
    end
    T.truthy(allows_auto(zero.properties.stage3_prefetch_bucket_size))
    T.falsy(allows_auto(zero.properties.prefetch_bucket_size))
    T.truthy(allows_auto(zero.properties.reduce_bucket_size))
    T.falsy(allows_auto(zero.properties.stage))
    T.truthy(allows_auto(js.properties.train_batch_size))
    T.truthy(allows_auto(js.properties.fp16.properties.enabled))
    T.falsy(allows_auto(js.properties.bfloat16.properties.enabled))
    T.truthy(allows_auto(js.properties.optimizer.properties.params.properties.lr))
    T.eq(js.properties.activation_checkpointing.additionalProperties, true)
    T.eq(zero.properties.offload_param.type, { "object", "null" })
    T.eq(zero.properties.overlap_comm.type, { "boolean", "null" })
    T.eq(zero.properties.offload_optimizer.properties.ratio.maximum, 1)
    -- negative gradient_clipping disables clipping (a warning, not a schema error)
    T.eq(js.properties.gradient_clipping.anyOf[1].minimum, nil)
    T.truthy(js.properties.gradient_clipping.description)
    T.eq(zero.properties.cpu_offload.deprecated, true)
    -- empty tables are marked so the C side writes {} / []
    T.eq(dsforge.kind(js.properties.compression_training.properties), "object")
    T.eq(dsforge.kind(js.properties.comms_logger.properties.prof_ops.default), "array")
    -- case-insensitive enums list the accepted spellings
    local cdt = js.properties.communication_data_type
    local has = {}
    for _, e in ipairs(cdt.enum) do has[e] = true end
    T.truthy(has.fp16 and has.FP16 and has.bf16 and has.BF16)
  end,

  jsonschema_accepts_realworld_and_rejects_mistakes = function()
    local js = require("deepspeed.jsonschema").generate()
    for _, cfg in ipairs({ llava_zero3_offload(), llamafactory_z3_fp8(), axolotl_zero3_bf16_offload_all(),
                           llamafactory_z2_autotp(), seed002_zero2() }) do
      T.truthy(validate(js, cfg))
    end
    local cfg = llava_zero3_offload()
    cfg.zero_optimization.offload_parm = { device = "cpu" }
    T.falsy(validate(js, cfg), "misspelled zero_optimization key")
    cfg = llava_zero3_offload()
    cfg.zero_optimization.stage = "auto"
    T.falsy(validate(js, cfg), "stage auto")
    cfg = llava_zero3_offload()
    cfg.zero_optimization.stage3_prefetch_bucket_size = 15099494.4
    T.falsy(validate(js, cfg), "fractional int")
    cfg = llava_zero3_offload()
    cfg.zero_optimization.prefetch_bucket_size = 5
    T.falsy(validate(js, cfg), "alias and field together")
    cfg = llava_zero3_offload()
    cfg.zero_optimization.offload_param.device = "CPU"
    T.falsy(validate(js, cfg), "device case")
    T.truthy(validate(js, { zero_optimization = true, pipeline = { stages = "auto" } }))
    T.truthy(validate(js, { communication_data_type = "BF16", checkpoint = { tag_validation = "warn" } }))
  end,

  ---------------------------------------------------------------------------
  -- explain
  ---------------------------------------------------------------------------

  explain_rows_english = function()
    local ex = require("deepspeed.explain")
    local rows = ex.rows({
      zero_optimization = { stage = 2, overlap_comm = true, offload_optimizer = { device = "none" } },
      gradient_clipping = 1.0,
      bogus = 1,
      optimizer = { params = { lr = 1e-4, nesterov = true } },
    }, "en")
    local paths = {}
    for i, r in ipairs(rows) do paths[i] = table.concat(r.path, ".") end
    T.eq(paths, { "bogus", "gradient_clipping", "optimizer", "optimizer.params", "optimizer.params.lr",
                  "optimizer.params.nesterov", "zero_optimization", "zero_optimization.offload_optimizer",
                  "zero_optimization.offload_optimizer.device", "zero_optimization.overlap_comm",
                  "zero_optimization.stage" })
    T.eq(rows[1].status, "unknown")
    T.eq(rows[1].default_text, "none")
    T.eq(rows[2].status, "default")
    T.eq(rows[2].default, 1.0)
    T.eq(rows[2].default_text, "1")
    T.eq(rows[5].status, "no-default")
    T.eq(rows[6].status, "no-default")
    T.eq(rows[9].status, "default")
    T.eq(rows[9].default_text, "\"none\"")
    T.eq(rows[10].status, "no-default")
    T.truthy(contains(rows[10].default_text, "stage == 3"))
    T.eq(rows[11].status, "changed")
    T.eq(rows[11].value, 2)
    T.eq(rows[11].default, 0)
    T.truthy(contains(rows[11].doc, "ZeRO stage"))
  end,

  explain_rows_chinese = function()
    local ex = require("deepspeed.explain")
    local rows = ex.rows({ zero_optimization = { stage3_prefetch_bucket_size = 50000000, stage = 3 }, foo = true }, "zh")
    T.eq(#rows, 4)
    T.eq(rows[1].path, { "foo" })
    T.eq(rows[1].status, "unknown")
    T.truthy(contains(rows[1].doc, "不是 DeepSpeed"))
    T.eq(rows[3].path, { "zero_optimization", "stage" })
    T.truthy(contains(rows[3].doc, "ZeRO-3"))
    T.eq(rows[4].path, { "zero_optimization", "stage3_prefetch_bucket_size" })
    T.eq(rows[4].status, "default")
    T.truthy(contains(rows[4].doc, "预取"))
    local oc = ex.rows({ zero_optimization = { overlap_comm = false } }, "zh")
    T.truthy(contains(oc[2].default_text, "ZeRO-3 为 true"))
  end,

  -- The walk skips check_value for a scalar plain_ok accepts: for every
  -- node of the schema and many values (integers, whole and fractional
  -- floats, infinities, NaN, bounds, strings, enum members in other
  -- types and cases, booleans, null), in pydantic and dict.get sections,
  -- pydantic 1 and 2 and both targets, check_value finds nothing where
  -- the shortcut says there is nothing to find.
  plain_ok_never_skips_a_finding = function()
    local c = sc()
    local schema = require("deepspeed.schema")
    local probes = { 0, 1, 2, -1, 3, 2.0, 2.5, -0.5, 1e300, -1e300, math.huge, -math.huge,
                     0 / 0, 0.0, 1.0, 100, 65536, true, false, "", "x", "1", "2", "true",
                     "auto", "AUTO", "cpu", "CPU", "nvme", "none", NULL }
    local nodes, seen = {}, {}
    local function visit(node, path)
      if type(node) ~= "table" or seen[node] then return end
      seen[node] = true
      nodes[#nodes + 1] = { node = node, path = path }
      if type(node.fields) == "table" then
        for _, k in ipairs(dsforge.sorted_keys(node.fields)) do
          local p = table.move(path, 1, #path, 1, {})
          p[#p + 1] = k
          visit(node.fields[k], p)
        end
      end
      if type(node.values) == "table" then
        local p = table.move(path, 1, #path, 1, {})
        p[#p + 1] = "key"
        visit(node.values, p)
      end
      if type(node.items) == "table" then
        local p = table.move(path, 1, #path, 1, {})
        p[#p + 1] = 1
        visit(node.items, p)
      end
    end
    visit(schema.root, {})
    T.truthy(#nodes > 200)
    local accepted, refused = 0, 0
    for _, n in ipairs(nodes) do
      local vals = table.move(probes, 1, #probes, 1, {})
      for _, e in ipairs(n.node.enum or {}) do vals[#vals + 1] = e end
      for _, b in ipairs({ "min", "max", "exclusive_min", "exclusive_max" }) do
        local x = n.node[b]
        if type(x) == "number" then
          vals[#vals + 1] = x; vals[#vals + 1] = x + 1; vals[#vals + 1] = x - 1
          vals[#vals + 1] = x + 0.5; vals[#vals + 1] = x - 0.5
        end
      end
      for _, v in ipairs(vals) do
        if v ~= "auto" and type(v) ~= "table" and c.plain_ok(v, type(v), n.node) then
          accepted = accepted + 1
          for _, strict in ipairs({ true, false }) do
            for _, v1 in ipairs({ true, false }) do
              for _, target in ipairs({ "deepspeed", "hf" }) do
                local found = c.check_leaf(n.node, v, n.path, { strict = strict, v1 = v1, target = target })
                if #found > 0 then
                  error(string.format("plain_ok accepts %s at %s (strict %s, v1 %s, %s), but check_value finds: %s",
                    c.format_value(v), c.path_text(n.path), tostring(strict), tostring(v1), target,
                    found[1].message))
                end
              end
            end
          end
        else
          refused = refused + 1
        end
      end
    end
    -- neither side empty: the shortcut is taken, and not for everything
    T.truthy(accepted > 500)
    T.truthy(refused > 500)
  end,

  -- check_object walks keys in table order: the findings (as the core
  -- sorts them: path, rule, message) are the same whatever order the
  -- keys were inserted in, with aliases given with their fields,
  -- deprecated keys with their replacements, unknown keys, "auto" and
  -- bad values side by side.
  walk_order_does_not_matter = function()
    local entries = {
      { "zero_optimization", { { "stage", 3 }, { "prefetch_bucket_size", 1 },
        { "stage3_prefetch_bucket_size", 2 }, { "stage3_gather_16bit_weights_on_model_save", true },
        { "gather_16bit_weights_on_model_save", false }, { "cpu_offload", true },
        { "offload_optimizer", { { "device", "cpu" } } }, { "overlap_comm", "auto" },
        { "reduce_bucket_sise", 5 }, { "sub_group_size", -1 }, { "max_live_parameters", 2.5 } } },
      { "bfloat16", { { "enabled", true } } }, { "bf16", { { "enabled", "yes" } } },
      { "fp16", { { "enabled", false }, { "loss_scale", -1 } } },
      { "train_batch_size", "auto" }, { "gradient_clipping", "1.0" }, { "optimiser", 1 },
      { "steps_per_print", 0 }, { "wall_clock_breakdown", NULL },
    }
    -- (reverse also sizes the table's hash part differently: keys added
    -- and removed first, so next visits the keys in another order)
    local function build(list, reverse)
      local t = {}
      local a, b, step = 1, #list, 1
      if reverse then
        a, b, step = #list, 1, -1
        for i = 1, 40 do t["pad" .. i] = i end
      end
      for i = a, b, step do
        local k, v = list[i][1], list[i][2]
        if type(v) == "table" then v = build(v, reverse) end
        t[k] = v
      end
      if reverse then
        for i = 1, 40 do t["pad" .. i] = nil end
      end
      return t
    end
    local function order(t)
      local keys = {}
      for k in next, t do keys[#keys + 1] = k end
      return table.concat(keys, ",")
    end
    T.truthy(order(build(entries, false)) ~= order(build(entries, true)))
    T.truthy(order(build(entries, false).zero_optimization) ~= order(build(entries, true).zero_optimization))
    local function sorted(found)
      local out = {}
      for i, f in ipairs(found) do
        local p = {}
        for j, x in ipairs(f.path) do p[j] = tostring(x) end
        out[i] = table.concat(p, ".") .. "|" .. f.rule .. "|" .. f.message .. "|"
          .. tostring(f.fix) .. "|" .. tostring(f.severity)
      end
      table.sort(out)
      return table.concat(out, "\n")
    end
    for _, target in ipairs({ "deepspeed", "hf" }) do
      for _, ver in ipairs({ false, "0.14.5", "0.16.9" }) do
        local a = sorted(run(build(entries, false), target, ver or nil))
        local b = sorted(run(build(entries, true), target, ver or nil))
        T.truthy(#a > 500, a)
        T.eq(a, b)
      end
    end
  end,

  -- The section cache (schema_check.lua, walk_section) serves a section's
  -- findings again only for an equal section under the same release and
  -- target: after any other config, a config's findings are those of a
  -- walk from scratch.
  section_cache_never_stale = function()
    local check = sc()
    -- the first config a state checks is walked without the cache (a
    -- one-file check loads none of it), the next ones with it
    local function fresh(cfg, target, ver)
      check.clear_section_cache()
      return run(cfg, target, ver)
    end
    local function reset()
      check.clear_section_cache()
      run({})
    end
    local pairs_ = {
      -- a value, a type, a key more, a key less
      { { zero_optimization = { stage = 3 } }, { zero_optimization = { stage = "3" } } },
      { { zero_optimization = { stage = 3 } }, { zero_optimization = { stage = 4 } } },
      { { zero_optimization = { stage = 3 } }, { zero_optimization = { stage = 3, bogus = 1 } } },
      { { zero_optimization = { stage = 3, overlap_comm = "yes" } }, { zero_optimization = { stage = 3 } } },
      -- integer and float, 0.0 and -0.0
      { { optimizer = { type = "AdamW", params = { lr = 1 } } },
        { optimizer = { type = "AdamW", params = { lr = 1.0 } } } },
      { { gradient_clipping = 1, fp16 = { enabled = true, loss_scale = 0.0 } },
        { gradient_clipping = 1, fp16 = { enabled = true, loss_scale = -0.0 } } },
      -- nested arrays, and an empty object against an empty array
      { { optimizer = { type = "AdamW", params = { betas = { 0.9, 0.95 } } } },
        { optimizer = { type = "AdamW", params = { betas = { 0.9, "x" } } } } },
      { { optimizer = { type = "AdamW", params = { betas = { 0.9, 0.95 } } } },
        { optimizer = { type = "AdamW", params = { betas = { 0.9 } } } } },
      { { flops_profiler = {} }, { flops_profiler = dsforge.array {} } },
      -- the same section, whose verdict reads another one (dictuse's when)
      { { aio = { block_size = "auto" } },
        { aio = { block_size = "auto" },
          zero_optimization = { stage = 3, offload_param = { device = "nvme", nvme_path = "/n" } } } },
    }
    local differ = 0
    for _, pr in ipairs(pairs_) do
      for _, target in ipairs({ "deepspeed", "hf" }) do
        for _, ver in ipairs({ false, "0.14.5" }) do
          for _, order in ipairs({ { 1, 2 }, { 2, 1 } }) do
            local a, b = pr[order[1]], pr[order[2]]
            local want = fresh(b, target, ver or nil)
            if show(want) ~= show(fresh(a, target, ver or nil)) then differ = differ + 1 end
            reset()
            run(a, target, ver or nil)
            T.eq(show(run(b, target, ver or nil)), show(want))
            T.eq(run(b, target, ver or nil), want) -- served from the cache
          end
        end
      end
    end
    -- (each pair differs in its findings somewhere: else it tests nothing)
    T.truthy(differ >= #pairs_, differ)
    -- the target and the release are part of the key
    local cfg = { zero_optimization = { stage = 3, stage3_prefetch_bucket_size = "auto" } }
    reset()
    local ds, hf = run(cfg, "deepspeed"), run(cfg, "hf")
    T.eq(show(ds), show(fresh(cfg, "deepspeed")))
    T.eq(show(hf), show(fresh(cfg, "hf")))
    T.truthy(show(ds) ~= show(hf))
    -- served only for an equal section: the same number subtype and sign
    -- of zero too (no finding tells those apart today; a walk that does
    -- must not get another value's findings)
    local cache = require("deepspeed.section_cache")
    local function opt(x) return { optimizer = { type = "AdamW", params = { lr = x, betas = { 0.9, x } } } } end
    local function served(a, b)
      reset()
      run(a)
      local before = cache.hits()
      run(b)
      return cache.hits() - before
    end
    -- (the first config: none kept)
    check.clear_section_cache()
    local before = cache.hits()
    run(opt(1e-4)); run(opt(1e-4))
    T.eq(cache.hits() - before, 0)
    T.eq(served(opt(1e-4), opt(1e-4)), 1)
    T.eq(served(opt(1), opt(1.0)), 0)
    T.eq(served(opt(1.0), opt(1)), 0)
    T.eq(served(opt(0.0), opt(-0.0)), 0)
    T.eq(served(opt(1e-4), opt(2e-4)), 0)
    T.eq(served({ flops_profiler = {} }, { flops_profiler = dsforge.array {} }), 0)
    -- bounded: no entry for a section of more values than the most one
    -- holds, none past the budget of all entries, the oldest of a
    -- section's entries replaced by its newest
    local big = { 0.9 }
    for i = 2, 300 do big[i] = 0.9 end
    T.eq(served(opt(big), opt(big)), 0)
    local max_nodes, budget = cache.bounds()
    cache.bounds(nil, 12)
    T.eq(served(opt(1e-4), opt(1e-4)), 1) -- 7 values; the next, 14
    T.eq(served({ optimizer = { type = "AdamW", params = { lr = 1, betas = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } } } },
                { optimizer = { type = "AdamW", params = { lr = 1, betas = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } } } }), 0)
    cache.bounds(nil, budget)
    reset()
    local n = cache.slots + 2
    for i = 1, n do run(opt(i * 1e-4)) end
    local _, _, held = cache.bounds()
    T.eq(held, cache.slots * 7)
    local hits = cache.hits()
    run(opt(3 * 1e-4)); run(opt(n * 1e-4)); run(opt(1 * 1e-4))
    T.eq(cache.hits() - hits, 2)
    T.eq(select(1, cache.bounds()), max_nodes)
    -- a receiver that changes the paths it is given changes no later run
    -- (neither those recorded nor those served)
    local bad = { zero_optimization = { stage = 3, bogus = 1 } }
    local want = fresh(bad)
    reset()
    for _ = 1, 2 do
      check.check(bad, { target = "deepspeed", report = function(f) f.path[1] = "changed" end })
    end
    T.eq(run(bad), want)
  end,

  explain_section_doc = function()
    local ex = require("deepspeed.explain")
    T.truthy(contains(ex.section_doc({ "zero_optimization" }, "en"), "ZeRO"))
    T.truthy(contains(ex.section_doc({ "zero_optimization", "stage3_max_live_parameters" }, "zh"), "元素"))
    T.truthy(contains(ex.section_doc({ "aio" }, "zh"), "顶层"))
    T.eq(ex.section_doc({ "zero_optimization", "nope" }, "en"), nil)
    T.eq(ex.section_doc({ "nope" }, "zh"), nil)
    T.truthy(ex.section_doc({}, "en"))
  end,

  -- DeepSpeedZeroLeafModuleConfig's mode="before" validator (0.18.9 on):
  -- a string is a list of one, null is {}; anything else is still checked
  leaf_module_coercions_of_the_before_validator = function()
    local function cfg(lm)
      return { train_micro_batch_size_per_gpu = 1, zero_optimization = { stage = 3, leaf_module = lm } }
    end
    for _, rel in ipairs({ "0.18.9", "0.19.2", "0.19.5" }) do
      local found = run(cfg({ classes = "a.B", names = "x", name_suffixes = "mlp" }), nil, rel)
      T.eq(errors(found), 0, show(found))
      found = run(cfg(NULL), nil, rel)
      T.eq(errors(found), 0, show(found))
      found = run(cfg({ classes = 5, names = { "x", 3 } }), nil, rel)
      T.truthy(find(found, "type-mismatch", { "zero_optimization", "leaf_module", "classes" }), show(found))
      T.truthy(find(found, "type-mismatch", { "zero_optimization", "leaf_module", "names", 2 }), show(found))
    end
    -- the JSON Schema says the same
    local js = require("deepspeed.jsonschema").generate()
    local lm = js.properties.zero_optimization.properties.leaf_module
    T.truthy(validate(lm, { classes = "a.B", names = dsforge.array { "x" } }))
    T.truthy(validate(lm, NULL))
    T.falsy(validate(lm, { classes = 5 }))
  end,

  -- "bf16": null with "bfloat16": the pydantic releases take the null for
  -- absent and read bfloat16 (get_bfloat16_config); the dict.get releases
  -- fail on the null, and there bf16 is the one read
  bfloat16_with_bf16_null = function()
    local cfg = { train_micro_batch_size_per_gpu = 1, bf16 = NULL, bfloat16 = { enabled = true } }
    for _, rel in ipairs({ "0.17.6", "0.18.9", "0.19.5" }) do
      local found = run(cfg, nil, rel)
      T.eq(find(found, "deprecated-with-replacement"), nil, show(found))
      local f = find(found, "deprecated-key", { "bfloat16" })
      T.truthy(contains(f.message, "so it reads \"bfloat16\""), f.message)
      T.falsy(contains(f.message, "ignored"), f.message)
      T.eq(errors(found), 0, show(found))
    end
    for _, rel in ipairs({ "0.14.5", "0.16.9" }) do
      local found = run(cfg, nil, rel)
      T.truthy(find(found, "type-mismatch", { "bf16" }), show(found))
    end
    -- a bf16 object still wins
    local found = run({ train_micro_batch_size_per_gpu = 1, bf16 = { enabled = false },
      bfloat16 = { enabled = true } }, nil, "0.19.5")
    T.truthy(find(found, "deprecated-with-replacement", { "bfloat16" }), show(found))
  end,

  -- DeepSpeedFP16Config._validate_loss_scale (mode="before", 0.18.8 on)
  -- calls float(v): Python's grammar, "_" between digits included; not
  -- finite is refused; releases without it leave the string to pydantic
  loss_scale_before_validator_calls_float = function()
    local function ls(v, rel)
      return run({ train_micro_batch_size_per_gpu = 1, fp16 = { enabled = true, loss_scale = v } }, nil, rel)
    end
    for _, rel in ipairs({ "0.18.9", "0.19.2", "0.19.5" }) do
      for _, ok in ipairs({ "1_000", " 12.5 ", "1_0.2_5e1_0", ".5" }) do
        local found = ls(ok, rel)
        T.eq(errors(found), 0, rel .. " " .. ok .. ": " .. show(found))
      end
      for _, bad in ipairs({ "1__0", "_1", "1_", "1_.5", "1e_5", "inf", " -Infinity ", "nan", "x" }) do
        T.truthy(find(ls(bad, rel), "type-mismatch", { "fp16", "loss_scale" }), rel .. " " .. bad)
      end
    end
    T.truthy(find(ls("1_000", "0.17.6"), "type-mismatch", { "fp16", "loss_scale" }))
  end,

  -- elasticity.version is read with dict.get and used only through
  -- float() (elasticity/elasticity.py:291-343): a number string works
  dict_get_float_string = function()
    for _, rel in ipairs({ "0.14.5", "0.19.5" }) do
      for _, v in ipairs({ "0.2", " 0.1 ", "2e-1" }) do
        local found = run({ elasticity = { enabled = true, max_train_batch_size = 64,
          micro_batch_sizes = dsforge.array({ 2 }), version = v } }, nil, rel)
        T.eq(find(found, "type-mismatch", { "elasticity", "version" }), nil, v .. " " .. show(found))
      end
      local found = run({ elasticity = { enabled = true, max_train_batch_size = 64,
        micro_batch_sizes = dsforge.array({ 2 }), version = "v2" } }, nil, rel)
      T.truthy(find(found, "type-mismatch", { "elasticity", "version" }), show(found))
    end
    -- a float read with dict.get without float() still takes no string
    T.truthy(find(run({ gradient_clipping = "1.0" }), "type-mismatch", { "gradient_clipping" }))
  end,
}
