-- profiles/long-sequence.lua -- long contexts (seed 004: "long sequence
-- training: raise gradient accumulation and turn on gradient
-- checkpointing", trading compute for memory).
--
-- Activation memory grows with the square of the sequence length
-- (Korthikanti et al. 2022, the 5*a*s^2*b term), so the micro batch stays
-- at 1 and the planner picks stage, offload and checkpointing for the
-- budget; from 32k tokens it may also use Ulysses sequence parallelism
-- (sequence_parallel_size: the activations are split over that many GPUs
-- and the batch identity uses world_size / sequence_parallel_size). DeepSpeed's activation_checkpointing section only applies to
-- models that use deepspeed.checkpointing (Megatron-style); Hugging Face
-- models use TrainingArguments(gradient_checkpointing=True), which the
-- manifest records for each variant.

return {
  name = "long-sequence",
  extends = "base",
  summary = "long context (8k-32k tokens): micro batch 1, checkpointing, stage/offload from the budget",
  params = {
    gpus_per_node = 8, gpu_mem_gb = 80, cpu_mem_gb = 1024,
    model = "llama-3.1-8b", seq_len = 16384,
    global_batch = { default = 64, type = "integer", min = 1,
      doc = "samples per optimizer step (micro batch 1 x accumulation x world)" },
  },
  tiers = {
    small = { summary = "8k tokens", params = { seq_len = 8192 } },
    medium = { summary = "16k tokens", params = { seq_len = 16384 } },
    large = { summary = "32k tokens", params = { seq_len = 32768 } },
  },
  prepare = function(p, ctx)
    -- (not a tail call: "nothing fits" then names this line)
    -- from 32k tokens the planner may split each sequence over GPUs
    -- (Ulysses sequence_parallel_size), before offloading
    local plan = require("deepspeed.plan_params").prepare(p,
      { max_micro_batch = 1, sp_from = 32768 }, ctx)
    return plan
  end,
  build = function(p)
    if not p.activation_checkpointing then return {} end
    return {
      -- Partition the checkpointed activations across the model-parallel
      -- ranks and keep them contiguous (for deepspeed.checkpointing users).
      activation_checkpointing = {
        partition_activations = true,
        contiguous_memory_optimization = true,
        cpu_checkpointing = false,
      },
    }
  end,
}
