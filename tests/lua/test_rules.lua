-- Unit tests for plugins/deepspeed/rules.lua (cross-field rules and lint).

local NULL = dsforge.null
local fixtures = require("fixtures.configs")
local SEVERITIES = { error = true, warning = true, note = true }

-- Runs every rule the way the C core does and returns the reports, each
-- { id, severity, path, message, fix }. Fails on undeclared ids, missing
-- messages/fixes and malformed paths.
local function run(cfg, target, w, ds_version)
  local rules = require("deepspeed.rules").rules
  local declared = {}
  for _, r in ipairs(rules) do declared[r.id] = r end
  local out = {}
  for _, r in ipairs(rules) do
    if r.check then
      local ctx = { params = { world_size = w or 1 }, target = target or "deepspeed",
                    ds_version = ds_version }
      ctx.report = function(rep)
        local id = rep.rule or r.id
        local d = declared[id]
        if not d then T.fail("rule " .. r.id .. " emitted undeclared id " .. tostring(id)) end
        T.truthy(type(rep.message) == "string" and #rep.message > 20, id .. ": message")
        T.truthy(type(rep.fix) == "string" and #rep.fix > 5, id .. ": fix")
        T.truthy(type(rep.path) == "table", id .. ": path")
        for i, k in ipairs(rep.path) do
          T.truthy(type(k) == "string" or math.type(k) == "integer", id .. ": path element " .. i)
        end
        local sev = rep.severity or d.severity
        T.truthy(SEVERITIES[sev], id .. ": severity")
        out[#out + 1] = { id = id, severity = sev, path = rep.path, message = rep.message, fix = rep.fix }
      end
      r.check(cfg, ctx)
    end
  end
  return out
end

local function find(out, id)
  local hits = {}
  for _, r in ipairs(out) do if r.id == id then hits[#hits + 1] = r end end
  return hits
end

local function has(out, id) return #find(out, id) > 0 end

local function errors(out)
  local e = {}
  for _, r in ipairs(out) do
    if r.severity == "error" then e[#e + 1] = r.id .. ": " .. r.message end
  end
  return e
end

local function ids(out)
  local s = {}
  for _, r in ipairs(out) do s[#s + 1] = r.id end
  return table.concat(s, ",")
end

-- Seed 003's original config (8 GPUs x 8 x 4 = 256), with the two values
-- its problem table names: overlap_comm false and steps_per_print 2000.
local function seed003()
  return {
    train_batch_size = 256, train_micro_batch_size_per_gpu = 8, gradient_accumulation_steps = 4,
    zero_optimization = { stage = 2, allgather_partitions = true, allgather_bucket_size = 5e8,
      overlap_comm = false, reduce_scatter = true, reduce_bucket_size = 5e8,
      contiguous_gradients = true, round_robin_gradients = true },
    bf16 = { enabled = true },
    gradient_clipping = 1.0,
    steps_per_print = 2000,
  }
end

return {
  every_rule_is_declared_well = function()
    local rules = require("deepspeed.rules").rules
    local seen = {}
    T.truthy(#rules >= 30, "rule count " .. #rules)
    for _, r in ipairs(rules) do
      T.truthy(type(r.id) == "string" and r.id:match("^[a-z0-9]+[a-z0-9-]*$"), tostring(r.id))
      T.falsy(seen[r.id], "duplicate id " .. r.id)
      seen[r.id] = true
      T.truthy(SEVERITIES[r.severity], r.id .. " severity")
      T.truthy(type(r.summary) == "string" and #r.summary > 10, r.id .. " summary")
      T.truthy(type(r.fix) == "string" and #r.fix > 5, r.id .. " fix")
      T.truthy(r.check == nil or type(r.check) == "function", r.id .. " check")
    end
    T.truthy(seen["batch-derived"] and seen["batch-identity"] and seen["batch-missing"])
  end,

  -- rules.lua runs the optimizer and scheduler rules' checks (rules_optim)
  -- only for a config with one of those sections: each check must then
  -- find nothing without them, whatever else the config holds, at either
  -- target and any release.
  optimizer_and_scheduler_checks_find_nothing_without_their_sections = function()
    local checks = require("deepspeed.rules_optim").check
    local n = 0
    for _, name in ipairs(fixtures.real_names()) do
      local cfg = fixtures.real(name)
      cfg.optimizer, cfg.scheduler = nil, nil
      for _, target in ipairs({ "hf", "deepspeed" }) do
        for _, v in ipairs({ "0.14.5", "0.19.5" }) do
          for id, check in pairs(checks) do
            local ctx = { params = { world_size = 8 }, target = target, ds_version = v }
            ctx.report = function(rep)
              T.fail(id .. " reported on " .. name .. " without optimizer or scheduler: "
                .. tostring(rep.message))
            end
            check(cfg, ctx)
            n = n + 1
          end
        end
      end
    end
    T.truthy(n >= 7 * 2 * 2 * 11, "checks run: " .. n)
    -- and with the sections, the gate runs them: an unknown optimizer is found
    local cfg = fixtures.real("axolotl__zero1")
    cfg.optimizer = { type = "NoSuchOptim" }
    T.truthy(has(run(cfg, "deepspeed", 8), "unknown-optimizer"))
    cfg.optimizer, cfg.scheduler = nil, { type = "NoSuchSched" }
    T.truthy(has(run(cfg, "deepspeed", 8), "unknown-scheduler"))
  end,

  realworld_configs_have_no_errors_at_target_hf = function()
    local names = fixtures.real_names()
    T.eq(#names, 7)
    for _, name in ipairs(names) do
      for _, w in ipairs({ 1, 2, 8 }) do
        T.eq(errors(run(fixtures.real(name), "hf", w)), {}, name .. " at world size " .. w)
      end
    end
  end,

  realworld_lint_is_what_we_expect = function()
    local out = run(fixtures.real("llama-factory__ds_z2_offload_config"), "hf", 8)
    T.eq(find(out, "overlap-comm-off")[1].severity, "warning")
    out = run(fixtures.real("axolotl__zero1"), "hf", 8)
    T.truthy(has(out, "overlap-comm-ignored"))
    out = run(fixtures.real("llama-factory__ds_z3_fp8_config"), "hf", 8)
    T.truthy(has(out, "offload-pin-memory"))
    T.falsy(has(out, "steps-per-print"), "huge steps_per_print is normal under the HF Trainer")
    out = run(fixtures.real("llava__zero2"), "hf", 8)
    T.eq(find(out, "stage3-option-ignored")[1].path, { "zero_optimization", "sub_group_size" })
  end,

  seed002_zero2_example_offload_param_ignored = function()
    for _, target in ipairs({ "hf", "deepspeed" }) do
      local out = run(fixtures.seed002_zero2(), target, 8)
      local hits = find(out, "offload-param-ignored")
      T.eq(#hits, 1, target)
      -- DeepSpeed accepts it and ignores the section: a warning
      T.eq(hits[1].severity, "warning")
      T.eq(hits[1].path, { "zero_optimization", "offload_param" })
      T.truthy(hits[1].message:find("stage 2", 1, true))
    end
    -- under HF, total_num_steps "auto" is filled by the Trainer; plain DeepSpeed crashes
    T.falsy(has(run(fixtures.seed002_zero2(), "hf", 8), "scheduler-missing-param"))
    T.truthy(has(run(fixtures.seed002_zero2(), "deepspeed", 8), "scheduler-missing-param"))
  end,

  seed003_original_overlap_comm_off = function()
    local out = run(seed003(), "deepspeed", 8)
    local hits = find(out, "overlap-comm-off")
    T.eq(#hits, 1)
    T.eq(hits[1].severity, "warning")
    T.eq(hits[1].path, { "zero_optimization", "overlap_comm" })
    -- steps_per_print 2000 is a legitimate choice: no report
    T.falsy(has(out, "steps-per-print"))
    -- 8 x 4 x 8 = 256: the batch is consistent at 8 GPUs, no derivation
    T.falsy(has(out, "batch-identity"))
    T.falsy(has(out, "batch-derived"))
    T.eq(errors(out), {})
    -- the optimizer comes from the script in seed 003: plain DeepSpeed warns
    T.truthy(has(out, "zero-no-optimizer"))
    -- the same file on 4 GPUs fails DeepSpeed's batch assertion
    out = run(seed003(), "deepspeed", 4)
    local b = find(out, "batch-identity")
    T.eq(#b, 1)
    T.truthy(b[1].message:find("256 != 8 * 4 * 4", 1, true), b[1].message)
    T.truthy(b[1].fix:find("128", 1, true), b[1].fix)
    -- the optimized version (overlap_comm true) is clean
    local fixed = seed003()
    fixed.zero_optimization.overlap_comm = true
    T.falsy(has(run(fixed, "deepspeed", 8), "overlap-comm-off"))
  end,

  batch_identity_and_derived = function()
    local out = run({ train_batch_size = 33, train_micro_batch_size_per_gpu = 17,
      gradient_accumulation_steps = 2 }, "deepspeed", 2)
    local b = find(out, "batch-identity")
    T.eq(#b, 1)
    T.eq(b[1].path, { "train_batch_size" })
    T.truthy(b[1].message:find("Check batch related parameters", 1, true))
    T.truthy(b[1].fix:find("68", 1, true))
    out = run({ train_batch_size = 32, train_micro_batch_size_per_gpu = 16,
      gradient_accumulation_steps = 1 }, "deepspeed", 2)
    T.falsy(has(out, "batch-identity"))
    T.falsy(has(out, "batch-derived"))
    -- derived values are notes, one per derived key, pointing at the key
    out = run({ train_batch_size = 256, train_micro_batch_size_per_gpu = 8 }, "deepspeed", 8)
    local d = find(out, "batch-derived")
    T.eq(#d, 1)
    T.eq(d[1].severity, "note")
    T.eq(d[1].path, { "gradient_accumulation_steps" })
    T.truthy(d[1].message:find("256 // 8 // 8 = 4", 1, true), d[1].message)
    T.truthy(d[1].fix:find("\"gradient_accumulation_steps\": 4", 1, true))
    out = run({ train_batch_size = 64 }, "deepspeed", 1)
    T.eq(#find(out, "batch-derived"), 2)
    -- floor to zero blames the given train_batch_size
    out = run({ train_batch_size = 8, train_micro_batch_size_per_gpu = 16 }, "deepspeed", 1)
    T.eq(find(out, "batch-identity")[1].path, { "train_batch_size" })
    -- divide by zero is a crash, blamed on the divisor
    out = run({ train_batch_size = 8, train_micro_batch_size_per_gpu = 0 }, "deepspeed", 1)
    b = find(out, "batch-identity")[1]
    T.eq(b.path, { "train_micro_batch_size_per_gpu" })
    T.truthy(b.message:find("ZeroDivisionError", 1, true))
  end,

  batch_rules_skip_non_numbers_and_elasticity = function()
    -- (a bool is not skipped: DeepSpeed computes with it as 0/1, see
    -- batch_bools_are_python_ints)
    for _, v in ipairs({ "auto", "32", NULL }) do
      local out = run({ train_batch_size = v, train_micro_batch_size_per_gpu = 17,
        gradient_accumulation_steps = 2 }, "deepspeed", 2)
      if v == NULL then
        -- null is "not given": TB derived from 17 * 2 * 2
        T.falsy(has(out, "batch-identity"))
        T.truthy(has(out, "batch-derived"))
      else
        T.falsy(has(out, "batch-identity"), tostring(v))
        T.falsy(has(out, "batch-derived"), tostring(v))
      end
    end
    local out = run({ train_batch_size = 33, train_micro_batch_size_per_gpu = 17,
      elasticity = { enabled = true, ignore_non_elastic_batch_info = true } }, "deepspeed", 2)
    T.falsy(has(out, "batch-identity"), "elasticity overrides the batch keys")
  end,

  batch_missing_at_both_targets = function()
    local out = run({ gradient_accumulation_steps = 4 }, "deepspeed", 2)
    local m = find(out, "batch-missing")
    T.eq(#m, 1)
    T.truthy(m[1].message:find("Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided", 1, true))
    T.truthy(has(run({}, "deepspeed", 1), "batch-missing"))
    T.truthy(has(run({ train_batch_size = NULL }, "deepspeed", 1), "batch-missing"))
    -- the HF Trainer only replaces "auto": it never adds the batch keys
    local hf = find(run({ gradient_accumulation_steps = 4 }, "hf", 2), "batch-missing")
    T.eq(#hf, 1)
    T.truthy(hf[1].message:find("does not add a missing key", 1, true))
    T.falsy(has(run({ train_micro_batch_size_per_gpu = "auto" }, "hf", 2), "batch-missing"))
    T.falsy(has(run({ train_micro_batch_size_per_gpu = 4 }, "deepspeed", 2), "batch-missing"))
    T.falsy(has(run({ train_batch_size = "auto" }, "deepspeed", 2), "batch-missing"))
  end,

  precision_conflict = function()
    for _, pair in ipairs({ { true, true }, { "true", "yes" }, { 1, true } }) do
      local out = run({ fp16 = { enabled = pair[1] }, bf16 = { enabled = pair[2] } })
      T.eq(#find(out, "precision-conflict"), 1, tostring(pair[1]) .. "/" .. tostring(pair[2]))
    end
    local out = run({ fp16 = { enabled = true }, bfloat16 = { enabled = true } })
    T.eq(find(out, "precision-conflict")[1].path, { "bfloat16", "enabled" })
    -- bf16 wins over bfloat16
    T.falsy(has(run({ fp16 = { enabled = true }, bf16 = { enabled = false },
      bfloat16 = { enabled = true } }), "precision-conflict"))
    T.falsy(has(run({ fp16 = { enabled = "auto" }, bf16 = { enabled = "auto" } }, "hf"), "precision-conflict"))
    T.falsy(has(run({ fp16 = { enabled = "auto" }, bf16 = { enabled = true } }, "hf"), "precision-conflict"))
    T.falsy(has(run({ fp16 = { enabled = false }, bf16 = { enabled = true } }), "precision-conflict"))
    T.falsy(has(run({ fp16 = { enabled = 2 }, bf16 = { enabled = true } }), "precision-conflict"))
  end,

  -- "bf16": null is absent where get_bfloat16_config reads it (`is None`,
  -- the pydantic releases): bfloat16 is read; releases reading bf16 with
  -- dict.get fail on the null first (schema_check's type-mismatch)
  precision_conflict_bf16_null_reads_bfloat16 = function()
    local cfg = { fp16 = { enabled = true }, bf16 = NULL, bfloat16 = { enabled = true } }
    for _, v in ipairs({ "0.17.6", "0.18.9", "0.19.2", "0.19.5" }) do
      local hit = find(run(cfg, nil, nil, v), "precision-conflict")
      T.eq(#hit, 1, v)
      T.eq(hit[1].path, { "bfloat16", "enabled" })
    end
    for _, v in ipairs({ "0.14.5", "0.15.4", "0.16.5", "0.16.9" }) do
      T.falsy(has(run(cfg, nil, nil, v), "precision-conflict"), v)
    end
  end,

  -- "auto" in a flag the HF Trainer fills is its TrainingArguments value at
  -- --target hf, at every release (the dict.get releases read the string
  -- as true); "auto" the Trainer does not fill (bfloat16) stays the string
  precision_conflict_trainer_fill_per_release = function()
    for _, v in ipairs({ "0.14.5", "0.15.4", "0.16.5", "0.16.9", "0.17.6", "0.19.5" }) do
      T.falsy(has(run({ fp16 = { enabled = "auto" }, bf16 = { enabled = "auto" } }, "hf", nil, v),
        "precision-conflict"), v)
      T.falsy(has(run({ fp16 = { enabled = true }, bf16 = { enabled = "auto" } }, "hf", nil, v),
        "precision-conflict"), v)
    end
    T.truthy(has(run({ fp16 = { enabled = "auto" }, bf16 = { enabled = "auto" } }, "deepspeed", nil, "0.16.9"),
      "precision-conflict"))
    T.truthy(has(run({ fp16 = { enabled = true }, bfloat16 = { enabled = "auto" } }, "hf", nil, "0.16.9"),
      "precision-conflict"))
  end,

  offload_param_ignored_below_stage3 = function()
    for _, stage in ipairs({ 1, 2, "2", 2.0, true }) do
      local out = run({ zero_optimization = { stage = stage, offload_param = { device = "nvme" } } })
      T.eq(#find(out, "offload-param-ignored"), 1, tostring(stage))
    end
    T.falsy(has(run({ zero_optimization = { stage = 3, offload_param = { device = "cpu" } } }),
      "offload-param-ignored"))
    T.falsy(has(run({ zero_optimization = { stage = 2, offload_param = { device = "none" } } }),
      "offload-param-ignored"))
    -- an empty offload dict means no offload (device defaults to "none")
    T.falsy(has(run({ zero_optimization = { stage = 2, offload_param = dsforge.object({}) } }),
      "offload-param-ignored"))
    T.falsy(has(run({ zero_optimization = { stage = 4, offload_param = { device = "cpu" } } }),
      "offload-param-ignored"))
  end,

  offload_requires_zero_at_stage0 = function()
    local out = run({ zero_optimization = { stage = 0,
      offload_optimizer = { device = "cpu" }, offload_param = { device = "nvme" } } })
    local hits = find(out, "offload-requires-zero")
    T.eq(#hits, 2)
    T.eq(hits[1].path, { "zero_optimization", "offload_optimizer" })
    T.eq(hits[2].path, { "zero_optimization", "offload_param" })
    T.falsy(has(out, "offload-param-ignored"))
    -- "auto" stage is dropped by pydantic: stage 0
    T.truthy(has(run({ zero_optimization = { stage = "auto", offload_optimizer = { device = "cpu" } } }, "hf"),
      "offload-requires-zero"))
    T.falsy(has(run({ zero_optimization = { stage = 1, offload_optimizer = { device = "cpu" } } }),
      "offload-requires-zero"))
    T.falsy(has(run({ zero_optimization = { stage = 0, offload_optimizer = { device = "none" } } }),
      "offload-requires-zero"))
  end,

  partial_offload_needs_stage3 = function()
    local out = run({ zero_optimization = { stage = 2, offload_optimizer = { device = "cpu", ratio = 0.3 } } })
    local h = find(out, "partial-offload-stage")
    T.eq(#h, 1)
    T.truthy(h[1].message:find("Partial offloading only supported for ZeRO Stage 3.", 1, true))
    T.falsy(has(run({ zero_optimization = { stage = 3, offload_optimizer = { device = "cpu", ratio = 0.3 } } }),
      "partial-offload-stage"))
    T.falsy(has(run({ zero_optimization = { stage = 2, offload_optimizer = { device = "cpu", ratio = 1 } } }),
      "partial-offload-stage"))
    T.falsy(has(run({ zero_optimization = { stage = 2, offload_optimizer = { ratio = "auto" } } }, "hf"),
      "partial-offload-stage"))
    -- the pydantic 1 release's root_validator never runs the assertion
    -- (getattr on the values dict: runtime/zero/config.py:321 at v0.14.5)
    local cfg = { zero_optimization = { stage = 2, offload_optimizer = { device = "cpu", ratio = 0.3 } } }
    for _, rel in ipairs(require("deepspeed.dsversion").releases) do
      h = find(run(cfg, nil, 1, rel.version), "partial-offload-stage")
      T.eq(#h, 1, rel.version)
      T.eq(h[1].severity, rel.version == "0.14.5" and "warning" or "error", rel.version)
    end
    T.truthy(find(run(cfg, nil, 1, "0.14.5"), "partial-offload-stage")[1].message
      :find("does not check it", 1, true))
  end,


  scheduler_missing_param = function()
    local out = run({ scheduler = { type = "OneCycle", params = { cycle_max_lr = 1e-3 } } })
    local h = find(out, "scheduler-missing-param")
    T.eq(#h, 1)
    T.eq(h[1].path, { "scheduler", "params", "cycle_min_lr" })
    T.eq(#find(run({ scheduler = { type = "OneCycle" } }), "scheduler-missing-param"), 2)
    T.truthy(has(run({ scheduler = { type = "WarmupDecayLR", params = { warmup_num_steps = 10 } } }),
      "scheduler-missing-param"))
    T.truthy(has(run({ scheduler = { type = "WarmupCosineLR", params = { total_num_steps = NULL } } }, "hf"),
      "scheduler-missing-param"))
    -- "auto" counts as given only under the HF Trainer
    local auto = { scheduler = { type = "WarmupCosineLR", params = { total_num_steps = "auto" } } }
    T.falsy(has(run(auto, "hf"), "scheduler-missing-param"))
    T.truthy(has(run(auto, "deepspeed"), "scheduler-missing-param"))
    T.falsy(has(run({ scheduler = { type = "WarmupDecayLR", params = { total_num_steps = 1000 } } }),
      "scheduler-missing-param"))
    T.falsy(has(run({ scheduler = { type = "WarmupLR", params = {} } }), "scheduler-missing-param"))
  end,

  unknown_scheduler = function()
    local out = run({ scheduler = { type = "warmuplr" } })
    local h = find(out, "unknown-scheduler")
    T.eq(#h, 1)
    T.truthy(h[1].message:find("DeepSpeed does not recognize LR scheduler warmuplr", 1, true))
    T.truthy(h[1].fix:find("\"WarmupLR\"", 1, true))
    T.truthy(has(run({ scheduler = { type = "CosineWithWarmup" } }), "unknown-scheduler"))
    for _, t in ipairs({ "WarmupLR", "OneCycle", "LRRangeTest", "CosineAnnealingLR", "StepLR",
      "OneCycleLR", "ReduceLROnPlateau", "LinearLR" }) do
      T.falsy(has(run({ scheduler = { type = t } }), "unknown-scheduler"), t)
    end
  end,

  -- gradient_allreduce_op is read from 0.19.6 (DeepSpeed master's
  -- runtime/config.py:1029-1035), by no covered release: the checks apply
  -- when that release (or a newer one) is asked for
  allreduce_sum_stage3 = function()
    local NEXT = "0.19.6"
    local out = run({ gradient_allreduce_op = "SUM", zero_optimization = { stage = 3 } }, nil, 1, NEXT)
    T.eq(#find(out, "allreduce-sum-stage3"), 1)
    T.falsy(has(run({ gradient_allreduce_op = "sum", zero_optimization = { stage = 2 } }, nil, 1, NEXT),
      "allreduce-sum-stage3"))
    T.falsy(has(run({ gradient_allreduce_op = "mean", zero_optimization = { stage = 3 } }, nil, 1, NEXT),
      "allreduce-sum-stage3"))
    local both = { gradient_allreduce_op = "Sum", zero_optimization = { stage = 2, zenflow = { topk_ratio = 0.1 } },
      compile = { deepcompile = true } }
    out = run(both, nil, 1, NEXT)
    T.eq(#find(out, "allreduce-sum-unsupported"), 2)
    T.eq(#find(run(both, nil, 1, "0.20"), "allreduce-sum-unsupported"), 2)
    T.falsy(has(run({ gradient_allreduce_op = "mean", compile = { deepcompile = true } }, nil, 1, NEXT),
      "allreduce-sum-unsupported"))
    -- the covered releases do not read the key (version-key warns): no error
    local seen = 0
    for _, v in ipairs({ false, "0.19.5", "0.17.6" }) do
      v = v or nil -- false: no --ds-version (the newest covered)
      seen = seen + 1
      T.falsy(has(run(both, nil, 1, v), "allreduce-sum-unsupported"), tostring(v))
      T.falsy(has(run({ gradient_allreduce_op = "SUM", zero_optimization = { stage = 3 } }, nil, 1, v),
        "allreduce-sum-stage3"), tostring(v))
    end
    T.eq(seen, 3)
  end,

  reduce_bucket_zero = function()
    T.truthy(has(run({ zero_optimization = { stage = 2, reduce_bucket_size = 0 } }), "reduce-bucket-zero"))
    T.truthy(has(run({ zero_optimization = { stage = 1, reduce_bucket_size = 0.0 } }), "reduce-bucket-zero"))
    T.falsy(has(run({ zero_optimization = { stage = 0, reduce_bucket_size = 0 } }), "reduce-bucket-zero"))
    T.falsy(has(run({ zero_optimization = { stage = 2, reduce_bucket_size = 5e8 } }), "reduce-bucket-zero"))
    -- not double-reported by the bucket-size lint
    T.falsy(has(run({ zero_optimization = { stage = 2, reduce_bucket_size = 0 } }), "bucket-size"))
  end,

  untested_and_onebit_optimizers = function()
    local out = run({ optimizer = { type = "Lamb" }, zero_optimization = { stage = 2 } })
    local h = find(out, "untested-optimizer")
    T.eq(#h, 1)
    T.truthy(h[1].message:find("You are using an untested ZeRO Optimizer", 1, true))
    T.truthy(has(run({ optimizer = { type = "SGD" }, zero_optimization = { stage = 1 } }), "untested-optimizer"))
    T.falsy(has(run({ optimizer = { type = "Lamb" }, zero_optimization = { stage = 2 },
      zero_allow_untested_optimizer = true }), "untested-optimizer"))
    T.falsy(has(run({ optimizer = { type = "Lamb" }, zero_optimization = { stage = 0 } }), "untested-optimizer"))
    for _, t in ipairs({ "AdamW", "adam", "Adagrad", "Lion", "muon" }) do
      T.falsy(has(run({ optimizer = { type = t }, zero_optimization = { stage = 3 } }), "untested-optimizer"), t)
    end
    out = run({ optimizer = { type = "OneBitAdam" }, zero_optimization = { stage = 1 } })
    T.truthy(find(out, "onebit-with-zero")[1].message:find("1bit-Adam is not compatible with ZeRO", 1, true))
    T.falsy(has(out, "untested-optimizer"), "the 1-bit assertion fires first")
    T.truthy(has(run({ optimizer = { type = "zerooneadam" }, zero_optimization = { stage = 3 } }), "onebit-with-zero"))
    T.falsy(has(run({ optimizer = { type = "OneBitLamb" } }), "onebit-with-zero"))
  end,

  unknown_optimizer_warning = function()
    local out = run({ optimizer = { type = "FusedAdam" } })
    local h = find(out, "unknown-optimizer")
    T.eq(#h, 1)
    T.eq(h[1].severity, "warning")
    T.truthy(h[1].fix:find("AdamW", 1, true))
    h = find(run({ optimizer = { type = "sgd" } }), "unknown-optimizer")
    T.truthy(h[1].fix:find("\"SGD\"", 1, true))
    for _, t in ipairs({ "ADAMW", "Lamb", "SGD", "RMSprop", "OneBitAdam", "MuAdam" }) do
      T.falsy(has(run({ optimizer = { type = t } }), "unknown-optimizer"), t)
    end
  end,

  master_weights_stage = function()
    local out = run({ fp16 = { enabled = true, fp16_master_weights_and_grads = true } })
    T.eq(#find(out, "master-weights-stage"), 1)
    T.falsy(has(run({ fp16 = { enabled = true, fp16_master_weights_and_grads = true },
      zero_optimization = { stage = 2 } }), "master-weights-stage"))
    out = run({ bf16 = { enabled = true, bf16_optimizer_states = true }, zero_optimization = { stage = 2 } })
    local h = find(out, "master-weights-stage")
    T.eq(#h, 1)
    T.eq(h[1].path, { "bf16", "bf16_optimizer_states" })
    out = run({ bf16 = { enabled = true, bf16_master_weights_and_grads = true, bf16_optimizer_states = true } })
    T.eq(#find(out, "master-weights-stage"), 2)
    T.falsy(has(run({ bf16 = { enabled = true, bf16_master_weights_and_grads = true,
      bf16_optimizer_states = true }, zero_optimization = { stage = 1 } }), "master-weights-stage"))
  end,

  amp_rules = function()
    local out = run({ amp = { enabled = true, opt_level = "O1" }, zero_optimization = { stage = 1 } })
    T.truthy(find(out, "amp-with-zero")[1].message:find("Amp and ZeRO are not currently compatible", 1, true))
    T.falsy(has(run({ amp = { enabled = false }, zero_optimization = { stage = 1 } }), "amp-with-zero"))
    T.falsy(has(run({ amp = { enabled = "auto" }, zero_optimization = { stage = 1 } }, "hf"), "amp-with-zero"))
    T.falsy(has(run({ amp = { enabled = true } }), "amp-with-zero"))
    T.truthy(has(run({ amp = { enabled = true }, fp16 = { enabled = true } }), "amp-with-fp16"))
    T.falsy(has(run({ amp = { enabled = true }, fp16 = { enabled = true }, zero_optimization = { stage = 2 } }),
      "amp-with-fp16"))
  end,

  fp16_dynamic_scale_follows_the_release = function()
    local function cfg(v) return { train_micro_batch_size_per_gpu = 1, fp16 = { enabled = true, min_loss_scale = v } } end
    local function at(c, v)
      local rules = require("deepspeed.rules").rules
      local out = {}
      for _, r in ipairs(rules) do
        if r.id == "fp16-dynamic-scale" then
          r.check(c, { params = {}, ds_version = v, target = "deepspeed",
            report = function(rep) out[#out + 1] = rep end })
        end
      end
      return out
    end
    T.eq(#at(cfg(0), "0.19.5"), 1)
    T.truthy(at(cfg(0), "0.19.5")[1].message:find("must be > 0 when dynamic loss scaling", 1, true))
    T.eq(#at(cfg(0), "0.16.9"), 0)
    T.eq(#at(cfg(1), "0.19.5"), 0)
    local c = cfg(0); c.fp16.loss_scale = 128
    T.eq(#at(c, "0.19.5"), 0) -- static loss scale: not checked
    T.truthy(has(run(cfg(-1)), "fp16-dynamic-scale"))
  end,

  -- fused_adam.py:87-88 (and FusedLamb, 1-bit/0-1 Adam, 1-bit Lamb) at
  -- every covered release; DeepSpeedCPUAdam and torch's AdamW take it
  optimizer_amsgrad_with_the_classes_that_raise = function()
    local function cfg(t, params, extra)
      local c = { train_micro_batch_size_per_gpu = 1, optimizer = { type = t, params = params } }
      for k, v in pairs(extra or {}) do c[k] = v end
      return c
    end
    for _, rel in ipairs(require("deepspeed.dsversion").releases) do
      local f = find(run(cfg("AdamW", { lr = 1e-4, amsgrad = true }), nil, 1, rel.version), "optimizer-amsgrad")
      T.eq(#f, 1, rel.version)
      T.eq(f[1].severity, "error")
      T.eq(table.concat(f[1].path, "."), "optimizer.params.amsgrad")
      T.truthy(f[1].message:find("FusedAdam does not support the AMSGrad variant.", 1, true), f[1].message)
    end
    T.truthy(has(run(cfg("Lamb", { amsgrad = 1 })), "optimizer-amsgrad"))
    T.truthy(has(run(cfg("OneBitAdam", { amsgrad = "false" })), "optimizer-amsgrad")) -- a truthy string
    T.falsy(has(run(cfg("AdamW", { amsgrad = false })), "optimizer-amsgrad"))
    T.falsy(has(run(cfg("AdamW", { lr = 1e-4 })), "optimizer-amsgrad"))
    T.falsy(has(run(cfg("AdamW", { amsgrad = true, torch_adam = true })), "optimizer-amsgrad"))
    T.falsy(has(run(cfg("AdamW", { amsgrad = true }, { zero_optimization = { stage = 2,
      offload_optimizer = { device = "cpu" } } })), "optimizer-amsgrad"))
    T.falsy(has(run(cfg("Adagrad", { amsgrad = true })), "optimizer-amsgrad"))
    T.falsy(has(run(cfg("SGD", { lr = 0.1, amsgrad = true })), "optimizer-amsgrad"))
  end,

  -- lr_schedules.py: WarmupLR's isinstance(int) test from 0.19.3 (695 at
  -- v0.19.5, absent at v0.19.2); OneCycle's ValueError from 0.19.4
  -- (491-494 at v0.19.5), before it the ZeroDivisionError of a 0-step cycle
  scheduler_step_counts_follow_the_release = function()
    local function sched(t, params)
      return { train_micro_batch_size_per_gpu = 1, scheduler = { type = t, params = params } }
    end
    for _, t in ipairs({ "WarmupLR", "WarmupDecayLR", "WarmupCosineLR" }) do
      local c = sched(t, { warmup_num_steps = 100.0, total_num_steps = 1000 })
      local f = find(run(c, nil, 1, "0.19.5"), "scheduler-step-count")
      T.eq(#f, 1, t)
      T.truthy(f[1].message:find("warmup_num_steps must be a positive integer, got 100.0", 1, true), f[1].message)
      T.truthy(f[1].fix:find('"warmup_num_steps": 100', 1, true), f[1].fix)
      T.falsy(has(run(c, nil, 1, "0.19.2"), "scheduler-step-count"), t .. " at 0.19.2")
      T.falsy(has(run(sched(t, { warmup_num_steps = 100, total_num_steps = 1000 }), nil, 1, "0.19.5"),
        "scheduler-step-count"))
    end
    local zero = sched("OneCycle", { cycle_min_lr = 1e-5, cycle_max_lr = 1e-4, cycle_first_step_size = 0 })
    for _, rel in ipairs(require("deepspeed.dsversion").releases) do
      local f = find(run(zero, nil, 1, rel.version), "scheduler-step-count")
      T.eq(#f, 1, rel.version)
      T.eq(f[1].severity, "error")
      local want = require("deepspeed.dsversion").cmp(rel.version, "0.19.4") >= 0
        and "cycle_first_step_size must be positive" or "ZeroDivisionError"
      T.truthy(f[1].message:find(want, 1, true), rel.version .. ": " .. f[1].message)
    end
    -- a first half of 0 with a second half: only the releases with the check
    local half = sched("OneCycle", { cycle_min_lr = 1e-5, cycle_max_lr = 1e-4, cycle_first_step_size = 0,
      cycle_second_step_size = 100 })
    T.truthy(has(run(half, nil, 1, "0.19.5"), "scheduler-step-count"))
    T.falsy(has(run(half, nil, 1, "0.19.2"), "scheduler-step-count"))
    local neg = sched("OneCycle", { cycle_min_lr = 1e-5, cycle_max_lr = 1e-4, cycle_second_step_size = -1 })
    T.eq(table.concat(find(run(neg, nil, 1, "0.19.5"), "scheduler-step-count")[1].path, "."),
      "scheduler.params.cycle_second_step_size")
    T.falsy(has(run(neg, nil, 1, "0.19.2"), "scheduler-step-count"))
    T.falsy(has(run(sched("OneCycle", { cycle_min_lr = 1e-5, cycle_max_lr = 1e-4 })), "scheduler-step-count"))
    -- LRRangeTest: ValueError from 0.19.4 (lr_schedules.py:335 at v0.19.5),
    -- ZeroDivisionError at the first step before (344 at v0.19.2)
    local function lrr(n) return sched("LRRangeTest", { lr_range_test_step_size = n }) end
    T.truthy(find(run(lrr(0), nil, 1, "0.19.5"), "scheduler-step-count")[1].message
      :find("must be a positive integer, got 0", 1, true))
    T.truthy(find(run(lrr(0), nil, 1, "0.19.2"), "scheduler-step-count")[1].message
      :find("ZeroDivisionError", 1, true))
    T.truthy(has(run(lrr(100.0), nil, 1, "0.19.5"), "scheduler-step-count"))
    T.falsy(has(run(lrr(100.0), nil, 1, "0.19.2"), "scheduler-step-count"))
    T.truthy(has(run(lrr(-5), nil, 1, "0.19.5"), "scheduler-step-count"))
    T.falsy(has(run(lrr(-5), nil, 1, "0.19.2"), "scheduler-step-count"))
    T.falsy(has(run(lrr(100), nil, 1, "0.19.5"), "scheduler-step-count"))
  end,

  -- runtime/config.py:679-680 at v0.17.6 (world_size / sequence_parallel_size
  -- when the config is a dict, from 0.17.0), deepspeed/__init__.py:179-180
  -- at v0.18.9 (a path read into a dict from 0.18.6), the device mesh of
  -- data_parallel_size x sequence_parallel_size (__init__.py:159-162 at
  -- v0.15.4)
  batch_identity_divides_by_sequence_parallel_size = function()
    local function cfg(extra)
      local c = { train_batch_size = 32, train_micro_batch_size_per_gpu = 2,
        gradient_accumulation_steps = 2 }
      for k, v in pairs(extra) do c[k] = v end
      return c
    end
    local sp = cfg({ sequence_parallel_size = 2 })
    -- 32 == 2 * 2 * 8 without it; DeepSpeed checks 32 == 2 * 2 * (8 / 2)
    T.falsy(has(run(cfg({}), nil, 8, "0.19.5"), "batch-identity"))
    local f = find(run(sp, nil, 8, "0.19.5"), "batch-identity")
    T.eq(#f, 1)
    T.truthy(f[1].message:find("32 != 2 * 2 * 4.0", 1, true), f[1].message)
    T.truthy(f[1].message:find("world size 8 / sequence_parallel_size 2", 1, true), f[1].message)
    T.truthy(f[1].fix:find("gradient_accumulation_steps to 4", 1, true), f[1].fix)
    T.truthy(has(run(sp, "hf", 8, "0.17.6"), "batch-identity"))   -- a dict under the Trainer
    T.falsy(has(run(sp, nil, 8, "0.17.6"), "batch-identity"))     -- a path: not divided
    T.falsy(has(run(sp, "hf", 8, "0.16.9"), "batch-identity"))    -- before 0.17.0
    T.falsy(has(run(cfg({ sequence_parallel_size = 2, gradient_accumulation_steps = 4 }), nil, 8, "0.19.5"),
      "batch-identity"))
    -- derived values at the float world size
    local d = find(run({ train_batch_size = 32, train_micro_batch_size_per_gpu = 2,
      sequence_parallel_size = 2 }, nil, 8, "0.19.5"), "batch-derived")
    T.truthy(d[1].fix:find('"gradient_accumulation_steps": 4.0', 1, true), d[1].fix)
    -- a world size sequence_parallel_size does not divide
    f = find(run(cfg({ sequence_parallel_size = 3 }), nil, 8, "0.19.5"), "batch-identity")
    T.truthy(f[1].fix:find("divide the world size 8", 1, true), f[1].fix)
    -- null: the division raises and the bare except makes it 1
    f = find(run(cfg({ sequence_parallel_size = NULL }), nil, 8, "0.19.5"), "batch-identity")
    T.truthy(f[1].message:find("32 != 2 * 2 * 1'", 1, true), f[1].message)
    -- both sizes: the mesh's data-parallel group
    T.falsy(has(run(cfg({ sequence_parallel_size = 2, data_parallel_size = 8 }), nil, 16, "0.19.5"),
      "batch-identity"))
    T.truthy(has(run(cfg({ sequence_parallel_size = 2, data_parallel_size = 4 }), "hf", 8, "0.15.4"),
      "batch-identity"))
    T.falsy(has(run(cfg({ sequence_parallel_size = 2, data_parallel_size = 4 }), "hf", 8, "0.14.5"),
      "batch-identity"))
  end,

  section_shape = function()
    local base = { train_micro_batch_size_per_gpu = 1 }
    local function with(k, v) local c = { train_micro_batch_size_per_gpu = 1 }; c[k] = v; return c end
    T.truthy(find(run(with("amp", {})), "section-shape")[1].message:find("KeyError: 'enabled'", 1, true))
    T.truthy(has(run(with("curriculum_learning", { curriculum_type = "seqlen" })), "section-shape"))
    T.falsy(has(run(with("amp", { enabled = false })), "section-shape"))
    T.falsy(has(run(with("curriculum_learning", { enabled = false })), "section-shape"))
    T.truthy(find(run(with("optimizer", NULL)), "section-shape")[1].message:find("AttributeError", 1, true))
    T.truthy(has(run(with("scheduler", NULL)), "section-shape"))
    T.falsy(has(run(with("scheduler", {})), "section-shape"))
    T.falsy(has(run(base), "section-shape"))
  end,

  batch_bools_are_python_ints = function()
    -- DeepSpeed computes with bools as ints: false is 0, true is 1
    local out = run({ train_batch_size = false, train_micro_batch_size_per_gpu = 2 }, nil, 8)
    T.truthy(find(out, "batch-identity")[1].message:find("Train batch size: 0 has to be greater than 0", 1, true))
    out = run({ train_batch_size = true, train_micro_batch_size_per_gpu = 2 }, nil, 8)
    T.truthy(find(out, "batch-identity")[1].message:find("Gradient accumulation steps: 0", 1, true))
    T.falsy(has(run({ train_micro_batch_size_per_gpu = true, gradient_accumulation_steps = 1 }, nil, 8),
      "batch-identity"))
  end,

  elasticity_batch = function()
    local out = run({ elasticity = { enabled = true, max_train_batch_size = 2000 },
      train_micro_batch_size_per_gpu = 4 })
    local h = find(out, "elasticity-batch")
    T.eq(#h, 1)
    T.eq(h[1].path, { "train_micro_batch_size_per_gpu" })
    T.falsy(has(run({ elasticity = { enabled = true, ignore_non_elastic_batch_info = true },
      train_batch_size = 8 }), "elasticity-batch"))
    T.falsy(has(run({ elasticity = { enabled = false }, train_batch_size = 8 }), "elasticity-batch"))
    T.truthy(has(run({ elasticity = { enabled = true }, gradient_accumulation_steps = NULL }), "elasticity-batch"))
  end,

  overlap_comm_lint = function()
    local out = run({ zero_optimization = { stage = 3, overlap_comm = false } })
    T.eq(find(out, "overlap-comm-off")[1].severity, "warning")
    out = run({ zero_optimization = { stage = 2 } })
    T.eq(find(out, "overlap-comm-off")[1].severity, "note")
    T.falsy(has(run({ zero_optimization = { stage = 3 } }), "overlap-comm-off"), "stage 3 defaults to true")
    T.falsy(has(run({ zero_optimization = { stage = 2, overlap_comm = true } }), "overlap-comm-off"))
    T.falsy(has(run({ zero_optimization = { stage = 1, overlap_comm = false } }), "overlap-comm-off"))
    T.truthy(has(run({ zero_optimization = { stage = 1, overlap_comm = true } }), "overlap-comm-ignored"))
    T.falsy(has(run({ zero_optimization = { stage = 2, overlap_comm = true } }), "overlap-comm-ignored"))
  end,

  bucket_size_lint = function()
    local out = run({ zero_optimization = { stage = 2, reduce_bucket_size = 5e5, allgather_bucket_size = 5e9 } })
    local h = find(out, "bucket-size")
    T.eq(#h, 2)
    T.eq(h[1].path, { "zero_optimization", "reduce_bucket_size" })
    T.eq(h[2].path, { "zero_optimization", "allgather_bucket_size" })
    T.eq(h[1].severity, "warning")
    T.truthy(h[1].message:find("elements", 1, true))
    T.truthy(has(run({ zero_optimization = { stage = 3, stage3_prefetch_bucket_size = 100 } }), "bucket-size"))
    T.falsy(has(run({ zero_optimization = { stage = 2, reduce_bucket_size = 2e8, allgather_bucket_size = 2e8 } }),
      "bucket-size"))
    T.falsy(has(run({ zero_optimization = { stage = 0, reduce_bucket_size = 5e5 } }), "bucket-size"))
    T.falsy(has(run({ zero_optimization = { stage = 3, reduce_bucket_size = "auto" } }, "hf"), "bucket-size"))
  end,

  steps_per_print_lint = function()
    T.truthy(has(run({ steps_per_print = 1 }, "hf"), "steps-per-print"))
    T.truthy(has(run({ steps_per_print = 50000 }, "deepspeed"), "steps-per-print"))
    T.falsy(has(run({ steps_per_print = 50000 }, "hf"), "steps-per-print"))
    T.falsy(has(run({ steps_per_print = 10 }), "steps-per-print"))
    T.falsy(has(run({ steps_per_print = 10000 }), "steps-per-print"))
    T.falsy(has(run({ steps_per_print = "auto" }, "hf"), "steps-per-print"))
  end,

  offload_pin_memory_notes = function()
    local out = run({ zero_optimization = { stage = 3, offload_param = { device = "cpu", pin_memory = false } } })
    local h = find(out, "offload-pin-memory")
    T.eq(#h, 1)
    T.eq(h[1].severity, "note")
    T.truthy(h[1].message:find("v0.19.5", 1, true))
    T.falsy(has(run({ zero_optimization = { stage = 3, offload_param = { device = "nvme", pin_memory = false } } }),
      "offload-pin-memory"))
    out = run({ zero_optimization = { stage = 2, offload_optimizer = { device = "cpu" } } })
    T.truthy(has(out, "offload-pin-memory-default"))
    T.falsy(has(out, "offload-pin-memory"))
  end,

  gradient_clipping_default_note = function()
    local out = run({ train_micro_batch_size_per_gpu = 1 }, "deepspeed")
    T.eq(find(out, "gradient-clipping-default")[1].severity, "note")
    T.falsy(has(run({ train_micro_batch_size_per_gpu = 1 }, "hf"), "gradient-clipping-default"))
    T.falsy(has(run({ gradient_clipping = 0.0 }, "deepspeed"), "gradient-clipping-default"))
  end,

  stage3_options_below_stage3 = function()
    local out = run({ zero_optimization = { stage = 2, stage3_max_live_parameters = 1e9,
      stage3_prefetch_bucket_size = "auto" } }, "hf")
    local h = find(out, "stage3-option-ignored")
    T.eq(#h, 1)
    T.truthy(h[1].message:find("stage3_max_live_parameters", 1, true))
    T.falsy(h[1].message:find("stage3_prefetch_bucket_size", 1, true), "\"auto\" is left to the hf module")
    T.falsy(has(run({ zero_optimization = { stage = 3, stage3_max_live_parameters = 1e9 } }), "stage3-option-ignored"))
  end,

  lint_for_optimizers_and_schedules = function()
    T.truthy(has(run({ optimizer = { type = "Lamb" }, fp16 = { enabled = true, loss_scale = 128 } }),
      "lamb-static-loss-scale"))
    T.falsy(has(run({ optimizer = { type = "Lamb" }, fp16 = { enabled = true, loss_scale = 0 } }),
      "lamb-static-loss-scale"))
    T.truthy(has(run({ optimizer = { type = "Adam", params = { weight_decay = 0.01 } } }), "adam-is-adamw"))
    T.falsy(has(run({ optimizer = { type = "Adam", params = { weight_decay = 0.01, adam_w_mode = false } } }),
      "adam-is-adamw"))
    T.falsy(has(run({ optimizer = { type = "AdamW", params = { weight_decay = 0.01 } } }), "adam-is-adamw"))
    T.falsy(has(run({ optimizer = { type = "Adam", params = { weight_decay = 0 } } }), "adam-is-adamw"))
    local out = run({ scheduler = { type = "WarmupDecayLR", params = { total_num_steps = 500 } } })
    T.eq(find(out, "scheduler-warmup-exceeds-total")[1].path, { "scheduler", "params", "total_num_steps" })
    T.truthy(has(run({ scheduler = { type = "WarmupCosineLR", params = { total_num_steps = 500,
      warmup_num_steps = 600 } } }), "scheduler-warmup-exceeds-total"))
    T.falsy(has(run({ scheduler = { type = "WarmupDecayLR", params = { total_num_steps = 5000,
      warmup_num_steps = 100 } } }), "scheduler-warmup-exceeds-total"))
    T.truthy(has(run({ zero_optimization = { stage = 2 }, train_batch_size = 8 }, "deepspeed"), "zero-no-optimizer"))
    T.falsy(has(run({ zero_optimization = { stage = 2 }, train_batch_size = 8 }, "hf"), "zero-no-optimizer"))
    T.falsy(has(run({ zero_optimization = { stage = 3 }, train_batch_size = 8 }, "deepspeed"), "zero-no-optimizer"))
  end,

  zero_stage_parsing_matches_deepspeed = function()
    local zs = require("deepspeed.rules").zero_stage
    T.eq(zs({}), 0)
    T.eq(zs({ zero_optimization = true }), 1)
    T.eq(zs({ zero_optimization = false }), 0)
    T.eq(zs({ zero_optimization = { stage = "2" } }), 2)
    T.eq(zs({ zero_optimization = { stage = 2.0 } }), 2)
    T.eq(zs({ zero_optimization = { stage = true } }), 1)
    T.eq(zs({ zero_optimization = { stage = "auto" } }), 0)
    T.eq(zs({ zero_optimization = { offload_optimizer = { device = "cpu" } } }), 0)
    T.eq(zs({ zero_optimization = { stage = 4 } }), nil)
    T.eq(zs({ zero_optimization = { stage = 2.5 } }), nil)
    T.eq(zs({ zero_optimization = NULL }), nil)
    T.eq(zs({ zero_optimization = { 1, 2 } }), nil)
    T.eq(zs("nope"), nil)
  end,

  rules_never_raise_on_odd_shapes = function()
    local odd = { NULL, "auto", "x", 0, -1, 1.5, true, false, { 1, 2 }, dsforge.object({}),
      { type = NULL, params = "p", enabled = { 1 } } }
    local keys = { "zero_optimization", "fp16", "bf16", "bfloat16", "optimizer", "scheduler",
      "amp", "elasticity", "compile", "train_batch_size", "train_micro_batch_size_per_gpu",
      "gradient_accumulation_steps", "steps_per_print", "gradient_allreduce_op",
      "zero_allow_untested_optimizer", "gradient_clipping" }
    local subkeys = { "stage", "offload_param", "offload_optimizer", "overlap_comm",
      "reduce_bucket_size", "enabled", "type", "params", "zenflow", "ratio", "device" }
    local n = 0
    for _, target in ipairs({ "deepspeed", "hf" }) do
      for _, k in ipairs(keys) do
        for _, v in ipairs(odd) do
          run({ [k] = v }, target, 2)
          for _, sk in ipairs(subkeys) do
            run({ [k] = { [sk] = v } }, target, 2)
            run({ [k] = { [sk] = { [sk] = v, device = "cpu", ratio = v } }, zero_optimization = { stage = 2 } }, target, 2)
            n = n + 3
          end
        end
      end
    end
    for _, whole in ipairs({ NULL, "str", 5, { 1, 2, 3 }, dsforge.object({}) }) do
      run(whole, "deepspeed", 1)
    end
    T.truthy(n > 1000)
  end,

  reports_are_deterministic = function()
    local cfg = {
      train_batch_size = 10, gradient_accumulation_steps = 1,
      zero_optimization = { stage = 2, offload_param = { device = "cpu" },
        offload_optimizer = { device = "cpu", ratio = 0.5 }, reduce_bucket_size = 10,
        allgather_bucket_size = 1e10, sub_group_size = 1e9, stage3_max_live_parameters = 1e9 },
      optimizer = { type = "Lamb", params = { max_grad_norm = 1.0 } },
      fp16 = { enabled = true }, bf16 = { enabled = true },
    }
    local first = ids(run(cfg, "deepspeed", 4))
    for _ = 1, 5 do T.eq(ids(run(cfg, "deepspeed", 4)), first) end
    T.truthy(first:find("batch-identity", 1, true))
    T.truthy(first:find("precision-conflict", 1, true))
    T.truthy(first:find("partial-offload-stage", 1, true))
    T.truthy(first:find("untested-optimizer", 1, true))
  end,
}
