-- plugins/results/decl.lua -- the readers and the record hook that
-- plugins/results/init.lua declares (loaded only when collect runs, so no
-- other command pays for building them).

local require = require

local lazy = setmetatable({}, { __index = function(t, name)
  local m = require("results." .. name)
  t[name] = m
  return m
end })

local LOGS = { "stdout.log", "stderr.log", "*.log" }

-- The failure markers, as failures.lua documents them.
local FAILURE_MARKERS = { "CUDA out of memory", "NCCL error", "NCCL WARN", "Error", "Traceback" }

local function batch_size(variant)
  local s = variant.summary
  local b = type(s) == "table" and s.batch or nil
  return type(b) == "table" and math.type(b.global) and b.global or nil
end

-- A reader's { values } from a module's (values | nil, message).
local function values(v)
  if type(v) ~= "table" then return nil end
  return v
end

local readers = {
  {
    name = "slurm_jobcomp",
    scope = "run",
    files = { "slurm-jobcomp.log", "jobcomp.log" },
    lines = { "JobId=" },
    read = function(input) return { jobs = lazy.slurm.read_jobcomp(input.lines) } end,
  },
  {
    name = "sacct",
    scope = "run",
    files = { "sacct.txt", "sacct-*.txt" },
    lines = { "|" },
    read = function(input)
      local jobs = lazy.slurm.read_sacct(input.lines)
      return jobs and { jobs = jobs } or nil
    end,
  },
  {
    name = "run",
    files = { "dsf-run.json" },
    format = "json",
    read = function(input) return { run = input.json } end,
  },
  {
    name = "failures",
    files = LOGS,
    lines = FAILURE_MARKERS,
    read = function(input) return { evidence = lazy.failures.evidence(input.lines) } end,
  },
  {
    name = "autotuning",
    files = { "autotuning_metric.json", "dsf-probe-*.json" },
    format = "json",
    read = function(input) return values(lazy.autotuning.read(input.json)) end,
  },
  {
    name = "throughput",
    files = LOGS,
    lines = { "RunningAvgSamplesPerSec=" },
    read = function(input, ctx)
      return values(lazy.throughput.read(input.lines, batch_size(ctx.variant)))
    end,
  },
  {
    name = "flops",
    -- the logs, or the profiler's own flops_profiler.output_file
    files = { "stdout.log", "stderr.log", "*.log", "*flops*.txt" },
    lines = { "Profile Summary at step", "iter latency: ", "FLOPS per GPU = ", "samples/second: " },
    read = function(input) return values(lazy.flops.read(input.lines)) end,
  },
  {
    name = "trainer",
    files = { "all_results.json", "train_results.json" },
    format = "json",
    read = function(input) return values(lazy.trainer.read_all_results(input.json)) end,
  },
  {
    name = "trainer_state",
    files = { "trainer_state.json" },
    format = "json",
    read = function(input) return values(lazy.trainer.read_state(input.json)) end,
  },
  {
    name = "csv_monitor",
    files = { "*.csv", "*/*.csv" },
    format = "text",
    read = function(input) return values(lazy.csvmon.read(input.file, input.text)) end,
  },
}

-- Slurm's record of the variant's job (its dsf-run.json names the job),
-- from the run readers; the last source read wins (sacct after jobcomp).
local function job_of(run, run_found)
  if not run then return nil end
  local keys = {}
  if run.array_job_id and run.array_task_id then
    keys[#keys + 1] = tostring(run.array_job_id) .. "_" .. tostring(run.array_task_id)
  end
  if run.job_id then keys[#keys + 1] = tostring(run.job_id) end
  local job
  for _, f in ipairs(run_found or {}) do
    local jobs = type(f.result) == "table" and f.result.jobs or nil
    for _, k in ipairs(keys) do
      if jobs and jobs[k] then job = jobs[k]; break end
    end
  end
  return job
end

-- found: { {reader, file, result}, ... } in reader order, then file order.
local function record(variant, found, problems, run_found)
  local run, measured, evidence = nil, {}, {}
  for _, f in ipairs(found) do
    if f.reader == "run" then
      run = run or (type(f.result.run) == "table" and f.result.run or nil)
    elseif f.reader == "failures" then
      lazy.failures.merge(evidence, f.result.evidence)
    else
      measured[#measured + 1] = { reader = f.reader, file = f.file, values = f.result }
    end
  end
  local failure = lazy.failures.classify_evidence(evidence, run and run.exit_code)
  local rec = lazy.record.build(variant, run, measured, failure, problems)
  return lazy.record.with_job(rec, job_of(run, run_found), lazy.slurm.ENDED)
end

return {
  readers = readers,
  results = {
    record = record,
    calibration = function(variant, rec) return lazy.calibration.row(variant, rec) end,
    -- a probe names its metric file after the variant: not a difference
    -- the best variant's override should carry
    override_ignore = { "autotuning.metric_path" },
    metrics = {
      { name = "samples_per_sec", title = "samples/s", unit = "1/s", better = "max" },
      { name = "tokens_per_sec", title = "tokens/s", unit = "1/s", better = "max" },
      { name = "tflops_per_gpu", title = "TFLOPS/GPU", unit = "TFLOPS", better = "max" },
      { name = "step_time_median_s", title = "step (median)", unit = "s", better = "min" },
      { name = "step_time_p90_s", title = "step (p90)", unit = "s", better = "min" },
      { name = "peak_memory_bytes", title = "peak GPU", unit = "bytes", better = "min" },
      { name = "loss_first", title = "loss first", unit = "" },
      { name = "loss_last", title = "loss last", unit = "", better = "min" },
      { name = "steps", title = "steps", unit = "" },
      { name = "wall_time_s", title = "wall", unit = "s", better = "min" },
    },
  },
}
