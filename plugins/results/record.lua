-- plugins/results/record.lua -- one variant's record from its run file and
-- what the readers measured.
--
-- Pure module (no I/O). The rules are those of contrib/docs/results.md:
--   * a dsf-run.json whose config_sha256 differs from the manifest's sha256
--     is refused (status "mismatch", a message naming the variant and both
--     hashes); nothing the readers found is attributed to the variant;
--   * status, in order: missing (no run file), mismatch, oom, failed
--     (failure reader, or non-zero exit_code), running (no "end" yet), ok;
--   * each value comes from the first reader, in the order given, that
--     measured it; `sources` names that reader and file per value.

local M = {}

-- The values of a record, in the order they are kept.
M.FIELDS = {
  "steps", "samples_per_sec", "tokens_per_sec", "tflops_per_gpu",
  "step_time_median_s", "step_time_p90_s", "peak_memory_bytes",
  "loss_first", "loss_last", "wall_time_s",
}

-- variant: { name, sha256 } from the manifest.
-- run: the decoded dsf-run.json, or nil when absent.
-- measured: a list of { reader = NAME, file = PATH, values = {...} } in
--           precedence order.
-- failure: the failures reader's result ({ status, kind, error }) or nil.
-- problems: files of the variant that could not be read (strings), or nil.
function M.build(variant, run, measured, failure, problems)
  local rec = { variant = variant.name, values = {}, sources = {} }
  -- what the estimate said, for the report's measured-against-estimated
  -- column (the deepspeed plugin's summary: bytes per GPU, and its budget)
  local s = type(variant.summary) == "table" and variant.summary or {}
  if math.type(s.gpu_bytes) then
    rec.estimate = { peak_memory_bytes = s.gpu_bytes,
                     budget_bytes = math.type(s.gpu_budget_bytes) and s.gpu_budget_bytes or nil }
  end
  if problems and #problems > 0 then rec.problems = problems end
  if run == nil then
    rec.status = "missing"
    rec.message = "no dsf-run.json: the job did not start or wrote elsewhere"
    if rec.problems then rec.message = rec.problems[1] end
    return rec
  end
  if run.config_sha256 ~= variant.sha256 then
    rec.status = "mismatch"
    rec.refused = true
    rec.message = string.format(
      "variant %s: dsf-run.json names config sha256 %s, the manifest has %s; results refused",
      variant.name, tostring(run.config_sha256), tostring(variant.sha256))
    return rec
  end
  for _, m in ipairs(measured or {}) do
    for _, k in ipairs(M.FIELDS) do
      local v = m.values[k]
      if v ~= nil and rec.values[k] == nil then
        rec.values[k] = v
        rec.sources[k] = m.reader .. ":" .. m.file
      end
    end
  end
  if rec.values.wall_time_s == nil and math.type(run.start) and math.type(run["end"]) then
    rec.values.wall_time_s = run["end"] - run.start
    rec.sources.wall_time_s = "run:dsf-run.json"
  end
  rec.exit_code = run.exit_code
  if failure then
    rec.status = failure.status
    rec.error = failure.error
  elseif run.exit_code ~= nil and run.exit_code ~= 0 then
    rec.status = "failed"
    rec.error = "exit code " .. tostring(run.exit_code)
  elseif run["end"] == nil then
    rec.status = "running"
    rec.message = "dsf-run.json has no end: the job is running or was killed"
  else
    rec.status = "ok"
  end
  return rec
end

-- rec: a record (above); job: the job system's record of the variant's job
-- ({ state, exit_code, signal, source }) or nil; ended: job state -> the
-- status it means when the job ended before its script wrote its end.
-- The job is kept in rec.job. A run the logs call ok or running takes the
-- job system's word when the job ended otherwise (a time limit, a
-- cancel, a host out of memory); a failure the logs explain keeps its own.
function M.with_job(rec, job, ended)
  if not job then return rec end
  rec.job = job
  local status = ended[job.state]
  if status and (rec.status == "running" or rec.status == "ok") then
    rec.status = status
    rec.error = string.format("%s: job %s (exit %s, signal %s)", job.source, job.state,
                              tostring(job.exit_code), tostring(job.signal))
    rec.message = nil
  end
  return rec
end

return M
