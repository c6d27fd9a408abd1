-- plugins/results/best.lua -- the best variant, and its differences from the
-- control as an override file for `gen -f`.
--
-- Pure module (no I/O).

local M = {}

-- records: list of records (record.lua); metric: a value name;
-- direction: "max" or "min" -> the best record with status "ok" that
-- measured the metric, or nil plus a message. Ties go to the earlier record
-- (manifest order), so the answer is deterministic.
function M.pick(records, metric, direction)
  local best
  for _, r in ipairs(records) do
    local v = r.status == "ok" and r.values[metric] or nil
    if type(v) == "number" then
      if best == nil
        or (direction == "min" and v < best.values[metric])
        or (direction ~= "min" and v > best.values[metric]) then
        best = r
      end
    end
  end
  if not best then
    return nil, "no variant with status ok measured " .. metric
  end
  return best
end

-- config: the best variant's decoded config; differs: its manifest
-- differs_from_control (dotted key paths) -> the override table holding
-- exactly those keys with the variant's values (a key the variant removed
-- is absent from config and left out).
function M.override(config, differs)
  local out = {}
  for _, path in ipairs(differs) do
    local src, ok = config, true
    local parts = {}
    for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
    for _, p in ipairs(parts) do
      if type(src) ~= "table" or src[p] == nil then ok = false; break end
      src = src[p]
    end
    if ok then
      local dst = out
      for i = 1, #parts - 1 do
        dst[parts[i]] = dst[parts[i]] or {}
        dst = dst[parts[i]]
      end
      dst[parts[#parts]] = src
    end
  end
  return out
end

return M
