-- launch.machine: the plugin's machine_params, run by `gen --detect`
-- (contrib/docs/launch.md): which profile params the detected machine
-- fills. The core keeps only the params the profile declares and the
-- command line does not set.
--
--   gpus_per_node  the GPU count
--   world_size     the GPU count: one node (not when --param/--matrix set
--                  nodes: the profile then derives it from nodes x
--                  gpus_per_node)
--   gpu_mem_gb     the smallest GPU's memory in GiB (a mixed machine runs
--                  at the pace and limit of its smallest GPU), rounded down
--                  to 0.01
--   cpu_mem_gb     host memory in GiB, rounded down to 0.01
--   precision      bf16 when every GPU has compute capability 8.0 or
--                  more (Ampere and later: bf16 tensor cores), else fp16;
--                  GPUs without a known compute capability (AMD) give fp16
--
-- machine is `dsforge detect --json`'s object; ctx.declared lists the
-- profile's params and ctx.given those the command line sets.

local type, ipairs, tonumber, math = type, ipairs, tonumber, math

local M = {}

local function gib(bytes)
  local v = math.floor(bytes / (1024 * 1024 * 1024) * 100) / 100
  return math.tointeger(v) or v
end

-- "8.0" -> 8, 0; nil for anything else.
local function cc(s)
  if type(s) ~= "string" then return nil end
  local major, minor = s:match("^(%d+)%.(%d+)$")
  if not major then return nil end
  return tonumber(major), tonumber(minor)
end

function M.precision(gpus)
  if #gpus == 0 then return nil end
  for _, g in ipairs(gpus) do
    local major = cc(g.compute_capability)
    if major == nil or major < 8 then return "fp16" end
  end
  return "bf16"
end

function M.params(machine, ctx)
  local n = machine.gpu_count
  if type(n) ~= "number" or n < 1 then return nil end
  local given = {}
  for _, name in ipairs(ctx and ctx.given or {}) do given[name] = true end
  local out = { gpus_per_node = n }
  if not given.nodes then out.world_size = n end
  if type(machine.gpu_memory_mib_min) == "number" then
    out.gpu_mem_gb = gib(machine.gpu_memory_mib_min * 1024 * 1024)
  end
  if type(machine.host_memory_bytes) == "number" and machine.host_memory_bytes > 0 then
    out.cpu_mem_gb = gib(machine.host_memory_bytes)
  end
  out.precision = M.precision(machine.gpus or {})
  return out
end

return M
