-- plugins/deepspeed/models_suggest.lua -- the catalog names close to a
-- name the catalog does not have (deepspeed.models.suggest), and the edit
-- distance they are ranked by. Loaded only for such a name.

local M = {}

-- Levenshtein distance over bytes.
local function distance(a, b)
  local la, lb = #a, #b
  if la == 0 then return lb end
  if lb == 0 then return la end
  local prev, cur = {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    local ca = a:byte(i)
    for j = 1, lb do
      local cost = (ca == b:byte(j)) and 0 or 1
      local x = prev[j] + 1
      local y = cur[j - 1] + 1
      local z = prev[j - 1] + cost
      if y < x then x = y end
      if z < x then x = z end
      cur[j] = x
    end
    prev, cur = cur, prev
  end
  return prev[lb]
end

M.distance = distance

-- Hub spellings the catalog keys leave out: "meta-" in front, a variant suffix.
local VARIANT_SUFFIXES = { "-instruct", "-chat", "-hf", "-base", "-it" }

local function normalise(q)
  if q:sub(1, 5) == "meta-" then q = q:sub(6) end
  local changed = true
  while changed do
    changed = false
    for _, suf in ipairs(VARIANT_SUFFIXES) do
      if #q > #suf and q:sub(-#suf) == suf then
        q = q:sub(1, #q - #suf)
        changed = true
      end
    end
  end
  return q
end

--- Up to 3 catalog names close to `name`, nearest first, ties by name.
--- Closeness is the edit distance to the lower-cased name, or to the name
--- without an "org/" prefix, a "meta-" prefix and "-instruct"/"-chat"/"-hf"/
--- "-base"/"-it" suffixes, whichever is smaller; names farther than
--- max(3, #name // 3) are not suggested unless they start with `name`.
function M.suggest(name, NAMES)
  if type(name) ~= "string" then return {} end
  local q = name:lower()
  -- a Hub id "org/Model-Name" is compared by its model part
  local slash = q:find("/[^/]*$")
  if slash then q = q:sub(slash + 1) end
  local nq = normalise(q)
  local limit = math.max(3, #q // 3)
  local cands = {}
  for _, n in ipairs(NAMES) do
    local d = math.min(distance(q, n), distance(nq, n))
    local prefix = #q >= 2 and n:sub(1, #q) == q
    if d <= limit or prefix then cands[#cands + 1] = { n, d } end
  end
  table.sort(cands, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    return x[1] < y[1]
  end)
  local out = {}
  for i = 1, math.min(3, #cands) do out[i] = cands[i][1] end
  return out
end

return M
