-- deepspeed.planner: pick the cheapest DeepSpeed ZeRO configuration that fits
-- a GPU/CPU memory budget.
--
-- Order of preference (cheapest first; the first candidate that fits wins):
--   1. offload: none, then optimizer offload to CPU, then optimizer +
--      parameter offload to CPU, then (only with nvme = true, i.e. an
--      nvme_path) optimizer offload to NVMe, then optimizer + parameter
--      offload to NVMe. Offload moves data over PCIe every step and runs the
--      optimizer on the CPU: by far the largest slowdown; NVMe adds the
--      drive's bandwidth (a few GB/s, ZeRO-Infinity) on top of that.
--   2. sequence-parallel size, smallest first (from `sp_sizes`): Ulysses
--      adds two all-to-alls per attention layer, cheaper than offload.
--   3. AutoTP tensor-parallel size, smallest first (from `tp_sizes`): an
--      all-reduce of activations in every layer, forward and backward.
--   4. ZeRO stage, lowest first (0, 1, 2, 3): less communication and
--      bookkeeping. (ZeRO paper: stages 1 and 2 keep plain data
--      parallelism's communication volume but replace one all-reduce by
--      bucketed reduce-scatter + all-gather; stage 3 all-gathers the
--      parameters in forward and backward, 1.5x the volume.)
--      Optimizer offload exists for stages 1-3, parameter offload only for 3.
--   5. no activation checkpointing before full activation checkpointing
--      (recomputing the forward pass costs about 1/3 more compute).
--   6. the largest micro batch (fewer gradient-accumulation steps, better
--      GPU utilisation).
-- The candidates, in order: (none, ZeRO-0) (none, ZeRO-1) (none, ZeRO-2)
-- (none, ZeRO-3) (opt, ZeRO-1) (opt, ZeRO-2) (opt, ZeRO-3) (opt+param,
-- ZeRO-3) [(nvme, ZeRO-3) (nvme opt+param, ZeRO-3)], each offload level
-- for every sp, then tp size; each first without, then with activation
-- checkpointing, each with micro batches from the largest allowed down to 1.
-- ZeRO-3 uses zero.Init (zero_init = true, as the Hugging Face integration
-- does). NVMe, AutoTP and LoRA model states come from
-- deepspeed.memory_terms (loaded only when a candidate needs it), sp and tp
-- activations from deepspeed.activations. sp and tp are not combined.
-- The data-parallel size of a candidate is world / (sp * tp): the batch
-- identity (micro x accumulation x dp = global_batch) uses it, as DeepSpeed
-- does (runtime/config.py:710 divides the world by sequence_parallel_size;
-- AutoTP's mpu reports world / tp).
--
-- Fit test, per candidate:
--   model states (deepspeed.memory.estimate, DeepSpeed's formulas)
--     + activations (deepspeed.activations.bytes, Korthikanti et al. 2022)
--     <= floor(gpu_mem_bytes * (1 - margin))             per GPU
--   model-state host RAM <= floor(cpu_mem_bytes * (1 - margin))   per node
-- dtype_bytes sizes the activations only; DeepSpeed's model-state formulas
-- assume 16-bit (fp16/bf16) training with fp32 master weights and Adam.
-- With nvme, host RAM is ZeRO-Infinity's pinned buffers (memory_terms).
-- Micro batch candidates divide global_batch / (data-parallel size) and are
-- at most max_micro_batch; gradient_accumulation = that quotient / micro batch.
-- Because the candidate order is fixed and every fit test is monotone in the
-- budgets, more memory never selects a costlier candidate.
--
-- Public API
--   M.ORDER          the order of preference above, as text
--   M.CANDIDATES     the (offload, stage) candidates in order
--   M.plan{ model, gpus_per_node, nodes = 1, gpu_mem_bytes, cpu_mem_bytes,
--           seq_len, global_batch, margin = 0.10, dtype_bytes = 2,
--           flash_attention = false (see deepspeed.activations),
--           max_micro_batch = 64,
--           nvme = false (also try NVMe offload), nvme_tuning = { memory_terms.nvme
--           options: sub_group_size, param_buffer_size, ... },
--           sp_sizes = { 1 }, tp_sizes = { 1 } (sizes the planner may use;
--           each must divide the GPU count, tp the GPUs per node),
--           trainable_params (LoRA: adapter parameters), base_bits = 16,
--           -- choices fixed by the caller (a person's explicit setting); the
--           -- planner then only considers candidates that keep them:
--           stage, offload_optimizer ("none"|"cpu"|"nvme"), offload_param,
--           micro_batch, activation_checkpointing (boolean),
--           suggest = true (compute `fixes` when nothing fits),
--           ep_size = 1 (expert parallel size of an MoE model, deepspeed.moe:
--           > 1 leaves out the ZeRO-3 candidates and sp/tp) }
--     -> { fits = true, stage, offload_optimizer, offload_param, zero_init, sp, tp,
--          nvme_bytes (per node, with NVMe offload),
--          micro_batch, gradient_accumulation, activation_checkpointing,
--          gpu_bytes (states + activations, per GPU), cpu_bytes (per node),
--          activation_bytes, model_states_gpu_bytes, gpu_limit_bytes,
--          cpu_limit_bytes, reasons = { ... } }
--     or { fits = false, reasons = { ... }, tried = { ... }, fixes = { ... } }
--     tried: one row per candidate considered, cheapest first:
--       { label, gpu_bytes (model states + activations of the smallest
--         micro batch, with checkpointing unless it is fixed off),
--         cpu_bytes, gpu_over_bytes, cpu_over_bytes (0 when within) }
--     fixes: the cheapest single changes that make a plan fit, each found by
--       planning again with the change: { change = { option = value }, what
--       = "text", plan = result }, in the order: drop a fixed choice (micro
--       batch, checkpointing, stage, offload), shorter sequence, more GPUs,
--       more GPU memory, more CPU RAM.
--     reasons[1] is the summary (the choice, or why nothing fits); the
--     following lines explain each cheaper candidate that was rejected.
--   M.rank(result)   -> { offload level 0-4, sp, tp, stage, checkpointing 0/1, -micro }
--     (compare lexicographically; smaller is cheaper)

local memory = require("deepspeed.memory")
local activations = require("deepspeed.activations")

local M = {}

M.ORDER = table.concat({
  "1. no offload, then optimizer offload to CPU, then optimizer + parameter offload " ..
    "to CPU (offload is PCIe-bound and runs the optimizer on the CPU: the costliest), " ..
    "then, with an NVMe path, optimizer and then optimizer + parameter offload to NVMe",
  "2. smaller sequence-parallel size first (Ulysses all-to-all per attention layer)",
  "3. smaller AutoTP tensor-parallel size first (an all-reduce per layer)",
  "4. lower ZeRO stage first: 0, 1, 2, 3 (less communication; stage 3 " ..
    "all-gathers the parameters in forward and backward)",
  "5. no activation checkpointing before full activation checkpointing " ..
    "(recomputation costs about 1/3 more compute)",
  "6. the largest micro batch that fits (fewer gradient-accumulation steps)",
}, "\n")

M.CANDIDATES = {
  { level = 0, stage = 0, offload_optimizer = "none", offload_param = "none" },
  { level = 0, stage = 1, offload_optimizer = "none", offload_param = "none" },
  { level = 0, stage = 2, offload_optimizer = "none", offload_param = "none" },
  { level = 0, stage = 3, offload_optimizer = "none", offload_param = "none" },
  { level = 1, stage = 1, offload_optimizer = "cpu",  offload_param = "none" },
  { level = 1, stage = 2, offload_optimizer = "cpu",  offload_param = "none" },
  { level = 1, stage = 3, offload_optimizer = "cpu",  offload_param = "none" },
  { level = 2, stage = 3, offload_optimizer = "cpu",  offload_param = "cpu" },
}

-- ZeRO-Infinity, tried after M.CANDIDATES when the plan has nvme = true.
M.NVME_CANDIDATES = {
  { level = 3, stage = 3, offload_optimizer = "nvme", offload_param = "none" },
  { level = 4, stage = 3, offload_optimizer = "nvme", offload_param = "nvme" },
}

local KEYS = {
  model = true, gpus_per_node = true, nodes = true, gpu_mem_bytes = true,
  cpu_mem_bytes = true, seq_len = true, global_batch = true, margin = true,
  dtype_bytes = true, max_micro_batch = true, flash_attention = true,
  stage = true, offload_optimizer = true, offload_param = true, micro_batch = true,
  activation_checkpointing = true, suggest = true, ep_size = true, nvme = true, nvme_tuning = true,
  sp_sizes = true, tp_sizes = true, trainable_params = true, base_bits = true,
}

local MODEL_FIELDS = { "params", "largest_layer", "hidden_size", "layers", "heads", "vocab" }

local function fail(msg)
  error("deepspeed.planner.plan: " .. msg, 3)
end

local function count(v, name, default)
  if v == nil then v = default end
  if v == nil then fail(name .. " is required") end
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i == nil or i <= 0 then
    fail(("%s must be a positive whole number, got %s"):format(name, tostring(v)))
  end
  return i
end

local function bytes_budget(v, name)
  if v == nil then fail(name .. " is required") end
  if type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge then
    fail(("%s must be a positive number of bytes, got %s"):format(name, tostring(v)))
  end
  return v
end

-- "1 GPU", "8 GPUs"
local function plural(n, word)
  return ("%d %s%s"):format(n, word, n == 1 and "" or "s")
end

local function gib(b)
  return string.format("%.2f GiB", b / 2 ^ 30)
end

local OFFLOAD_TEXT = {
  [0] = "no offload", "optimizer offload to CPU", "optimizer + parameter offload to CPU",
  "optimizer offload to NVMe", "optimizer + parameter offload to NVMe",
}

local function label(c)
  local t = ("ZeRO-%d, %s"):format(c.stage, OFFLOAD_TEXT[c.level])
  if (c.sp or 1) > 1 then t = t .. (", sequence parallel %d"):format(c.sp) end
  if (c.tp or 1) > 1 then t = t .. (", AutoTP %d"):format(c.tp) end
  return t
end

-- A list of allowed parallel sizes: positive integers, 1 first if absent.
local function sizes(v, name)
  if v == nil then return { 1 } end
  if type(v) ~= "table" or #v == 0 then fail(name .. " must be a non-empty list of sizes") end
  local out, seen = {}, {}
  for _, x in ipairs(v) do
    local i = math.tointeger(x)
    if i == nil or i < 1 then fail(("%s: sizes must be positive whole numbers, got %s"):format(
      name, tostring(x))) end
    if not seen[i] then seen[i] = true; out[#out + 1] = i end
  end
  table.sort(out)
  return out
end

-- Divisors of n that are <= limit, largest first.
local function micro_candidates(n, limit)
  local out = {}
  for m = math.min(n, limit), 1, -1 do
    if n % m == 0 then out[#out + 1] = m end
  end
  return out
end

function M.plan(opts)
  if type(opts) ~= "table" then fail("expected a table of options") end
  for _, k in ipairs(dsforge.sorted_keys(opts)) do
    if not KEYS[k] then fail("unknown option '" .. tostring(k) .. "'") end
  end
  local model = opts.model
  if type(model) ~= "table" then
    fail("model is required (an entry from deepspeed.models.get or from_hf_config)")
  end
  for _, f in ipairs(MODEL_FIELDS) do
    local v = model[f]
    if type(v) ~= "number" or math.tointeger(v) == nil or v <= 0 then
      fail(("model.%s must be a positive whole number, got %s"):format(f, tostring(v)))
    end
  end
  local n = count(opts.gpus_per_node, "gpus_per_node")
  local nodes = count(opts.nodes, "nodes", 1)
  local gpu_mem = bytes_budget(opts.gpu_mem_bytes, "gpu_mem_bytes")
  local cpu_mem = bytes_budget(opts.cpu_mem_bytes, "cpu_mem_bytes")
  local seq = count(opts.seq_len, "seq_len")
  local global_batch = count(opts.global_batch, "global_batch")
  local dtype = count(opts.dtype_bytes, "dtype_bytes", 2)
  local max_mb = count(opts.max_micro_batch, "max_micro_batch", 64)
  local flash = opts.flash_attention
  if flash ~= nil and type(flash) ~= "boolean" then
    fail("flash_attention must be a boolean, got " .. type(flash))
  end
  local margin = opts.margin
  -- the default is the margin gen's fit check uses (summary.lua)
  if margin == nil then margin = require("deepspeed.summary").FIT_MARGIN end
  if type(margin) ~= "number" or margin ~= margin or margin < 0 or margin >= 1 then
    fail("margin must be a number in [0, 1), got " .. tostring(margin))
  end
  -- Choices the caller fixed: only candidates that keep them are tried.
  local fixed_stage = opts.stage
  if fixed_stage ~= nil and (math.type(fixed_stage) ~= "integer" or fixed_stage < 0
      or fixed_stage > 3) then
    fail("stage must be 0, 1, 2 or 3, got " .. tostring(fixed_stage))
  end
  for _, k in ipairs({ "offload_optimizer", "offload_param" }) do
    local v = opts[k]
    if v ~= nil and v ~= "none" and v ~= "cpu" and v ~= "nvme" then
      fail(("%s must be \"none\", \"cpu\" or \"nvme\", got %s"):format(k, tostring(v)))
    end
  end
  if opts.nvme ~= nil and type(opts.nvme) ~= "boolean" then
    fail("nvme must be a boolean, got " .. type(opts.nvme))
  end
  local sp_sizes, tp_sizes = sizes(opts.sp_sizes, "sp_sizes"), sizes(opts.tp_sizes, "tp_sizes")
  local trainable = opts.trainable_params
  if trainable ~= nil then trainable = count(trainable, "trainable_params") end
  local base_bits = count(opts.base_bits, "base_bits", 16)
  local fixed_mb = opts.micro_batch ~= nil and count(opts.micro_batch, "micro_batch") or nil
  local fixed_ckpt = opts.activation_checkpointing
  if fixed_ckpt ~= nil and type(fixed_ckpt) ~= "boolean" then
    fail("activation_checkpointing must be a boolean, got " .. type(fixed_ckpt))
  end
  local ep = count(opts.ep_size, "ep_size", 1)
  -- an MoE model's terms (deepspeed.moe), loaded only for one
  local moe = (model.experts or ep > 1) and require("deepspeed.moe") or nil
  local n0, nodes0 = count(opts.gpus_per_node, "gpus_per_node"), count(opts.nodes, "nodes", 1)
  local function sp_ok(sp)
    return (n0 * nodes0) % sp == 0 and model.heads % sp == 0 and count(opts.seq_len, "seq_len") % sp == 0
  end
  local function tp_ok(tp)
    return n0 % tp == 0 and model.heads % tp == 0 and (model.kv_heads or model.heads) % tp == 0
  end
  local pars = {}
  for _, sp in ipairs(sp_sizes) do
    if sp_ok(sp) and (sp == 1 or not moe) then pars[#pars + 1] = { sp = sp, tp = 1 } end
  end
  for _, tp in ipairs(tp_sizes) do
    if tp > 1 and tp_ok(tp) and not moe then pars[#pars + 1] = { sp = 1, tp = tp } end
  end
  local base = {}
  for _, c in ipairs(M.CANDIDATES) do base[#base + 1] = c end
  if (opts.nvme or opts.offload_optimizer == "nvme") and not moe then
    for _, c in ipairs(M.NVME_CANDIDATES) do base[#base + 1] = c end
  end
  local candidates = {}
  local level = -1
  local group = {}
  local function flush()
    for _, pr in ipairs(pars) do
      for _, c in ipairs(group) do
        if pr.sp == 1 and pr.tp == 1 then
          candidates[#candidates + 1] = c
        else
          candidates[#candidates + 1] = { level = c.level, stage = c.stage,
            offload_optimizer = c.offload_optimizer, offload_param = c.offload_param,
            sp = pr.sp, tp = pr.tp }
        end
      end
    end
    group = {}
  end
  for _, c in ipairs(base) do
    if (fixed_stage == nil or c.stage == fixed_stage) and (ep == 1 or c.stage < 3)
        and (opts.offload_optimizer == nil or c.offload_optimizer == opts.offload_optimizer)
        and (opts.offload_param == nil or c.offload_param == opts.offload_param)
        and not (trainable and c.offload_param ~= "none") then
      if c.level ~= level then flush(); level = c.level end
      group[#group + 1] = c
    end
  end
  flush()
  local ckpts = fixed_ckpt == nil and { false, true } or { fixed_ckpt }
  -- the cheapest activations a candidate can have
  local ckpt_min = fixed_ckpt == nil or fixed_ckpt

  local dp = n * nodes
  local gpu_limit = math.floor(gpu_mem * (1 - margin))
  local cpu_limit = math.floor(cpu_mem * (1 - margin))
  local params = math.tointeger(model.params)
  local name = model.name or model.arch or "model"
  local header = ("%s: %.2fB params, largest layer %.2fM; %s (%d per node x %s); " ..
    "usable %s per GPU (%s x %.2f) and %s CPU RAM per node (%s x %.2f)"):format(
    name, params / 1e9, model.largest_layer / 1e6, plural(dp, "GPU"), n, plural(nodes, "node"),
    gib(gpu_limit), gib(gpu_mem), 1 - margin, gib(cpu_limit), gib(cpu_mem), 1 - margin)

  -- (deepspeed.moe and deepspeed.memory_terms each model one of them)
  if moe and (trainable or opts.offload_optimizer == "nvme" or opts.offload_param == "nvme") then
    return { fits = false, tried = {}, fixes = {}, reasons = {
      "nothing fits: LoRA and NVMe offload are not modelled for a mixture-of-experts model",
      header } }
  end
  if #candidates == 0 then
    return {
      fits = false,
      reasons = {
        "nothing fits: no ZeRO stage and offload combination keeps the fixed choices " ..
          "(optimizer offload needs ZeRO 1-3, parameter offload ZeRO-3 and optimizer offload)",
        header,
      },
      tried = {}, fixes = {},
    }
  end
  local ep_why = ep > 1 and moe.check_ep(model, ep, nil, dp)
  if ep_why then
    return { fits = false, tried = {}, fixes = {}, reasons = { "nothing fits: " .. ep_why, header } }
  end
  -- A candidate's batch: its data-parallel size is world / (sp * tp).
  local function batch_of(c)
    local cdp = dp // ((c.sp or 1) * (c.tp or 1))
    if global_batch % cdp ~= 0 then return nil end
    local pg = global_batch // cdp
    local ms = micro_candidates(pg, max_mb)
    if fixed_mb then
      if pg % fixed_mb ~= 0 then return nil end
      ms = { fixed_mb }
    end
    return { dp = cdp, per_gpu = pg, micros = ms, smallest = ms[#ms] }
  end
  local valid, batches = {}, {}
  for _, c in ipairs(candidates) do
    local b = batch_of(c)
    if b then valid[#valid + 1] = c; batches[c] = b end
  end
  local all_plain = true
  for _, c in ipairs(candidates) do
    if (c.sp or 1) > 1 or (c.tp or 1) > 1 then all_plain = false end
  end
  if #valid < #candidates and (all_plain or #valid == 0) and global_batch % dp ~= 0 then
    return {
      fits = false, tried = {}, fixes = {},
      reasons = {
        ("nothing fits: global_batch %d is not a multiple of the data-parallel size %d " ..
          "(%d per node x %s); DeepSpeed requires train_batch_size = " ..
          "micro_batch x gradient_accumulation x %d"):format(global_batch, dp, n,
          plural(nodes, "node"), dp),
        header,
      },
    }
  end

  local per_gpu = global_batch // dp
  if fixed_mb and #valid < #candidates and (all_plain or #valid == 0) then
    if per_gpu % fixed_mb ~= 0 then
      return {
        fits = false, tried = {}, fixes = {},
        reasons = {
          ("nothing fits: micro batch %d does not divide global_batch %d / %s = %d " ..
            "samples per GPU per step"):format(fixed_mb, global_batch, plural(dp, "GPU"), per_gpu),
          header,
        },
      }
    end
  end
  if #valid == 0 then
    return {
      fits = false, tried = {}, fixes = {},
      reasons = {
        ("nothing fits: no allowed sequence- or tensor-parallel size gives a data-parallel " ..
          "size that divides global_batch %d"):format(global_batch),
        header,
      },
    }
  end
  candidates = valid

  local function act_of(mb, ckpt, c)
    local o = {
      seq_len = seq, micro_batch = mb, hidden_size = model.hidden_size,
      layers = model.layers, heads = model.heads, vocab = model.vocab,
      checkpointing = ckpt, dtype_bytes = dtype, flash_attention = flash or false,
    }
    if (c.sp or 1) > 1 then o.sp = c.sp end
    if (c.tp or 1) > 1 then o.tp = c.tp end
    return activations.bytes(o) + (moe and moe.activation_extra{ model = model, seq_len = seq,
      micro_batch = mb, dtype_bytes = dtype, checkpointing = ckpt } or 0)
  end

  local function states_of(c)
    if moe then -- (no sp, tp, NVMe or LoRA candidates with experts: above)
      return moe.estimate({
        stage = c.stage, params = params, largest_layer = model.largest_layer,
        gpus_per_node = n, nodes = nodes, offload_optimizer = c.offload_optimizer,
        offload_param = c.offload_param, zero_init = true,
      }, model, ep)
    end
    if c.level <= 2 and (c.tp or 1) == 1 and trainable == nil then
      return memory.estimate{
        stage = c.stage, params = params, largest_layer = model.largest_layer,
        gpus_per_node = n, nodes = nodes, offload_optimizer = c.offload_optimizer,
        offload_param = c.offload_param, zero_init = true,
      }
    end
    return require("deepspeed.memory_terms").states{
      stage = c.stage, params = params, largest_layer = model.largest_layer,
      gpus_per_node = n, nodes = nodes, offload_optimizer = c.offload_optimizer,
      offload_param = c.offload_param, zero_init = true, tp = c.tp,
      trainable_params = trainable, base_bits = base_bits, nvme = opts.nvme_tuning,
    }
  end

  local notes = {}
  if type(model.context) == "number" and seq > model.context then
    notes[#notes + 1] = ("note: seq_len %d exceeds the model's context length %d"):format(
      seq, model.context)
  end

  local rejected = {}
  local tried = {}
  -- smallest per-GPU need and smallest host RAM seen, for the "nothing fits" summary
  local best_gpu, least_cpu = nil, nil
  local best_in_cpu = nil -- smallest per-GPU need among those within the CPU budget
  for _, c in ipairs(candidates) do
    local states = states_of(c)
    local cb = batches[c]
    local micros, smallest_mb, per_gpu = cb.micros, cb.smallest, cb.per_gpu
    local cdp = cb.dp
    local dp_text = cdp == dp and plural(dp, "GPU")
      or ("%d data-parallel ranks (%s / %d)"):format(cdp, plural(dp, "GPU"), dp // cdp)
    local function act(mb, ckpt) return act_of(mb, ckpt, c) end
    local min_need = states.gpu + act(smallest_mb, ckpt_min)
    tried[#tried + 1] = {
      label = label(c), stage = c.stage, offload_optimizer = c.offload_optimizer,
      offload_param = c.offload_param, gpu_bytes = min_need, cpu_bytes = states.cpu,
      gpu_over_bytes = math.max(0, min_need - gpu_limit),
      cpu_over_bytes = math.max(0, states.cpu - cpu_limit),
    }
    if best_gpu == nil or min_need < best_gpu.need then
      best_gpu = { need = min_need, cand = c, cpu = states.cpu, mb = smallest_mb }
    end
    if least_cpu == nil or states.cpu < least_cpu.cpu then
      least_cpu = { cpu = states.cpu, cand = c }
    end
    if states.cpu <= cpu_limit and (best_in_cpu == nil or min_need < best_in_cpu.need) then
      best_in_cpu = { need = min_need, cand = c }
    end
    if states.cpu > cpu_limit and states.gpu > gpu_limit then
      rejected[#rejected + 1] = ("%s: rejected, its model states need %s per GPU and %s of " ..
        "CPU RAM per node but only %s and %s are usable"):format(label(c), gib(states.gpu),
        gib(states.cpu), gib(gpu_limit), gib(cpu_limit))
    elseif states.cpu > cpu_limit then
      rejected[#rejected + 1] = ("%s: rejected, its model states need %s of CPU RAM per node " ..
        "but only %s is usable"):format(label(c), gib(states.cpu), gib(cpu_limit))
    elseif states.gpu > gpu_limit then
      rejected[#rejected + 1] = ("%s: rejected, model states alone need %s per GPU " ..
        "but only %s is usable"):format(label(c), gib(states.gpu), gib(gpu_limit))
    else
      for _, ckpt in ipairs(ckpts) do
        local too_big = nil -- the next larger micro batch, which did not fit
        for _, mb in ipairs(micros) do
          local a = act(mb, ckpt)
          local need = states.gpu + a
          if need <= gpu_limit then
            local reasons = {}
            local ga = per_gpu // mb
            reasons[1] = ("chosen: %s, activation checkpointing %s, micro batch %d x " ..
              "gradient accumulation %d x %s = global batch %d; %s of %s per GPU " ..
              "(model states %s + activations %s), %s of %s CPU RAM per node"):format(
              label(c), ckpt and "on" or "off", mb, ga, dp_text, global_batch, gib(need),
              gib(gpu_limit), gib(states.gpu), gib(a), gib(states.cpu), gib(cpu_limit))
            reasons[2] = header
            for _, r in ipairs(rejected) do reasons[#reasons + 1] = r end
            if ckpt and fixed_ckpt == nil then
              local a1 = act(smallest_mb, false)
              reasons[#reasons + 1] = ("%s without activation checkpointing: rejected, even " ..
                "micro batch %d needs %s per GPU (model states %s + activations %s) but only " ..
                "%s is usable"):format(label(c), smallest_mb, gib(states.gpu + a1),
                gib(states.gpu), gib(a1), gib(gpu_limit))
            end
            if too_big then
              reasons[#reasons + 1] = ("micro batch %d would need %s per GPU (activations %s) " ..
                "but only %s is usable"):format(too_big.mb, gib(too_big.need), gib(too_big.a),
                gib(gpu_limit))
            elseif mb == micros[1] and mb < per_gpu then
              reasons[#reasons + 1] = ("micro batch %d is the largest divisor of %d " ..
                "(global_batch / data-parallel size) allowed by max_micro_batch %d"):format(
                mb, per_gpu, max_mb)
            end
            for _, nt in ipairs(notes) do reasons[#reasons + 1] = nt end
            return {
              fits = true,
              stage = c.stage,
              offload_optimizer = c.offload_optimizer,
              offload_param = c.offload_param,
              zero_init = c.stage == 3 or nil,
              sp = c.sp or 1, tp = c.tp or 1, data_parallel = cdp,
              nvme_bytes = states.nvme,
              micro_batch = mb,
              gradient_accumulation = ga,
              activation_checkpointing = ckpt,
              gpu_bytes = need,
              cpu_bytes = states.cpu,
              activation_bytes = a,
              model_states_gpu_bytes = states.gpu,
              gpu_limit_bytes = gpu_limit,
              cpu_limit_bytes = cpu_limit,
              reasons = reasons,
            }
          end
          too_big = { mb = mb, need = need, a = a }
        end
      end
      local a1 = act(smallest_mb, ckpt_min)
      rejected[#rejected + 1] = ("%s: rejected, even micro batch %d %s activation " ..
        "checkpointing needs %s per GPU (model states %s + activations %s) but only %s " ..
        "is usable"):format(label(c), smallest_mb, ckpt_min and "with" or "without",
        gib(states.gpu + a1), gib(states.gpu), gib(a1), gib(gpu_limit))
    end
  end

  local summary
  local c = best_gpu.cand
  if best_gpu.need > gpu_limit then
    summary = ("nothing fits: the smallest configuration (%s, micro batch %d, %s " ..
      "checkpointing) needs %s per GPU but only %s is usable"):format(
      label(c), best_gpu.mb, ckpt_min and "activation" or "no activation",
      gib(best_gpu.need), gib(gpu_limit))
  elseif least_cpu.cpu > cpu_limit or best_in_cpu == nil then
    summary = ("nothing fits: every configuration needs more CPU RAM per node than is " ..
      "usable; the least, %s, needs %s but only %s is usable"):format(
      label(least_cpu.cand), gib(least_cpu.cpu), gib(cpu_limit))
  else
    summary = ("nothing fits: %s with micro batch %d and activation checkpointing would fit " ..
      "the GPU (%s of %s) but needs %s of CPU RAM per node, only %s is usable; within the " ..
      "CPU budget the smallest, %s, needs %s per GPU"):format(
      label(c), best_gpu.mb, gib(best_gpu.need), gib(gpu_limit), gib(best_gpu.cpu),
      gib(cpu_limit), label(best_in_cpu.cand), gib(best_in_cpu.need))
  end
  local reasons = { summary, header }
  for _, r in ipairs(rejected) do reasons[#reasons + 1] = r end
  for _, nt in ipairs(notes) do reasons[#reasons + 1] = nt end
  local fixes = {}
  if opts.suggest then fixes = M.fixes(opts) end
  return { fits = false, reasons = reasons, tried = tried, fixes = fixes }
end

-- The option tables of M.plan with `change` applied (NONE removes a key).
local NONE = {}
local function with(opts, change)
  local o = {}
  for _, k in ipairs(dsforge.sorted_keys(opts)) do o[k] = opts[k] end
  for _, k in ipairs(dsforge.sorted_keys(change)) do
    local v = change[k]
    if v == NONE then o[k] = nil else o[k] = v end
  end
  o.suggest = nil
  return o
end

local GPU_SIZES_GIB = { 16, 24, 32, 40, 48, 80, 96, 141, 192 }

--- The cheapest single changes that make a failed plan fit (see M.plan).
function M.fixes(opts)
  local fixes = {}
  local function try(change, what)
    local r = M.plan(with(opts, change))
    if r.fits then
      fixes[#fixes + 1] = { change = change, what = what, plan = r }
      return true
    end
    return false
  end
  -- 1. a choice the caller fixed, left to the planner
  if opts.micro_batch ~= nil then
    try({ micro_batch = NONE }, "a micro batch chosen by the planner")
  end
  if opts.activation_checkpointing == false then
    try({ activation_checkpointing = NONE }, "activation checkpointing")
  end
  if opts.stage ~= nil then
    try({ stage = NONE }, "a ZeRO stage chosen by the planner")
  end
  if opts.offload_optimizer ~= nil or opts.offload_param ~= nil then
    try({ offload_optimizer = NONE, offload_param = NONE }, "offload chosen by the planner")
  end
  -- 2. a shorter sequence (activations shrink, model states do not)
  local seq = opts.seq_len
  local s = seq // 2
  while s >= 128 do
    if try({ seq_len = s }, ("seq_len %d"):format(s)) then break end
    s = s // 2
  end
  -- 3. more GPUs: fill the node up to 8 GPUs, then add nodes
  local n, nodes = opts.gpus_per_node, opts.nodes or 1
  local gb = opts.global_batch
  for _ = 1, 12 do
    if n < 8 then n = math.min(8, n * 2) else nodes = nodes * 2 end
    if n * nodes > 4096 then break end
    if gb % (n * nodes) == 0 and try({ gpus_per_node = n, nodes = nodes },
        ("%d GPUs"):format(n * nodes)) then
      break
    end
  end
  -- 4. a GPU with more memory
  for _, g in ipairs(GPU_SIZES_GIB) do
    local bytes = g * 2 ^ 30
    if bytes > opts.gpu_mem_bytes and try({ gpu_mem_bytes = bytes },
        ("%d GiB per GPU"):format(g)) then
      break
    end
  end
  -- 5. more host RAM per node
  local cpu = opts.cpu_mem_bytes
  for _ = 1, 6 do
    cpu = cpu * 2
    if try({ cpu_mem_bytes = cpu }, ("%.0f GiB CPU RAM per node"):format(cpu / 2 ^ 30)) then
      break
    end
  end
  return fixes
end

--- Cost rank of a successful plan: compare lexicographically, smaller is cheaper.
function M.rank(result)
  if type(result) ~= "table" or not result.fits then
    error("deepspeed.planner.rank: expected a plan with fits = true", 2)
  end
  local level = 0
  if result.offload_param == "nvme" then
    level = 4
  elseif result.offload_optimizer == "nvme" then
    level = 3
  elseif result.offload_param == "cpu" then
    level = 2
  elseif result.offload_optimizer == "cpu" then
    level = 1
  end
  return { level, result.sp or 1, result.tp or 1, result.stage,
    result.activation_checkpointing and 1 or 0, -result.micro_batch }
end

return M
