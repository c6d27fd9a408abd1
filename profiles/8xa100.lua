-- profiles/8xa100.lua -- one node of 8 A100-80GB (seed 004's "multi-GPU
-- 8xA100" recipe: micro 2, accumulation 8, ZeRO-3, no offload, bf16).

return {
  name = "8xa100",
  extends = "base",
  summary = "one node of 8 A100-80GB: ZeRO-3 without offload, bf16",
  params = {
    -- ZeRO-3 mainly saves optimizer/gradient memory across the 8 ranks;
    -- offload would only slow an 80 GB GPU down (seed 004).
    gpus_per_node = 8, gpu_mem_gb = 80, cpu_mem_gb = 1024,
    zero_stage = 3, offload = "none", micro_batch_size = 2, gradient_accumulation = 8,
  },
  tiers = {
    small = { summary = "micro 1 x 8 accumulation: 64 samples per step",
      params = { micro_batch_size = 1, gradient_accumulation = 8 } },
    medium = { summary = "the common recipe: micro 2 x 8 accumulation = 128",
      params = { micro_batch_size = 2, gradient_accumulation = 8 } },
    large = { summary = "micro 4 x 16 accumulation = 512",
      params = { micro_batch_size = 4, gradient_accumulation = 16 } },
  },
  build = function(p)
    return {}
  end,
}
