-- plugins/deepspeed/dsrange.lua -- which DeepSpeed releases --ds-version
-- may name: the check of the plugin's --ds-version option (options_check.lua;
-- contrib/docs/plugins.md "Options"), loaded only when a release is asked for.
--
--   M.outside(spec, upto) -> nil when spec lies within the covered releases
--                            (the oldest extracted one to upto, default the
--                            newest extracted one), else a message and a hint

local dv = require("deepspeed.dsversion")

local M = {}

local function parts(v)
  local a, b, c = v:match("^(%d+)%.(%d+)%.?(%d*)$")
  if not a then return nil end
  return { tonumber(a), tonumber(b), c ~= "" and tonumber(c) or nil }
end

-- A release outside the covered range has no facts: none of another
-- release would be right for it (the checks and defaults change from
-- release to release), so --ds-version refuses it. upto: the newest
-- release the plugin describes beyond the extracted ones (the hand-written
-- schema's, DeepSpeed's master), checked with the newest facts and a note;
-- nil: the newest covered release.
function M.outside(spec, upto)
  local rel, err = dv.resolve(spec)
  local last = upto or dv.newest.version
  local covered = dv.covered_text() .. (last ~= dv.newest.version
    and (" and " .. last .. " with the facts of " .. dv.newest.version) or "")
  local hint = "pass one of the covered releases, or none for the newest (" .. dv.newest.version .. ")"
  if not rel then return err, hint end
  local v = spec:gsub("^v", "")
  local p, top = parts(v), parts(last)
  local newer -- X.Y names a minor line, X.Y.Z a release
  if p[3] == nil then
    newer = p[1] > top[1] or (p[1] == top[1] and p[2] > top[2])
  else
    newer = dv.cmp(v, last) > 0
  end
  if newer then
    return string.format("DeepSpeed %s is newer than the newest release dsforge covers, %s (covered: %s)",
      v, last, covered), hint
  end
  return nil
end

return M
