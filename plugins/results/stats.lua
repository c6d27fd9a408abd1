-- plugins/results/stats.lua -- order statistics over per-step samples.
--
-- Pure module. Percentiles use the nearest-rank method (the value at rank
-- ceil(p * n) of the sorted samples), so the result is always a measured
-- value and the same samples always give the same answer.

local M = {}

-- xs: a list of numbers; p in (0, 1] -> the nearest-rank percentile, or nil
-- for an empty list.
function M.percentile(xs, p)
  local n = #xs
  if n == 0 then return nil end
  local s = {}
  for i = 1, n do s[i] = xs[i] end
  table.sort(s)
  local rank = math.ceil(p * n)
  if rank < 1 then rank = 1 end
  return s[rank]
end

-- The samples after dropping the first `warmup` ones -> median, p90 and the
-- count kept; nil when none is left.
function M.summary(xs, warmup)
  local kept = {}
  for i = (warmup or 0) + 1, #xs do kept[#kept + 1] = xs[i] end
  if #kept == 0 then return nil end
  return { median = M.percentile(kept, 0.5), p90 = M.percentile(kept, 0.9), n = #kept }
end

return M
