-- deepspeed.memory: DeepSpeed's model-state memory estimators, in Lua.
--
-- Source of truth: deepspeedai/DeepSpeed
--   deepspeed/runtime/zero/stage_1_and_2.py  estimate_zero2_model_states_mem_needs
--   deepspeed/runtime/zero/stage3.py         estimate_zero3_model_states_mem_needs
--   docs/code-docs/source/memory.rst          (worked examples, byte breakdown)
-- and /work/shared/reference/deepspeed.md section 5.
--
-- Notation (as in DeepSpeed):
--   P     total parameters (shared parameters counted once)
--   L     parameters of the largest single module (m.parameters(recurse=False))
--   n     GPUs per node, nodes = node count, N = n * nodes (data-parallel size)
--   f     additional_buffer_factor (DeepSpeed default 1.5)
-- All results are bytes, returned as Lua integers. "GPU" is per GPU; "CPU" is
-- per node (DeepSpeed's "per CPU" column is the host RAM of one machine).
--
-- Exactness. DeepSpeed computes e.g. `2 * P + int(18 * P / N)` and
-- `int(P * max(4 * N, 16) * f)`. We evaluate the same operations in the same
-- order: integer products stay integers, `/` is float division (Python's
-- int/int true division is correctly rounded, and so is IEEE division of two
-- exactly-representable operands, i.e. whenever 18*P < 2^53), products with
-- the float f or 1/nodes go through floats exactly as in Python, and `int()`
-- is truncation toward zero (math.floor, every quantity here is >= 0).
-- The printed tables therefore match DeepSpeed digit for digit.
--
-- Byte accounting per parameter used by DeepSpeed (mixed precision + Adam):
--   2  fp16/bf16 parameters
--   2  fp16/bf16 gradients
--   4  fp32 gradients (the optimizer works on fp32 copies of the gradients)
--   4  fp32 master parameters
--   8  Adam momentum + variance (fp32)
--   => 2 + 18 bytes per parameter ("18 = 2 grads16 + 4 grads32 + 4 params32
--      + 8 optimizer states", comment in estimate_zero2_model_states_mem_needs).
-- Host RAM without offload (every stage < 3, and stage 3 without zero.Init):
--   each of the n processes of a node first builds the model on the CPU in
--   fp32: P * 4 * n * f bytes per node.
--
-- Stages 0 and 1 (DeepSpeed ships no estimator for them; same accounting):
--   stage 0 (no ZeRO, plain data parallelism): everything is replicated on
--     every GPU: 2 (params16) + 2 (grads16) + 16 (fp32 grads, fp32 master,
--     Adam) = 20 bytes/param.  GPU = 4P + 16P = 20P.  CPU = P*4*n*f.
--     Optimizer offload needs the ZeRO optimizer (deepspeedai/DeepSpeed#1403),
--     so stage 0 has no offload row; asking for one is an error.
--   stage 1 (optimizer states and fp32 copies partitioned, fp16 params and
--     fp16 grads replicated):
--       no offload:  GPU = 4P + int(16P/N)   CPU = P*4*n*f
--       (this is exactly the pre-v0.14.3 ZeRO-2 formula, which did not yet
--        account for ZeRO-2 partitioning the fp16 gradients)
--     optimizer offload (the 16 bytes/param of fp32 states live in host RAM,
--       handled by the same stage_1_and_2.py code path as ZeRO-2 offload,
--       but the fp16 gradients stay replicated on the GPU):
--                    GPU = 4P                CPU = P*max(4N,16)*f
-- Stage 2 (DeepSpeed >= v0.14.3, PR #5099):
--       offload:     GPU = 2P                CPU = P*max(4N,16)*f
--       no offload:  GPU = 2P + int(18P/N)   CPU = P*4*n*f
--   The offload CPU term uses the total GPU count N (memory.rst says n), so it
--   grows with the node count; we mirror the code.
-- Stage 3, with LLM = 4L (fp16 params gathered + fp16 grads of the largest
--   layer) and gf = 1/nodes:
--       param+optimizer offload: GPU = LLM
--           CPU = P*18*gf*f (zero_init) | P*max(4n, 18*gf)*f
--       optimizer offload only:  GPU = LLM + int(2P/N)
--           CPU = P*16*gf*f (zero_init) | P*max(4n, 16*gf)*f
--       no offload:              GPU = LLM + int(18P/N)
--           CPU = L*4*n*f (zero_init)  | P*4*n*f
--   Parameter offload WITHOUT optimizer offload (valid in DeepSpeed, but
--   absent from DeepSpeed's table; its estimator silently treats
--   cpu_offload=False as "no offload" whatever cpu_offload_params says).
--   We derive it with the same accounting: the 2 bytes/param of fp16
--   parameters move to host RAM and the 16 bytes of fp32 state stay
--   partitioned on the GPUs:
--           GPU = LLM + int(16P/N)
--           CPU = P*2*gf*f (zero_init) | P*max(4n, 2*gf)*f
--
-- Public API
--   M.zero0(P, n, nodes, offload_optimizer, f)           -> {gpu=, cpu=}
--   M.zero1(P, n, nodes, offload_optimizer, f)           -> {gpu=, cpu=}
--   M.zero2(P, n, nodes, offload_optimizer, f)           -> {gpu=, cpu=}
--   M.zero3(P, L, n, nodes, offload_optimizer, offload_param, zero_init, f)
--                                         -> {gpu=, cpu=, largest_layer=4L}
--   M.estimate{stage=, params=, largest_layer=, gpus_per_node=, nodes=1,
--              offload_optimizer="none", offload_param="none",
--              zero_init=true, buffer_factor=1.5}      -> {gpu=, cpu=}
--   M.all_cold(P, L, n, nodes, f)  -> rows (see M.ALL_COLD_ORDER)
--   M.format_row(row)              -> the line DeepSpeed prints for that row
--   M.gib(bytes), M.format_gib(bytes)
-- offload_optimizer/offload_param/zero_init arguments of the positional
-- functions are booleans (like DeepSpeed's cpu_offload, cpu_offload_params,
-- zero_init); f defaults to 1.5 and nodes to 1 when nil.

local M = {}

M.DEFAULT_BUFFER_FACTOR = 1.5

-- Python's int() for the non-negative quantities computed here.
local function trunc(x)
  if math.type(x) == "integer" then return x end
  if x ~= x or x == math.huge or x == -math.huge then
    error("deepspeed.memory: result is not a finite number", 3)
  end
  local r
  if x >= 0 then r = math.floor(x) else r = math.ceil(x) end
  local i = math.tointeger(r)
  if i == nil then
    error("deepspeed.memory: result " .. string.format("%.17g", x) ..
      " does not fit in a 64-bit integer", 3)
  end
  return i
end

-- A whole, non-negative (or positive) number given as integer or integral float.
local function whole(v, name, positive)
  if type(v) ~= "number" then
    error(("deepspeed.memory: %s must be a number, got %s"):format(name, type(v)), 3)
  end
  local i = math.tointeger(v)
  if i == nil then
    error(("deepspeed.memory: %s must be a whole number, got %s"):format(name, tostring(v)), 3)
  end
  if positive and i <= 0 then
    error(("deepspeed.memory: %s must be greater than 0, got %d"):format(name, i), 3)
  end
  if i < 0 then
    error(("deepspeed.memory: %s must not be negative, got %d"):format(name, i), 3)
  end
  return i
end

local function factor(f)
  if f == nil then return M.DEFAULT_BUFFER_FACTOR end
  if type(f) ~= "number" or f ~= f or f <= 0 or f == math.huge then
    error("deepspeed.memory: buffer factor must be a positive number, got " .. tostring(f), 3)
  end
  return f
end

local function flag(v, name)
  if v == nil then return false end
  if type(v) ~= "boolean" then
    error(("deepspeed.memory: %s must be a boolean, got %s"):format(name, type(v)), 3)
  end
  return v
end

local function common(P, n, nodes, f)
  P = whole(P, "params", true)
  n = whole(n, "gpus_per_node", true)
  nodes = whole(nodes == nil and 1 or nodes, "nodes", true)
  return P, n, nodes, factor(f)
end

--- Stage 0: no partitioning. offload_optimizer must be false.
function M.zero0(P, n, nodes, offload_optimizer, f)
  P, n, nodes, f = common(P, n, nodes, f)
  if flag(offload_optimizer, "offload_optimizer") then
    error("deepspeed.memory: offload_optimizer needs ZeRO stage 1, 2 or 3 " ..
      "(stage 0 has no ZeRO optimizer to offload; deepspeedai/DeepSpeed#1403)", 2)
  end
  -- 2 (params16) + 2 (grads16) + 16 (grads32, params32, Adam), all replicated.
  local gpu = 4 * P + 16 * P
  local cpu = P * 4 * n * f
  return { gpu = trunc(gpu), cpu = trunc(cpu) }
end

-- Stages 1 and 2 differ only in what stays replicated on every GPU and
-- what is partitioned over the N data-parallel ranks (bytes per parameter).
-- With the optimizer offloaded, only the replicated part stays on the GPU.
local function partitioned_states(P, n, nodes, offloaded, f, replicated, partitioned)
  local N = n * nodes
  local gpu, cpu
  if offloaded then
    gpu = replicated * P
    cpu = P * math.max(4 * N, 16) * f
  else
    gpu = replicated * P + trunc(partitioned * P / N)
    cpu = P * 4 * n * f
  end
  return { gpu = trunc(gpu), cpu = trunc(cpu) }
end

--- Stage 1: fp32 states partitioned over N, fp16 params and grads replicated.
function M.zero1(P, n, nodes, offload_optimizer, f)
  P, n, nodes, f = common(P, n, nodes, f)
  return partitioned_states(P, n, nodes,
    flag(offload_optimizer, "offload_optimizer"), f, 4, 16)
end

--- Stage 2: estimate_zero2_model_states_mem_needs (DeepSpeed >= v0.14.3):
--- fp16 params replicated; grads and fp32 states partitioned.
function M.zero2(P, n, nodes, offload_optimizer, f)
  P, n, nodes, f = common(P, n, nodes, f)
  return partitioned_states(P, n, nodes,
    flag(offload_optimizer, "offload_optimizer"), f, 2, 18)
end

--- Stage 3: estimate_zero3_model_states_mem_needs, plus the derived
--- parameter-offload-only case (see the header).
function M.zero3(P, L, n, nodes, offload_optimizer, offload_param, zero_init, f)
  P, n, nodes, f = common(P, n, nodes, f)
  L = whole(L, "largest_layer", false)
  if L > P then
    error(("deepspeed.memory: largest_layer (%d) cannot exceed params (%d)"):format(L, P), 2)
  end
  offload_optimizer = flag(offload_optimizer, "offload_optimizer")
  offload_param = flag(offload_param, "offload_param")
  if zero_init == nil then zero_init = true end
  zero_init = flag(zero_init, "zero_init")
  local N = n * nodes
  local gf = 1 / nodes
  local llm = 4 * L
  local gpu, cpu
  if offload_optimizer then
    if offload_param then
      gpu = llm
      if zero_init then
        cpu = P * 18 * gf * f
      else
        cpu = P * math.max(4 * n, 18 * gf) * f
      end
    else
      gpu = llm + trunc(2 * P / N)
      if zero_init then
        cpu = P * 16 * gf * f
      else
        cpu = P * math.max(4 * n, 16 * gf) * f
      end
    end
  elseif offload_param then
    -- Derived (not in DeepSpeed): fp16 params on the host, fp32 state on GPU.
    gpu = llm + trunc(16 * P / N)
    if zero_init then
      cpu = P * 2 * gf * f
    else
      cpu = P * math.max(4 * n, 2 * gf) * f
    end
  else
    gpu = llm + trunc(18 * P / N)
    if zero_init then
      cpu = L * 4 * n * f
    else
      cpu = P * 4 * n * f
    end
  end
  return { gpu = trunc(gpu), cpu = trunc(cpu), largest_layer = llm }
end

local ESTIMATE_KEYS = {
  stage = true, params = true, largest_layer = true, gpus_per_node = true,
  nodes = true, offload_optimizer = true, offload_param = true,
  zero_init = true, buffer_factor = true,
}

local function device(v, name)
  if v == nil then return false end
  if v == "none" then return false end
  if v == "cpu" then return true end
  error(("deepspeed.memory: %s must be \"none\" or \"cpu\", got %s"):format(
    name, type(v) == "string" and ("\"" .. v .. "\"") or tostring(v)), 3)
end

--- Validating front end. Returns { gpu = bytes per GPU, cpu = bytes per node }.
function M.estimate(opts)
  if type(opts) ~= "table" then
    error("deepspeed.memory.estimate: expected a table of options", 2)
  end
  for _, k in ipairs(dsforge.sorted_keys(opts)) do
    if not ESTIMATE_KEYS[k] then
      error("deepspeed.memory.estimate: unknown option '" .. tostring(k) .. "'", 2)
    end
  end
  local stage = type(opts.stage) == "number" and math.tointeger(opts.stage) or nil
  if stage == nil or stage < 0 or stage > 3 then
    error("deepspeed.memory.estimate: stage must be 0, 1, 2 or 3, got " .. tostring(opts.stage), 2)
  end
  if opts.params == nil then
    error("deepspeed.memory.estimate: params is required", 2)
  end
  if opts.gpus_per_node == nil then
    error("deepspeed.memory.estimate: gpus_per_node is required", 2)
  end
  if type(opts.gpus_per_node) == "number" and opts.gpus_per_node <= 0 then
    error("deepspeed.memory.estimate: gpus_per_node must be at least 1, got " ..
      tostring(opts.gpus_per_node), 2)
  end
  if type(opts.nodes) == "number" and opts.nodes <= 0 then
    error("deepspeed.memory.estimate: nodes must be at least 1, got " .. tostring(opts.nodes), 2)
  end
  if type(opts.params) == "number" and opts.params < 0 then
    error("deepspeed.memory.estimate: params must not be negative, got " .. tostring(opts.params), 2)
  end
  if type(opts.largest_layer) == "number" and opts.largest_layer < 0 then
    error("deepspeed.memory.estimate: largest_layer must not be negative, got " ..
      tostring(opts.largest_layer), 2)
  end
  local opt = device(opts.offload_optimizer, "offload_optimizer")
  local par = device(opts.offload_param, "offload_param")
  if par and stage < 3 then
    error(("deepspeed.memory.estimate: offload_param needs ZeRO stage 3 " ..
      "(DeepSpeed silently ignores it at stage %d)"):format(stage), 2)
  end
  if opt and stage == 0 then
    error("deepspeed.memory.estimate: offload_optimizer needs ZeRO stage 1, 2 or 3 " ..
      "(stage 0 has no ZeRO optimizer; deepspeedai/DeepSpeed#1403)", 2)
  end
  local zero_init = opts.zero_init
  if zero_init == nil then zero_init = true end
  if type(zero_init) ~= "boolean" then
    error("deepspeed.memory.estimate: zero_init must be a boolean, got " .. type(zero_init), 2)
  end
  local f = opts.buffer_factor
  local r
  if stage == 0 then
    r = M.zero0(opts.params, opts.gpus_per_node, opts.nodes, false, f)
  elseif stage == 1 then
    r = M.zero1(opts.params, opts.gpus_per_node, opts.nodes, opt, f)
  elseif stage == 2 then
    r = M.zero2(opts.params, opts.gpus_per_node, opts.nodes, opt, f)
  else
    if opts.largest_layer == nil then
      error("deepspeed.memory.estimate: largest_layer is required for stage 3", 2)
    end
    r = M.zero3(opts.params, opts.largest_layer, opts.gpus_per_node, opts.nodes,
      opt, par, zero_init, f)
  end
  return { gpu = r.gpu, cpu = r.cpu }
end

-- Row order of M.all_cold: stage ascending; within a stage, DeepSpeed's own
-- print order (offload before no offload; for stage 3, param+optimizer
-- offload, then optimizer offload, then none, each with zero_init 1 then 0).
M.ALL_COLD_ORDER = {
  { stage = 0, offload_optimizer = "none", offload_param = "none" },
  { stage = 1, offload_optimizer = "cpu",  offload_param = "none" },
  { stage = 1, offload_optimizer = "none", offload_param = "none" },
  { stage = 2, offload_optimizer = "cpu",  offload_param = "none" },
  { stage = 2, offload_optimizer = "none", offload_param = "none" },
  { stage = 3, offload_optimizer = "cpu",  offload_param = "cpu",  zero_init = true },
  { stage = 3, offload_optimizer = "cpu",  offload_param = "cpu",  zero_init = false },
  { stage = 3, offload_optimizer = "cpu",  offload_param = "none", zero_init = true },
  { stage = 3, offload_optimizer = "cpu",  offload_param = "none", zero_init = false },
  { stage = 3, offload_optimizer = "none", offload_param = "none", zero_init = true },
  { stage = 3, offload_optimizer = "none", offload_param = "none", zero_init = false },
}

--- Every row DeepSpeed's *_all_cold functions print (stages 2 and 3), plus
--- stages 0 and 1, in M.ALL_COLD_ORDER. Each row:
--- { stage, offload_optimizer, offload_param, zero_init (nil below stage 3), gpu, cpu }
function M.all_cold(P, L, n, nodes, f)
  local rows = {}
  for i, o in ipairs(M.ALL_COLD_ORDER) do
    local opt = o.offload_optimizer == "cpu"
    local r
    if o.stage == 0 then
      r = M.zero0(P, n, nodes, false, f)
    elseif o.stage == 1 then
      r = M.zero1(P, n, nodes, opt, f)
    elseif o.stage == 2 then
      r = M.zero2(P, n, nodes, opt, f)
    else
      r = M.zero3(P, L, n, nodes, opt, o.offload_param == "cpu", o.zero_init, f)
    end
    rows[i] = {
      stage = o.stage,
      offload_optimizer = o.offload_optimizer,
      offload_param = o.offload_param,
      zero_init = o.zero_init,
      gpu = r.gpu,
      cpu = r.cpu,
    }
  end
  return rows
end

--- Bytes to the number DeepSpeed prints (bytes / 2^30, labelled "GB").
function M.gib(bytes)
  return bytes / 2 ^ 30
end

--- "%.2fGB", as in DeepSpeed's tables.
function M.format_gib(bytes)
  return string.format("%.2fGB", bytes / 2 ^ 30)
end

-- DeepSpeed pads the device name to 4 characters: f'{OffloadDeviceEnum.cpu:4}'.
local function dev4(d)
  if d == "cpu" then return "cpu " end
  return d
end

--- The line DeepSpeed's all_cold functions print for one row:
---   f" {cpu/2**30:7.2f}GB | {gpu/2**30:6.2f}GB | {options}"
--- Options: stage 3 rows "offload_param=.., offload_optimizer=.., zero_init=1|0",
--- other stages "offload_optimizer=..", as in estimate_zero2_..._all_cold.
function M.format_row(row)
  local options
  if row.stage == 3 then
    options = ("offload_param=%s, offload_optimizer=%s, zero_init=%d"):format(
      dev4(row.offload_param), dev4(row.offload_optimizer), row.zero_init and 1 or 0)
  else
    options = "offload_optimizer=" .. dev4(row.offload_optimizer)
  end
  return (" %7.2fGB | %6.2fGB | %s"):format(row.cpu / 2 ^ 30, row.gpu / 2 ^ 30, options)
end

return M
