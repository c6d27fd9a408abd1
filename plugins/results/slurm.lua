-- plugins/results/slurm.lua -- Slurm's own record of the jobs of a sweep.
--
-- Pure module (no I/O). Two sources, each one line per job:
--   * the job completion log of jobcomp/filetxt (JobCompLoc), one line per
--     finished job, printed by jobcomp_p_record_job_end with JOB_FORMAT
--     (Slurm src/plugins/jobcomp/filetxt/jobcomp_filetxt.c):
--       JobId=4242 UserId=root(0) GroupId=root(0) Name=dsf JobState=TIMEOUT
--       Partition=debug TimeLimit=1 StartTime=... EndTime=... NodeList=n1
--       NodeCnt=1 ProcCnt=1 WorkDir=/w ReservationName= Tres=... Account=
--       QOS= WcKey= Cluster=c SubmitTime=... EligibleTime=...
--       ArrayJobId=4240 ArrayTaskId=2 DerivedExitCode=0:0 ExitCode=0:15
--     (ArrayJobId/ArrayTaskId only for an array task; ExitCode is
--     "status:signal");
--   * `sacct --parsable2` (src/sacct/print.c: fields joined by "|", a header
--     row of field names first; an array task's JobID is
--     "<array job>_<task>", its steps "<...>.batch" and the like; State may
--     read "CANCELLED by 0").
-- Both give, per job: state, exit_code, signal. Keyed by the array task
-- ("4240_2") and by the job id ("4242").

local M = {}

-- The markers the core scans for.
M.JOBCOMP_MARKER = "JobId="
M.SACCT_MARKER = "|"

local function put(jobs, key, rec)
  if key and key ~= "" then jobs[key] = rec end
end

-- Lines of a job completion log -> { [key] = { state, exit_code, signal,
-- source = "jobcomp" } }. A line cut mid-write (no ExitCode) is ignored.
function M.read_jobcomp(lines)
  local jobs = {}
  for _, line in ipairs(lines) do
    local id = line:match("^JobId=(%d+) ")
    local state = line:match(" JobState=(%S+)")
    local code, sig = line:match(" ExitCode=(%d+):(%d+)")
    if id and state and code then
      local rec = { state = state, exit_code = tonumber(code), signal = tonumber(sig),
                    source = "jobcomp" }
      put(jobs, id, rec)
      local aj, at = line:match(" ArrayJobId=(%d+) ArrayTaskId=(%d+)")
      if aj then put(jobs, aj .. "_" .. at, rec) end
    end
  end
  return jobs
end

local function split(line)
  local out = {}
  for field in (line .. "|"):gmatch("([^|]*)|") do out[#out + 1] = field end
  return out
end

-- Lines of `sacct --parsable2` output -> as read_jobcomp (source "sacct"),
-- or nil when no header names JobID and State. Steps (IDs with a ".") are
-- left out: the job's own row says how it ended.
function M.read_sacct(lines)
  local col
  local jobs = {}
  for _, line in ipairs(lines) do
    local f = split(line)
    if not col then
      local c = {}
      for i, name in ipairs(f) do c[name] = i end
      if c.JobID and c.State then col = c end
    else
      local id = f[col.JobID]
      if id and id ~= "" and not id:find(".", 1, true) then
        local state = (f[col.State] or ""):match("^(%S+)")
        local code, sig = (f[col.ExitCode or 0] or ""):match("^(%d+):(%d+)$")
        if state then
          put(jobs, id, { state = state, exit_code = tonumber(code),
                          signal = tonumber(sig), source = "sacct" })
        end
      end
    end
  end
  if not col then return nil end
  return jobs
end

-- Job states that end a job before its script could write its end, as the
-- record's status (src/common/slurm_protocol_defs.c job_state_string).
M.ENDED = {
  TIMEOUT = "timeout", CANCELLED = "cancelled", OUT_OF_MEMORY = "oom",
  NODE_FAIL = "failed", PREEMPTED = "failed", BOOT_FAIL = "failed",
  DEADLINE = "timeout", FAILED = "failed",
}

return M
