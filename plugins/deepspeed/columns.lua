-- plugins/deepspeed/columns.lua -- what the deepspeed plugin declares
-- about its summaries (init.lua): the summary table's columns, the A/B
-- report page's layout and the memory-fit rule. Declared on every run, so
-- kept apart from the estimate itself (summary.lua, loaded when a variant
-- is summarized: issue 15).

local M = {}

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
        ok = "gpu_fits",
        parts = { { label = "model states", value = "model_states_gpu_bytes" },
                  { label = "activations", value = "activation_bytes" } } },
      { label = "CPU memory per node", unit = "bytes", budget = "cpu_budget_bytes",
        ok = "cpu_fits",
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

-- A column's value function: the cell's text from cells.lua, loaded when
-- the first cell is drawn (a command that draws no table does not undump
-- the cells; every column shares this one function prototype).
local cells
local function cell(name)
  return function(v)
    cells = cells or require("deepspeed.cells")
    return cells[name](v)
  end
end

M.columns = {
  { name = "world", align = "right", width = 5, value = cell("world") },
  { name = "micro", align = "right", width = 5, value = cell("micro") },
  { name = "gas", align = "right", width = 4, value = cell("gas") },
  { name = "global", align = "right", width = 6, value = cell("global") },
  { name = "zero", align = "right", width = 4, value = cell("zero") },
  { name = "offload", width = 9, value = cell("offload") },
  { name = "prec", width = 5, value = cell("prec") },
  -- Inputs shown only when they differ between the variants.
  { name = "model", show = "varies", value = cell("model") },
  { name = "seq", align = "right", show = "varies", value = cell("seq") },
  { name = "ckpt", show = "varies", value = cell("ckpt") },
  { name = "gpu_gb", align = "right", show = "varies", value = cell("gpu_gb") },
  { name = "gpu_gib", align = "right", width = 8, value = cell("gpu_gib") },
  { name = "cpu_gib", align = "right", width = 8, value = cell("cpu_gib") },
  { name = "fits",
    note = string.format("estimated GPU memory within %g%% of gpu_mem_gb and host "
      .. "memory within %g%% of cpu_mem_gb (the %g%% margin the planner keeps)",
      (1 - M.FIT_MARGIN) * 100, (1 - M.FIT_MARGIN) * 100, M.FIT_MARGIN * 100),
    value = cell("fits") },
}

-- The memory-fit rule: the summary's estimate against gpu_mem_gb and
-- cpu_mem_gb, a warning (an error with --strict-fit: strictness class "fit").
M.fit_rule = {
  id = "memory-fit", severity = "warning", strict = "fit",
  summary = "gen: a variant needs more GPU memory than its gpu_mem_gb (model states + activations estimate) or more host memory than its cpu_mem_gb (offloaded model states)",
  fix = "lower the micro batch, raise the ZeRO stage or offload; "
    .. "--strict-fit makes this an error",
  check = function(_, ctx)
    local s = ctx.summary
    if s and s.fits == false then
      -- the params the estimate depends on: gen blames the --param or
      -- --matrix argument that set one of them, when one did
      ctx.report{ path = "",
        param = { "gpu_mem_gb", "cpu_mem_gb", "micro_batch_size", "zero_stage", "offload",
                  "model", "seq_len", "precision", "activation_checkpointing",
                  "flash_attention" },
        message = type(s.fit_message) == "string" and s.fit_message
          or "does not fit the declared memory",
        fix = s.gpu_fits == false and s.cpu_fits == false
          and "offload less and raise cpu_mem_gb, or use more GPUs; --strict-fit makes this an error"
          or s.cpu_fits == false
          and "offload less (parameters first), raise cpu_mem_gb or spread the model over more nodes; --strict-fit makes this an error"
          or nil }
    end
  end,
}

return M
