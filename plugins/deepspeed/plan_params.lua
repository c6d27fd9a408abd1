-- plugins/deepspeed/plan_params.lua -- the planner as a profile helper.
--
-- A profile's prepare(p) can return plan_params.prepare(p, opts): the
-- planner (deepspeed.planner) picks ZeRO stage, offload, micro batch,
-- accumulation and activation checkpointing for the model and memory
-- budget in the params, and this returns them as param changes in the
-- base profile's names (zero_stage, offload, micro_batch_size,
-- gradient_accumulation, activation_checkpointing). When nothing fits it
-- stops with dsforge.fail (an input error, exit 3) that says why.
--
-- Params read: model, world_size, gpus_per_node, gpu_mem_gb, cpu_mem_gb,
-- seq_len, global_batch, flash_attention, and optionally max_micro_batch.
-- opts: { max_micro_batch = N, margin = 0.10, min_stage = 0 } (all optional;
-- min_stage skips cheaper stages a profile does not want, e.g. 3).

local models = require("deepspeed.models")
local planner = require("deepspeed.planner")

local M = {}

local GIB = 1024 * 1024 * 1024

function M.prepare(p, opts)
  opts = opts or {}
  local model = models.get(p.model)
  if not model then
    local s = models.suggest(p.model)
    dsforge.fail(("unknown model '%s'%s"):format(p.model,
      #s > 0 and (" (did you mean " .. table.concat(s, ", ") .. "?)") or ""))
  end
  local world = p.world_size
  local per_node = math.min(p.gpus_per_node, world)
  if world % per_node ~= 0 then
    dsforge.fail(("world_size %d is not a multiple of gpus_per_node %d"):format(world, per_node))
  end
  local plan = planner.plan{
    model = model, gpus_per_node = per_node, nodes = world // per_node,
    gpu_mem_bytes = math.floor(p.gpu_mem_gb * GIB),
    cpu_mem_bytes = math.floor(p.cpu_mem_gb * GIB),
    seq_len = p.seq_len, global_batch = p.global_batch,
    margin = opts.margin, max_micro_batch = opts.max_micro_batch or p.max_micro_batch,
    flash_attention = p.flash_attention == true,
  }
  if not plan.fits then
    dsforge.fail(table.concat(plan.reasons, "; "))
  end
  if opts.min_stage and plan.stage < opts.min_stage and plan.offload_optimizer == "none" then
    plan.stage = opts.min_stage
  end
  local offload = "none"
  if plan.offload_param == "cpu" then
    offload = "all"
  elseif plan.offload_optimizer == "cpu" then
    offload = "optimizer"
  end
  return {
    zero_stage = plan.stage,
    offload = offload,
    micro_batch_size = plan.micro_batch,
    gradient_accumulation = plan.gradient_accumulation,
    activation_checkpointing = plan.activation_checkpointing,
  }
end

return M
