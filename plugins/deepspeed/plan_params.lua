-- plugins/deepspeed/plan_params.lua -- the planner as a profile helper.
--
-- A profile's prepare(p, ctx) can return plan_params.prepare(p, opts, ctx):
-- the planner (deepspeed.planner) picks ZeRO stage, offload, micro batch,
-- accumulation and activation checkpointing for the model and memory
-- budget in the params, and this returns them as param changes in the
-- base profile's names (zero_stage, offload, micro_batch_size,
-- gradient_accumulation, activation_checkpointing).
--
-- A param the command line set (ctx.given, from --param or --matrix) is
-- never changed: the planner keeps it and plans the others around it, so a
-- variant named zero_stage-2 has ZeRO stage 2. Settings that contradict
-- each other (offload=all with zero_stage=2, micro x accumulation x GPUs
-- other than global_batch) stop with an error naming both.
--
-- When nothing fits it stops with dsforge.fail (an input error, exit 3),
-- attributed to the calling profile: what was tried, how far each was from
-- the budget, and the cheapest single changes that would fit (each found by
-- planning again with the change).
--
-- Params read: model, world_size, gpus_per_node, gpu_mem_gb, cpu_mem_gb,
-- seq_len, global_batch, flash_attention, offload, sequence_parallel_size,
-- finetune and lora_rank (base profile), and optionally max_micro_batch.
-- opts: { max_micro_batch = N, margin = 0.10, min_stage = 0, nvme = false,
-- sp_from = nil } (all optional; min_stage skips cheaper stages a profile
-- does not want, e.g. 3; nvme lets the planner offload to NVMe at nvme_path
-- when CPU offload does not fit; sp_from = S lets it use Ulysses sequence
-- parallelism, every size dividing the world, when seq_len >= S).
-- The changes returned then include sequence_parallel_size.

local models = require("deepspeed.models")
local planner = require("deepspeed.planner")

local M = {}

local GIB = 1024 * 1024 * 1024

-- Stops the caller's caller (the profile's prepare) with an input error.
local function fail(msg)
  dsforge.fail(msg, 3)
end

local OFFLOAD = {
  none = { "none", "none" }, optimizer = { "cpu", "none" }, all = { "cpu", "cpu" },
  nvme = { "nvme", "none" }, ["nvme-all"] = { "nvme", "nvme" },
}

local function offload_name(oo, op)
  if op == "nvme" then return "nvme-all" elseif oo == "nvme" then return "nvme" end
  if op == "cpu" then return "all" elseif oo == "cpu" then return "optimizer" end
  return "none"
end

-- "--param k=v" for a planner change, in the base profile's param names.
local function as_params(change, p, given)
  local out = {}
  local function add(k, v) out[#out + 1] = ("--param %s=%s"):format(k, tostring(v)) end
  if change.gpu_mem_bytes then add("gpu_mem_gb", math.floor(change.gpu_mem_bytes / GIB)) end
  if change.cpu_mem_bytes then add("cpu_mem_gb", math.floor(change.cpu_mem_bytes / GIB)) end
  if change.seq_len then add("seq_len", change.seq_len) end
  if change.gpus_per_node then
    if change.gpus_per_node ~= p.gpus_per_node then add("gpus_per_node", change.gpus_per_node) end
    if change.nodes ~= p.nodes then add("nodes", change.nodes) end
    if given.world_size then add("world_size", change.gpus_per_node * change.nodes) end
  end
  return table.concat(out, " ")
end

local DROPPED = {
  micro_batch = "micro_batch_size", activation_checkpointing = "activation_checkpointing",
  stage = "zero_stage", offload_optimizer = "offload",
}

local function describe_plan(r)
  local off = r.offload_param == "nvme" and "optimizer + parameter offload to NVMe"
    or r.offload_optimizer == "nvme" and "optimizer offload to NVMe"
    or r.offload_param == "cpu" and "optimizer + parameter offload"
    or r.offload_optimizer == "cpu" and "optimizer offload" or "no offload"
  if (r.sp or 1) > 1 then off = off .. (", sequence parallel %d"):format(r.sp) end
  return ("ZeRO-%d, %s, micro batch %d, checkpointing %s: %.2f of %.2f GiB per GPU"):format(
    r.stage, off, r.micro_batch, r.activation_checkpointing and "on" or "off",
    r.gpu_bytes / GIB, r.gpu_limit_bytes / GIB)
end

-- The "nothing fits" report: a table of what was tried, then the fixes.
local function nothing_fits(plan, p, given, o)
  local n = o.gpus_per_node * o.nodes
  local lines = { ("nothing fits %s on %d GPU%s of %g GiB with %g GiB CPU RAM per node " ..
    "(%d%% kept free)"):format(p.model, n, n == 1 and "" or "s", p.gpu_mem_gb, p.cpu_mem_gb,
    math.floor((o.margin or 0.10) * 100 + 0.5)) }
  if #plan.tried == 0 then
    lines[1] = lines[1] .. ": " .. plan.reasons[1]:gsub("^nothing fits: ", "")
  else
    lines[#lines + 1] = ("  %-44s %12s %9s %12s %9s"):format("tried (smallest micro batch)",
      "GPU need", "over by", "CPU need", "over by")
    for _, t in ipairs(plan.tried) do
      local function over(b) return b > 0 and ("%.2f"):format(b / GIB) or "-" end
      lines[#lines + 1] = ("  %-44s %8.2f GiB %9s %8.2f GiB %9s"):format(t.label,
        t.gpu_bytes / GIB, over(t.gpu_over_bytes), t.cpu_bytes / GIB, over(t.cpu_over_bytes))
    end
  end
  local fixes = {}
  for i, f in ipairs(plan.fixes) do fixes[i] = f end
  table.sort(fixes, function(a, b)
    local ra, rb = planner.rank(a.plan), planner.rank(b.plan)
    for k = 1, #ra do
      if ra[k] ~= rb[k] then return ra[k] < rb[k] end
    end
    return a.order < b.order
  end)
  if #fixes == 0 then
    lines[#lines + 1] = "  no single change fits (tried: a shorter sequence, more GPUs, " ..
      "larger GPUs, more CPU RAM)"
  else
    lines[#lines + 1] = "  changes that fit, cheapest first:"
    for _, f in ipairs(fixes) do
      local how
      local dropped = {}
      for _, k in ipairs(dsforge.sorted_keys(f.change)) do
        if DROPPED[k] and given[DROPPED[k]] then
          dropped[#dropped + 1] = ("--param %s=%s"):format(DROPPED[k], tostring(p[DROPPED[k]]))
        end
      end
      local what = ""
      if #dropped > 0 then
        how = "without " .. table.concat(dropped, " ")
        what = " (" .. f.what .. ")"
      else
        how = as_params(f.change, p, given)
        if f.change.gpus_per_node then what = (" (%s)"):format(f.what) end
      end
      lines[#lines + 1] = ("    %s%s: %s"):format(how, what, describe_plan(f.plan))
    end
  end
  return table.concat(lines, "\n")
end

function M.prepare(p, opts, ctx)
  opts = opts or {}
  local given = type(ctx) == "table" and type(ctx.given) == "table" and ctx.given or {}
  local model = models.get(p.model)
  if not model then
    local s = models.suggest(p.model)
    fail(("unknown model '%s'%s"):format(p.model,
      #s > 0 and (" (did you mean " .. table.concat(s, ", ") .. "?)") or ""))
  end
  local world = p.world_size
  local per_node = math.min(p.gpus_per_node, world)
  if world % per_node ~= 0 then
    fail(("world_size %d is not a multiple of gpus_per_node %d"):format(world, per_node))
  end
  local o = {
    model = model, gpus_per_node = per_node, nodes = world // per_node,
    gpu_mem_bytes = math.floor(p.gpu_mem_gb * GIB),
    cpu_mem_bytes = math.floor(p.cpu_mem_gb * GIB),
    seq_len = p.seq_len, global_batch = p.global_batch,
    margin = opts.margin, max_micro_batch = opts.max_micro_batch or p.max_micro_batch,
    flash_attention = p.flash_attention == true, suggest = true,
    ep_size = p.expert_parallel_size ~= 1 and p.expert_parallel_size or nil,
  }
  local sp_fixed = given.sequence_parallel_size and p.sequence_parallel_size or nil
  local dp = world // (sp_fixed or 1)
  if sp_fixed then
    o.sp_sizes = { sp_fixed }
  elseif opts.sp_from and p.seq_len >= opts.sp_from then
    o.sp_sizes = {}
    for sp = 1, world do
      if world % sp == 0 then o.sp_sizes[#o.sp_sizes + 1] = sp end
    end
  end
  local offload_nvme = p.offload == "nvme" or p.offload == "nvme-all"
  -- (with a fixed CPU offload too: "without --param offload=..." then
  -- considers NVMe)
  if opts.nvme or (given.offload and offload_nvme) then
    -- (memory_terms, loaded only when an NVMe candidate is weighed, sizes
    -- the buffers as base.lua writes them: NVME_SUB_GROUP_SIZE and
    -- param_buffer_size(L, world))
    o.nvme = true
  end
  if p.finetune == "lora" or p.finetune == "qlora" then
    local ok, t = pcall(require("deepspeed.memory_terms").lora_trainable, model, p.lora_rank)
    if not ok then fail(("finetune=%s: %s"):format(p.finetune, (tostring(t):gsub("^[^:]*:%d+: ", ""):gsub("^deepspeed%.memory_terms: ", "")))) end
    o.trainable_params = t
    o.base_bits = p.finetune == "qlora" and 4 or 16
  end
  -- What the command line fixed, the planner keeps.
  if given.zero_stage then o.stage = p.zero_stage end
  if given.offload then
    o.offload_optimizer, o.offload_param = OFFLOAD[p.offload][1], OFFLOAD[p.offload][2]
    if p.offload ~= "none" and given.zero_stage and p.zero_stage == 0 then
      fail(("offload=%s needs ZeRO stage 1-3 but zero_stage=0 was given"):format(p.offload))
    end
    if p.offload == "all" and given.zero_stage and p.zero_stage < 3 then
      fail(("offload=all (parameter offload) needs ZeRO stage 3 but zero_stage=%d was given")
        :format(p.zero_stage))
    end
    if offload_nvme and given.zero_stage and p.zero_stage < 3 then
      fail(("offload=%s (ZeRO-Infinity) needs ZeRO stage 3 but zero_stage=%d was given")
        :format(p.offload, p.zero_stage))
    end
  end
  if given.activation_checkpointing then o.activation_checkpointing = p.activation_checkpointing end
  if given.micro_batch_size and given.gradient_accumulation then
    local gb = p.micro_batch_size * p.gradient_accumulation * dp
    if given.global_batch and gb ~= p.global_batch then
      fail(("micro_batch_size=%d x gradient_accumulation=%d x data-parallel size %d = %d, " ..
        "but global_batch=%d was given"):format(p.micro_batch_size, p.gradient_accumulation,
        dp, gb, p.global_batch))
    end
    o.global_batch = gb
    o.micro_batch = p.micro_batch_size
  elseif given.micro_batch_size then
    o.micro_batch = p.micro_batch_size
  elseif given.gradient_accumulation then
    local per_gpu = p.global_batch // dp
    if p.global_batch % dp ~= 0 or per_gpu % p.gradient_accumulation ~= 0 then
      fail(("gradient_accumulation=%d does not divide global_batch=%d / data-parallel size %d")
        :format(p.gradient_accumulation, p.global_batch, dp))
    end
    o.micro_batch = per_gpu // p.gradient_accumulation
  end
  if o.micro_batch and o.global_batch % (o.micro_batch * dp) ~= 0 then
    fail(("micro_batch_size=%d x data-parallel size %d does not divide global_batch=%d"):format(
      o.micro_batch, dp, o.global_batch))
  end
  local plan = planner.plan(o)
  if not plan.fits then
    for i, f in ipairs(plan.fixes) do f.order = i end
    fail(nothing_fits(plan, p, given, o))
  end
  if opts.min_stage and not given.zero_stage and plan.stage < opts.min_stage
      and plan.offload_optimizer == "none" then
    plan.stage = opts.min_stage
  end
  return {
    -- (changes only when micro batch and accumulation were both given)
    global_batch = o.global_batch,
    zero_stage = plan.stage,
    offload = offload_name(plan.offload_optimizer, plan.offload_param),
    micro_batch_size = plan.micro_batch,
    gradient_accumulation = plan.gradient_accumulation,
    activation_checkpointing = plan.activation_checkpointing,
    sequence_parallel_size = plan.sp,
  }
end

--- AutoTP for a profile with a fixed stage (high-performance): nil when
--- the params fit without it (or cannot use it), else { autotp_size = tp }
--- with the smallest tp (2, 4, 8; dividing the GPUs per node and the
--- attention and key/value heads) whose model states (deepspeed.memory_terms)
--- and activations (Korthikanti Eq. 2) fit GPU and host memory with the
--- planner's margin. A command-line autotp_size is kept.
function M.autotp(p, ctx)
  local given = type(ctx) == "table" and type(ctx.given) == "table" and ctx.given or {}
  if given.autotp_size or p.offload ~= "none" then return nil end
  local model = models.get(p.model)
  if not model then return nil end
  local terms = require("deepspeed.memory_terms")
  local activations = require("deepspeed.activations")
  local margin = require("deepspeed.columns").FIT_MARGIN
  local world = p.world_size
  local n = math.min(p.gpus_per_node, world)
  local nodes = math.max(1, world // n)
  local gpu_limit = math.floor(p.gpu_mem_gb * GIB * (1 - margin))
  local cpu_limit = math.floor(p.cpu_mem_gb * GIB * (1 - margin))
  for _, tp in ipairs({ 1, 2, 4, 8 }) do
    if n % tp == 0 and model.heads % tp == 0 and (model.kv_heads or model.heads) % tp == 0 then
      local st = terms.states{ stage = p.zero_stage, params = model.params,
        largest_layer = model.largest_layer, gpus_per_node = n, nodes = nodes, tp = tp }
      local a = activations.bytes{ seq_len = p.seq_len, micro_batch = p.micro_batch_size,
        hidden_size = model.hidden_size, layers = model.layers, heads = model.heads,
        vocab = model.vocab, checkpointing = p.activation_checkpointing == true,
        flash_attention = p.flash_attention == true, tp = tp }
      if st.gpu + a <= gpu_limit and st.cpu <= cpu_limit then
        if tp == 1 then return nil end
        return { autotp_size = tp }
      end
    end
  end
  return nil
end

return M
