-- plugins/deepspeed/options_check.lua -- the checks of the options the
-- deepspeed plugin declares (options.lua), loaded only when a value is
-- given or set in the environment.

local M = {}

-- --ds-version (or DSFORGE_DS_VERSION): of the form X.Y or X.Y.Z (a
-- leading v allowed), and within the covered releases (the extracted
-- ones, up to 0.19.6, DeepSpeed's master, which the hand-written schema
-- describes: schema.lua's deepspeed_version, not loaded here): else a
-- usage error, in every command that takes the option.
function M.release(spec)
  local body = spec:gsub("^v", "", 1)
  local parts, ok = 0, true
  for part, dot in body:gmatch("([^.]*)(%.?)") do
    parts = parts + 1
    ok = ok and part:match("^%d%d?%d?%d?%d?$") ~= nil
    if dot == "" then break end
  end
  if not ok or parts < 2 or parts > 3 or body:sub(-1) == "." then
    return string.format("'%s' is not a DeepSpeed version (X.Y or X.Y.Z)", spec),
      "e.g. --ds-version 0.16.9"
  end
  return require("deepspeed.dsrange").outside(spec, "0.19.6")
end

-- --world-size: a whole number from 1 to 1000000.
function M.world(n)
  local v = tonumber(n)
  if not n:match("^[+-]?%d+$") or not v or v < 1 or v > 1000000 then
    return string.format("'%s' is not a whole number between 1 and 1000000", n)
  end
  return nil
end

return M
