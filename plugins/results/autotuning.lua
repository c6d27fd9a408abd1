-- plugins/results/autotuning.lua -- the metric file autotuning.metric_path
-- makes the engine write.
--
-- Pure module (no I/O): takes the file's decoded JSON object. Written by
-- DeepSpeedEngine._autotuning_exit in deepspeed/runtime/engine.py
-- (DeepSpeed v0.19.5, lines 3517-3533) with print_json_dist:
--   fwd, bwd, step  Timers.get_mean (deepspeed/utils/timer.py line 159):
--                   the trimmed mean of each timer's records * 1000, i.e.
--                   microseconds (a record is in milliseconds)
--   latency         (fwd + bwd + step) * gradient_accumulation_steps:
--                   microseconds per global step
--   FLOPS_per_gpu   flops * 1e6 * gas / latency: FLOP/s per GPU
--   throughput      train_batch_size * 1e6 / latency: samples/s

local M = {}

local function num(v)
  if math.type(v) then return v end
  return nil
end

-- obj: the decoded JSON object -> measured values, or nil plus a message
-- when the object lacks the engine's keys (another file at that path).
function M.read(obj)
  if type(obj) ~= "table" then return nil, "not a JSON object" end
  local latency = num(obj.latency)
  local flops = num(obj.FLOPS_per_gpu)
  local tput = num(obj.throughput)
  if not (latency and flops and tput) then
    return nil, "no latency, FLOPS_per_gpu and throughput keys (not the engine's autotuning metric file)"
  end
  return {
    samples_per_sec = tput,
    tflops_per_gpu = flops / 1e12,
    step_time_s = latency / 1e6,
  }
end

return M
