-- deepspeed.memory_terms: model-state memory beyond DeepSpeed's own
-- estimators (deepspeed.memory): NVMe offload (ZeRO-Infinity), AutoTP tensor
-- parallelism, sequence parallelism and LoRA/QLoRA fine-tuning.
--
-- Loaded only by the planner, `estimate` and the gen summary when a plan or
-- a config uses one of these (deepspeed.memory stays the core). Every result
-- is bytes as a Lua integer. "Per rank" is per GPU process; host memory is
-- reported per node (n ranks), as in deepspeed.memory.
-- Sources are DeepSpeed v0.19.5 (git show v0.19.5:PATH), cited as file:line.
--
-- 1. NVMe offload (ZeRO-Infinity: S. Rajbhandari et al., "ZeRO-Infinity:
--    Breaking the GPU Memory Wall for Extreme Scale Deep Learning", SC'21,
--    arXiv:2104.07857). NVMe swapping exists only at ZeRO stage 3: the
--    swappers are built by deepspeed/runtime/zero/stage3.py:759-774
--    (_configure_tensor_swapping); stage_1_and_2.py:185-186 treats any
--    offload_optimizer.device other than none, nvme included, as CPU offload.
--    GPU memory is that of CPU offload (the same tensors leave the GPU).
--    Host memory per rank, with the optimizer on NVMe:
--      grads   4 * ceil(P/N): the fp32 gradient partitions stay in (pinned)
--              host memory, stage3.py:711-715 (grad_partitions_flat_buffer,
--              gradient_accumulation_dtype fp32, device = cpu whenever the
--              optimizer is offloaded, stage3.py:328)
--      optbuf  buffer_count * align(largest_numel) * 4: the optimizer
--              swapper's pinned fp32 buffers,
--              swap_tensor/optimizer_utils.py:185-190 and
--              swap_tensor/utils.py:192 (SwapBufferManager); buffer_count
--              defaults to 4 (zero/offload_config.py:67). largest_numel is
--              the largest optimizer sub group, max(fp16_partitioned_groups_
--              flat_numel) (stage3.py:771); sub groups are filled until they
--              reach sub_group_size (stage3.py:1130-1150), so
--              largest_numel <= min(ceil(P/N), sub_group_size + ceil(L/N)).
--              align() rounds up to AIO_ALIGNED_BYTES (1024) *
--              intra_op_parallelism bytes (swap_tensor/constants.py:15,
--              optimizer_utils.py:180-182, 531-533).
--    and with the parameters offloaded as well:
--      to CPU  2 * ceil(P/N): the fp16 partitions in pinned host memory
--              (stage3.py:810-825, _create_param_groups_fp16_flat_cpu_memory)
--      to NVMe 2 * min(max_in_cpu, ceil(P/N)) of those kept on the host
--              (stage3.py:817-820; max_in_cpu default 1e9,
--              offload_config.py:39) + the parameter swapper's pinned
--              buffers buffer_count * align(buffer_size) * 2
--              (swap_tensor/partitioned_param_swapper.py:104-131; defaults
--              5 and 1e8, offload_config.py:33-36). The swapper asserts a
--              partition fits one buffer (partitioned_param_swapper.py:357),
--              so buffer_size must be >= ceil(L/N): M.param_buffer_size.
--    Host per node = n * (sum of the per-rank parts) * f, f the additional
--    buffer factor deepspeed.memory applies to every host figure (1.5).
--    NVMe space per node (reported, not budgeted): 16 * ceil(P/N) * n for
--    the optimizer (fp32 master, Adam's two moments and the fp32 gradients,
--    swapped per sub group, swap_tensor/partitioned_optimizer_swapper.py),
--    + 2 * ceil(P/N) * n for NVMe parameters.
-- 2. Tensor parallelism (AutoTP training, `tensor_parallel.autotp_size`,
--    engine.py:329 _configure_tensor_parallel): every layer's weights are
--    split over tp ranks of a node and ZeRO partitions each shard over the
--    data-parallel group of world/tp ranks. We evaluate deepspeed.memory's
--    formulas with P/tp, L/tp and n/tp GPUs per node (tp must divide n);
--    per node there are tp such groups, so host memory is tp times theirs,
--    but at least the unsharded model-load term P*4*n*f below stage 3 or
--    without zero.Init: AutoTP shards a module that every process has
--    already built (DeepSpeedEngine.__init__ calls _configure_tensor_parallel,
--    engine.py:329-330).
-- 3. Sequence parallelism (Ulysses: S. A. Jacobs et al., "DeepSpeed Ulysses",
--    arXiv:2309.14509): model states are partitioned over the
--    sequence-data-parallel group, the whole world (engine.py:1798 and
--    2366, dp_process_group=self.seq_data_parallel_group; utils/groups.py:
--    845-851), so they do not change; activations are divided by sp
--    (deepspeed.activations) and the batch identity uses world/sp
--    (runtime/config.py:710).
-- 4. LoRA / QLoRA (E. Hu et al., arXiv:2106.09685; T. Dettmers et al.,
--    arXiv:2305.14314): T trainable adapter parameters get the full
--    mixed-precision Adam accounting of deepspeed.memory (2 + 18 bytes, or
--    offloaded as there); the P - T frozen base weights take bits/8 bytes
--    each (16, 8 or 4 bits) with no gradient or optimizer state, replicated
--    below stage 3 and partitioned over N at stage 3, where the largest
--    layer is gathered at bits/8 bytes per parameter. Host memory: the
--    trainable part's figure plus, below stage 3 or without zero.Init, each
--    process loading the base weights: (P - T) * bits/8 * n * f.
--    T for rank r (M.lora_trainable, all linear projections of a llama-
--    style block, PEFT's target_modules="all-linear"): per layer
--    r * (sum over q,k,v,o,gate,up,down of in_features + out_features).
--    Parameter offload with LoRA is not modelled (an error).
--
-- Public API
--   M.io_aligned(numel, element_size, intra_op_parallelism = 1) -> numel
--   M.param_buffer_size(L, N)  -> offload_param.buffer_size that fits
--   M.nvme{ params, largest_layer, gpus_per_node, nodes = 1,
--           offload_param = "none"|"cpu"|"nvme", sub_group_size = 1e9,
--           optimizer_buffer_count = 4, param_buffer_count = 5,
--           param_buffer_size = 1e8, max_in_cpu = 1e9,
--           intra_op_parallelism = 1, buffer_factor = 1.5 }
--     -> { cpu = per node, nvme = per node, grads, optimizer_buffers,
--          param_host, param_buffers (each per rank) }
--   M.lora_trainable(model, rank) -> T
--   M.states{ stage, params, largest_layer, gpus_per_node, nodes = 1,
--             offload_optimizer = "none"|"cpu"|"nvme",
--             offload_param = "none"|"cpu"|"nvme", zero_init = true,
--             tp = 1, trainable_params = nil (all), base_bits = 16,
--             nvme = { M.nvme's tuning options; sub_group_size defaults to
--                      M.NVME_SUB_GROUP_SIZE and param_buffer_size to
--                      M.param_buffer_size(L, N): what dsforge writes } }
--     -> { gpu = per GPU, cpu = per node, nvme = per node (0 without) }
--   M.nvme_sections(zero, p) -> aio (sets zero's NVMe offload sections)
--   M.config_states(cfg, params, model, stage, gpus_per_node, nodes, tp)
--     -> M.states of a written config (gen's summary), or nil

local memory = require("deepspeed.memory")

local M = {}

M.AIO_ALIGNED_BYTES = 1024          -- swap_tensor/constants.py:15
M.OPTIMIZER_BUFFER_COUNT = 4        -- zero/offload_config.py:67
M.PARAM_BUFFER_COUNT = 5            -- zero/offload_config.py:33
M.PARAM_BUFFER_SIZE = 100000000     -- zero/offload_config.py:36
M.MAX_IN_CPU = 1000000000           -- zero/offload_config.py:39
M.SUB_GROUP_SIZE = 1000000000       -- zero/config.py sub_group_size default
-- The sub_group_size dsforge writes with NVMe offload: the optimizer
-- swapper pins buffer_count buffers of the largest sub group (header, 1),
-- 4 x 1e9 x 4 bytes = 16 GB per GPU at DeepSpeed's default; 1e8 pins 1.6 GB.
M.NVME_SUB_GROUP_SIZE = 100000000

--- The sections base.lua writes for offload=nvme|nvme-all at ZeRO-3: sets
--- zero.sub_group_size, zero.offload_optimizer (and offload_param for
--- nvme-all, buffer_size large enough for the model's largest partition)
--- and returns the aio section. p: the profile params.
function M.nvme_sections(zero, p)
  zero.sub_group_size = M.NVME_SUB_GROUP_SIZE
  zero.offload_optimizer = { device = "nvme", nvme_path = p.nvme_path, pin_memory = true,
    buffer_count = M.OPTIMIZER_BUFFER_COUNT }
  if p.offload == "nvme-all" then
    local m = require("deepspeed.models").get(p.model)
    local size = M.PARAM_BUFFER_SIZE
    if m then size = M.param_buffer_size(m.largest_layer, p.world_size) end
    zero.offload_param = { device = "nvme", nvme_path = p.nvme_path, pin_memory = true,
      buffer_count = M.PARAM_BUFFER_COUNT, buffer_size = size, max_in_cpu = M.MAX_IN_CPU }
  end
  return M.aio()
end

--- The aio section dsforge writes with NVMe offload: DeepSpeed's defaults
--- (swap_tensor/constants.py:8-17), stated so the budgeted alignment
--- (intra_op_parallelism) is the one the run uses.
function M.aio()
  return { block_size = 1048576, queue_depth = 8, intra_op_parallelism = 1,
    single_submit = false, overlap_events = true, use_gds = false }
end

local function fail(msg)
  error("deepspeed.memory_terms: " .. msg, 3)
end

local function whole(v, name, min)
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i == nil or i < min then
    fail(("%s must be a whole number >= %d, got %s"):format(name, min, tostring(v)))
  end
  return i
end

local function ceil_div(a, b) return (a + b - 1) // b end

--- Elements rounded up to the AIO alignment (optimizer_utils.py:531-533).
function M.io_aligned(numel, element_size, iop)
  local align = M.AIO_ALIGNED_BYTES * (iop or 1) // element_size
  local r = numel % align
  if r == 0 then return numel end
  return numel + align - r
end

--- offload_param.buffer_size large enough for the largest partition
--- (partitioned_param_swapper.py:357), at least DeepSpeed's default.
function M.param_buffer_size(L, N)
  return math.max(M.PARAM_BUFFER_SIZE, ceil_div(L, N))
end

local function factor(f)
  if f == nil then return memory.DEFAULT_BUFFER_FACTOR end
  if type(f) ~= "number" or f ~= f or f <= 0 or f == math.huge then
    fail("buffer_factor must be a positive number, got " .. tostring(f))
  end
  return f
end

local function trunc(x)
  if math.type(x) == "integer" then return x end
  return math.tointeger(math.floor(x)) or fail("result does not fit in an integer")
end

--- Host and NVMe bytes of ZeRO-3 with the optimizer on NVMe (header, 1).
function M.nvme(o)
  if type(o) ~= "table" then fail("nvme: expected a table of options") end
  local P = whole(o.params, "params", 1)
  local L = whole(o.largest_layer, "largest_layer", 0)
  local n = whole(o.gpus_per_node, "gpus_per_node", 1)
  local nodes = whole(o.nodes or 1, "nodes", 1)
  local sub = whole(o.sub_group_size or M.SUB_GROUP_SIZE, "sub_group_size", 1)
  local obc = whole(o.optimizer_buffer_count or M.OPTIMIZER_BUFFER_COUNT,
    "optimizer_buffer_count", 0)
  local pbc = whole(o.param_buffer_count or M.PARAM_BUFFER_COUNT, "param_buffer_count", 0)
  local pbs = whole(o.param_buffer_size or M.PARAM_BUFFER_SIZE, "param_buffer_size", 0)
  local max_in_cpu = whole(o.max_in_cpu or M.MAX_IN_CPU, "max_in_cpu", 0)
  local iop = whole(o.intra_op_parallelism or 1, "intra_op_parallelism", 1)
  local f = factor(o.buffer_factor)
  local op = o.offload_param or "none"
  if op ~= "none" and op ~= "cpu" and op ~= "nvme" then
    fail("offload_param must be \"none\", \"cpu\" or \"nvme\", got " .. tostring(op))
  end
  local N = n * nodes
  local part = ceil_div(P, N)
  local largest = math.min(part, sub + ceil_div(L, N))
  local r = {
    grads = 4 * part,
    optimizer_buffers = obc * M.io_aligned(largest, 4, iop) * 4,
    param_host = 0, param_buffers = 0,
  }
  local nvme_rank = 16 * part
  if op == "cpu" then
    r.param_host = 2 * part
  elseif op == "nvme" then
    if ceil_div(L, N) > pbs then
      fail(("offload_param.buffer_size %d is smaller than the largest parameter partition " ..
        "%d (partitioned_param_swapper.py:357 asserts it fits)"):format(pbs, ceil_div(L, N)))
    end
    r.param_host = 2 * math.min(max_in_cpu, part)
    r.param_buffers = pbc * M.io_aligned(pbs, 2, iop) * 2
    nvme_rank = nvme_rank + 2 * part
  end
  local rank = r.grads + r.optimizer_buffers + r.param_host + r.param_buffers
  r.cpu = trunc(n * rank * f)
  r.nvme = n * nvme_rank
  return r
end

-- Linear layers of a llama-style block: (in, out) features.
local function block_linears(m)
  local h, a = m.hidden_size, m.heads
  local d = m.head_dim or (h // a)
  local kv = m.kv_heads or a
  local I = m.intermediate_size
  return {
    { h, a * d }, { h, kv * d }, { h, kv * d }, { a * d, h }, -- q k v o
    { h, I }, { h, I }, { I, h },                             -- gate up down
  }
end

--- LoRA adapter parameters of rank r on every linear projection (header, 4).
function M.lora_trainable(model, rank)
  rank = whole(rank, "lora rank", 1)
  if type(model) ~= "table" or type(model.intermediate_size) ~= "number"
      or type(model.hidden_size) ~= "number" or type(model.layers) ~= "number" then
    fail("LoRA needs a model with hidden_size, intermediate_size and layers")
  end
  if model.arch ~= nil and model.arch ~= "llama" and model.arch ~= "mistral"
      and model.arch ~= "qwen2" then
    fail(("LoRA's adapter count is modelled for llama-style blocks, not %s"):format(
      tostring(model.arch)))
  end
  local per_layer = 0
  for _, io in ipairs(block_linears(model)) do per_layer = per_layer + io[1] + io[2] end
  return model.layers * rank * per_layer
end

local DEVICES = { none = true, cpu = true, nvme = true }
local STATE_KEYS = {
  stage = true, params = true, largest_layer = true, gpus_per_node = true, nodes = true,
  offload_optimizer = true, offload_param = true, zero_init = true, tp = true,
  trainable_params = true, base_bits = true, nvme = true, buffer_factor = true,
}

local function cpu_dev(d) return d == "none" and "none" or "cpu" end

--- Model states with NVMe, AutoTP and LoRA (header). gpu per GPU, cpu and
--- nvme per node.
function M.states(o)
  if type(o) ~= "table" then fail("states: expected a table of options") end
  for _, k in ipairs(dsforge.sorted_keys(o)) do
    if not STATE_KEYS[k] then fail("states: unknown option '" .. tostring(k) .. "'") end
  end
  local stage = whole(o.stage, "stage", 0)
  local P = whole(o.params, "params", 1)
  local L = whole(o.largest_layer or 0, "largest_layer", 0)
  local n = whole(o.gpus_per_node, "gpus_per_node", 1)
  local nodes = whole(o.nodes or 1, "nodes", 1)
  local tp = whole(o.tp or 1, "tp", 1)
  local oo, op = o.offload_optimizer or "none", o.offload_param or "none"
  if not DEVICES[oo] or not DEVICES[op] then
    fail("offload devices must be \"none\", \"cpu\" or \"nvme\"")
  end
  if (oo == "nvme" or op == "nvme") and stage ~= 3 then
    fail(("NVMe offload needs ZeRO stage 3 (stage_1_and_2.py:185-186 treats nvme as cpu " ..
      "at stage %d)"):format(stage))
  end
  if op == "nvme" and oo ~= "nvme" then
    fail("parameter offload to NVMe is modelled with the optimizer on NVMe only")
  end
  if n % tp ~= 0 then
    fail(("tp %d must divide gpus_per_node %d (AutoTP within a node)"):format(tp, n))
  end
  local f = factor(o.buffer_factor)
  local zero_init = o.zero_init
  if zero_init == nil then zero_init = true end
  local bits = whole(o.base_bits or 16, "base_bits", 4)
  if bits ~= 16 and bits ~= 8 and bits ~= 4 then
    fail("base_bits must be 16, 8 or 4, got " .. bits)
  end
  local T = o.trainable_params
  if T ~= nil then
    T = whole(T, "trainable_params", 1)
    if T > P then fail(("trainable_params %d exceeds params %d"):format(T, P)) end
    if op ~= "none" then fail("parameter offload is not modelled with LoRA") end
  elseif bits ~= 16 then
    fail("base_bits below 16 needs trainable_params (QLoRA: frozen quantized weights)")
  end
  -- tensor parallelism: a 1/tp shard per rank, n/tp data-parallel ranks per node
  local Pt, Lt, nt = ceil_div(P, tp), ceil_div(L, tp), n // tp
  local N = nt * nodes
  local function core(params, largest)
    return memory.estimate{
      stage = stage, params = params, largest_layer = largest, gpus_per_node = nt,
      nodes = nodes, offload_optimizer = cpu_dev(oo), offload_param = cpu_dev(op),
      zero_init = zero_init, buffer_factor = f,
    }
  end
  local gpu, cpu, nvme
  if T ~= nil then
    local Tt = ceil_div(T, tp)
    local est = core(Tt, 0)
    local frozen = Pt - math.min(Pt, Tt)
    if stage == 3 then
      gpu = est.gpu + ceil_div(frozen * bits // 8, N) + Lt * bits // 8
      cpu = est.cpu
      if not zero_init then cpu = cpu + trunc(frozen * bits // 8 * nt * f) end
    else
      gpu = est.gpu + frozen * bits // 8
      cpu = est.cpu + trunc(frozen * bits // 8 * nt * f)
    end
  else
    local est = core(Pt, Lt)
    gpu, cpu = est.gpu, est.cpu
  end
  nvme = 0
  if oo == "nvme" then
    local t = o.nvme or {}
    local r = M.nvme{
      params = T ~= nil and ceil_div(T, tp) or Pt, largest_layer = T ~= nil and 0 or Lt,
      gpus_per_node = nt, nodes = nodes, offload_param = op,
      sub_group_size = t.sub_group_size or M.NVME_SUB_GROUP_SIZE,
      optimizer_buffer_count = t.optimizer_buffer_count,
      -- default: the buffer_size dsforge writes (M.param_buffer_size)
      param_buffer_count = t.param_buffer_count,
      param_buffer_size = t.param_buffer_size or M.param_buffer_size(Lt, N),
      max_in_cpu = t.max_in_cpu, intra_op_parallelism = t.intra_op_parallelism,
      buffer_factor = f,
    }
    cpu, nvme = r.cpu, r.nvme
  end
  cpu = cpu * tp
  if tp > 1 and oo == "none" and (stage < 3 or not zero_init) then
    cpu = math.max(cpu, trunc(P * 4 * n * f))
  end
  return { gpu = gpu, cpu = cpu, nvme = nvme * tp }
end


local function raw_device(section)
  if type(section) ~= "table" then return "none" end
  local d = section.device
  if d == "cpu" or d == "nvme" then return d end
  return "none"
end

local function int_or(v, default)
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i and i >= 0 then return i end
  return default
end

--- The model states of a written config (gen's summary): offload devices,
--- NVMe sizes (DeepSpeed's defaults where the config has none), AutoTP size
--- tp and the finetune/lora_rank params. nil when not modelled here.
function M.config_states(cfg, params, model, stage, per_node, nodes, tp)
  local z = type(cfg.zero_optimization) == "table" and cfg.zero_optimization or {}
  local oo, op = raw_device(z.offload_optimizer), raw_device(z.offload_param)
  local lora = params.finetune == "lora" or params.finetune == "qlora"
  if stage < 3 then
    -- stage_1_and_2.py:185-186: nvme is cpu below stage 3; no param offload
    if oo == "nvme" then oo = "cpu" end
    op = "none"
  elseif oo ~= "nvme" and op == "nvme" then
    op = "cpu"
  end
  if stage == 0 then oo = "none" end
  if per_node % tp ~= 0 then return nil end
  local tuning = nil
  if oo == "nvme" then
    local zo = type(z.offload_optimizer) == "table" and z.offload_optimizer or {}
    local zp = type(z.offload_param) == "table" and z.offload_param or {}
    local aio = type(cfg.aio) == "table" and cfg.aio or {}
    tuning = {
      sub_group_size = int_or(z.sub_group_size, nil) or M.SUB_GROUP_SIZE,
      optimizer_buffer_count = int_or(zo.buffer_count, nil),
      param_buffer_count = int_or(zp.buffer_count, nil),
      param_buffer_size = int_or(zp.buffer_size, nil) or M.PARAM_BUFFER_SIZE,
      max_in_cpu = int_or(zp.max_in_cpu, nil),
      intra_op_parallelism = int_or(aio.intra_op_parallelism, nil),
    }
  end
  local trainable, bits
  if lora then
    local ok, t = pcall(M.lora_trainable, model, math.tointeger(params.lora_rank) or 16)
    if not ok or op ~= "none" then return nil end
    trainable, bits = t, params.finetune == "qlora" and 4 or 16
  end
  local ok, est = pcall(M.states, {
    stage = stage, params = model.params, largest_layer = model.largest_layer,
    gpus_per_node = per_node, nodes = nodes, offload_optimizer = oo, offload_param = op,
    zero_init = true, tp = tp, trainable_params = trainable, base_bits = bits, nvme = tuning,
  })
  if not ok then return nil end
  return est
end

return M
