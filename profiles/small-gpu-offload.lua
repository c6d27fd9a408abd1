-- profiles/small-gpu-offload.lua -- one 24 GB GPU (seed 004's "small
-- single-GPU" recipe: micro 1, accumulation 32, ZeRO-3, CPU offload, bf16).
--
-- Correction of the seed: offload is not always on. The planner (the
-- deepspeed plugin's memory model) decides from the model and the memory
-- budget: it offloads only when the model states and activations do not
-- fit the GPU, and picks the largest micro batch that fits. When the host
-- RAM cannot hold CPU-offloaded states either, it offloads to NVMe
-- (offload=nvme, the directory nvme_path; ZeRO-3 only).

return {
  name = "small-gpu-offload",
  extends = "base",
  summary = "one 24 GB GPU: ZeRO stage and CPU offload chosen from the memory budget",
  params = {
    gpus_per_node = 1, gpu_mem_gb = 24, cpu_mem_gb = 256,
    model = "llama-3.2-1b", seq_len = 2048,
    global_batch = { default = 32, type = "integer", min = 1,
      doc = "samples per optimizer step; the planner splits it into micro batch x accumulation" },
    max_micro_batch = { default = 8, type = "integer", min = 1,
      doc = "largest micro batch the planner may choose" },
  },
  tiers = {
    small = { summary = "a 1B model, 16 samples per step",
      params = { model = "llama-3.2-1b", global_batch = 16 } },
    medium = { summary = "a 3B model, 32 samples per step",
      params = { model = "llama-3.2-3b", global_batch = 32 } },
    large = { summary = "a 7B model: needs CPU offload on 24 GB",
      params = { model = "llama-2-7b", global_batch = 32 } },
  },
  prepare = function(p, ctx)
    -- ctx.given: what --param/--matrix fixed, which the planner keeps
    -- (not a tail call: "nothing fits" then names this line)
    -- nvme: when CPU RAM cannot hold the offloaded states, offload them to
    -- NVMe at nvme_path (ZeRO-Infinity) instead of giving up
    local plan = require("deepspeed.plan_params").prepare(p, { nvme = true }, ctx)
    return plan
  end,
  build = function(p)
    return {}
  end,
}
