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

-- lines: the matching lines of one log, in file order -> the first line of
-- each kind: { oom, nccl, error, traceback } (each a trimmed line or nil).
-- A variant's logs are read one by one; merge() keeps the first of each.
function M.evidence(lines)
  return {
    oom = first(lines, "CUDA out of memory"),
    nccl = first(lines, "NCCL error") or first(lines, "NCCL WARN"),
    error = first(lines, "Error"),
    traceback = first(lines, "Traceback"),
  }
end

-- into: evidence so far (a table), ev: one more log's -> into, keeping the
-- lines already there.
function M.merge(into, ev)
  for _, k in ipairs({ "oom", "nccl", "error", "traceback" }) do
    if into[k] == nil then into[k] = ev[k] end
  end
  return into
end

-- ev: evidence (above); exit_code: the training command's exit code, or
-- nil when unknown.
-- -> { status = "oom"|"failed", kind = "oom"|"nccl"|"exit", error = LINE }
--    or nil when nothing says the run failed.
function M.classify_evidence(ev, exit_code)
  if ev.oom then return { status = "oom", kind = "oom", error = ev.oom } end
  if ev.nccl then return { status = "failed", kind = "nccl", error = ev.nccl } end
  if exit_code ~= nil and exit_code ~= 0 then
    return { status = "failed", kind = "exit",
             error = ev.error or ev.traceback or ("exit code " .. tostring(exit_code)) }
  end
  return nil
end

-- lines: the matching lines of a run's logs, in file order;
-- exit_code: as above. -> as classify_evidence.
function M.classify(lines, exit_code)
  return M.classify_evidence(M.evidence(lines), exit_code)
end

return M
