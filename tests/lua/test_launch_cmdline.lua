-- Tests for plugins/launch/cmdline.lua: a training command parsed into
-- facts and checked against a config.

local variants = require("fixtures.launch.variants")

local function row(profile, variant)
  for _, r in ipairs(variants()) do
    if r.profile == profile and r.variant == variant then return r end
  end
  error("no fixture " .. profile .. "-" .. variant)
end

local function words(s)
  local out = {}
  for w in s:gmatch("%S+") do out[#out + 1] = w end
  return out
end

local function summary(findings)
  local out = {}
  for _, f in ipairs(findings) do
    out[#out + 1] = string.format("%s %s @%s %s", f.severity, f.rule,
      table.concat(f.indexes, ","), f.path or "-")
  end
  return out
end

local function check(cfg, cmd, env, files, opts)
  local cl = require("launch.cmdline")
  return cl.check(cfg, cl.parse(cmd, env, files, opts), opts)
end

return {
  issue_example_reports_both_places = function()
    -- base-medium at --target hf: micro batch 2, accumulation 8, world 8
    local cfg = row("base", "medium").hf
    local f = check(cfg, words("deepspeed --num_gpus 8 train.py --deepspeed c.json"
      .. " --per_device_train_batch_size 4 --gradient_accumulation_steps 16 --bf16"))
    T.eq(summary(f), {
      "error trainer-mismatch @2,7,9 train_batch_size",
      "error trainer-mismatch @7 train_micro_batch_size_per_gpu",
      "error trainer-mismatch @9 gradient_accumulation_steps",
      -- no --warmup_steps: the Trainer fills 0 and WarmupDecayLR refuses it
      "error zero-warmup @ scheduler.params.warmup_num_steps",
    })
    T.eq(f[2].message, "ds train_micro_batch_size_per_gpu=2 vs hf per_device_train_batch_size=4:"
      .. " the Trainer raises ValueError at start-up")
    T.eq(f[1].message, "ds train_batch_size=128 vs hf train_batch_size (calculated)=512:"
      .. " the Trainer raises ValueError at start-up")
  end,

  issue_example_without_deepspeed_flag_warns_too = function()
    local cfg = row("base", "medium").hf
    local f = check(cfg, words("deepspeed --num_gpus 8 train.py --per_device_train_batch_size 4"
      .. " --gradient_accumulation_steps 16 --bf16"))
    T.eq(summary(f)[#f - 1], "warning no-deepspeed-flag @ -")
    T.eq(summary(f)[#f], "error zero-warmup @ scheduler.params.warmup_num_steps")
  end,

  -- WarmupLR's ValueError for 0 is from DeepSpeed 0.19.3 (lr_schedules.py:695
  -- at v0.19.5); 0.19.2 and older take max(2, 0)
  zero_warmup_follows_the_release = function()
    local cfg = row("base", "medium").hf
    local cmd = words("deepspeed --num_gpus 8 train.py --deepspeed c.json"
      .. " --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --bf16")
    local function sev(v)
      for _, f in ipairs(check(cfg, cmd, nil, nil, { ds_version = v })) do
        if f.rule == "zero-warmup" then return f.severity, f.message end
      end
    end
    T.eq(sev(nil), "error")
    T.eq(sev("0.19.5"), "error")
    T.eq(sev("0.19.3"), "error")
    T.eq(sev("v0.20"), "error")
    T.eq(sev("0.19.2"), "warning")
    local s, m = sev("0.17.6")
    T.eq(s, "warning")
    T.truthy(m:find("max(2, 0)", 1, true), m)
    T.eq(sev("0.14"), "warning")
    for _, f in ipairs(check(cfg, words("deepspeed --num_gpus 8 train.py --deepspeed c.json"
      .. " --warmup_steps 10 --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --bf16"),
      nil, nil, { ds_version = "0.19.5" })) do
      T.truthy(f.rule ~= "zero-warmup", f.message)
    end
  end,

  consistent_commands_report_nothing_for_every_profile = function()
    local render = require("launch.render")
    for _, r in ipairs(variants()) do
      local p = r.params
      local v = { config = r.hf, params = p, file = r.file }
      local hf = render.hf_args_words(v)
      local n, g = render.layout(v)
      local base = { "deepspeed", "--num_nodes", tostring(n), "--num_gpus", tostring(g), "train.py" }
      for _, w in ipairs(hf) do base[#base + 1] = w end
      local opts = { params = p, hidden_size = require("deepspeed.models").get(p.model).hidden_size }
      local name = r.profile .. "-" .. r.variant
      T.eq(summary(check(r.hf, base, {}, nil, opts)), {}, name .. " hf")
      T.eq(summary(check(r.ds, base, {}, nil, opts)), {}, name .. " ds")
      -- torchrun with the --flag=value form
      local tr = { "torchrun", "--nnodes=" .. n, "--nproc-per-node=" .. g, "train.py" }
      local k = 1
      while k <= #hf do
        if hf[k + 1] and hf[k + 1]:sub(1, 2) ~= "--" then
          tr[#tr + 1] = hf[k] .. "=" .. hf[k + 1]; k = k + 2
        else tr[#tr + 1] = hf[k]; k = k + 1 end
      end
      T.eq(summary(check(r.hf, tr, {}, nil, opts)), {}, name .. " torchrun")
    end
  end,

  flags_in_both_forms_with_indexes = function()
    local cl = require("launch.cmdline")
    local f = cl.parse({ "python", "-u", "train.py", "--learning_rate=1e-4", "--per-device-train-batch-size",
      "4", "--bf16", "--fp16", "false", "--output_dir", "out dir", "--gradient_checkpointing" }, { WORLD_SIZE = "2" })
    T.eq(f.launcher, "python")
    T.eq(f.script, { word = "train.py", index = 3 })
    T.eq(f.world_size, 2)
    T.eq(f.flags.learning_rate, { value = "1e-4", index = 4, form = "equals" })
    T.eq(f.flags.per_device_train_batch_size, { value = "4", index = 5, form = "space" })
    T.eq(f.flags.bf16, { value = true, index = 7, form = "bare" })
    T.eq(f.flags.fp16, { value = "false", index = 8, form = "space" })
    T.eq(f.flags.output_dir.value, "out dir")
    local args = cl.trainer_args(f)
    T.eq(args, { learning_rate = 1e-4, per_device_train_batch_size = 4, bf16 = true, fp16 = false,
      gradient_checkpointing = true })
  end,

  world_size_from_every_launcher = function()
    local cl = require("launch.cmdline")
    local function w(cmd, env, files, opts)
      local f = cl.parse(words(cmd), env, files, opts)
      return { f.launcher, f.world_size, f.world_indexes }
    end
    T.eq(w("deepspeed --num_nodes 2 --num_gpus 8 t.py"), { "deepspeed", 16, { 2, 4 } })
    T.eq(w("deepspeed --include h1:0,1@h2:0,1,2 t.py"), { "deepspeed", 5, { 2 } })
    T.eq(w("deepspeed --hostfile hf t.py", nil, { hf = "a slots=8\n# c\nb slots=4\n" }),
      { "deepspeed", 12, { 2 } })
    T.eq(w("deepspeed --hostfile hf --num_nodes 1 t.py", nil, { hf = "a slots=8\nb slots=4\n" }),
      { "deepspeed", 8, { 2, 4 } })
    T.eq(w("deepspeed t.py"), { "deepspeed", nil, {} })
    T.eq(w("deepspeed t.py", nil, nil, { gpus_per_node = 4 }), { "deepspeed", 4, {} })
    T.eq(w("torchrun --nnodes 2 --nproc_per_node 4 t.py"), { "torchrun", 8, { 2, 4 } })
    T.eq(w("torchrun t.py"), { "torchrun", 1, {} })
    T.eq(w("torchrun --nnodes 1:4 --nproc_per_node 4 t.py"), { "torchrun", nil, { 2, 4 } })
    T.eq(w("python3 -m torch.distributed.run --nproc_per_node=8 t.py"), { "torchrun", 8, { 4 } })
    T.eq(w("accelerate launch --num_processes 16 t.py"), { "accelerate", 16, { 3 } })
    T.eq(w("accelerate launch --config_file a.yaml t.py", nil, { ["a.yaml"] = "debug: false\nnum_processes: 32\n" }),
      { "accelerate", 32, { 3 } })
    T.eq(w("python t.py"), { "python", 1, {} })
    T.eq(w("WORLD_SIZE=4 python t.py"), { "python", 4, {} })
  end,

  launcher_options_do_not_leak_into_trainer_flags = function()
    local cl = require("launch.cmdline")
    local f = cl.parse(words("deepspeed --master_port 1234 --no_local_rank t.py --bf16"))
    T.eq(f.options.master_port, { value = "1234", index = 2 })
    T.eq(f.options.no_local_rank, { value = true, index = 4 })
    T.eq(f.script, { word = "t.py", index = 5 })
    T.eq(dsforge.sorted_keys(f.flags), { "bf16" })
  end,

  batch_identity_at_the_commands_world_size = function()
    local cfg = row("base", "medium").ds -- TB 128 = 2 * 8 * 8
    local f = check(cfg, words("torchrun --nnodes 2 --nproc_per_node 8 t.py --deepspeed c.json"
      .. " --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --bf16 --learning_rate 1e-4"
      .. " --adam_beta2 0.95 --max_steps 10000 --warmup_steps 100"))
    T.eq(summary(f), { "error batch-identity @2,4 train_batch_size",
      "error trainer-mismatch @2,4,9,11 train_batch_size" })
    T.truthy(f[1].message:find("world size 16", 1, true), f[1].message)
  end,

  accumulation_counted_twice = function()
    local cfg = row("base", "medium").hf -- micro 2, accumulation 8
    local f = check(cfg, words("deepspeed --num_gpus 8 t.py --deepspeed c.json --per_device_train_batch_size 16"))
    local s = summary(f)
    T.truthy(#s >= 1)
    local found = false
    for _, x in ipairs(f) do
      if x.rule == "accumulation-twice" then
        found = true
        T.eq(x.indexes, { 7 })
        T.truthy(x.message:find("micro batch 2 x accumulation 8", 1, true), x.message)
      end
    end
    T.truthy(found, table.concat(s, "\n"))
    f = check(cfg, words("accelerate launch --gradient_accumulation_steps 8 t.py --gradient_accumulation_steps 8"))
    found = false
    for _, x in ipairs(f) do
      if x.rule == "accumulation-twice" then found = true; T.eq(x.indexes, { 3, 6 }) end
    end
    T.truthy(found)
  end,

  precision_disagreements = function()
    local cfg = row("base", "medium").ds -- bf16
    local f = check(cfg, words("deepspeed --num_gpus 8 t.py --deepspeed c.json --fp16 --bf16"))
    local s = table.concat(summary(f), "\n")
    T.truthy(s:find("error precision @7,8 -", 1, true), s)
    T.truthy(s:find("error trainer-mismatch @7 fp16.enabled", 1, true), s)
    f = check(cfg, words("accelerate launch --mixed_precision fp16 --num_processes 8 t.py"))
    s = table.concat(summary(f), "\n")
    T.truthy(s:find("error precision @3 bf16.enabled", 1, true), s)
    -- at --target hf, "auto" precision is filled from the flags: no --bf16 means fp32
    local hfcfg = { bf16 = { enabled = "auto" }, fp16 = { enabled = "auto" },
      train_micro_batch_size_per_gpu = "auto" }
    f = check(hfcfg, words("deepspeed --num_gpus 1 t.py --deepspeed c.json --per_device_train_batch_size 2"),
      nil, nil, { params = { precision = "bf16", micro_batch_size = 2, world_size = 1 } })
    s = table.concat(summary(f), "\n")
    T.truthy(s:find("error precision @ bf16.enabled", 1, true), s)
  end,

  defaults_that_differ_from_the_profile = function()
    local r = row("base", "medium")
    local f = check(r.hf, words("deepspeed --num_gpus 8 t.py --deepspeed c.json"
      .. " --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --bf16 --gradient_checkpointing"),
      nil, nil, { params = r.params, hidden_size = 4096 })
    local s = table.concat(summary(f), "\n")
    for _, path in ipairs({ "optimizer.params.lr", "optimizer.params.betas",
      "scheduler.params.warmup_max_lr", "scheduler.params.warmup_num_steps",
      "scheduler.params.total_num_steps" }) do
      T.truthy(s:find("@ " .. path, 1, true), path .. "\n" .. s)
    end
    T.truthy(s:find("error zero-warmup @ scheduler.params.warmup_num_steps", 1, true), s)
    for _, x in ipairs(f) do
      if x.path == "optimizer.params.lr" then
        T.eq(x.message, "the Trainer fills optimizer.params.lr = 5e-05 from its default (the command"
          .. " does not pass --learning_rate); the config intends 0.0001")
      end
    end
  end,

  bad_values_are_reported_where_they_are = function()
    local cl = require("launch.cmdline")
    local f = cl.parse(words("python t.py --per_device_train_batch_size four --learning_rate 0x10 --bf16 maybe"))
    local _, problems = cl.trainer_args(f)
    T.eq(#problems, 2)
    T.eq(problems[1][1], 5)
    T.eq(problems[2][1], 3)
    -- "--bf16 maybe": maybe is not a bool word, so --bf16 is bare and maybe is positional
    T.eq(f.flags.bf16.value, true)
  end,
}
