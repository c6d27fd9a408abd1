-- Unit tests for plugins/deepspeed/hf.lua (HF Trainer "auto" handling).

local NULL = dsforge.null
local fixtures = require("fixtures.configs")

local function full_inputs()
  return {
    world_size = 8, micro_batch_size = 4, gradient_accumulation = 2, max_grad_norm = 1.0,
    learning_rate = 2e-5, adam_beta1 = 0.9, adam_beta2 = 0.95, adam_epsilon = 1e-8,
    weight_decay = 0.1, precision = "bf16", hidden_size = 4096, num_training_steps = 1000,
    warmup_steps = 0, warmup_ratio = 0.03, save_on_each_node = false,
  }
end

local function llava_zero3_offload() return fixtures.real("llava__zero3_offload") end
local function llava_zero2() return fixtures.real("llava__zero2") end
local seed002_zero2 = fixtures.seed002_zero2

local function count_auto(v)
  if v == "auto" then return 1 end
  if type(v) ~= "table" or v == NULL then return 0 end
  local n = 0
  for _, k in ipairs(dsforge.sorted_keys(v)) do n = n + count_auto(v[k]) end
  return n
end

local function paths(list)
  local out = {}
  for _, m in ipairs(list) do out[#out + 1] = m.path .. (m.needs and (":" .. m.needs) or "") end
  return out
end

local function rule_errors(cfg, target, w)
  local out = {}
  for _, r in ipairs(require("deepspeed.rules").rules) do
    if r.check then
      r.check(cfg, { params = { world_size = w }, target = target, report = function(rep)
        local id = rep.rule or r.id
        local sev = rep.severity or r.severity
        if id ~= r.id then
          for _, d in ipairs(require("deepspeed.rules").rules) do
            if d.id == id then sev = rep.severity or d.severity end
          end
        end
        if sev == "error" then out[#out + 1] = id end
      end })
    end
  end
  return out
end

return {
  auto_keys_list_every_hf_filled_path = function()
    local hf = require("deepspeed.hf")
    local seen = {}
    for _, k in ipairs(hf.auto_keys) do
      T.truthy(type(k.path) == "string" and type(k.description) == "string" and #k.description > 0)
      T.truthy(type(k.inputs) == "table" and type(k.match) == "boolean", k.path)
      T.falsy(seen[k.path], "duplicate " .. k.path)
      seen[k.path] = true
    end
    for _, p in ipairs({ "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
      "train_batch_size", "gradient_clipping", "optimizer.params.lr", "optimizer.params.betas",
      "optimizer.params.eps", "optimizer.params.weight_decay", "scheduler.params.warmup_min_lr",
      "scheduler.params.warmup_max_lr", "fp16.enabled", "bf16.enabled",
      "zero_optimization.reduce_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
      "zero_optimization.stage3_param_persistence_threshold", "scheduler.params.total_num_steps",
      "scheduler.params.warmup_num_steps" }) do
      T.truthy(seen[p], p)
    end
  end,

  resolve_fills_everything_like_the_trainer = function()
    local hf = require("deepspeed.hf")
    local cfg = llava_zero3_offload()
    local new, missing, mismatches = hf.resolve(cfg, full_inputs())
    T.eq(missing, {})
    T.eq(mismatches, {})
    T.eq(count_auto(new), 0)
    T.eq(new.train_micro_batch_size_per_gpu, 4)
    T.eq(new.gradient_accumulation_steps, 2)
    T.eq(new.train_batch_size, 64)
    T.eq(new.gradient_clipping, 1.0)
    T.eq(new.optimizer.params, { lr = 2e-5, betas = { 0.9, 0.95 }, eps = 1e-8, weight_decay = 0.1 })
    T.eq(new.scheduler.params, { warmup_min_lr = 0, warmup_max_lr = 2e-5, warmup_num_steps = 30 })
    T.eq(new.fp16.enabled, false)
    T.eq(new.bf16.enabled, true)
    T.eq(new.zero_optimization.reduce_bucket_size, 4096 * 4096)
    T.eq(new.zero_optimization.stage3_param_persistence_threshold, 40960)
    -- the input is not modified
    T.eq(cfg.train_batch_size, "auto")
    T.eq(cfg.zero_optimization.reduce_bucket_size, "auto")
    -- the resolved config passes every rule at plain-DeepSpeed level
    T.eq(rule_errors(new, "deepspeed", 8), {})
  end,

  prefetch_bucket_is_an_integer_not_a_float = function()
    local hf = require("deepspeed.hf")
    local new = hf.resolve(llava_zero3_offload(), full_inputs())
    local v = new.zero_optimization.stage3_prefetch_bucket_size
    -- 0.9 * 4096^2 = 15099494.4; older transformers wrote that float and
    -- pydantic rejected it (DeepSpeed issue #6525)
    T.eq(math.type(v), "integer")
    T.eq(v, 15099494)
    local inputs = full_inputs()
    inputs.hidden_size = 5120
    new = hf.resolve(llava_zero3_offload(), inputs)
    T.eq(new.zero_optimization.stage3_prefetch_bucket_size, 23592960)
    T.eq(math.type(new.zero_optimization.stage3_prefetch_bucket_size), "integer")
    T.eq(math.type(new.zero_optimization.reduce_bucket_size), "integer")
  end,

  stage3_keys_only_filled_at_zero3 = function()
    local hf = require("deepspeed.hf")
    local cfg = llava_zero2()
    cfg.zero_optimization.stage3_prefetch_bucket_size = "auto"
    local new, missing = hf.resolve(cfg, full_inputs())
    T.eq(new.zero_optimization.reduce_bucket_size, 16777216)
    T.eq(new.zero_optimization.stage3_prefetch_bucket_size, "auto")
    T.eq(#missing, 1)
    T.eq(missing[1].path, "zero_optimization.stage3_prefetch_bucket_size")
    T.eq(missing[1].needs, nil)
    T.truthy(missing[1].reason:find("stage is 3 (it is 2)", 1, true), missing[1].reason)
    -- HF's is_zero3 compares stage == 3 in Python: "3" is not 3
    cfg = llava_zero3_offload()
    cfg.zero_optimization.stage = "3"
    new = hf.resolve(cfg, full_inputs())
    T.eq(new.zero_optimization.stage3_prefetch_bucket_size, "auto")
    cfg.zero_optimization.stage = 3.0
    new = hf.resolve(cfg, full_inputs())
    T.eq(new.zero_optimization.stage3_prefetch_bucket_size, 15099494)
  end,

  missing_inputs_are_listed_sorted_and_left_auto = function()
    local hf = require("deepspeed.hf")
    local new, missing = hf.resolve(llava_zero3_offload(), { world_size = 2, precision = "fp16" })
    T.eq(paths(missing), {
      "gradient_accumulation_steps:gradient_accumulation",
      "gradient_clipping:max_grad_norm",
      "optimizer.params.betas:adam_beta1",
      "optimizer.params.betas:adam_beta2",
      "optimizer.params.eps:adam_epsilon",
      "optimizer.params.lr:learning_rate",
      "optimizer.params.weight_decay:weight_decay",
      "scheduler.params.warmup_max_lr:learning_rate",
      "scheduler.params.warmup_num_steps:warmup_steps",
      "train_batch_size:gradient_accumulation",
      "train_batch_size:micro_batch_size",
      "train_micro_batch_size_per_gpu:micro_batch_size",
      "zero_optimization.reduce_bucket_size:hidden_size",
      "zero_optimization.stage3_param_persistence_threshold:hidden_size",
      "zero_optimization.stage3_prefetch_bucket_size:hidden_size",
    })
    T.eq(new.train_batch_size, "auto")
    T.eq(new.fp16.enabled, true)
    T.eq(new.bf16.enabled, false)
    T.eq(new.scheduler.params.warmup_min_lr, 0)
  end,

  auto_on_keys_hf_never_fills = function()
    local hf = require("deepspeed.hf")
    local cfg = { train_micro_batch_size_per_gpu = 2, steps_per_print = "auto",
      zero_optimization = { stage = "auto", offload_optimizer = { device = "auto" } },
      amp = { enabled = "auto" }, optimizer = { type = "AdamW", params = { betas = { "auto", 0.999 } } } }
    local new, missing = hf.resolve(cfg, full_inputs())
    T.eq(paths(missing), { "amp.enabled", "optimizer.params.betas[0]", "steps_per_print",
      "zero_optimization.offload_optimizer.device", "zero_optimization.stage" })
    for _, m in ipairs(missing) do
      T.eq(m.needs, nil)
      T.truthy(type(m.reason) == "string" and #m.reason > 10, m.path)
    end
    T.truthy(missing[5].reason:find("drops", 1, true), missing[5].reason)
    T.truthy(missing[3].reason:find("fails", 1, true), missing[3].reason)
    T.eq(new.steps_per_print, "auto")
  end,

  hf_never_adds_missing_keys = function()
    local hf = require("deepspeed.hf")
    local cfg = dsforge.object({})
    local new, missing, mism = hf.resolve(cfg, full_inputs())
    T.eq(dsforge.kind(new), "object")
    T.eq(next(new), nil)
    T.eq(missing, {})
    T.eq(mism, {})
    new = hf.resolve({ zero_optimization = { stage = 2 }, fp16 = dsforge.object({}) }, full_inputs())
    T.eq(new.zero_optimization, { stage = 2 })
    T.eq(dsforge.kind(new.fp16), "object", "empty objects keep their marker in the copy")
  end,

  mismatches_mirror_the_trainer_value_error = function()
    local hf = require("deepspeed.hf")
    local cfg = { train_micro_batch_size_per_gpu = 4, gradient_accumulation_steps = 4,
      train_batch_size = 128, gradient_clipping = 1, fp16 = { enabled = true },
      bf16 = { enabled = 1 }, optimizer = { params = { betas = { 0.9, 0.95 }, lr = 3e-5 } },
      scheduler = { params = { warmup_min_lr = 1e-6, total_num_steps = NULL } } }
    local _, _, mism = hf.resolve(cfg, full_inputs())
    T.eq(paths(mism), { "fp16.enabled", "gradient_accumulation_steps",
      "optimizer.params.lr", "train_batch_size" })
    T.eq(mism[2].message, "- ds gradient_accumulation_steps=4 vs hf gradient_accumulation_steps=2")
    T.eq(mism[1].message, "- ds fp16.enabled=True vs hf fp16|fp16_full_eval=False")
    T.eq(mism[4].config, 128)
    T.eq(mism[4].hf, 64)
    -- auto_find_batch_size turns off the micro/total comparison only
    local inputs = full_inputs()
    inputs.auto_find_batch_size = true
    _, _, mism = hf.resolve(cfg, inputs)
    T.eq(paths(mism), { "fp16.enabled", "gradient_accumulation_steps", "optimizer.params.lr" })
  end,

  warmup_steps_follow_get_warmup_steps = function()
    local hf = require("deepspeed.hf")
    local cfg = { scheduler = { type = "WarmupDecayLR", params = { total_num_steps = "auto",
      warmup_num_steps = "auto" } } }
    local function warm(ws, wr, n)
      local new, missing = hf.resolve(cfg, { warmup_steps = ws, warmup_ratio = wr, num_training_steps = n })
      return new.scheduler.params.warmup_num_steps, missing
    end
    T.eq(warm(50, 0.5, 1000), 50)
    T.eq(warm(0, 0.03, 1000), 30)
    T.eq(warm(0, 0.1, 1001), 101)
    T.eq(math.type((warm(0, 0.1, 1001))), "integer")
    T.eq(warm(nil, 0.05, 200), 10)
    T.eq(warm(0, 0.0, 200), 0)
    local v, missing = warm(nil, nil, 200)
    T.eq(v, "auto")
    T.eq(paths(missing), { "scheduler.params.warmup_num_steps:warmup_steps" })
    v, missing = warm(0, 0.1, nil)
    T.eq(paths(missing), { "scheduler.params.total_num_steps:num_training_steps",
      "scheduler.params.warmup_num_steps:num_training_steps" })
    -- warmup_steps > 0 needs no step count
    v = warm(7, nil, nil)
    T.eq(v, 7)
  end,

  save_on_each_node_sets_node_local_storage = function()
    local hf = require("deepspeed.hf")
    local inputs = full_inputs()
    inputs.save_on_each_node = true
    local new = hf.resolve({ train_batch_size = 64 }, inputs)
    T.eq(new.checkpoint, { use_node_local_storage = true })
    new = hf.resolve({ checkpoint = { use_node_local_storage = false, tag_validation = "WARN" } }, inputs)
    T.eq(new.checkpoint, { use_node_local_storage = true, tag_validation = "WARN" })
    local _, missing = hf.resolve({ checkpoint = { use_node_local_storage = "auto" } }, {})
    T.eq(paths(missing), { "checkpoint.use_node_local_storage:save_on_each_node" })
    _, missing = hf.resolve({ checkpoint = { use_node_local_storage = "auto" } }, { save_on_each_node = false })
    T.eq(missing[1].needs, nil)
    T.truthy(missing[1].reason:find("save_on_each_node", 1, true))
  end,

  seed002_and_realworld_resolve_completely = function()
    local hf = require("deepspeed.hf")
    local inputs = full_inputs()
    inputs.precision = "fp16"
    for _, cfg in ipairs({ seed002_zero2(), llava_zero2(), llava_zero3_offload() }) do
      local new, missing, mism = hf.resolve(cfg, inputs)
      T.eq(missing, {})
      T.eq(mism, {})
      T.eq(count_auto(new), 0)
      T.eq(new.train_batch_size, 64)
    end
    local new = hf.resolve(seed002_zero2(), inputs)
    T.eq(new.scheduler.params.total_num_steps, 1000)
    T.eq(new.scheduler.params.last_batch_iteration, -1)
    T.eq(new.fp16.enabled, true)
  end,

  bad_inputs_raise = function()
    local hf = require("deepspeed.hf")
    T.errors(function() hf.resolve({}, { precision = "bfloat16" }) end, "precision")
    T.errors(function() hf.resolve({}, { micro_batch_size = "8" }) end, "micro_batch_size")
    T.errors(function() hf.resolve({}, { hidden_size = 4096.5 }) end, "hidden_size must be an integer")
    T.errors(function() hf.resolve({}, { save_on_each_node = 1 }) end, "save_on_each_node")
    T.errors(function() hf.resolve({}, "inputs") end, "inputs must be a table")
  end,

  with_defaults_uses_training_arguments_defaults = function()
    local hf = require("deepspeed.hf")
    local d = hf.with_defaults({ learning_rate = 1e-4, world_size = 4 })
    T.eq(d.learning_rate, 1e-4)
    T.eq(d.world_size, 4)
    T.eq(d.micro_batch_size, 8)
    T.eq(d.adam_beta2, 0.999)
    T.eq(d.precision, "fp32")
    T.eq(d.hidden_size, nil)
    local new, missing = hf.resolve(llava_zero2(), d)
    T.eq(paths(missing), { "zero_optimization.reduce_bucket_size:hidden_size" })
    T.eq(new.train_batch_size, 32)
    T.eq(new.fp16.enabled, false)
  end,

  training_args_match_the_resolved_config = function()
    local hf = require("deepspeed.hf")
    local new = hf.resolve(llava_zero3_offload(), full_inputs())
    local args = hf.training_args(new)
    T.eq(args, { per_device_train_batch_size = 4, gradient_accumulation_steps = 2, bf16 = true,
      fp16 = false, gradient_checkpointing = false, max_grad_norm = 1.0 })
    T.eq(hf.training_args(new, { gradient_checkpointing = true, world_size = 8 }).gradient_checkpointing, true)
    -- round trip: TrainingArguments built from args cannot mismatch the config
    local inputs = full_inputs()
    inputs.micro_batch_size = args.per_device_train_batch_size
    inputs.gradient_accumulation = args.gradient_accumulation_steps
    inputs.max_grad_norm = args.max_grad_norm
    inputs.precision = args.bf16 and "bf16" or (args.fp16 and "fp16" or "fp32")
    local _, _, mism = hf.resolve(new, inputs)
    T.eq(mism, {})
    local o = hf.optimizer_args(new)
    T.eq(o, { learning_rate = 2e-5, adam_beta1 = 0.9, adam_beta2 = 0.95, adam_epsilon = 1e-8,
      weight_decay = 0.1 })
  end,

  training_args_derive_and_default = function()
    local hf = require("deepspeed.hf")
    local args = hf.training_args({ train_batch_size = 64, train_micro_batch_size_per_gpu = 4,
      fp16 = { enabled = true }, gradient_clipping = 0.5 }, { world_size = 8 })
    T.eq(args, { per_device_train_batch_size = 4, gradient_accumulation_steps = 2, bf16 = false,
      fp16 = true, gradient_checkpointing = false, max_grad_norm = 0.5 })
    args = hf.training_args({ train_micro_batch_size_per_gpu = 2 })
    T.eq(args.gradient_accumulation_steps, 1)
    T.eq(args.max_grad_norm, 1.0)
    T.eq(args.bf16, false)
    args = hf.training_args({ train_micro_batch_size_per_gpu = 2, bfloat16 = { enabled = true } })
    T.eq(args.bf16, true)
    args = hf.training_args({ train_batch_size = 64 }, { world_size = 4 })
    T.eq(args.per_device_train_batch_size, 16)
  end,

  training_args_refuse_what_cannot_match = function()
    local hf = require("deepspeed.hf")
    local a, msg = hf.training_args(llava_zero2())
    T.eq(a, nil)
    T.truthy(msg:find("resolve", 1, true), msg)
    a, msg = hf.training_args({ train_micro_batch_size_per_gpu = 2, bf16 = { enabled = "true" } })
    T.eq(a, nil)
    T.truthy(msg:find("Python bool", 1, true), msg)
    a, msg = hf.training_args({ train_batch_size = 64 })
    T.eq(a, nil)
    T.truthy(msg:find("world_size", 1, true), msg)
    a, msg = hf.training_args({ train_batch_size = 33, train_micro_batch_size_per_gpu = 17,
      gradient_accumulation_steps = 2 }, { world_size = 2 })
    T.eq(a, nil)
    T.truthy(msg:find("33 != 17 * 2 * 2", 1, true), msg)
    a, msg = hf.training_args({ train_micro_batch_size_per_gpu = 2, gradient_clipping = "auto" })
    T.eq(a, nil)
    a, msg = hf.training_args({ gradient_accumulation_steps = 2 })
    T.truthy(msg:find("Either train_batch_size", 1, true), msg)
    a, msg = hf.training_args({ train_micro_batch_size_per_gpu = 2, fp16 = { enabled = true },
      bf16 = { enabled = true } })
    T.eq(a, nil)
    T.eq(hf.training_args("x"), nil)
  end,

  pyeq_follows_python = function()
    local hf = require("deepspeed.hf")
    T.truthy(hf.pyeq(1, 1.0))
    T.truthy(hf.pyeq(true, 1))
    T.truthy(hf.pyeq(false, 0))
    T.falsy(hf.pyeq("true", true))
    T.truthy(hf.pyeq({ 0.9, 0.999 }, dsforge.array({ 0.9, 0.999 })))
    T.falsy(hf.pyeq({ 0.9 }, { 0.9, 0.999 }))
    T.falsy(hf.pyeq(NULL, 0))
    T.truthy(hf.pyeq(NULL, NULL))
  end,

  find_autos_lists_every_auto_with_its_path = function()
    local hf = require("deepspeed.hf")
    local cfg = { a = "auto", b = { c = "auto", d = 1 }, e = { "x", "auto", { f = "auto" } } }
    local got = {}
    for _, a in ipairs(hf.find_autos(cfg)) do
      T.eq(rawget(a.node, a.key), "auto")
      got[#got + 1] = a.path .. "@" .. tostring(a.first)
    end
    table.sort(got)
    T.eq(table.concat(got, " "), "a@a b.c@b e[1]@e e[2].f@e")
    T.eq(#hf.find_autos({ x = 1 }), 0)
    T.eq(#hf.find_autos({ "auto" }), 0) -- an array is not a config
  end,

  resolve_own_fills_in_place_as_resolve_does = function()
    local hf = require("deepspeed.hf")
    for _, mk in ipairs({ llava_zero3_offload, llava_zero2 }) do
      for _, inputs in ipairs({ full_inputs(), { world_size = 8 } }) do
        local new, missing, mism = hf.resolve(mk(), inputs)
        local own = mk()
        local same, missing2, mism2 = hf.resolve_own(own, inputs, hf.find_autos(own))
        T.truthy(same == own)
        T.truthy(hf.pyeq(new, own))
        T.eq(table.concat(paths(missing), " "), table.concat(paths(missing2), " "))
        T.eq(#mism, #mism2)
      end
    end
  end,
}
