-- plugins/deepspeed/columns.lua -- what the deepspeed plugin declares
-- about its summaries (init.lua): the summary table's columns, the A/B
-- report page's layout and the memory-fit rule. Declared on every run, so
-- kept apart from the estimate itself (summary.lua, loaded when a variant
-- is summarized: issue 15).

local M = {}

local GIB = 1024 * 1024 * 1024

-- The share of gpu_mem_gb a variant must leave free to "fit": the margin
-- the planner keeps (planner.lua takes its default from here).
M.FIT_MARGIN = 0.10

-- M.report_layout() -> what the A/B report page draws from each variant's
-- summary, in the core's generic terms (it names no DeepSpeed key): bars
-- of parts against a budget, and products of factors. "budget", "ok" and
-- "value" are paths into the summary, so the layout is declared once, not
-- carried by every variant.
function M.report_layout()
  return {
    bars = {
      { label = "GPU memory per device", unit = "bytes", budget = "gpu_budget_bytes",
        ok = "fits",
        parts = { { label = "model states", value = "model_states_gpu_bytes" },
                  { label = "activations", value = "activation_bytes" } } },
      { label = "CPU memory per node", unit = "bytes",
        parts = { { label = "offloaded model states", value = "cpu_bytes" } } },
    },
    products = {
      { label = "global batch", value = "batch.global",
        factors = { { label = "micro batch per GPU", value = "batch.micro" },
                    { label = "gradient accumulation", value = "batch.accumulation" },
                    { label = "data-parallel world", value = "batch.world" } } },
    },
  }
end

---------------------------------------------------------------------------
-- Summary columns (contrib/docs/plugins.md, "Summary columns"): each value
-- function gets v = { name, tier, config, params, summary } and returns the
-- cell's text or nil ("-").
---------------------------------------------------------------------------

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

M.columns = {
  { name = "world", align = "right", width = 5,
    value = function(v) return world(v.params) end },
  { name = "micro", align = "right", width = 5,
    value = function(v) return whole(v.config.train_micro_batch_size_per_gpu) end },
  { name = "gas", align = "right", width = 4,
    value = function(v) return whole(v.config.gradient_accumulation_steps) end },
  { name = "global", align = "right", width = 6,
    value = function(v) return whole(v.config.train_batch_size) end },
  { name = "zero", align = "right", width = 4,
    value = function(v) return stage(v.config) end },
  { name = "offload", width = 9, value = function(v) return offload(v.config) end },
  { name = "prec", width = 5, value = function(v) return precision(v.config) end },
  -- Inputs shown only when they differ between the variants.
  { name = "model", show = "varies",
    value = function(v) return param_text(v.params, "model") end },
  { name = "seq", align = "right", show = "varies",
    value = function(v) return whole(v.params and v.params.seq_len) end },
  { name = "ckpt", show = "varies",
    value = function(v) return checkpointing(v.params) end },
  { name = "gpu_gb", align = "right", show = "varies",
    value = function(v) return param_text(v.params, "gpu_mem_gb") end },
  { name = "gpu_gib", align = "right", width = 8,
    value = function(v) return v.summary and gib(v.summary.gpu_bytes) end },
  { name = "cpu_gib", align = "right", width = 8,
    value = function(v) return v.summary and gib(v.summary.cpu_bytes) end },
  { name = "fits",
    note = string.format("estimated GPU memory within %g%% of gpu_mem_gb "
      .. "(the %g%% margin the planner keeps)", (1 - M.FIT_MARGIN) * 100,
      M.FIT_MARGIN * 100),
    value = function(v)
      local f = v.summary and v.summary.fits
      if f == true then return "yes" end
      if f == false then return "NO" end
      return nil
    end },
}

-- The memory-fit rule: the summary's estimate against gpu_mem_gb, a
-- warning (an error with --strict-fit: strictness class "fit").
M.fit_rule = {
  id = "memory-fit", severity = "warning", strict = "fit",
  summary = "gen: a variant needs more GPU memory than its gpu_mem_gb (model states + activations estimate)",
  fix = "lower the micro batch, raise the ZeRO stage or offload; "
    .. "--strict-fit makes this an error",
  check = function(_, ctx)
    local s = ctx.summary
    if s and s.fits == false then
      ctx.report{ path = "",
        message = type(s.fit_message) == "string" and s.fit_message
          or "does not fit the declared GPU memory" }
    end
  end,
}

return M
