-- plugins/results/failures.lua -- why a run failed, from its stderr/stdout.
--
-- Pure module (no I/O). Recognised, in order of precedence:
--   oom     PyTorch's CUDA caching allocator raises
--           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ..."
--           (older releases: "RuntimeError: CUDA out of memory. ...");
--           the substring "CUDA out of memory" covers both.
--   nccl    a collective failing: "NCCL error" (torch.distributed's
--           DistBackendError text, e.g. "torch.distributed.DistBackendError:
--           NCCL error in: ...") or NCCL's own "NCCL WARN" lines.
--   failed  a non-zero exit code (from dsf-run.json); the first line that
--           looks like an error ("Error", "Traceback") is kept.
-- The first matching line is the one a person reads first in the log.

local M = {}

-- The substrings the core scans for (a line with none of them never
-- reaches Lua).
M.markers = { "CUDA out of memory", "NCCL error", "NCCL WARN", "Error", "Traceback" }

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function first(lines, needle)
  for _, line in ipairs(lines) do
    if line:find(needle, 1, true) then return trim(line) end
  end
  return nil
end

-- lines: the matching lines of a run's logs, in file order;
-- exit_code: the training command's exit code, or nil when unknown.
-- -> { status = "oom"|"failed", kind = "oom"|"nccl"|"exit", error = LINE }
--    or nil when nothing says the run failed.
function M.classify(lines, exit_code)
  local oom = first(lines, "CUDA out of memory")
  if oom then return { status = "oom", kind = "oom", error = oom } end
  local nccl = first(lines, "NCCL error") or first(lines, "NCCL WARN")
  if nccl then return { status = "failed", kind = "nccl", error = nccl } end
  if exit_code ~= nil and exit_code ~= 0 then
    local line = nil
    for _, l in ipairs(lines) do
      if l:find("Error", 1, true) then line = trim(l); break end
    end
    line = line or first(lines, "Traceback")
    return { status = "failed", kind = "exit",
             error = line or ("exit code " .. tostring(exit_code)) }
  end
  return nil
end

return M
