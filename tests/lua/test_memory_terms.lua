-- Tests for plugins/deepspeed/memory_terms.lua (NVMe, AutoTP, LoRA model
-- states) and the parallel / long-sequence options of activations.lua.
-- Every expected figure is worked out by hand in the comment above it from
-- the formulas in the modules' headers (DeepSpeed v0.19.5 file:line there).

local GiB = 1 << 30

local function terms() return require("deepspeed.memory_terms") end
local function act() return require("deepspeed.activations") end

return {
  io_alignment = function()
    local t = terms()
    -- fp32: 1024 B / 4 = 256 elements; fp16: 512 elements
    T.eq(t.io_aligned(1000, 4), 1024)
    T.eq(t.io_aligned(1024, 4), 1024)
    -- 1e8 % 512 = 256 -> 1e8 + 256
    T.eq(t.io_aligned(100000000, 2), 100000256)
    -- intra_op_parallelism 2: 2048 B / 4 = 512 elements
    T.eq(t.io_aligned(1000, 4, 2), 1024)
    T.eq(t.io_aligned(1025, 4, 2), 1536)
    -- buffer_size: at least 1e8, at least the largest partition
    T.eq(t.param_buffer_size(525336576, 4), 131334144)
    T.eq(t.param_buffer_size(1000, 4), 100000000)
  end,

  nvme_optimizer_host_memory_hand_computed = function()
    local t = terms()
    -- P = 1e6, L = 1e5, 2 GPUs on 1 node, sub_group_size 2e5:
    --   part = 500000; largest = min(500000, 200000 + 50000) = 250000,
    --   aligned to 256 fp32 elements: 250000 % 256 = 144 -> 250112
    --   grads 4 * 500000 = 2,000,000; buffers 4 * 250112 * 4 = 4,001,792
    --   per node 2 * 6,001,792 * 1.5 = 18,005,376; NVMe 2 * 16 * 500000
    local r = t.nvme{ params = 1000000, largest_layer = 100000, gpus_per_node = 2,
      sub_group_size = 200000 }
    T.eq(r.grads, 2000000)
    T.eq(r.optimizer_buffers, 4001792)
    T.eq(r.param_host, 0)
    T.eq(r.cpu, 18005376)
    T.eq(r.nvme, 16000000)
    -- parameters on the CPU as well: + 2 * 500000 per rank
    r = t.nvme{ params = 1000000, largest_layer = 100000, gpus_per_node = 2,
      sub_group_size = 200000, offload_param = "cpu" }
    T.eq(r.param_host, 1000000)
    T.eq(r.cpu, 2 * 7001792 * 3 // 2)
    -- parameters on NVMe: max_in_cpu 300000 kept -> 600,000 B; swapper
    -- 5 buffers of aligned(100000 fp16) = 100352 -> 5 * 100352 * 2 = 1,003,520
    -- per rank 6,001,792 + 600,000 + 1,003,520 = 7,605,312; x2 x1.5
    r = t.nvme{ params = 1000000, largest_layer = 100000, gpus_per_node = 2,
      sub_group_size = 200000, offload_param = "nvme", param_buffer_size = 100000,
      max_in_cpu = 300000 }
    T.eq(r.param_host, 600000)
    T.eq(r.param_buffers, 1003520)
    T.eq(r.cpu, 22815936)
    T.eq(r.nvme, 2 * 18 * 500000)
    -- a buffer smaller than the largest partition (50000) is what
    -- partitioned_param_swapper.py:357 asserts against
    T.errors(function() t.nvme{ params = 1000000, largest_layer = 100000, gpus_per_node = 2,
      offload_param = "nvme", param_buffer_size = 40000 } end,
      "offload_param.buffer_size 40000 is smaller than the largest parameter partition 50000")
  end,

  states_nvme_and_tensor_parallel = function()
    local t = terms()
    -- ZeRO-3, optimizer on NVMe, 2 GPUs: the GPU keeps what CPU offload keeps,
    -- 4L + int(2P/N) = 400,000 + 1,000,000; host as in the NVMe case above
    local r = t.states{ stage = 3, params = 1000000, largest_layer = 100000,
      gpus_per_node = 2, offload_optimizer = "nvme", nvme = { sub_group_size = 200000 } }
    T.eq(r.gpu, 1400000)
    T.eq(r.cpu, 18005376)
    T.eq(r.nvme, 16000000)
    -- AutoTP 2 on 4 GPUs, ZeRO-2: a 500,000-parameter shard over 2 data-
    -- parallel ranks: 2 * 500000 + int(18 * 500000 / 2) = 5,500,000 per GPU;
    -- host: every process loads the whole model before AutoTP shards it,
    -- 1e6 * 4 * 4 * 1.5 = 24,000,000 (the shards' 2 x 6,000,000 is less)
    r = t.states{ stage = 2, params = 1000000, largest_layer = 100000, gpus_per_node = 4, tp = 2 }
    T.eq(r.gpu, 5500000)
    T.eq(r.cpu, 24000000)
    -- with optimizer offload the host holds the shards' states: 2 groups of
    -- 500000 * max(4 * 2, 16) * 1.5 = 12,000,000
    r = t.states{ stage = 2, params = 1000000, largest_layer = 100000, gpus_per_node = 4, tp = 2,
      offload_optimizer = "cpu" }
    T.eq(r.gpu, 1000000)
    T.eq(r.cpu, 24000000)
    T.eq(r.nvme, 0)
    -- without tp it is deepspeed.memory's figure
    local m = require("deepspeed.memory")
    T.eq(t.states{ stage = 2, params = 1000000, largest_layer = 100000, gpus_per_node = 4 }.gpu,
      m.zero2(1000000, 4, 1, false).gpu)
    T.errors(function() t.states{ stage = 2, params = 10, gpus_per_node = 2,
      offload_optimizer = "nvme" } end, "NVMe offload needs ZeRO stage 3")
    T.errors(function() t.states{ stage = 2, params = 10, gpus_per_node = 3, tp = 2 } end,
      "tp 2 must divide gpus_per_node 3")
  end,

  lora_trainable_llama3_8b = function()
    local t = terms()
    -- per layer, r = 16: q (4096+4096) + k (4096+1024) + v (4096+1024) +
    -- o (4096+4096) + gate, up (4096+14336) each + down (14336+4096)
    -- = 81,920; x 16 x 32 layers = 41,943,040 (what PEFT reports for
    -- Llama-3-8B, r=16, all-linear)
    T.eq(t.lora_trainable(require("deepspeed.models").get("llama-3-8b"), 16), 41943040)
    T.errors(function() t.lora_trainable(require("deepspeed.models").get("gpt2"), 8) end,
      "modelled for llama-style blocks")
  end,

  lora_and_qlora_states_hand_computed = function()
    local t = terms()
    -- LoRA, ZeRO-2, 2 GPUs, P = 1e6 with T = 1e4 trainable:
    --   trainable 2*10000 + int(18*10000/2) = 110,000; frozen 990,000 x 2 B
    --   = 1,980,000 -> GPU 2,090,000
    --   host: 10000*4*2*1.5 = 120,000 + 1,980,000*2*1.5 = 5,940,000
    local r = t.states{ stage = 2, params = 1000000, largest_layer = 100000,
      gpus_per_node = 2, trainable_params = 10000 }
    T.eq(r.gpu, 2090000)
    T.eq(r.cpu, 6060000)
    -- QLoRA (4 bits), ZeRO-3: int(18*10000/2) = 90,000; frozen 990,000 x 0.5 B
    -- = 495,000 partitioned over 2 -> 247,500; gathered largest layer
    -- 100,000 x 0.5 B = 50,000 -> GPU 387,500
    r = t.states{ stage = 3, params = 1000000, largest_layer = 100000,
      gpus_per_node = 2, trainable_params = 10000, base_bits = 4 }
    T.eq(r.gpu, 387500)
    T.errors(function() t.states{ stage = 3, params = 100, gpus_per_node = 1,
      base_bits = 4 } end, "base_bits below 16 needs trainable_params")
    T.errors(function() t.states{ stage = 3, params = 100, largest_layer = 10, gpus_per_node = 1,
      trainable_params = 10, offload_optimizer = "cpu", offload_param = "cpu" } end,
      "parameter offload is not modelled with LoRA")
  end,

  activations_tensor_parallel_eq2 = function()
    local a = act()
    -- s=4, b=1, h=8, a=2, d=2: sbh = 32, as^2b = 32
    -- t=1 (Eq. 1): 34*32 + 5*32 = 1248
    T.eq(a.per_layer{ seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2 }, 1248)
    -- t=2 (Eq. 2): sbh(10 + 24/2 + 5*2*4/(8*2)) = 32 * 24.5 = 784
    local b = a.breakdown{ seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2,
      layers = 2, vocab = 16, tp = 2 }
    T.eq(b.per_layer, 784)
    -- logits 4*4*16 = 256 are not divided by tp
    T.eq(b.total, 2 * 784 + 256)
  end,

  activations_sequence_parallel_divides_everything = function()
    local a = act()
    -- L=2 layers of 1248, logits 256: 2752 at sp=1; sp=2: 1248 + 128
    local o = { seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2, layers = 2, vocab = 16 }
    T.eq(a.bytes(o), 2752)
    o.sp = 2
    local b = a.breakdown(o)
    T.eq(b.layers_bytes, 1248)
    T.eq(b.logits, 128)
    T.eq(b.total, 1376)
  end,

  activations_cpu_checkpointing_and_tiled_loss = function()
    local a = act()
    -- checkpointing, L=2: stored inputs 2*2*4*8 = 128, recomputed layer 1248,
    -- logits 256 -> 1632 on the GPU
    local o = { seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2, layers = 2, vocab = 16,
      checkpointing = true }
    T.eq(a.bytes(o), 1632)
    -- cpu_checkpointing: the 128 go to the host; the GPU keeps one input (64)
    o.cpu_checkpointing = true
    local b = a.breakdown(o)
    T.eq(b.host, 128)
    T.eq(b.total, 64 + 1248 + 256)
    -- tiled loss, 3 shards: ceil(256 / 3) = 86
    o.cpu_checkpointing = nil
    o.loss_tiles = 3
    T.eq(a.breakdown(o).logits, 86)
    T.errors(function() a.bytes{ seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2,
      layers = 2, vocab = 16, cpu_checkpointing = true } end,
      "cpu_checkpointing needs checkpointing")
  end,

  activations_tiled_mlp = function()
    local a = act()
    -- s=4, b=1, h=8, a=2, d=2: MLP 2*32 + 32 + 2*8*32 = 608 (= 19sbh) of the
    -- layer's 1248; a layer keeps 1248 - 608 + 64 = 704; 4 tiles: 152 live
    local o = { seq_len = 4, micro_batch = 1, hidden_size = 8, heads = 2, layers = 2, vocab = 16,
      mlp_tiles = 4 }
    -- no checkpointing: 2 * 704 + 152 + logits 256
    T.eq(a.bytes(o), 1816)
    -- checkpointing: inputs 128 + 704 + 152 + 256
    o.checkpointing = true
    T.eq(a.bytes(o), 1240)
    -- mlp_tiles = 1 is the plain figure
    o.mlp_tiles = 1
    T.eq(a.bytes(o), 1632)
  end,

  planner_reaches_nvme_when_cpu_ram_is_short = function()
    local p = require("deepspeed.planner")
    local m = require("deepspeed.models").get("llama-3-8b")
    local o = { model = m, gpus_per_node = 4, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 128 * GiB, seq_len = 4096, global_batch = 16, flash_attention = true,
      max_micro_batch = 8 }
    T.eq(p.plan(o).fits, false)
    o.nvme = true
    o.nvme_tuning = { sub_group_size = terms().NVME_SUB_GROUP_SIZE }
    local r = p.plan(o)
    T.eq(r.fits, true)
    T.eq(r.stage, 3)
    T.eq(r.offload_optimizer, "nvme")
    T.eq(r.offload_param, "none")
    T.truthy(r.cpu_bytes <= r.cpu_limit_bytes and r.gpu_bytes <= r.gpu_limit_bytes)
    -- the host figure is memory_terms' NVMe figure
    local s = terms().states{ stage = 3, params = m.params, largest_layer = m.largest_layer,
      gpus_per_node = 4, offload_optimizer = "nvme", nvme = o.nvme_tuning }
    T.eq(r.cpu_bytes, s.cpu)
    T.eq(r.nvme_bytes, s.nvme)
    T.truthy(r.reasons[1]:find("ZeRO-3, optimizer offload to NVMe", 1, true))
    -- every CPU route was rejected for host memory, in the explanation
    T.truthy(table.concat(r.reasons, "\n"):find(
      "ZeRO-3, optimizer offload to CPU: rejected, its model states need", 1, true))
  end,

  planner_grid_with_nvme_and_sequence_parallelism = function()
    -- every plan keeps the budgets and the batch identity at world / sp, and
    -- more host RAM never picks a costlier plan (the search is monotone)
    local p = require("deepspeed.planner")
    local models = require("deepspeed.models")
    local function le(a, b)
      for i = 1, #a do if a[i] ~= b[i] then return a[i] < b[i] end end
      return true
    end
    for _, name in ipairs({ "llama-3.2-1b", "llama-3-8b", "llama-2-13b" }) do
      for _, g in ipairs({ { 1, 24 }, { 4, 24 }, { 8, 80 } }) do
        local prev = nil
        for _, cpu in ipairs({ 32, 64, 128, 256, 1024 }) do
          local o = { model = models.get(name), gpus_per_node = g[1],
            gpu_mem_bytes = g[2] * GiB, cpu_mem_bytes = cpu * GiB, seq_len = 32768,
            global_batch = 64, flash_attention = true, max_micro_batch = 4, nvme = true,
            nvme_tuning = { sub_group_size = terms().NVME_SUB_GROUP_SIZE },
            sp_sizes = { 1, 2, 4, 8 } }
          local r = p.plan(o)
          local what = ("%s %dx%d GiB cpu %d"):format(name, g[1], g[2], cpu)
          if r.fits then
            T.eq(r.micro_batch * r.gradient_accumulation * r.data_parallel, 64, what)
            T.eq(r.data_parallel * r.sp, g[1], what)
            T.truthy(r.gpu_bytes <= r.gpu_limit_bytes and r.cpu_bytes <= r.cpu_limit_bytes, what)
            T.truthy(r.offload_optimizer ~= "nvme" or r.stage == 3, what)
            if prev then T.truthy(le(p.rank(r), p.rank(prev)), what .. ": costlier with more RAM") end
            prev = r
          else
            T.eq(prev, nil, what .. ": fitted with less RAM")
          end
        end
      end
    end
  end,

  planner_uses_sequence_parallelism_at_the_data_parallel_size = function()
    local p = require("deepspeed.planner")
    local o = { model = require("deepspeed.models").get("llama-3.1-8b"), gpus_per_node = 8,
      gpu_mem_bytes = 80 * GiB, cpu_mem_bytes = 1024 * GiB, seq_len = 131072,
      global_batch = 64, flash_attention = true, max_micro_batch = 1 }
    T.eq(p.plan(o).fits, false)
    o.sp_sizes = { 1, 2, 4, 8 }
    local r = p.plan(o)
    T.eq(r.fits, true)
    -- sp = 2 does not fit without offload; sp = 4 with ZeRO-2 does
    T.eq(r.sp, 4)
    T.eq(r.offload_optimizer, "none")
    T.eq(r.stage, 2)
    T.eq(r.data_parallel, 2)
    T.eq(r.micro_batch * r.gradient_accumulation * r.data_parallel, 64)
    T.truthy(r.reasons[1]:find("x 2 data-parallel ranks (8 GPUs / 4) = global batch 64", 1, true),
      r.reasons[1])
  end,
}
