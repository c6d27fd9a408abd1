-- Unit tests for plugins/deepspeed/rules_sections.lua (declarations) and sections_check.lua (checks): compression_training
-- and data_efficiency as DeepSpeed's parser asserts them (issue 28; the
-- conformance corpus's compression__* and data_efficiency__* files hold
-- DeepSpeed's own verdicts on the same shapes).

local NULL = dsforge.null
local tests = {}
local function test(name, fn) tests[(name:gsub("[^%w]+", "_"))] = fn end
local array = dsforge.array

local function run(cfg, ds_version)
  local out = {}
  for _, r in ipairs(require("deepspeed.rules_sections").rules) do
    local ctx = { params = { world_size = 8 }, target = "deepspeed", ds_version = ds_version }
    ctx.report = function(rep)
      T.truthy(rep.rule == r.id, "rule id")
      T.truthy(type(rep.message) == "string" and #rep.message > 20, "message")
      T.truthy(type(rep.fix) == "string" and #rep.fix > 5, "fix")
      out[#out + 1] = { id = rep.rule, path = table.concat(rep.path, "."), message = rep.message }
    end
    r.check(cfg, ctx)
  end
  return out
end

local function base(extra)
  local cfg = { train_micro_batch_size_per_gpu = 2 }
  for k, v in pairs(extra) do cfg[k] = v end
  return cfg
end

local function comp(tech, sec) return base({ compression_training = { [tech] = sec } }) end

local GROUP = { g1 = { params = { start_bits = 8, target_bits = 8 }, modules = array({ "*" }) } }

test("a complete weight_quantization passes", function()
  T.eq(#run(comp("weight_quantization", { shared_parameters = { enabled = true }, different_groups = GROUP })), 0)
end)

test("enabled without different_groups is DeepSpeed's assert, with its line", function()
  local out = run(comp("weight_quantization", { shared_parameters = { enabled = true } }))
  T.eq(#out, 1)
  T.eq(out[1].path, "compression_training.weight_quantization")
  T.truthy(out[1].message:find("compression/config.py:74", 1, true), out[1].message)
end)

test("the string \"false\" enables a technique (Python truthiness)", function()
  local out = run(comp("row_pruning", { shared_parameters = { enabled = "false" } }))
  T.truthy(out[1].message:find("config.py:298", 1, true), out[1].message)
end)

test("disabled without different_groups is still a KeyError", function()
  local out = run(comp("channel_pruning", { shared_parameters = { enabled = false } }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("KeyError: 'different_groups'", 1, true), out[1].message)
  -- an empty object is enough
  T.eq(#run(comp("channel_pruning", { shared_parameters = { enabled = false }, different_groups = {} })), 0)
  -- and without shared_parameters the technique is off and groups may be given alone
  T.eq(#run(comp("channel_pruning", { different_groups = {} })), 0)
end)

test("an empty list is not an object", function()
  local out = run(comp("head_pruning", { shared_parameters = array({}), different_groups = {} }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("'list' object has no attribute 'get'", 1, true), out[1].message)
  T.eq(#run(comp("sparse_pruning", array({}))), 1)
  T.eq(#run(base({ compression_training = { layer_reduction = array({}) } })), 1)
end)

test("choices: a value outside the list, null included", function()
  for _, v in ipairs({ "bogus", NULL, 1 }) do
    local out = run(comp("activation_quantization", {
      shared_parameters = { enabled = true, range_calibration = v },
      different_groups = { g = { params = { bits = 8 } } } }))
    T.eq(#out, 1)
    T.eq(out[1].path, "compression_training.activation_quantization.shared_parameters.range_calibration")
  end
end)

test("group params: the keys each technique's get_params asserts", function()
  local out = run(comp("weight_quantization", { shared_parameters = { enabled = true },
    different_groups = { g1 = { params = { start_bits = 8 } } } }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("target_bits must be specified for weight quantization group g1", 1, true))
  out = run(comp("sparse_pruning", { different_groups = { g1 = { modules = array({ "*" }) } } }))
  T.truthy(out[1].message:find("KeyError: 'params'", 1, true), out[1].message)
end)

test("head_pruning enabled needs num_heads", function()
  local out = run(comp("head_pruning", { shared_parameters = { enabled = true },
    different_groups = { g1 = { params = { dense_ratio = 0.5 } } } }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("config.py:371", 1, true))
end)

test("snip_momentum: dense_ratio in (0, 1), offsets ordered, no assert on groups", function()
  local function snip(shared, groups)
    shared.enabled, shared.method = true, "snip_momentum"
    return run(comp("sparse_pruning", { shared_parameters = shared, different_groups = groups }))
  end
  T.eq(#snip({ dense_ratio = 0.5 }, {}), 0)
  T.eq(#snip({}, {}), 0)                               -- default 0.1
  T.eq(#snip({ dense_ratio = 1 }, {}), 1)
  T.eq(#snip({ dense_ratio = 0 }, {}), 1)
  T.truthy(snip({ dense_ratio = "0.5" }, {})[1].message:find("TypeError", 1, true))
  T.eq(#snip({ schedule_offset = 100, schedule_offset_end = 10 }, {}), 1)
  T.eq(#snip({ schedule_offset = 10, schedule_offset_end = 100 }, {}), 0)
  T.eq(#snip({ schedule_offset = 10 }, {}), 0)         -- the end defaults to the offset
  T.eq(#snip({ schedule_offset = "10", schedule_offset_end = 100 }, {}), 1)  -- "10" <= 100: TypeError
  T.eq(#snip({ schedule_offset = "10" }, {}), 0)       -- "10" <= "10"
  local out = snip({}, nil)
  T.eq(#out, 1)
  T.truthy(out[1].message:find("KeyError", 1, true), out[1].message)
end)

local function de(sampling) return base({ data_efficiency = { enabled = true, data_sampling = sampling } }) end

test("curriculum learning enabled needs curriculum_metrics, whatever data_sampling.enabled says", function()
  local out = run(de({ enabled = false, curriculum_learning = { enabled = true } }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("runtime/data_pipeline/config.py:88", 1, true), out[1].message)
  out = run(de({ curriculum_learning = { enabled = true } }), "0.14.5")
  T.truthy(out[1].message:find("runtime/data_pipeline/config.py:83", 1, true), out[1].message)
  T.eq(#run(de({ curriculum_learning = { enabled = true, curriculum_metrics = {} } })), 0)
  T.eq(#run(de({ curriculum_learning = { enabled = true, metrics = { seqlen = {} } } })), 1)
  T.eq(#run(de({ curriculum_learning = { enabled = false } })), 0)
end)

test("dynamic batching: max_tokens when enabled, from 0.16.5; int() of the sizes", function()
  T.eq(#run(de({ dynamic_batching = { enabled = true } })), 1)
  T.eq(#run(de({ dynamic_batching = { enabled = 1 } }), "0.16.5"), 1)
  T.eq(#run(de({ dynamic_batching = { enabled = true } }), "0.15.4"), 0)
  T.eq(#run(de({ dynamic_batching = { enabled = true, max_tokens = 4096 } })), 0)
  T.eq(#run(de({ dynamic_batching = { enabled = true, max_tokens = " 4096 " } })), 0)
  T.eq(#run(de({ dynamic_batching = { enabled = true, max_tokens = "1_000" } })), 0)
  T.eq(#run(de({ dynamic_batching = { enabled = true, max_tokens = "4k" } })), 1)
  T.eq(#run(de({ dynamic_batching = { min_batch_size = "x" } })), 1)
  T.eq(#run(de({ dynamic_batching = { min_batch_size = NULL } })), 1)
  T.eq(#run(de({ dynamic_batching = { max_tokens = "x" } })), 0)   -- read only when enabled
end)

test("data_sampling and data_routing parts must be objects", function()
  T.eq(#run(de(array({}))), 1)
  T.eq(#run(base({ data_efficiency = { data_routing = { random_ltd = array({}) } } })), 1)
  T.eq(#run(base({ data_efficiency = { data_routing = { random_ltd = { enabled = true } } } })), 0)
end)

local EL = { enabled = true, max_train_batch_size = 64, micro_batch_sizes = array({ 2, 4 }),
             ignore_non_elastic_batch_info = true }
local function el(extra)
  local e = {}
  for k, v in pairs(EL) do e[k] = v end
  for k, v in pairs(extra) do e[k] = v end
  return { elasticity = e }
end

test("elasticity: ElasticityConfig's checks, only when enabled", function()
  T.eq(#run(el({})), 0)
  T.eq(#run(el({ micro_batch_sizes = array({ 2.0, 4 }) })), 0)   -- hjson reads 2.0 as 2
  local out = run(el({ micro_batch_sizes = array({ 2, 2.5 }) }))
  T.eq(#out, 1)
  T.eq(out[1].path, "elasticity.micro_batch_sizes.2")
  T.truthy(out[1].message:find("micro_batch_sizes[1] is 2.5", 1, true), out[1].message)
  T.eq(#run(el({ micro_batch_sizes = array({ 0 }) })), 1)
  T.eq(#run(el({ min_gpus = 0 })), 1)
  T.eq(#run(el({ min_gpus = 16, max_gpus = 8 })), 1)
  T.eq(#run(el({ min_gpus = 16 })), 0)                           -- max_gpus defaults to 10000
  T.eq(#run(el({ model_parallel_size = 0 })), 0)   -- the schema's bound (range_when)
  T.eq(#run(el({ min_time = -1 })), 1)
  T.eq(#run(el({ min_gpus = "x" })), 0)                  -- the schema's type-mismatch
  T.eq(#run(el({ version = 0.3 })), 1)
  T.eq(#run(el({ version = 0.1 })), 0)
  T.eq(#run(el({ version = 0.15 })), 1)
  T.eq(#run(el({ version = 0.1, model_parallel_size = 2 })), 1)
  T.eq(#run(el({ enabled = false, min_gpus = 0, model_parallel_size = 0 })), 0)
  T.eq(#run(el({ micro_batch_sizes = NULL })), 0)   -- the schema's type-mismatch says it
end)

test("autotuning directories must be true in Python, enabled or not", function()
  T.eq(#run(base({ autotuning = { results_dir = "" } })), 1)
  T.eq(#run(base({ autotuning = { exps_dir = NULL } })), 1)
  T.eq(#run(base({ autotuning = { results_dir = "r", exps_dir = "e" } })), 0)
end)

test("checkpoint.parallel_write.pipeline_stage: `in [True, False]`", function()
  for _, v in ipairs({ true, false, 1, 0, 1.0 }) do
    T.eq(#run(base({ checkpoint = { parallel_write = { pipeline_stage = v } } })), 0, tostring(v))
  end
  for _, v in ipairs({ "yes", 0.5, NULL }) do
    T.eq(#run(base({ checkpoint = { parallel_write = { pipeline_stage = v } } })), 1, tostring(v))
  end
end)

test("a shared_parameters right under compression_training: NameError, then the eigenvalue assert", function()
  local wq = { shared_parameters = { enabled = true }, different_groups = {} }
  local function top(shared, extra)
    local cfg = base({ compression_training = { shared_parameters = shared, weight_quantization = wq } })
    for k, v in pairs(extra or {}) do cfg[k] = v end
    return cfg
  end
  local out = run(top({ enabled = true }), "0.19.2")
  T.eq(#out, 1)
  T.truthy(out[1].message:find("NameError", 1, true), out[1].message)
  T.eq(#run(top({ enabled = true })), 0)
  T.eq(#run(top({ enabled = false }), "0.14.5"), 0)
  local on = { quantize_training = { eigenvalue = { enabled = true } } }
  out = run(top({ enabled = true }, on))
  T.eq(#out, 1)
  T.eq(out[1].path, "quantize_training.eigenvalue.enabled")
  T.eq(#run(top({ enabled = false }, on)), 0)
  T.eq(#run(top({ quantization_type = "bogus" })), 1)
end)

test("elasticity: micro batches above max_train_batch_size, v0.2's GPUs per node", function()
  local out = run(el({ micro_batch_sizes = array({ 2, 128 }) }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("elasticity/elasticity.py:109", 1, true), out[1].message)
  out = run(el({ model_parallel_size = 2, num_gpus_per_node = 3 }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("elasticity/elasticity.py:141", 1, true), out[1].message)
  T.eq(#run(el({ model_parallel_size = 2, num_gpus_per_node = 4 })), 0)
end)

-- The elastic batch DeepSpeed computes (compute_elastic_config and
-- DeepSpeedConfig's batch assertion) at world size 8: each case is a
-- conformance file (elasticity__*) with DeepSpeed's own verdict.
test("elasticity: the elastic batch at the world size, as DeepSpeed computes it", function()
  -- v0.2 (default): no batch of micro 3 fits 8 GPUs under 6: train batch 0
  local out = run(el({ max_train_batch_size = 6, micro_batch_sizes = array({ 3 }), max_gpus = 2 }))
  T.eq(#out, 1)
  T.eq(out[1].path, "elasticity.max_train_batch_size")
  T.truthy(out[1].message:find("'Train batch size: 0 has to be greater than 0' (runtime/config.py:918 at 0.19.5)",
    1, true), out[1].message)
  out = run(el({ max_train_batch_size = 6, micro_batch_sizes = array({ 3 }), max_gpus = 2 }), "0.14.5")
  T.truthy(out[1].message:find("(runtime/config.py:921 at 0.14.5)", 1, true), out[1].message)
  -- v0.1: 8 is not among the valid GPU counts
  out = run(el({ version = 0.1, max_train_batch_size = 6, micro_batch_sizes = array({ 3 }), max_gpus = 2 }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("the valid GPU counts are 1, 2;", 1, true), out[1].message)
  T.truthy(out[1].message:find("ElasticityIncompatibleWorldSize", 1, true), out[1].message)
  T.truthy(out[1].message:find("elasticity/elasticity.py:349", 1, true), out[1].message)
  -- v0.1 with no candidate counting a GPU number: None
  out = run(el({ version = 0.1, max_train_batch_size = 6, micro_batch_sizes = array({ 4 }), min_gpus = 2 }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("TypeError", 1, true), out[1].message)
  out = run(el({ max_train_batch_size = 6, micro_batch_sizes = array({ 5 }), min_gpus = 2 }))
  T.eq(#out, 1)
  T.truthy(out[1].message:find("elasticity/elasticity.py:167", 1, true), out[1].message)
  -- prefer_larger_batch false picks the smallest candidate
  out = run(el({ max_train_batch_size = 6, micro_batch_sizes = array({ 4, 2, 3 }), prefer_larger_batch = false }))
  T.eq(#out, 1)
  -- batches that fit: accepted (64 over 8 GPUs; nodes of 4 with model parallel 2)
  T.eq(#run(el({})), 0)
  T.eq(#run(el({ version = 0.1 })), 0)
  T.eq(#run(el({ max_train_batch_size = 96, prefer_larger_batch = false })), 0)
  T.eq(#run(el({ max_train_batch_size = 512, num_gpus_per_node = 4, model_parallel_size = 2, max_gpus = 64 })), 0)
  -- the world size decides: the same file fits 2 GPUs
  local cfg = el({ version = 0.1, max_train_batch_size = 6, micro_batch_sizes = array({ 3 }), max_gpus = 2 })
  local n = 0
  for _, r in ipairs(require("deepspeed.rules_sections").rules) do
    r.check(cfg, { params = { world_size = 2 }, target = "deepspeed", report = function() n = n + 1 end })
  end
  T.eq(n, 0)
  -- no world size given: not computed
  for _, r in ipairs(require("deepspeed.rules_sections").rules) do
    r.check(cfg, { params = {}, target = "deepspeed", report = function() n = n + 1 end })
  end
  T.eq(n, 0)
end)

-- WarmupLR._format_param and LRRangeTest.__init__ take a list with one
-- value per param group (one: the engine verdicts' optimizer); the
-- conformance files scheduler__*_list1/_list2 hold DeepSpeed's verdicts.
test("scheduler params: a list with one value per param group", function()
  local function sch(t, params) return base({ scheduler = { type = t, params = params } }) end
  T.eq(#run(sch("WarmupLR", { warmup_min_lr = array({ 0 }) })), 0)
  local out = run(sch("WarmupLR", { warmup_min_lr = array({ 0, 0 }) }))
  T.eq(#out, 1)
  T.eq(out[1].id, "scheduler-param-groups")
  T.eq(out[1].path, "scheduler.params.warmup_min_lr")
  T.truthy(out[1].message:find("(runtime/lr_schedules.py:755 at 0.19.5)", 1, true), out[1].message)
  out = run(sch("WarmupDecayLR", { warmup_max_lr = array({}) }), "0.17.6")
  T.eq(#out, 1)
  T.truthy(out[1].message:find("(runtime/lr_schedules.py:720 at 0.17.6)", 1, true), out[1].message)
  out = run(sch("LRRangeTest", { lr_range_test_min_lr = array({ 1e-5, 1e-4 }) }), "0.14.5")
  T.eq(#out, 1)
  T.truthy(out[1].message:find("(runtime/lr_schedules.py:318 at 0.14.5)", 1, true), out[1].message)
  T.eq(#run(sch("LRRangeTest", { lr_range_test_min_lr = 1e-5 })), 0)
  -- another scheduler's params, or a torch one's: not these constructors
  T.eq(#run(sch("OneCycle", { warmup_min_lr = array({ 0, 0 }) })), 0)
  T.eq(#run(sch("StepLR", { warmup_min_lr = array({ 0, 0 }) })), 0)
end)

return tests
