-- plugins/results/calibration.lua -- (params, estimate, measurement) rows for
-- checking the memory estimator against what runs measured.
--
-- Pure module (no I/O). One row per variant with status "ok" and a measured
-- peak: the estimate is the manifest summary's gpu_bytes (per GPU, the
-- allocator's peak as modelled), the measurement the record's
-- peak_memory_bytes (DeepSpeed's MaxMemAllocated: PyTorch's
-- max_memory_allocated), so the two are the same quantity.

local M = {}

-- variant: the manifest entry ({ name, params, summary }); rec: its record
-- (record.lua) -> a row, or nil when the variant has nothing to compare.
function M.row(variant, rec)
  local est = type(variant.summary) == "table" and variant.summary.gpu_bytes or nil
  local meas = rec.status == "ok" and rec.values.peak_memory_bytes or nil
  if not (math.type(est) and math.type(meas)) then return nil end
  return {
    variant = variant.name,
    params = variant.params,
    estimate_gpu_bytes = est,
    measured_peak_bytes = meas,
    error_ratio = (est - meas) / meas,
    source = rec.sources.peak_memory_bytes,
  }
end

return M
