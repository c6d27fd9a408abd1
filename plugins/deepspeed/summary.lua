-- plugins/deepspeed/summary.lua -- what gen reports for each variant:
-- estimated memory per GPU and per CPU node, whether the variant fits the
-- declared GPU memory, and the matching Hugging Face TrainingArguments.
--
-- Params used (the conventions of contrib/docs/profiles.md): model (a catalog
-- name), gpu_mem_gb, world_size, gpus_per_node (default min(world, 8)),
-- seq_len, micro_batch_size (else the config's), activation_checkpointing
-- or gradient_checkpointing (bool), flash_attention (bool),
-- expert_parallel_size (an MoE model's ep_size, deepspeed.moe; default 1).

-- Loaded when a variant is first summarized (init.lua's summarize hook);
-- what the plugin declares about summaries is columns.lua. The modules
-- below are loaded on first use too.
local memory, models, activations, hf
local function load()
  if not memory then
    memory = require("deepspeed.memory")
    models = require("deepspeed.models")
    activations = require("deepspeed.activations")
    hf = require("deepspeed.hf")
  end
end

local M = {}

local GIB = 1024 * 1024 * 1024

-- The declaration's parts (columns.lua), here too for the callers of
-- this module: the share of gpu_mem_gb a variant must leave free to "fit",
-- the columns, the report layout, the memory-fit rule.
local decl = require("deepspeed.columns")
M.FIT_MARGIN = decl.FIT_MARGIN
M.columns, M.fit_rule, M.report_layout = decl.columns, decl.fit_rule, decl.report_layout

-- Catalog entries by name, memoised (models.get returns a fresh copy each
-- time; the summary only reads it).
local entries = {}
local function catalog_entry(name)
  local e = entries[name]
  if e == nil then
    e = models.get(name) or false
    entries[name] = e
  end
  return e or nil
end

local function device(section)
  if type(section) ~= "table" then return "none" end
  local d = section.device
  if d == "cpu" or d == "nvme" then return "cpu" end
  return "none"
end

-- Sequence- and tensor-parallel sizes a config asks for (1 when absent).
local function parallel_sizes(cfg)
  local v = cfg.sequence_parallel_size
  local sp = type(v) == "number" and math.tointeger(v) or 1
  v = type(cfg.tensor_parallel) == "table" and cfg.tensor_parallel.autotp_size or nil
  local tp = type(v) == "number" and math.tointeger(v) or 1
  return math.max(sp, 1), math.max(tp, 1)
end

-- Model states of NVMe, AutoTP and LoRA configs come from
-- deepspeed.memory_terms (config_states), loaded only for them.
local function extended_states(cfg, params, model, stage, per_node, nodes, tp)
  local z = cfg.zero_optimization
  local nvme = type(z) == "table" and type(z.offload_optimizer) == "table"
    and z.offload_optimizer.device == "nvme"
  if not (nvme or tp > 1 or params.finetune == "lora" or params.finetune == "qlora") then
    return nil
  end
  return require("deepspeed.memory_terms").config_states(cfg, params, model, stage,
    per_node, nodes, tp)
end

local function stage_of(cfg)
  local z = cfg.zero_optimization
  if type(z) ~= "table" then return 0 end
  local s = tonumber(z.stage)
  if s and s >= 0 and s <= 3 then return math.tointeger(s) or 0 end
  return 0
end

-- M.memory(cfg, params) -> { gpu_bytes, cpu_bytes, activation_bytes,
-- model_states_gpu_bytes, gpu_fits, cpu_fits, fits (both that are known),
-- gpu_budget_bytes, cpu_budget_bytes, fit_message } or nil without a model.
function M.memory(cfg, params)
  load()
  local model = type(params.model) == "string" and catalog_entry(params.model) or nil
  if not model then return nil end
  local world = math.tointeger(params.world_size) or 1
  local per_node = math.tointeger(params.gpus_per_node) or math.min(world, 8)
  if per_node < 1 then per_node = 1 end
  local nodes = math.max(1, world // per_node)
  local stage = stage_of(cfg)
  local z = type(cfg.zero_optimization) == "table" and cfg.zero_optimization or {}
  local oo, op = device(z.offload_optimizer), device(z.offload_param)
  if stage < 3 then op = "none" end
  if stage == 0 then oo = "none" end
  local sp, tp = parallel_sizes(cfg)
  -- an MoE model's terms (deepspeed.moe), loaded only for one
  local ep = math.tointeger(params.expert_parallel_size) or 1
  local moe = (model.experts or ep > 1) and require("deepspeed.moe") or nil
  -- (NVMe, AutoTP and LoRA states: deepspeed.memory_terms, not for an MoE
  -- model, which the planner and estimate refuse them for)
  local est = not moe and extended_states(cfg, params, model, stage, per_node, nodes, tp)
  if not est then
    tp = 1
    est = {
      stage = stage, params = model.params, largest_layer = model.largest_layer,
      gpus_per_node = per_node, nodes = nodes, offload_optimizer = oo,
      offload_param = op, zero_init = true,
    }
    est = moe and moe.estimate(est, model, ep) or memory.estimate(est)
  end
  local micro = math.tointeger(cfg.train_micro_batch_size_per_gpu)
    or math.tointeger(params.micro_batch_size) or 1
  local act = 0
  local seq = math.tointeger(params.seq_len)
  if seq and seq > 0 then
    local ckpt = params.activation_checkpointing == true or params.gradient_checkpointing == true
    local o = {
      seq_len = seq, micro_batch = micro, hidden_size = model.hidden_size,
      layers = model.layers, heads = model.heads, vocab = model.vocab,
      checkpointing = ckpt, flash_attention = params.flash_attention == true,
    }
    if sp > 1 then o.sp = sp end
    if tp > 1 then o.tp = tp end
    act = activations.bytes(o) + (moe and moe.activation_extra{ model = model, seq_len = seq,
      micro_batch = micro, checkpointing = ckpt } or 0)
  end
  local out = {
    gpu_bytes = est.gpu + act, cpu_bytes = est.cpu,
    activation_bytes = act, model_states_gpu_bytes = est.gpu,
    nvme_bytes = est.nvme ~= nil and est.nvme > 0 and est.nvme or nil,
  }
  -- GPU memory per device against gpu_mem_gb, host memory per node
  -- against cpu_mem_gb, each keeping the planner's margin (planner.lua:
  -- floor(budget * (1 - margin))); fits when both do (the budgets given)
  local msgs = {}
  local budget = tonumber(params.gpu_mem_gb)
  if budget and budget > 0 then
    local usable = budget * GIB * (1 - M.FIT_MARGIN)
    out.gpu_fits = out.gpu_bytes <= usable
    out.fit_margin = M.FIT_MARGIN
    out.gpu_budget_bytes = math.tointeger(budget * GIB) or budget * GIB
    if not out.gpu_fits then
      msgs[#msgs + 1] = string.format(
        "needs about %.1f GiB per GPU (%.1f model states + %.1f activations) "
        .. "but gpu_mem_gb is %g: %.1f GiB usable with the %g%% margin the planner keeps",
        out.gpu_bytes / GIB, est.gpu / GIB, act / GIB, budget, usable / GIB,
        M.FIT_MARGIN * 100)
    end
  end
  local cpu_budget = tonumber(params.cpu_mem_gb)
  if cpu_budget and cpu_budget > 0 then
    local usable = math.floor(cpu_budget * GIB * (1 - M.FIT_MARGIN))
    out.cpu_fits = out.cpu_bytes <= usable
    out.fit_margin = M.FIT_MARGIN
    out.cpu_budget_bytes = math.tointeger(cpu_budget * GIB) or cpu_budget * GIB
    if not out.cpu_fits then
      msgs[#msgs + 1] = string.format(
        "needs about %.1f GiB of host memory per node (offloaded model states) "
        .. "but cpu_mem_gb is %g: %.1f GiB usable with the %g%% margin the planner keeps",
        out.cpu_bytes / GIB, cpu_budget, usable / GIB, M.FIT_MARGIN * 100)
    end
  end
  if out.gpu_fits ~= nil or out.cpu_fits ~= nil then
    out.fits = out.gpu_fits ~= false and out.cpu_fits ~= false
    if #msgs > 0 then out.fit_message = table.concat(msgs, "; and it ") end
  end
  return out
end

-- M.variant(cfg, params, ctx) -> the summary gen records in the manifest
-- (the plugin's summarize hook; its rules see it as ctx.summary), with the
-- DeepSpeed release its rules checked the variant against
-- (deepspeed_release; deepspeed_release_asked when the version asked for
-- is not that release itself).
function M.variant(cfg, params, ctx)
  load()
  local out = M.memory(cfg, params) or {}
  local c = ctx or { params = params }
  if c.ds_version == nil and type(params.ds_version) ~= "string" then
    -- none asked for: the newest covered release, from the small list
    -- (the whole index is loaded only when a release must be resolved)
    local covered = require("deepspeed.dsdata.releases")
    out.deepspeed_release = covered[#covered].version
  else
    local rel, asked = require("deepspeed.dsversion").checked(c)
    out.deepspeed_release = rel.version
    if asked ~= nil and asked:gsub("^v", "") ~= rel.version then
      out.deepspeed_release_asked = asked
    end
  end
  local args = hf.training_args(cfg, {
    world_size = params.world_size,
    gradient_checkpointing = params.activation_checkpointing == true
      or params.gradient_checkpointing == true,
  })
  if args then out.hf_training_args = args end
  -- The batch composition: micro x accumulation x data-parallel world.
  local micro = math.tointeger(cfg.train_micro_batch_size_per_gpu)
  local gas = math.tointeger(cfg.gradient_accumulation_steps)
  local global = math.tointeger(cfg.train_batch_size)
  if micro or gas or global then
    out.batch = {
      micro = micro, accumulation = gas, global = global,
      -- the data-parallel world: DeepSpeed divides the world by
      -- sequence_parallel_size (runtime/config.py:710)
      world = (math.tointeger(params.world_size) or 1) // (parallel_sizes(cfg)),
    }
  end
  return out
end

return M
