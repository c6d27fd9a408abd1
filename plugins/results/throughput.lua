-- plugins/results/throughput.lua -- DeepSpeed's throughput timer line.
--
-- Pure module (no I/O). The line is printed by ThroughputTimer.stop in
-- deepspeed/utils/timer.py (DeepSpeed v0.19.5, lines 264-273) through
-- logger.info, whose formatter is set in deepspeed/utils/logging.py
-- (lines 39-40), every steps_per_print global steps:
--
--   [2026-01-05 10:00:00,123] [INFO] [timer.py:264:stop] epoch=0/micro_step=10/
--   global_step=10, RunningAvgSamplesPerSec=41.2, CurrSamplesPerSec=42.0,
--   MemAllocated=3.1GB, MaxMemAllocated=7.53GB
--
-- (one line in the log). The memory values are GiB (bytes / 1024**3)
-- rounded to two decimals by the timer.

local stats = require("results.stats")

local M = {}

-- Timer reports dropped as warm-up before the step time statistics: the
-- first report averages over steps that include allocator growth and
-- kernel autotuning.
M.WARMUP_REPORTS = 1

-- The substring the core scans for before a line reaches Lua.
M.marker = "RunningAvgSamplesPerSec="

local GIB = 1024 * 1024 * 1024

local NUM = "([%d%.eE+%-]+)"

-- One line -> its fields, or nil when the line is not a complete timer line
-- (a truncated last line of a killed run is ignored, not misread).
function M.parse_line(line)
  local epoch, micro, global = line:match("epoch=(%d+)/micro_step=(%d+)/global_step=(%d+),")
  if not epoch then return nil end
  local avg = tonumber(line:match("RunningAvgSamplesPerSec=" .. NUM .. ","))
  local cur = tonumber(line:match("CurrSamplesPerSec=" .. NUM .. ","))
  local mem = tonumber(line:match("MemAllocated=" .. NUM .. "GB,"))
  local maxmem = tonumber(line:match("MaxMemAllocated=" .. NUM .. "GB%s*$"))
  if not (avg and cur and mem and maxmem) then return nil end
  return {
    epoch = tonumber(epoch), micro_step = tonumber(micro),
    global_step = tonumber(global),
    running_avg_samples_per_sec = avg, samples_per_sec = cur,
    mem_allocated_gib = mem, max_mem_allocated_gib = maxmem,
  }
end

-- The matching lines of one log -> the measured values:
--   steps                  the last global_step printed
--   samples_per_sec        the last RunningAvgSamplesPerSec (the timer
--                          starts averaging after its start_step warm-up)
--   peak_memory_bytes      the largest MaxMemAllocated, in bytes
--   reports                how many timer lines were read
--   step_time_median_s, step_time_p90_s
--                          when batch_size (train_batch_size, the timer's
--                          batch) is given: batch_size / CurrSamplesPerSec
--                          of each report (the timer's step_elapsed_time of
--                          that global step), after dropping M.WARMUP_REPORTS
-- nil when no line is a complete timer line.
function M.read(lines, batch_size)
  local last, peak, n = nil, nil, 0
  local times = {}
  for _, line in ipairs(lines) do
    local r = M.parse_line(line)
    if r then
      n = n + 1
      last = r
      if batch_size and r.samples_per_sec > 0 then
        times[#times + 1] = batch_size / r.samples_per_sec
      end
      if not peak or r.max_mem_allocated_gib > peak then peak = r.max_mem_allocated_gib end
    end
  end
  if not last then return nil end
  local st = stats.summary(times, M.WARMUP_REPORTS)
  return {
    step_time_median_s = st and st.median,
    step_time_p90_s = st and st.p90,
    steps = last.global_step,
    samples_per_sec = last.running_avg_samples_per_sec,
    peak_memory_bytes = math.floor(peak * GIB + 0.5),
    reports = n,
  }
end

return M
