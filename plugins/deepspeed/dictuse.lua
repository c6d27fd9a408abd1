-- plugins/deepspeed/dictuse.lua -- what DeepSpeed does with a value it
-- reads with dict.get and never type-checks (hand-written, read from
-- runtime/config.py and runtime/engine.py at each covered release).
--
-- DeepSpeedConfig keeps such a value as it is, so a wrong type fails only
-- where DeepSpeed computes with it. schema_check.lua decides the severity
-- of a wrong type (and of "auto", which DeepSpeed keeps as the string
-- "auto" here) from this table:
--
--   a flag (bool)   Python tests it for truthiness: any non-empty string
--                   ("no", "false", "auto") acts as true. A warning, unless
--                   op = "bitor": DeepSpeedConfig computes `x | y` with it,
--                   which fails (TypeError) for a string: an error.
--   a number        DeepSpeed computes with it (comparison, modulo,
--                   division): a string fails with TypeError, an error.
--                   With `when`, only a feature that the config may not
--                   enable computes with it: an error when when(cfg) says
--                   the feature is on, a warning (no effect now) otherwise.
--   null            null = "absent": where the release reads the section
--                   with a pydantic model, DeepSpeed takes None for absent.
--   a section       op = "in": DeepSpeed only tests `"name" in section`, so a
--                   string or list is not used at all: a warning.
--
--   M.of(dotted_path) -> entry or nil
--   entry = { op = "bitor" | "in" | nil, null = "absent" | nil,
--             source = "file function", test = "text", fails = "where it fails",
--             when = function(cfg) -> bool, feature = "text" }

local NULL = dsforge.null
local type, rawget = type, rawget

local M = {}

local function obj(v)
  if type(v) ~= "table" or v == NULL or rawget(v, 1) ~= nil then return nil end
  return v
end

-- Python truthiness of cfg[a][b].
local function truthy_at(cfg, a, b)
  local v = rawget(obj(rawget(obj(cfg) or {}, a)) or {}, b)
  if v == nil or v == NULL or v == false or v == 0 or v == "" then return false end
  if type(v) == "table" then return next(v) ~= nil end
  return true
end

-- ZeRO offload to NVMe anywhere in the config (the only user of aio.*).
local function nvme_offload(cfg)
  local z = obj(rawget(obj(cfg) or {}, "zero_optimization"))
  if not z then return false end
  for _, key in ipairs({ "offload_optimizer", "offload_param" }) do
    local s = obj(rawget(z, key))
    if s and rawget(s, "device") == "nvme" then return true end
  end
  return false
end

local function profiler_on(cfg) return truthy_at(cfg, "flops_profiler", "enabled") end
local function contiguous_on(cfg)
  return truthy_at(cfg, "activation_checkpointing", "contiguous_memory_optimization")
end

-- fp16 is read with dict.get before 0.17.1 (a pydantic model from then on,
-- where this table is not consulted): runtime/config.py reads the loss
-- scaling keys only when fp16 is enabled (get_loss_scale,
-- get_dynamic_loss_scale_args).
local function fp16_on(cfg) return truthy_at(cfg, "fp16", "enabled") end

local PROFILER = "the flops profiler (flops_profiler.enabled)"
local AIO = "ZeRO offload to NVMe (offload_optimizer/offload_param device \"nvme\")"

local uses = {
  -- runtime/config.py: (get_wall_clock_breakdown(param_dict) | self.flops_profiler_config.enabled)
  wall_clock_breakdown = { op = "bitor", source = "runtime/config.py DeepSpeedConfig._initialize_params" },
  ["flops_profiler.enabled"] = { op = "bitor", source = "runtime/config.py DeepSpeedConfig._initialize_params" },
  -- runtime/engine.py: `self.global_steps == self.flops_profiler_profile_step()` and
  -- the profiler's own arithmetic, only with the profiler on
  ["flops_profiler.profile_step"] = { when = profiler_on, feature = PROFILER },
  ["flops_profiler.module_depth"] = { when = profiler_on, feature = PROFILER },
  ["flops_profiler.top_modules"] = { when = profiler_on, feature = PROFILER },
  -- ops/aio handles are built from aio.* only for NVMe offload (runtime/swap_tensor)
  ["aio.block_size"] = { when = nvme_offload, feature = AIO },
  ["aio.queue_depth"] = { when = nvme_offload, feature = AIO },
  ["aio.thread_count"] = { when = nvme_offload, feature = AIO },
  ["aio.intra_op_parallelism"] = { when = nvme_offload, feature = AIO },
  ["fp16.loss_scale"] = { when = fp16_on, feature = "fp16 (fp16.enabled)" },
  ["fp16.initial_scale_power"] = { when = fp16_on, feature = "fp16 (fp16.enabled)" },
  ["fp16.loss_scale_window"] = { when = fp16_on, feature = "fp16 (fp16.enabled)" },
  ["fp16.hysteresis"] = { when = fp16_on, feature = "fp16 (fp16.enabled)" },
  ["fp16.min_loss_scale"] = { when = fp16_on, feature = "fp16 (fp16.enabled)" },
  -- runtime/precision_config.py get_bfloat16_config (pydantic releases):
  -- `param_dict.get(BFLOAT16, None)`, None falls back to "bfloat16" or {}
  bf16 = { null = "absent", source = "runtime/precision_config.py get_bfloat16_config" },
  -- numbers the engine computes with in every training run (engine
  -- verdicts in tests/conformance/engine.json): where it fails
  steps_per_print = { fails = "(global_steps + 1) % steps_per_print() in DeepSpeedEngine._take_model_step, at the first optimizer step" },
  gradient_clipping = { fails = "gradient_clipping() > 0.0 in DeepSpeedEngine._take_model_step, at the first optimizer step" },
  gradient_predivide_factor = { fails = "1.0 / gradient_predivide_factor() in DeepSpeedEngine.allreduce_bucket, at the first gradient all-reduce" },
  -- utils/config.py get_timers_config: `TIMERS_THROUGHPUT in param_dict[TIMERS]`,
  -- false for a string without that word or a list: the section is not used
  timers = { op = "in", test = "\"throughput\" in timers", source = "utils/config.py get_timers_config" },
  -- runtime/activation_checkpointing/checkpointing.py: range(num_layers) for the
  -- contiguous buffers only
  ["activation_checkpointing.number_checkpoints"] = {
    when = contiguous_on,
    feature = "activation_checkpointing.contiguous_memory_optimization (range(number_checkpoints) in checkpointing.py)" },
}

function M.of(path)
  if path == nil then return nil end
  return uses[path]
end

M.paths = uses -- for the test that every entry names a key DeepSpeed reads

return M
