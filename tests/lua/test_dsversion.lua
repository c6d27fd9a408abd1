-- Tests for deepspeed.dsversion and the generated per-release data in
-- plugins/deepspeed/dsdata/ (contrib/dsknow/extract.py): version
-- resolution, the join of the hand-written schema with the generated keys,
-- and version-dependent checks.

local dv = require("deepspeed.dsversion")
local schema = require("deepspeed.schema")

-- Every key path of the hand-written schema (canonical field names), with
-- its node; open sections and maps are not descended.
local function hand_paths()
  local out = {}
  -- marks (since, unreleased, read_by) hold for everything below too
  local function walk(node, prefix, depth, marks)
    if type(node) ~= "table" or type(node.fields) ~= "table" or depth > 6 then return end
    for _, k in ipairs(dsforge.sorted_keys(node.fields)) do
      local p = prefix == "" and k or (prefix .. "." .. k)
      local f = node.fields[k]
      local m = { since = f.since or marks.since, unreleased = f.unreleased or marks.unreleased,
                  read_by = f.read_by or marks.read_by }
      out[#out + 1] = { path = p, node = m }
      walk(f, p, depth + 1, m)
    end
  end
  walk(schema.root, "", 0, {})
  return out
end

local function run(cfg, version, target)
  local found = {}
  local ctx = { world_size = 1, target = target or "deepspeed", ds_version = version,
                report = function(f) found[#found + 1] = f end }
  require("deepspeed.schema_check").check(cfg, ctx)
  for _, r in ipairs(require("deepspeed.rules").rules) do
    if r.check then r.check(cfg, ctx) end
  end
  return found
end

local function find(found, rule, path)
  for _, f in ipairs(found) do
    if f.rule == rule and (path == nil or table.concat(f.path, ".") == path) then return f end
  end
  return nil
end

local BASE = { train_micro_batch_size_per_gpu = 1, gradient_clipping = 1.0 }
local function cfg_with(extra)
  local c = {}
  for k, v in next, BASE do c[k] = v end
  for k, v in next, extra do c[k] = v end
  return c
end

return {
  release_keys_are_built_a_section_at_a_time = function()
    -- The built-in facts (the snapshot embedded for dsdata/v0_19_5.lua,
    -- src/tools/snapshot.lua) build a section's keys when one is read.
    local keys = dv.data(dv.newest).keys
    T.truthy(getmetatable(keys) ~= nil, "no keys built before the first read")
    T.eq(rawget(keys, "zero_optimization.stage"), nil)
    T.eq(keys["zero_optimization.stage"].src, "pydantic")
    T.eq(keys["zero_optimization.stage"].d, 0)
    T.eq(rawget(keys, "zero_optimization.overlap_comm").src, "pydantic")
    T.eq(rawget(keys, "zero_optimization").t, "object")
    T.eq(rawget(keys, "aio.block_size"), nil)
    T.eq(keys["no_such_section.key"], nil)
    T.eq(keys[""], nil)
    T.eq(keys[1], nil)
    local n = 0
    for k, v in pairs(keys) do
      n = n + 1
      T.eq(type(v.src), "string", k)
    end
    T.truthy(n > 300, n .. " keys")
    T.eq(getmetatable(keys), nil)
    T.eq(keys["aio.block_size"].d, 1048576)
  end,

  release_extra_keys_see_every_section = function()
    -- extra_keys lists a release's keys (a C walk): every section counts
    local at = require("deepspeed.atrelease")
    local top = at.extra_keys(dv.newest, "", nil)
    local has = {}
    for _, k in ipairs(top) do has[k] = true end
    T.truthy(has.aio and has.zero_optimization and has.train_batch_size, table.concat(top, " "))
    T.eq(at.extra_keys(dv.newest, "aio", nil)[1], "block_size")
  end,

  resolve_versions = function()
    local r, note = dv.resolve(nil)
    T.eq(r, dv.newest); T.eq(note, nil)
    T.truthy(#dv.releases >= 7)
    r, note = dv.resolve("0.16.9"); T.eq(r.version, "0.16.9"); T.eq(note, nil)
    r, note = dv.resolve("v0.16"); T.eq(r.version, "0.16.9"); T.eq(note, nil)
    r, note = dv.resolve("0.16.7"); T.eq(r.version, "0.16.5")
    T.truthy(note:find("nearest earlier", 1, true))
    r, note = dv.resolve("0.99.0"); T.eq(r, dv.newest); T.truthy(note:find("newer", 1, true))
    r, note = dv.resolve("0.10.1"); T.eq(r, nil); T.truthy(note:find("older than the oldest", 1, true))
    r, note = dv.resolve("zero"); T.eq(r, nil)
    T.eq(dv.cmp("0.9.1", "0.10.0"), -1)
  end,

  generated_data_names_tag_and_commit = function()
    for _, r in ipairs(dv.releases) do
      local d = dv.data(r)
      T.eq(d.version, r.version)
      T.truthy(d.commit:match("^%x+$") and #d.commit == 40)
      T.eq(d.tag, "v" .. r.version)
    end
  end,

  key_newer_than_release_is_reported_naming_first_release = function()
    -- the top level ignores unknown keys in every release: a warning
    local f = find(run(cfg_with { seq_parallel_communication_data_type = "fp16" }, "0.14.5"),
      "version-key", "seq_parallel_communication_data_type")
    T.truthy(f); T.eq(f.severity, "warning")
    T.truthy(f.message:find("0.16.5", 1, true))
    T.eq(find(run(cfg_with { seq_parallel_communication_data_type = "fp16" }, "0.16.5"), "version-key"), nil)
    -- the old name: read (a note) by the releases that have it, unknown later
    local old = run(cfg_with { seq_parallel_comm_data_type = "fp16" }, "0.14.5")
    T.eq(find(old, "version-key", "seq_parallel_comm_data_type").severity, "note")
    T.eq(find(old, "unknown-key"), nil)
    local f2 = find(run(cfg_with { seq_parallel_comm_data_type = "fp16" }, "0.19.5"), "unknown-key")
    T.truthy(f2.message:find('renamed it to "seq_parallel_communication_data_type" in 0.16.5', 1, true))
  end,

  version_dependent_default_names_the_release = function()
    local f = find(run({ train_micro_batch_size_per_gpu = 1 }, "0.19.2"), "gradient-clipping-default")
    T.truthy(f.message:find("DeepSpeed 0.19.2, the release checked against, uses 0.0", 1, true), f.message)
    f = find(run({ train_micro_batch_size_per_gpu = 1 }, "0.19.5"), "gradient-clipping-default")
    T.truthy(f.message:find("DeepSpeed 0.19.5, the release checked against, uses 1.0", 1, true), f.message)
  end,

  explain_shows_since_until_renamed_from = function()
    local ex = require("deepspeed.explain")
    local node = require("deepspeed.schema_check").resolve({ "seq_parallel_communication_data_type" })
    local t = ex.versions_text({ "seq_parallel_communication_data_type" }, node, "en")
    T.truthy(t:find("read since DeepSpeed 0.16.5", 1, true), t)
    T.truthy(t:find("renamed from seq_parallel_comm_data_type in 0.16.5", 1, true), t)
    T.eq(ex.versions_text({ "train_batch_size" }, nil, "en"), nil)
    local rows = ex.rows({ bf16 = { check_grad_overflow = true } }, "en")
    T.truthy(rows[2].versions:find("read since DeepSpeed 0.17", 1, true), rows[2].versions)
  end,

  strictness_follows_the_release = function()
    -- bf16 became a pydantic model (unknown keys rejected) in 0.17.1
    local f = find(run(cfg_with { bf16 = { enabled = true, bogus = 1 } }, "0.16.9"), "unknown-key", "bf16.bogus")
    T.eq(f.severity, "warning")
    f = find(run(cfg_with { bf16 = { enabled = true, bogus = 1 } }, "0.19.5"), "unknown-key", "bf16.bogus")
    T.eq(f.severity, "error")
  end,

  section_unknown_to_the_release_is_not_strict = function()
    -- compile is a strict pydantic model from 0.16 on; 0.14.5 ignores it
    -- whole, so nothing inside it is checked (no unknown-key, no type)
    local found = run(cfg_with { compile = { bogus = 1, deepcompile = "x" } }, "0.14.5")
    local f = find(found, "version-key", "compile")
    T.eq(f.severity, "warning")
    T.eq(find(found, "unknown-key", "compile.bogus"), nil)
    T.eq(find(found, "type-mismatch", "compile.deepcompile"), nil)
    local f
    f = find(run(cfg_with { compile = { bogus = 1 } }, "0.19.5"), "unknown-key", "compile.bogus")
    T.eq(f.severity, "error")
  end,

  coercion_follows_the_release = function()
    -- fp16 is read with dict.get up to 0.16 (2 ** "16" is a TypeError) and
    -- is a pydantic model later (which turns "16" into 16)
    local cfg = cfg_with { fp16 = { enabled = true, initial_scale_power = "16" } }
    T.eq(find(run(cfg, "0.14.5"), "type-mismatch", "fp16.initial_scale_power").severity, "error")
    T.eq(find(run(cfg, "0.19.5"), "type-mismatch", "fp16.initial_scale_power"), nil)
  end,

  unreleased_keys_are_errors = function()
    local f = find(run(cfg_with { gradient_allreduce_op = "mean" }, nil), "version-key", "gradient_allreduce_op")
    T.truthy(f); T.truthy(f.message:find("0.19.6", 1, true))
  end,

  bad_version_is_reported = function()
    local f = find(run(BASE, "0.9"), "ds-version")
    T.eq(f.severity, "error")
    f = find(run(BASE, "0.16.7"), "ds-version")
    T.eq(f.severity, "note")
    T.truthy(f.message:find("0.16.5", 1, true))
  end,

  scheduler_constructor_unknown_keyword = function()
    local c = cfg_with { scheduler = { type = "WarmupCosineLR",
      params = { total_num_steps = 100, warmup_num_steps = 10, warmup_max_lr = 1e-3 } } }
    local f = find(run(c, nil), "constructor-args", "scheduler.params.warmup_max_lr")
    T.truthy(f); T.eq(f.severity or "error", "error")  -- nil: the rule's (error)
    T.truthy(f.message:find("TypeError", 1, true))
    c.scheduler.params.warmup_max_lr = nil
    c.scheduler.params.warmup_num_step = 10
    f = find(run(c, nil), "constructor-args", "scheduler.params.warmup_num_step")
    T.truthy(f.message:find('did you mean "warmup_num_steps"', 1, true))
    c.scheduler.params.warmup_num_step = nil
    T.eq(find(run(c, nil), "constructor-args"), nil)
    -- a required argument (from the generated constructor) missing
    c.scheduler.params.total_num_steps = nil
    T.truthy(find(run(c, nil), "scheduler-missing-param", "scheduler.params.total_num_steps"))
  end,

  optimizer_constructor_unknown_keyword = function()
    local c = cfg_with { optimizer = { type = "AdamW", params = { lr = 1e-4, betas = { 0.9, 0.99 }, momentum = 0.9 } } }
    local f = find(run(c, nil), "constructor-args", "optimizer.params.momentum")
    T.truthy(f); T.truthy(f.message:find("FusedAdam", 1, true))
    c.optimizer.params.momentum = nil
    c.optimizer.params.adam_w_mode = false   -- taken out by the engine
    c.optimizer.params.torch_adam = false
    T.eq(find(run(c, nil), "constructor-args"), nil)
    c = cfg_with { optimizer = { type = "Lamb", params = { lr = 1e-4, max_coeff = 10 } } }
    T.eq(find(run(c, nil), "constructor-args"), nil)
  end,

  dictuse_entries_name_keys_deepspeed_reads = function()
    -- dictuse.lua says how DeepSpeed uses values it reads with dict.get:
    -- each entry names a key some covered release reads with dict.get
    local du = require("deepspeed.dictuse")
    for _, p in ipairs(dsforge.sorted_keys(du.paths)) do
      local dict = false
      for _, r in ipairs(dv.releases) do
        local k = dv.data(r).keys[p]
        if k and k.src == "dict" then dict = true end
      end
      T.truthy(dict, p .. " is not a dict.get read of any covered release")
    end
    -- fp16's dynamic loss scaling keys, read up to 0.16 only when one of
    -- them is present (`any(arg in list(fp16.keys()) ...)`; extract.py's spy key)
    for _, v in ipairs({ "0.14.5", "0.16.9" }) do
      T.eq(dv.data(dv.resolve(v)).keys["fp16.loss_scale_window"].src, "dict", v)
    end
    local f = find(run(cfg_with { fp16 = { enabled = true, loss_scale_window = "auto" } }, "0.16.9"),
      "auto-value", "fp16.loss_scale_window")
    T.truthy(f and f.message:find("TypeError", 1, true), f and f.message)
  end,

  dict_reads_are_judged_by_their_use = function()
    local sev = function(cfg, rule, path, version)
      local f = find(run(cfg_with(cfg), version or "0.19.5"), rule, path)
      return f and f.severity, f and f.message
    end
    -- a string flag is true for Python: a warning that says so
    local s, m = sev({ dump_state = "no" }, "type-mismatch", "dump_state")
    T.eq(s, "warning"); T.truthy(m:find("acts as true", 1, true), m)
    -- ... unless DeepSpeedConfig computes `x | y` with it
    T.eq(sev({ wall_clock_breakdown = "yes" }, "type-mismatch", "wall_clock_breakdown"), "error")
    -- a number DeepSpeed computes with: an error (engine verdict)
    T.eq(sev({ steps_per_print = "10" }, "type-mismatch", "steps_per_print"), "error")
    -- ... unless only a feature the config leaves off computes with it
    s, m = sev({ flops_profiler = { top_modules = "x" } }, "type-mismatch", "flops_profiler.top_modules")
    T.eq(s, "warning"); T.truthy(m:find("no effect now", 1, true), m)
    T.eq(sev({ flops_profiler = { enabled = true, top_modules = "x" } }, "type-mismatch",
      "flops_profiler.top_modules"), "error")
    -- a fraction is used as it is
    T.eq(sev({ gradient_accumulation_steps = 2.5 }, "type-mismatch", "gradient_accumulation_steps"), "warning")
    -- timers: DeepSpeed only tests "throughput" in it
    T.eq(sev({ timers = "x" }, "type-mismatch", "timers"), "warning")
    T.eq(sev({ timers = true }, "type-mismatch", "timers"), "error")
    -- bf16: null is "absent" where a pydantic model reads the section
    T.eq(find(run(cfg_with { bf16 = dsforge.null }, "0.19.5"), "type-mismatch", "bf16"), nil)
    T.eq(sev({ bf16 = dsforge.null }, "type-mismatch", "bf16", "0.16.9"), "error")
    -- a range only pydantic checks: a warning where the key is a dict read
    T.eq(sev({ fp16 = { enabled = true, loss_scale = -1 } }, "out-of-range", "fp16.loss_scale", "0.16.9"), "warning")
    T.eq(sev({ fp16 = { enabled = true, loss_scale = -1 } }, "out-of-range", "fp16.loss_scale", "0.19.5"), "error")
  end,

  flags_follow_the_release = function()
    -- fp16 and bf16 are dict reads before 0.17.1: "auto" is true there
    local cfg = cfg_with { fp16 = { enabled = "auto" }, bf16 = { enabled = true } }
    T.truthy(find(run(cfg, "0.16.9"), "precision-conflict"))
    T.eq(find(run(cfg, "0.19.5"), "precision-conflict"), nil)
    cfg = cfg_with { fp16 = { enabled = "auto" }, amp = { enabled = true } }
    T.truthy(find(run(cfg, "0.14.5"), "amp-with-fp16"))
    T.eq(find(run(cfg, "0.19.5"), "amp-with-fp16"), nil)
    -- elasticity is a dict read: "auto" enables it, and it needs its keys
    local f = find(run(cfg_with { elasticity = { enabled = "auto" } }, "0.19.5"), "elasticity-missing")
    T.truthy(f and f.message:find("max_train_batch_size", 1, true), f and f.message)
    -- a key the release does not read cannot fail a cross-field rule
    cfg = cfg_with { bf16 = { enabled = true, bf16_optimizer_states = true } }
    T.eq(find(run(cfg, "0.16.9"), "master-weights-stage"), nil)
    T.truthy(find(run(cfg, "0.19.5"), "master-weights-stage"))
  end,

  pydantic_1_coercion = function()
    -- 0.14.5 uses pydantic 1: an int enum takes no string ...
    T.eq(dv.data(dv.resolve("0.14.5")).pydantic, 1)
    local f = find(run(cfg_with { zero_optimization = { stage = "2" } }, "0.14.5"), "type-mismatch",
      "zero_optimization.stage")
    T.truthy(f and f.message:find("enumeration", 1, true), f and f.message)
    T.eq(find(run(cfg_with { zero_optimization = { stage = "2" } }, "0.16.9"), "type-mismatch",
      "zero_optimization.stage"), nil)
    -- ... a number becomes a string, and [] a monitor section ({})
    T.eq(find(run(cfg_with { wandb = { project = 3 } }, "0.14.5"), "type-mismatch", "wandb.project"), nil)
    T.truthy(find(run(cfg_with { wandb = { project = 3 } }, "0.16.9"), "type-mismatch", "wandb.project"))
    T.eq(find(run(cfg_with { tensorboard = dsforge.array {} }, "0.14.5"), "type-mismatch", "tensorboard"), nil)
    -- the monitors are read by 0.14.5 (extract.py follows pydantic 1's
    -- root validator to DeepSpeedMonitorConfig)
    T.truthy(dv.reads(dv.resolve("0.14.5"), "tensorboard.enabled"))
    T.truthy(dv.reads(dv.resolve("0.14.5"), "comms_logger.prof_ops"))
    -- comms_logger is a plain pydantic model there: "auto" is not dropped
    T.eq(dv.data(dv.resolve("0.14.5")).keys.comms_logger.plain, true)
  end,

  every_hand_written_key_is_read_by_some_release = function()
    -- a hand-written entry (docs, reasons) must name a key DeepSpeed reads
    -- in at least one covered release, or say which newer release has it
    local missing = {}
    for _, e in ipairs(hand_paths()) do
      local ok = false
      for _, r in ipairs(dv.releases) do
        local d = dv.data(r)
        if d.keys[e.path] then ok = true; break end
        -- under a section DeepSpeed hands on whole (to the engine)
        local prefix = e.path
        while not ok and prefix:find(".", 1, true) do
          prefix = prefix:match("^(.*)%.[^.]*$")
          if d.open[prefix] then ok = true end
        end
        if ok then break end
      end
      -- hand-marked: newer than every covered release, not in any release
      -- (unreleased), or read outside DeepSpeedConfig (read_by names where)
      if not ok and not (e.node.since and dv.cmp(e.node.since, dv.newest.version) > 0)
         and not e.node.unreleased and not e.node.read_by then
        missing[#missing + 1] = e.path
      end
    end
    T.eq(table.concat(missing, " "), "")
  end,
}
