-- Tests for plugins/deepspeed/moe.lua: each term against a hand calculation
-- (the formulas are in moe.lua's header).
--
-- The toy model: P = 1000 parameters of which Pe = 800 are in 8 routed
-- experts (Pd = 200 dense), on N = 4 GPUs of one node, f = 1.5.

local function moe() return require("deepspeed.moe") end

local TOY = { name = "toy", params = 1000, largest_layer = 10, expert_params = 800,
  experts = 8, experts_per_token = 2, hidden_size = 8, active_intermediate = 40,
  layers = 4, moe_layers = 3 }

local function est(stage, ep, offload)
  return moe().estimate({ stage = stage, params = 1000, largest_layer = 10,
    gpus_per_node = 4, nodes = 1, offload_optimizer = offload or "none" }, TOY, ep)
end

return {
  ep_1_is_deepspeed_memory_unchanged = function()
    -- stage 2: 2P + 18P/N = 2000 + 4500; host P*4*n*f = 1000*4*4*1.5
    T.eq(est(2, 1), { gpu = 6500, cpu = 24000 })
    local memory = require("deepspeed.memory")
    T.eq(est(3, 1), memory.estimate{ stage = 3, params = 1000, largest_layer = 10,
      gpus_per_node = 4, nodes = 1 })
  end,

  ep_divides_the_replicated_expert_bytes = function()
    -- ep 4: a rank holds Pd + Pe/4 = 200 + 200 = 400 parameters (Pr)
    -- stage 0: 20 * 400 = 8000 (instead of 20P = 20000); host 400*4*4*1.5 = 9600
    T.eq(est(0, 4), { gpu = 8000, cpu = 9600 })
    -- stage 1: 4 * 400 + 16P/N = 1600 + 4000 = 5600 (instead of 8000)
    T.eq(est(1, 4), { gpu = 5600, cpu = 9600 })
    -- stage 2: 2 * 400 + 18P/N = 800 + 4500 = 5300 (instead of 6500)
    T.eq(est(2, 4), { gpu = 5300, cpu = 9600 })
    -- ep 2: Pr = 200 + 400 = 600: stage 2 1200 + 4500; host 600*4*4*1.5
    T.eq(est(2, 2), { gpu = 5700, cpu = 14400 })
  end,

  ep_with_optimizer_offload = function()
    -- the GPU keeps only the replicated part: stage 1 4*400, stage 2 2*400;
    -- host max(4*N*Pr, 16*P)*f = max(6400, 16000)*1.5 = 24000
    T.eq(est(1, 4, "cpu"), { gpu = 1600, cpu = 24000 })
    T.eq(est(2, 4, "cpu"), { gpu = 800, cpu = 24000 })
  end,

  ep_that_deepspeed_refuses = function()
    T.errors(function() est(2, 3) end, "expert parallel size 3 does not divide the 8 experts")
    T.errors(function() est(2, 8) end,
      "expert parallel size 8 does not divide the 4 data-parallel GPUs")
    T.errors(function() est(3, 4) end, "needs ZeRO stage 0, 1 or 2")
    T.errors(function() moe().estimate({ stage = 2, params = 1000, gpus_per_node = 4 },
      { name = "dense", params = 1000 }, 2) end,
      "expert parallel size 2 needs a model with experts; dense has none")
    T.errors(function() est(2, 0) end, "ep_size must be a positive whole number")
    T.eq(moe().check_ep(TOY, 4, 2, 4), nil)
  end,

  activation_extra_uses_the_active_experts = function()
    local a = moe().activation_extra
    -- s 16, b 2 (sb 32), d 2, h 8, k 2, I_act 40:
    -- k*d*sbh + 2*d*sb*(I_act - 4h) = 2*2*32*8 + 2*2*32*(40 - 32) = 1024 + 1024 = 2048
    T.eq(a{ model = TOY, seq_len = 16, micro_batch = 2 }, 3 * 2048)
    T.eq(a{ model = TOY, seq_len = 16, micro_batch = 2, checkpointing = true }, 2048)
    -- narrower active experts (I_act 8): 1024 + 4*32*(8 - 32) = -2048 per MoE layer
    local narrow = {}
    for k, v in pairs(TOY) do narrow[k] = v end
    narrow.active_intermediate = 8
    T.eq(a{ model = narrow, seq_len = 16, micro_batch = 2 }, 3 * -2048)
    -- checkpointed: the recomputed layer may be the dense one (3 of 4 layers MoE)
    T.eq(a{ model = narrow, seq_len = 16, micro_batch = 2, checkpointing = true }, 0)
    narrow.moe_layers = 4
    T.eq(a{ model = narrow, seq_len = 16, micro_batch = 2, checkpointing = true }, -2048)
    -- a dense model adds nothing
    T.eq(a{ model = { hidden_size = 8, layers = 2 }, seq_len = 16, micro_batch = 2 }, 0)
    -- Mixtral-8x7B, one token: 2*2*4096 + 4*(2*14336 - 4*4096) = 16384 + 49152 per layer
    local mixtral = require("deepspeed.models").get("mixtral-8x7b")
    T.eq(a{ model = mixtral, seq_len = 1, micro_batch = 1 }, 32 * 65536)
  end,

  estimate_command_uses_the_terms = function()
    -- estimate.run with --ep-size: the ZeRO-2 row of Mixtral-8x7B on 8 GPUs, ep 8
    -- Pe = 32 layers * 8 experts * 3*4096*14336 = 45097156608, P = 46702792704:
    -- 2*(P - Pe + Pe/8) + 18P/8 = 14485561344 + 105081283584
    local r = require("deepspeed.estimate").run{ model = "mixtral-8x7b", gpus = 8, stage = 2,
      ep_size = 8 }
    T.eq(r.rows[1].gpu_bytes, 119566844928)
    T.eq(r.inputs.expert_params, 45097156608)
    -- without --stage: stages 0-2 only (no stage 3 with ep > 1)
    local all = require("deepspeed.estimate").run{ model = "mixtral-8x7b", gpus = 8, ep_size = 8 }
    T.eq(#all.rows, 5)
  end,

  -- A model error is a usage error with the message alone (gsub's count
  -- never becomes the hint), in each of estimate's branches.
  estimate_errors_carry_no_count_as_hint = function()
    local est = require("deepspeed.estimate")
    for _, o in ipairs({
      { params = 7000000000, stage = 1, offload_param = "cpu" },   -- memory.estimate
      { params = 7000000000, finetune = "lora" },                 -- estimate_terms
      { model = "llama-2-7b", seq_len = 4096, micro_batch = 1.5 }, -- activations
    }) do
      local r = est.run(o)
      T.eq({ r.code, type(r.error), r.hint }, { 2, "string", nil })
    end
  end,

  estimate_activations_add_the_moe_term = function()
    local est = require("deepspeed.estimate")
    local act = require("deepspeed.activations")
    local m = require("deepspeed.models").get("mixtral-8x7b")
    local r = est.run{ model = "mixtral-8x7b", gpus = 8, stage = 2, seq_len = 4096, micro_batch = 1 }
    local a = { seq_len = 4096, micro_batch = 1, hidden_size = 4096, layers = 32, heads = 32,
      vocab = 32000, flash_attention = true }
    -- per MoE layer 65536 bytes per token (activation_extra_uses_the_active_experts)
    T.eq(r.activation_bytes, act.bytes(a) + 32 * 65536 * 4096)
    a.checkpointing = true
    T.eq(r.activation_bytes_checkpointed, act.bytes(a) + 65536 * 4096)
    T.eq(m.moe_layers, 32)
  end,

  gen_summary_uses_the_moe_terms = function()
    local summary = require("deepspeed.summary")
    local memory = require("deepspeed.memory")
    local act = require("deepspeed.activations")
    local cfg = { zero_optimization = { stage = 2 }, train_micro_batch_size_per_gpu = 1 }
    local params = { model = "mixtral-8x7b", world_size = 8, gpus_per_node = 8, seq_len = 1024,
      gpu_mem_gb = 80, cpu_mem_gb = 512 }
    local one = summary.memory(cfg, params)
    local states = memory.estimate{ stage = 2, params = 46702792704, largest_layer = 131072000,
      gpus_per_node = 8, nodes = 1 }
    T.eq(one.model_states_gpu_bytes, states.gpu)
    T.eq(one.activation_bytes, act.bytes{ seq_len = 1024, micro_batch = 1, hidden_size = 4096,
      layers = 32, heads = 32, vocab = 32000 } + 32 * 65536 * 1024)
    -- ep 8: 2 bytes of the experts' fp16 parameters on 1/8 of the GPUs
    params.expert_parallel_size = 8
    local eight = summary.memory(cfg, params)
    local pe = 45097156608
    T.eq(one.model_states_gpu_bytes - eight.model_states_gpu_bytes, 2 * (pe - pe // 8))
  end,

  planner_leaves_out_zero3_with_expert_parallelism = function()
    local planner = require("deepspeed.planner")
    local m = require("deepspeed.models").get("mixtral-8x7b")
    local o = { model = m, gpus_per_node = 8, gpu_mem_bytes = 80 * 2 ^ 30,
      cpu_mem_bytes = 2048 * 2 ^ 30, seq_len = 1024, global_batch = 64, suggest = false }
    -- ZeRO-3 fits without expert parallelism ...
    T.eq(planner.plan(o).stage, 3)
    -- ... with ep 8 the planner keeps to ZeRO 0-2: no offload needs 111 GiB at ZeRO-2,
    -- so the cheapest is ZeRO-1 with optimizer offload
    o.ep_size = 8
    local p = planner.plan(o)
    T.eq({ p.fits, p.stage, p.offload_optimizer }, { true, 1, "cpu" })
    -- 4 bytes of fp16 parameters and gradients per GPU: 4*(P - Pe + Pe/8)
    T.eq(p.model_states_gpu_bytes, 4 * (46702792704 - 45097156608 + 45097156608 // 8))
    -- an ep the GPUs cannot hold: nothing fits, and why
    o.ep_size, o.gpus_per_node, o.global_batch = 8, 4, 64
    local q = planner.plan(o)
    T.eq(q.fits, false)
    T.truthy(q.reasons[1]:find("does not divide the 4 data%-parallel GPUs"))
  end,
}
