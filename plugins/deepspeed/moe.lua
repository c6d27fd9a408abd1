-- deepspeed.moe: the mixture-of-experts terms of the memory model, on top
-- of deepspeed.memory (model states) and deepspeed.activations.
--
-- 1. Model states. Every expert's parameters are held: a Hugging Face MoE
--    model (Mixtral, Qwen-MoE, DeepSeek-MoE) is, to ZeRO, an ordinary
--    model whose parameters it partitions like any other, so with expert
--    parallel size 1 the estimate is deepspeed.memory's for the total
--    parameter count P (models_moe.lua counts every expert).
--    Expert parallelism (DeepSpeed's deepspeed.moe.layer.MoE, ep_size):
--    DeepSpeed v0.19.5 deepspeed/moe/layer.py:59-63 asserts num_experts %
--    ep_size == 0 and gives each rank num_local_experts = num_experts //
--    ep_size experts; deepspeed/utils/groups.py:498-499 requires ep_size to
--    divide the data-parallel world size; the ZeRO-1/2 optimizer
--    (deepspeed/runtime/zero/stage_1_and_2.py:765-766) partitions an expert
--    parameter group over its expert-data-parallel group, of
--    world_size / ep_size ranks, instead of all N ranks. With Pe the routed
--    experts' parameters (expert_params) and Pd = P - Pe, per GPU:
--      replicated part (r bytes/param: stage 0 all 20, stage 1 the fp16
--        params and grads 4, stage 2 the fp16 params 2; with optimizer
--        offload that is all that stays on the GPU):
--          r * (Pd + Pe / ep)                      instead of r * P
--      partitioned part (p bytes/param: stage 1 16, stage 2 18):
--          p * Pd / N + p * (Pe / ep) / (N / ep) = p * P / N   (unchanged)
--    so GPU(ep) = GPU(1) - r * (Pe - Pe / ep); Pe / ep is whole because ep
--    divides the expert count. Host memory per node (deepspeed.memory's
--    formulas): each process builds only its own experts, Pr = Pd + Pe/ep
--    parameters, so the model-building term 4 bytes * n processes uses Pr:
--      no offload:         Pr * 4 * n * f
--      optimizer offload:  max(4 * N * Pr, 16 * P) * f
--        (DeepSpeed's P * max(4N, 16) * f; the 16 bytes/param of fp32
--        state still cover every parameter once)
--    ep_size > 1 describes a model whose MoE layers are DeepSpeed's
--    deepspeed.moe.layer.MoE; transformers' own Mixtral/Qwen-MoE blocks are
--    plain modules to DeepSpeed (ep_size 1).
--    Stage 3: DeepSpeed's native MoE layer is refused with ZeRO-3
--    (deepspeed/runtime/engine.py:1845-1847, "Native DeepSpeed MoE is not
--    supported with ZeRO Stage 3"), so ep_size > 1 at stage 3 is an error.
--
-- 2. Activations use the active experts. deepspeed.activations counts a
--    layer's MLP as Korthikanti et al.'s 19sbh for d = 2 bytes: input d*sbh,
--    two tensors of the MLP width I = 4h (d*sb*I each), dropout mask sbh.
--    In an MoE layer a token goes through k routed experts and the shared
--    ones, so the MLP width it holds is I_act = k * moe_intermediate_size +
--    shared width (active_intermediate), and each of the k experts keeps its
--    own copy of the token's input (d*sbh each):
--      MoE MLP  = d*sbh + k*d*sbh + 2*d*sb*I_act + sbh
--      extra per MoE layer = MoE MLP - dense MLP = k*d*sbh + 2*d*sb*(I_act - 4h)
--    (negative when the active experts are narrower than 4h). Added once per
--    MoE layer without checkpointing; with full checkpointing only one layer
--    is recomputed at a time, so it is added once (a model that also has
--    dense layers never drops below the dense layer's figure: max(extra, 0)).
--
-- Public API
--   M.check_ep(model, ep, stage, N) -> nil, or a message why ep cannot be used
--   M.estimate(est, model, ep)  -> {gpu=, cpu=}: est as deepspeed.memory.estimate's
--                                  options; model a deepspeed.models entry
--   M.all_rows(model, n, nodes, ep) -> the rows of deepspeed.memory.all_cold that
--                                  expert parallelism allows (stages 0-2), or nil, why
--   M.activation_extra{ model=, seq_len=, micro_batch=, dtype_bytes=2,
--                       checkpointing=false } -> bytes to add (integer, may be < 0)

local memory = require("deepspeed.memory")

local M = {}

-- Bytes per parameter replicated on every GPU (header, 1.), by stage.
local REPLICATED = { [0] = 20, [1] = 4, [2] = 2 }

local function whole(v, name)
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i == nil or i < 1 then
    error(("deepspeed.moe: %s must be a positive whole number, got %s"):format(
      name, tostring(v)), 3)
  end
  return i
end

--- Why expert parallel size `ep` cannot be used, or nil.
function M.check_ep(model, ep, stage, N)
  if ep == 1 then return nil end
  if not model.experts then
    return ("expert parallel size %d needs a model with experts; %s has none"):format(
      ep, tostring(model.name or "the model"))
  end
  if model.experts % ep ~= 0 then
    return ("expert parallel size %d does not divide the %d experts " ..
      "(DeepSpeed v0.19.5 deepspeed/moe/layer.py:59 asserts num_experts %% ep_size == 0)"):format(
      ep, model.experts)
  end
  if N % ep ~= 0 then
    return ("expert parallel size %d does not divide the %d data-parallel GPUs " ..
      "(DeepSpeed v0.19.5 deepspeed/utils/groups.py:499)"):format(ep, N)
  end
  if stage == 3 then
    return ("expert parallel size %d needs ZeRO stage 0, 1 or 2: DeepSpeed refuses its " ..
      "MoE layer at stage 3 (v0.19.5 deepspeed/runtime/engine.py:1846: \"Native DeepSpeed " ..
      "MoE is not supported with ZeRO Stage 3\")")
      :format(ep)
  end
  return nil
end

--- Model states per GPU and per node with expert parallel size `ep`.
function M.estimate(est, model, ep)
  ep = whole(ep == nil and 1 or ep, "ep_size")
  if type(model) ~= "table" then error("deepspeed.moe.estimate: model must be an entry", 2) end
  local base = memory.estimate(est)
  if ep == 1 then return base end
  local n, nodes = est.gpus_per_node, est.nodes or 1
  local N = n * nodes
  local why = M.check_ep(model, ep, est.stage, N)
  if why then error(why, 2) end
  local P, Pe = model.params, model.expert_params
  local Pr = P - Pe + Pe // ep
  local r = REPLICATED[est.stage]
  local f = est.buffer_factor or memory.DEFAULT_BUFFER_FACTOR
  local cpu
  if est.offload_optimizer == "cpu" then
    cpu = math.max(4 * N * Pr, 16 * P) * f
  else
    cpu = Pr * 4 * n * f
  end
  return { gpu = base.gpu - r * (Pe - Pe // ep), cpu = math.floor(cpu) }
end

--- Every row of deepspeed.memory.ALL_COLD_ORDER below stage 3 (ZeRO-3 is
--- refused with ep > 1), for `estimate` without --stage.
function M.all_rows(model, n, nodes, ep)
  local why = M.check_ep(model, ep, 0, n * nodes)
  if why then return nil, why end
  local rows = {}
  for _, o in ipairs(memory.ALL_COLD_ORDER) do
    if o.stage < 3 then
      local est = M.estimate({ stage = o.stage, params = model.params,
        largest_layer = model.largest_layer, gpus_per_node = n, nodes = nodes,
        offload_optimizer = o.offload_optimizer }, model, ep)
      rows[#rows + 1] = { stage = o.stage, offload_optimizer = o.offload_optimizer,
        offload_param = o.offload_param, gpu = est.gpu, cpu = est.cpu }
    end
  end
  return rows
end

local ACT_KEYS = { model = true, seq_len = true, micro_batch = true, dtype_bytes = true,
  checkpointing = true }

--- Activation bytes an MoE model holds beyond deepspeed.activations' figure.
function M.activation_extra(o)
  for k in next, o do
    if not ACT_KEYS[k] then error("deepspeed.moe.activation_extra: unknown option " .. k, 2) end
  end
  local m = o.model
  if type(m) ~= "table" or not m.experts then return 0 end
  local s, b = whole(o.seq_len, "seq_len"), whole(o.micro_batch, "micro_batch")
  local d = whole(o.dtype_bytes or 2, "dtype_bytes")
  local h, k = m.hidden_size, m.experts_per_token
  local sb = s * b
  local extra = k * d * sb * h + 2 * d * sb * (m.active_intermediate - 4 * h)
  if o.checkpointing then
    if m.moe_layers < m.layers and extra < 0 then return 0 end
    return extra
  end
  return m.moe_layers * extra
end

return M
