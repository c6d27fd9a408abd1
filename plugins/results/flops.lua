-- plugins/results/flops.lua -- the DeepSpeed flops profiler's summary.
--
-- Pure module (no I/O). FlopsProfiler.print_model_profile in
-- deepspeed/profiling/flops_profiler/profiler.py (DeepSpeed v0.19.5) prints,
-- to flops_profiler.output_file or stdout, lines formatted with
-- line_fmt = '{:<70}  {:<8}' (line 334):
--   line 328  "Profile Summary at step 10:"
--   line 393  "iter latency: " ... duration_to_string(iter_latency)  e.g. "1.23 s"
--   line 394  "FLOPS per GPU = 3 * fwd flops per GPU / iter latency: " ...
--             flops_to_string(...)                                e.g. "150.2 TFLOPS"
--   line 399  "samples/second: " ... round(samples_per_iter / iter_latency, 2)
-- number_to_string (line 1127) writes f"{round(num / magnitude, 2):g} {units}"
-- with units T, G, M, K, "", m, u.

local M = {}

-- The substrings the core scans for.
M.markers = { "Profile Summary at step", "iter latency: ", "FLOPS per GPU = ", "samples/second: " }

local SCALE = { T = 1e12, G = 1e9, M = 1e6, K = 1e3, [""] = 1, m = 1e-3, u = 1e-6 }

-- "150.2 TFLOPS" with suffix "FLOPS" -> 1.502e14; nil when malformed.
local function scaled(text, suffix)
  local n, unit = text:match("^%s*([%d%.eE+%-]+) ([TGMKmu]?)" .. suffix .. "%s*$")
  if not n or not tonumber(n) then return nil end
  return tonumber(n) * SCALE[unit]
end

-- The matching lines -> { profile_step, step_time_s, tflops_per_gpu,
-- samples_per_sec }, the last profile printed; nil when none is complete.
function M.read(lines)
  local out = {}
  for _, line in ipairs(lines) do
    local step = line:match("^Profile Summary at step (%d+):")
    if step then out.profile_step = tonumber(step) end
    local lat = line:match("^iter latency: %s*(.-)$")
    if lat then out.step_time_s = scaled(lat, "s") end
    local fl = line:match("^FLOPS per GPU = [^:]*:%s*(.-)$")
    if fl then
      local v = scaled(fl, "FLOPS")
      out.tflops_per_gpu = v and v / 1e12
    end
    local sps = line:match("^samples/second: %s*([%d%.eE+%-]+)%s*$")
    if sps then out.samples_per_sec = tonumber(sps) end
  end
  if next(out) == nil or out.profile_step == nil then return nil end
  return out
end

return M
