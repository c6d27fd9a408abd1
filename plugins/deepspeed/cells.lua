-- plugins/deepspeed/cells.lua -- the texts of the summary table's cells
-- (columns.lua declares the columns; each column's value function calls
-- the function of the same name here, loaded when the first cell is
-- drawn). Each gets v = { name, tier, config, params, summary } and returns
-- the cell's text or nil ("-").

local M = {}

local GIB = 1024 * 1024 * 1024

-- A whole number as text: non-negative numbers are truncated, anything
-- else has no cell.
local function whole(x)
  if type(x) ~= "number" or x ~= x or x < 0 then return nil end
  if x >= 2^63 then return string.format("%.0f", x) end
  return string.format("%d", math.floor(x))
end

local function gib(x)
  if type(x) ~= "number" or x < 0 then return nil end
  return string.format("%.2f", x / GIB)
end

local function precision(cfg)
  local bf = type(cfg.bf16) == "table" and cfg.bf16.enabled or nil
  local fp = type(cfg.fp16) == "table" and cfg.fp16.enabled or nil
  if bf == true then return "bf16" end
  if fp == true then return "fp16" end
  if type(bf) == "string" or type(fp) == "string" then return "auto" end
  return "fp32"
end

local function offload(cfg)
  local z = type(cfg.zero_optimization) == "table" and cfg.zero_optimization or {}
  local function on(sec)
    local d = type(sec) == "table" and sec.device or nil
    return type(d) == "string" and d ~= "none"
  end
  local oo, op = on(z.offload_optimizer), on(z.offload_param)
  -- NVMe (ZeRO-Infinity): the names of the offload param's values
  local function nvme(sec) return type(sec) == "table" and sec.device == "nvme" end
  if nvme(z.offload_optimizer) then
    return nvme(z.offload_param) and "nvme-all" or "nvme"
  end
  if oo and op then return "opt+param" end
  if oo then return "optimizer" end
  if op then return "param" end
  return "none"
end

local function world(params)
  local w = type(params) == "table" and params.world_size or nil
  if type(w) == "number" and w >= 1 then return whole(w) end
  return "1"
end

-- A param as text: strings as they are, numbers in %g, else nil.
local function param_text(params, key)
  local x = type(params) == "table" and params[key] or nil
  if type(x) == "string" then return x end
  if type(x) == "number" then return string.format("%g", x) end
  return nil
end

local function checkpointing(params)
  if type(params) ~= "table" then return nil end
  local a, g = params.activation_checkpointing, params.gradient_checkpointing
  if a == nil and g == nil then return nil end
  return (a == true or g == true) and "yes" or "no"
end

local function stage(cfg)
  local z = cfg.zero_optimization
  local s = type(z) == "table" and whole(z.stage) or nil
  return s or "0"
end

function M.world(v) return world(v.params) end
function M.micro(v) return whole(v.config.train_micro_batch_size_per_gpu) end
function M.gas(v) return whole(v.config.gradient_accumulation_steps) end
function M.global(v) return whole(v.config.train_batch_size) end
function M.zero(v) return stage(v.config) end
function M.offload(v) return offload(v.config) end
function M.prec(v) return precision(v.config) end
function M.model(v) return param_text(v.params, "model") end
function M.seq(v) return whole(v.params and v.params.seq_len) end
function M.ckpt(v) return checkpointing(v.params) end
function M.gpu_gb(v) return param_text(v.params, "gpu_mem_gb") end
function M.gpu_gib(v) return v.summary and gib(v.summary.gpu_bytes) end
function M.cpu_gib(v) return v.summary and gib(v.summary.cpu_bytes) end
function M.fits(v)
  local f = v.summary and v.summary.fits
  if f == true then return "yes" end
  if f == false then return "NO" end
  return nil
end

return M
