-- profiles/high-performance.lua -- throughput first on high-end GPUs
-- (seed 003's ds_high_performance.json: ZeRO-2, micro 16 x 4, FusedAdam
-- with betas (0.9, 0.95), activation checkpointing, overlap_comm).
--
-- Corrections of the seed: "FusedAdam" is not an optimizer type DeepSpeed
-- knows (it raises); "AdamW" is, and DeepSpeed runs it as FusedAdam. The
-- seed's table ties micro batch to GPU memory (24 GB: 8, 40 GB+: 16,
-- 80 GB+: 32); the tiers follow it, each with its GPU size. Models too
-- large for ZeRO-2 at that micro batch get AutoTP (prepare below).

return {
  name = "high-performance",
  extends = "base",
  summary = "throughput first: ZeRO-2, large micro batches, overlapped communication",
  params = {
    gpus_per_node = 8, zero_stage = 2, offload = "none",
    model = "llama-3.2-1b", seq_len = 1024,
    micro_batch_size = 16, gradient_accumulation = 4, gpu_mem_gb = 40,
  },
  tiers = {
    small = { summary = "24 GB GPUs: micro 8 x 4 x 8 GPUs = 256",
      params = { micro_batch_size = 8, gradient_accumulation = 4, gpu_mem_gb = 24 } },
    medium = { summary = "40 GB GPUs: micro 16 x 4 x 8 GPUs = 512",
      params = { micro_batch_size = 16, gradient_accumulation = 4, gpu_mem_gb = 40 } },
    large = { summary = "80 GB GPUs: micro 32 x 4 x 8 GPUs = 1024",
      params = { micro_batch_size = 32, gradient_accumulation = 4, gpu_mem_gb = 80 } },
  },
  -- A model that does not fit ZeRO-2 at the tier's micro batch is split
  -- with AutoTP (tensor_parallel.autotp_size 2, 4 or 8 within a node)
  -- before giving up: the smallest size that fits (plan_params.autotp).
  prepare = function(p, ctx)
    local tp = require("deepspeed.plan_params").autotp(p, ctx)
    return tp
  end,
  build = function(p)
    return {
      zero_optimization = {
        -- Seed 003: bigger buckets mean fewer, larger collectives (more
        -- memory: what these GPUs have).
        reduce_bucket_size = 5e8,
        allgather_bucket_size = 5e8,
        round_robin_gradients = true,
      },
      activation_checkpointing = {
        partition_activations = true,
        contiguous_memory_optimization = true,
      },
    }
  end,
}
