-- plugins/launch/params.lua -- the params the launch plugin reads, each
-- checked where it enters (issue 30): a value a launcher or Slurm cannot
-- take is the user's error naming the param (dsforge.fail: exit 3), never
-- a failure inside the renderer. Loaded when an emitter first needs the
-- launch options (init.lua's launch_opts), not at every start.

local M = {}

local function whole(x, lo, hi)
  local n = math.tointeger(x)
  return n ~= nil and n >= lo and n <= hi
end

-- Slurm's --time: MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN, D-H:MIN:SEC, or
-- UNLIMITED / INFINITE (sbatch(1), "-t, --time").
local function slurm_time_ok(t)
  if t == "UNLIMITED" or t == "INFINITE" then return true end
  local d, rest = t:match("^(%d+)%-(.+)$")
  if d then
    return rest:match("^%d+$") ~= nil or rest:match("^%d+:%d+$") ~= nil
      or rest:match("^%d+:%d+:%d+$") ~= nil
  end
  return t:match("^%d+$") ~= nil or t:match("^%d+:%d+$") ~= nil
    or t:match("^%d+:%d+:%d+$") ~= nil
end

M.slurm_time_ok = slurm_time_ok

local PARAM_CHECKS = {
  master_port = { function(x) return whole(x, 1, 65535) end, "an integer port from 1 to 65535" },
  master_addr = { function(x) return type(x) == "string" and #x <= 253
      and x:match("^[%w%.%-:%[%]]+$") ~= nil end,
    "a host name or IP address (letters, digits, '.', '-', ':')" },
  hostfile = { function(x) return type(x) == "string" and x ~= ""
      and not x:find("[%z\n\r]") end, "a path without newlines" },
  slurm_time = { function(x) return type(x) == "string" and slurm_time_ok(x) end,
    "a Slurm time limit: MINUTES, H:MM:SS, D-H:MM:SS or UNLIMITED" },
  slurm_partition = { function(x) return type(x) == "string" and x:match("^[%w._%-]+$") ~= nil
      and #x <= 128 end, "a Slurm partition name (letters, digits, '.', '_', '-')" },
  slurm_account = { function(x) return type(x) == "string" and x:match("^[%w._%-]+$") ~= nil
      and #x <= 128 end, "a Slurm account name (letters, digits, '.', '_', '-')" },
  cpus_per_task = { function(x) return whole(x, 1, 4096) end, "an integer from 1 to 4096" },
}

local function shown(x)
  if type(x) ~= "string" then return tostring(x) end
  return '"' .. x:gsub("[%c\"\\\128-\255]", function(ch)
    return ("\\x%02x"):format(ch:byte())
  end) .. '"'
end

-- Checked in name order: with two bad values, the same one is reported
-- every run.
local NAMES = {}
for name in next, PARAM_CHECKS do NAMES[#NAMES + 1] = name end
table.sort(NAMES)

-- The params a launch file reads as given: a string param that is "" is
-- not set (the built-in profiles declare the launch params with "" as
-- their default), so the copy leaves it out. Checked (M.check).
function M.given(params)
  local p = {}
  for k, x in next, params or {} do if x ~= "" then p[k] = x end end
  M.check(p)
  return p
end

function M.check(p)
  for _, name in ipairs(NAMES) do
    local check = PARAM_CHECKS[name]
    local x = p[name]
    if x ~= nil and not check[1](x) then
      dsforge.fail(("param '%s' = %s: the launch files need %s"):format(name,
        shown(x), check[2]), 0)
    end
  end
end

return M
