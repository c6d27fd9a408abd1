-- deepspeed.probe: what `gen --probe STEPS` (the probe_steps param) adds
-- to a variant so that it runs as a short benchmark, comparable with its
-- siblings, without a change to the training script (issue 32). Applied
-- by the plugin's "probe" resolver after every layer, so --why shows it.
--
-- What DeepSpeed does with it (runtime/engine.py at v0.19.5):
--   steps_per_print = 1   the ThroughputTimer prints samples/s and
--                         MaxMemAllocated at every step
--                         (utils/timer.py ThroughputTimer.stop, 264)
--   flops_profiler        enabled: with autotuning on, the engine counts
--                         the model's FLOPs at start_profile_step
--                         (flops_profiler_profile_step, 1087) instead of
--                         printing the profile
--   autotuning            enabled, start/end_profile_step: at global step
--                         end_profile_step + 1 the engine writes the
--                         metric file (latency, throughput, FLOPS_per_gpu;
--                         _autotuning_exit, 3517) and calls exit()
-- The metric file's path is relative to the training's working directory
-- and names the variant (dsf-probe-<profile>-<variant>.json), so variants
-- run side by side never overwrite each other's; DeepSpeed does not make
-- directories (print_json_dist opens the path as it is). The slurm-array
-- job moves it into the variant's results directory.

local math, type = math, type

local M = {}

-- The first steps are warm-up (allocator, NCCL, compile): the profile
-- starts after a fifth of the probe, at least after step 1.
function M.window(steps)
  local start = math.max(1, steps // 5)
  return start, steps - 1
end

function M.metric_file(variant)
  return "dsf-probe-" .. variant .. ".json"
end

local function section(cfg, key)
  local s = cfg[key]
  if type(s) ~= "table" or s == dsforge.null then
    s = {}
    cfg[key] = s
  end
  return s
end

-- cfg with the probe added (the same table), or nil when the variant is
-- not a probe.
function M.apply(cfg, params, variant)
  local steps = params and params.probe_steps
  if math.type(steps) ~= "integer" or steps < 2 or type(cfg) ~= "table" then return nil end
  local start, stop = M.window(steps)
  cfg.steps_per_print = 1
  local fp = section(cfg, "flops_profiler")
  fp.enabled = true
  fp.profile_step = start
  fp.detailed = false
  local at = section(cfg, "autotuning")
  at.enabled = true
  at.start_profile_step = start
  at.end_profile_step = stop
  at.metric = "throughput"
  at.metric_path = M.metric_file(variant or "variant")
  return cfg
end

return M
