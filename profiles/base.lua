-- profiles/base.lua -- what every built-in profile shares.
--
-- Sources: the seed documents (000/001 walk-throughs of ZeRO-2/ZeRO-3
-- configs, 003 tuning guide, 004 generator) corrected by DeepSpeed's own
-- behaviour (shared reference deepspeed.md). Each choice says why.
--
-- Conventions (contrib/docs/profiles.md): world_size is the data-parallel size
-- used by the batch identity; params named like Hugging Face's
-- TrainingArguments (learning_rate, max_grad_norm, ...) feed the "auto"
-- resolution at --target deepspeed.

local function enabled_precision(p)
  -- bf16 first (seed 004's rule of thumb, DeepSpeed agrees: no loss
  -- scaling needed); fp16 and bf16 are never enabled together.
  return p.precision == "bf16", p.precision == "fp16"
end

return {
  name = "base",
  summary = "shared settings: batch identity, precision, AdamW + warmup/decay, ZeRO communication",
  params = {
    world_size = { default = 0, type = "integer", min = 0, max = 65536,
      doc = "data-parallel GPUs (the batch identity uses this, / sequence_parallel_size); 0: nodes x gpus_per_node" },
    nodes = { default = 1, type = "integer", min = 1, max = 1024,
      doc = "nodes (machines); world_size is nodes x gpus_per_node unless given" },
    gpus_per_node = { default = 8, type = "integer", min = 1, max = 64,
      doc = "GPUs per node (memory estimate: CPU memory is per node)" },
    micro_batch_size = { default = 2, type = "integer", min = 1, max = 4096,
      doc = "samples per GPU per forward pass (train_micro_batch_size_per_gpu)" },
    gradient_accumulation = { default = 8, type = "integer", min = 1, max = 65536,
      doc = "micro batches accumulated per optimizer step" },
    precision = { default = "bf16", values = { "bf16", "fp16", "fp32" },
      doc = "mixed precision mode" },
    zero_stage = { default = 3, type = "integer", min = 0, max = 3,
      doc = "ZeRO stage: 1 optimizer states, 2 + gradients, 3 + parameters" },
    offload = { default = "none", values = { "none", "optimizer", "all", "nvme", "nvme-all" },
      doc = "CPU offload: optimizer states, or optimizer states and parameters (ZeRO-3 only); nvme, nvme-all: the same to NVMe at nvme_path (ZeRO-3)" },
    nvme_path = { default = "/local_nvme", type = "string",
      doc = "a directory on a local NVMe drive for offload=nvme/nvme-all (ZeRO-Infinity)" },
    sequence_parallel_size = { default = 1, type = "integer", min = 1, max = 1024,
      doc = "Ulysses sequence parallelism: GPUs sharing one sequence; the batch identity uses world_size / sequence_parallel_size" },
    model = { default = "llama-2-7b", check = "deepspeed.models.check_param", file = "json",
      doc = "catalog model (dsforge models) or a Hugging Face config.json path, "
        .. "for the memory estimate and bucket sizes" },
    expert_parallel_size = { default = 1, type = "integer", min = 1, max = 65536,
      doc = "DeepSpeed MoE ep_size for a model with experts (dsforge models): each expert's "
        .. "parameters, gradients and optimizer states on 1/ep of the GPUs (memory estimate; "
        .. "ZeRO 0-2)" },
    gpu_mem_gb = { default = 80, type = "number", min = 1, max = 65536,
      doc = "memory per GPU in GiB; variants that need more are flagged" },
    cpu_mem_gb = { default = 512, type = "number", min = 1, max = 1048576,
      doc = "host memory per node in GiB (offload planning)" },
    autotp_size = { default = 1, type = "integer", min = 1, max = 64,
      doc = "AutoTP tensor parallelism within a node (tensor_parallel.autotp_size); above 1, train_batch_size is left to DeepSpeed" },
    finetune = { default = "full", values = { "full", "lora", "qlora" },
      doc = "memory estimate and planner: full training, LoRA on a 16-bit base or QLoRA on a 4-bit base (the config is the same)" },
    lora_rank = { default = 16, type = "integer", min = 1, max = 4096,
      doc = "LoRA rank r on every linear projection (finetune=lora|qlora)" },
    seq_len = { default = 2048, type = "integer", min = 1, max = 16777216,
      doc = "training sequence length (activation memory)" },
    activation_checkpointing = { default = true, type = "boolean",
      doc = "recompute activations in the backward pass (HF gradient_checkpointing)" },
    flash_attention = { default = true, type = "boolean",
      doc = "the model uses FlashAttention/SDPA (no s^2 attention activations in the estimate)" },
    learning_rate = { default = 1e-4, type = "number", min = 0, doc = "peak learning rate" },
    weight_decay = { default = 0.0, type = "number", min = 0, doc = "AdamW weight decay" },
    adam_beta1 = { default = 0.9, type = "number", min = 0, max = 1, doc = "AdamW beta1" },
    adam_beta2 = { default = 0.95, type = "number", min = 0, max = 1,
      doc = "AdamW beta2 (0.95, usual for LLM training)" },
    adam_epsilon = { default = 1e-8, type = "number", min = 0, doc = "AdamW epsilon" },
    max_grad_norm = { default = 1.0, type = "number", min = 0,
      doc = "gradient clipping (explicit: DeepSpeed's default changed from 0 to 1.0 in v0.19.3)" },
    warmup_steps = { default = 100, type = "integer", min = 1, doc = "learning-rate warmup steps (DeepSpeed's WarmupLR needs warmup_num_steps >= 1)" },
    num_training_steps = { default = 10000, type = "integer", min = 1,
      doc = "total optimizer steps (the decay schedule ends here)" },
    probe_steps = { default = 0, type = "integer", min = 0, max = 1000000,
      doc = "gen --probe STEPS: run STEPS steps as a comparable benchmark and end (0: train)" },
    -- Where and how a run starts: read by the launch and cluster plugins'
    -- files (gen --emit launch, slurm-array, k8s, skypilot), never by the
    -- config. "" is "not set".
    master_addr = { default = "", type = "string",
      doc = "the first node's address for multi-node launch files (\"\": the launcher's own)" },
    master_port = { default = 29500, type = "integer", min = 1, max = 65535,
      doc = "the rendezvous port (a job array adds the task id modulo 1000)" },
    hostfile = { default = "", type = "string",
      doc = "the deepspeed launcher's hostfile for several nodes (\"\": /job/hostfile)" },
    slurm_partition = { default = "", type = "string", doc = "Slurm partition (\"\": the cluster's default)" },
    slurm_account = { default = "", type = "string", doc = "Slurm account (\"\": the user's default)" },
    slurm_time = { default = "", type = "string",
      doc = "Slurm time limit per run, e.g. 4:00:00 (\"\": the partition's default)" },
  },
  tier_order = { "small", "medium", "large" },
  tiers = {
    small = { summary = "smallest batch per GPU", params = { micro_batch_size = 1, gradient_accumulation = 8 } },
    medium = { summary = "the default batch", params = { micro_batch_size = 2, gradient_accumulation = 8 } },
    large = { summary = "twice the micro batch, twice the accumulation",
      params = { micro_batch_size = 4, gradient_accumulation = 16 } },
  },
  prepare = function(p, ctx)
    -- A config.json given as the model (dsforge read it: ctx.files) is
    -- known to deepspeed.models.get from here on, for every profile of
    -- the chain (the planner, the bucket sizes).
    if ctx.files and ctx.files.model then
      require("deepspeed.models").register(p.model, ctx.files.model)
    end
    -- People describe a machine as nodes x GPUs per node; world_size is
    -- derived from them unless a profile or the command line sets it (a
    -- data-parallel size below the GPU count, e.g. with model parallelism).
    local world = p.world_size
    if world == 0 then world = p.nodes * p.gpus_per_node end
    if world % p.sequence_parallel_size ~= 0 then
      dsforge.fail(("sequence_parallel_size %d does not divide the world size %d"):format(
        p.sequence_parallel_size, world), 2)
    end
    if p.gpus_per_node % p.autotp_size ~= 0 then
      dsforge.fail(("autotp_size %d does not divide gpus_per_node %d (AutoTP within a node)")
        :format(p.autotp_size, p.gpus_per_node), 2)
    end
    if (p.offload == "nvme" or p.offload == "nvme-all") and p.nvme_path:sub(1, 1) ~= "/" then
      dsforge.fail(("offload=%s needs nvme_path to be an absolute directory, got '%s'"):format(
        p.offload, p.nvme_path), 2)
    end
    if (p.offload == "nvme" or p.offload == "nvme-all") and p.zero_stage ~= 3 then
      dsforge.fail(("offload=%s (ZeRO-Infinity) needs zero_stage=3: DeepSpeed's stages 1 " ..
        "and 2 treat an nvme device as cpu"):format(p.offload), 2)
    end
    if p.world_size == 0 then
      return { world_size = world }
    end
    return nil
  end,
  build = function(p)
    -- Expert parallelism (deepspeed.moe, loaded only when asked for): the
    -- model must have experts the size divides, the data-parallel size too,
    -- and DeepSpeed's MoE layer refuses ZeRO-3.
    if p.expert_parallel_size > 1 then
      local m = require("deepspeed.models").get(p.model) or { name = p.model }
      local why = require("deepspeed.moe").check_ep(m, p.expert_parallel_size,
        p.zero_stage, p.world_size)
      if why then dsforge.fail("expert_parallel_size: " .. why) end
    end
    local bf16, fp16 = enabled_precision(p)
    local zero = {
      stage = p.zero_stage,
      -- Seed 003's key optimisation; DeepSpeed only defaults it to true at
      -- stage 3, so say it explicitly.
      overlap_comm = p.zero_stage >= 2,
      contiguous_gradients = true,
      -- "auto" = hidden_size^2, what Hugging Face fills; resolved from the
      -- model's hidden size at --target deepspeed.
      reduce_bucket_size = "auto",
    }
    if p.zero_stage >= 1 and p.zero_stage <= 2 then
      zero.allgather_partitions = true
      zero.reduce_scatter = true
      -- Seed 003 lowers both buckets from 5e8 to 2e8 to save ~600 MB.
      zero.allgather_bucket_size = 2e8
    end
    if p.zero_stage == 3 then
      -- Seed 001's ZeRO-3 knobs. The prefetch bucket and persistence
      -- threshold follow the hidden size (HF's formulas, as integers: a
      -- float 0.9*h^2 is rejected by pydantic, DeepSpeed issue #6525).
      zero.stage3_prefetch_bucket_size = "auto"
      zero.stage3_param_persistence_threshold = "auto"
      zero.stage3_max_live_parameters = 1e9
      zero.stage3_max_reuse_distance = 1e9
      zero.sub_group_size = 1e9
      zero.stage3_gather_16bit_weights_on_model_save = true
    end
    local aio = nil
    if (p.offload == "nvme" or p.offload == "nvme-all") and p.zero_stage == 3 then
      -- ZeRO-Infinity: NVMe swapping exists only at stage 3 (stage3.py's
      -- swappers; stage_1_and_2.py treats nvme as cpu), so the planner
      -- and the profiles pick it only there. Sizes are those the memory
      -- model (deepspeed.memory_terms) budgets for.
      aio = require("deepspeed.memory_terms").nvme_sections(zero, p)
    elseif p.offload ~= "none" and p.zero_stage >= 1 then
      -- pin_memory is DeepSpeed's default since v0.19.5; stated for older
      -- versions, where it defaulted to false.
      zero.offload_optimizer = { device = "cpu", pin_memory = true }
    end
    if p.offload == "all" and p.zero_stage == 3 then
      -- Parameter offload only exists at ZeRO-3: below it DeepSpeed
      -- accepts the section and silently ignores it (seed 002's error).
      zero.offload_param = { device = "cpu", pin_memory = true }
    end
    -- DeepSpeed divides the world by sequence_parallel_size for the batch
    -- (runtime/config.py:710); the key only appears when it is used.
    local sp = p.sequence_parallel_size
    local tp = p.autotp_size
    -- AutoTP: DeepSpeedConfig divides by nothing without an mpu (config.py:
    -- 711-712) but by world/tp with the mpu the AutoTP tutorial passes, so
    -- train_batch_size is left for DeepSpeed to derive from micro x
    -- accumulation x its world size, right in both cases.
    local train_batch = p.micro_batch_size * p.gradient_accumulation * (p.world_size // sp)
    if tp > 1 then train_batch = nil end
    return {
      sequence_parallel_size = sp > 1 and sp or nil,
      tensor_parallel = tp > 1 and { autotp_size = tp } or nil,
      aio = aio,
      train_micro_batch_size_per_gpu = p.micro_batch_size,
      gradient_accumulation_steps = p.gradient_accumulation,
      -- The data-parallel size is part of the identity (seed 004 left it
      -- out; DeepSpeed asserts TB == micro * GAS * world).
      train_batch_size = train_batch,
      gradient_clipping = p.max_grad_norm,
      bf16 = { enabled = bf16 },
      fp16 = fp16 and {
        -- Seed 000's dynamic loss scaling values.
        enabled = true, loss_scale = 0, initial_scale_power = 16,
        loss_scale_window = 1000, hysteresis = 2, min_loss_scale = 1,
      } or { enabled = false },
      optimizer = {
        -- "AdamW" maps to DeepSpeed's FusedAdam (or CPU Adam with
        -- offload); seed 003's "FusedAdam" is not a type DeepSpeed knows.
        type = "AdamW",
        params = { lr = "auto", betas = "auto", eps = "auto", weight_decay = "auto" },
      },
      scheduler = {
        type = "WarmupDecayLR",
        params = { warmup_min_lr = "auto", warmup_max_lr = "auto",
          warmup_num_steps = "auto", total_num_steps = "auto" },
      },
      zero_optimization = zero,
      -- Seed 003: 2000 is too rare to monitor; DeepSpeed now prints
      -- nothing unless this is set.
      steps_per_print = 50,
      wall_clock_breakdown = false,
    }
  end,
  -- The config family its configs are for (profiles.md): every built-in
  -- profile extends this one.
  target = "deepspeed",
}
