-- plugins/deepspeed/section_cache.lua -- what schema_check.lua's walk of
-- a top-level section found, kept per release, requested version and
-- target, and served again for a section equal to one walked before (the
-- variants of a sweep share most sections). schema_check.lua requires it
-- from its second config on: a one-file check loads none of it.
--
-- Equal means the same keys, the same kinds of tables (object or array),
-- the same scalars and the same number subtypes (1 and 1.0 differ, so do
-- 0.0 and -0.0, though no finding tells those apart today): everything
-- the walk could read of the section. The caller keeps no walk that read
-- other sections. Bounded: SLOTS entries per section name (the oldest
-- replaced first), sections of at most max_nodes values, budget values
-- in all.

local type, next, rawget = type, next, rawget
local math_type = math.type
local kind = dsforge.kind

local M = {}

local SLOTS = 16
local max_nodes, budget = 256, 8192
local cache = {} -- rel -> requested -> target -> name -> { entries, next = slot }
local held = 0   -- values held by all entries
local hits = 0   -- sections served (for the tests)

-- t[k], a new table put there when it has none.
local function at(t, k)
  local v = t[k]
  if not v then
    v = {}
    t[k] = v
  end
  return v
end

-- M.for_context(rel, requested, target) -> the entries of that context
-- (a table the other functions take), made when new.
function M.for_context(rel, requested, target)
  return at(at(at(cache, rel), requested), target)
end

-- Is the scalar a the scalar s, subtype and sign of zero included?
local function same_scalar(a, s)
  if a ~= s then return false end
  if type(a) == "number" then
    if math_type(a) ~= math_type(s) then return false end
    if a == 0 and math_type(a) == "float" and 1 / a ~= 1 / s then return false end
  end
  return true
end

-- A copy of the value v for an entry (shape[copy] = { kind, number of
-- keys } for each table), or nil when it has more than `left` values.
local function snapshot(v, shape, left)
  if type(v) ~= "table" then return v, left - 1 end
  local copy, n = {}, 0
  left = left - 1
  for k, x in next, v do
    if left <= 0 then return nil, 0 end
    local c
    c, left = snapshot(x, shape, left)
    if c == nil then return nil, 0 end
    copy[k] = c
    n = n + 1
  end
  shape[copy] = { kind(v), n }
  return copy, left
end

-- Is v equal to the snapshot s (see above)?
local function same_value(v, s, shape)
  if type(v) ~= "table" then return same_scalar(v, s) end
  local sh = type(s) == "table" and shape[s]
  if not sh or kind(v) ~= sh[1] then return false end
  local n = 0
  for k, x in next, v do
    local y = rawget(s, k)
    if y == nil or not same_value(x, y, shape) then return false end
    n = n + 1
  end
  return n == sh[2]
end

-- M.lookup(per, name, v [, id]) -> the findings kept for the section v
-- under the top-level key name, or nil. The caller copies what it hands
-- on. With the host's identity of v (ctx.identity: a string equal for
-- equal values, number subtypes included), one table lookup finds its
-- entry.
-- Without one, v is compared with the kept snapshots, the newest first:
-- in a sweep, consecutive variants differ in the axis that varies fastest
-- and share every section it does not touch.
function M.lookup(per, name, v, id)
  local slots = per[name]
  if not slots then return nil end
  if id then
    local e = slots.by_id and slots.by_id[id]
    if not e then return nil end
    hits = hits + 1
    return e.found
  end
  local n, newest = #slots, slots.next - 1
  if newest < 1 then newest = n end
  for j = 0, n - 1 do
    local i = newest - j
    if i < 1 then i = i + n end
    local e = slots[i]
    if e.shape and same_value(v, e.snap, e.shape) then
      hits = hits + 1
      return e.found
    end
  end
  return nil
end

-- M.store(per, name, v, found [, id]): keeps found (the walk's
-- findings of v, a list the caller no longer changes) for sections equal
-- to v, within the bounds: under its identity when given (no snapshot to
-- make: the entry counts as its findings plus a value per 16 bytes of the
-- identity), else with a snapshot of v.
function M.store(per, name, v, found, id)
  local snap, shape, size
  if id then
    size = 1 + #found + #id // 16
  else
    shape = {}
    local left
    snap, left = snapshot(v, shape, max_nodes)
    if snap == nil then return end
    size = max_nodes - left
  end
  local slots = per[name]
  if not slots then
    slots = { next = 1 }
    per[name] = slots
  end
  -- (the entry replaced gives its values back)
  local old = slots[slots.next]
  local now = held - (old and old.size or 0) + size
  if now > budget then return end
  if old and old.id then slots.by_id[old.id] = nil end
  local e = { snap = snap, shape = shape, found = found, size = size, id = id }
  slots[slots.next] = e
  if id then
    local by = slots.by_id
    if not by then
      by = {}
      slots.by_id = by
    end
    by[id] = e
  end
  held = now
  slots.next = slots.next % SLOTS + 1
end

-- For the tests: empties the cache; how many sections it has served; the
-- entries per section name; sets the bounds (nil keeps one) and returns
-- them and the values held.
function M.clear()
  cache, held = {}, 0
end
function M.hits() return hits end
M.slots = SLOTS
function M.bounds(nodes, all)
  max_nodes = nodes or max_nodes
  budget = all or budget
  return max_nodes, budget, held
end

return M
