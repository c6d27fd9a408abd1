-- plugins/deepspeed/schema_util.lua -- the schema helpers that do not walk
-- a config: a node's types, text in a language, values as compact JSON
-- text, field lookup (aliases too), resolving a path, defaults as text,
-- value equality, edit distance and "did you mean". schema_check.lua walks
-- configs with them and re-exports them; explain.lua, atrelease.lua and
-- jsonschema.lua load only this module (issue 15: explain does not load
-- the walk).

local schema = require("deepspeed.schema")

local type, ipairs = type, ipairs
local tostring, tonumber, math, string, table = tostring, tonumber, math, string, table
local dsforge = dsforge

local M = {}

local NULL = dsforge.null
local ROOT = schema.root

local kind = dsforge.kind

-- The list of types of a node (cached: the walk asks for every value).
local types_cache = setmetatable({}, { __mode = "k" })
function M.types_of(node)
  local t = types_cache[node]
  if t then return t end
  t = node.type
  if type(t) ~= "table" then t = { t } end
  types_cache[node] = t
  return t
end

-- Text in the requested language from a {en=,zh=} table or a plain string.
function M.text(t, lang)
  if type(t) == "table" then return t[lang or "en"] or t.en end
  return t
end

local function json_string(s)
  s = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    if c == "\n" then return "\\n" end
    if c == "\t" then return "\\t" end
    return string.format("\\u%04x", string.byte(c))
  end)
  return '"' .. s .. '"'
end
M.json_string = json_string

local function format_number(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v then return "NaN" end
  if v == math.huge then return "Infinity" end
  if v == -math.huge then return "-Infinity" end
  if v == math.floor(v) and math.abs(v) < 2^63 then
    return string.format("%d", math.tointeger(v) or 0)
  end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", v)
    if tonumber(s) == v then return s end
  end
  return string.format("%.17g", v)
end
M.format_number = format_number

-- Compact JSON-like text of a value (deterministic: sorted object keys).
function M.format_value(v, depth)
  depth = depth or 0
  if v == NULL then return "null" end
  local tv = type(v)
  if tv == "string" then return json_string(v) end
  if tv == "number" then return format_number(v) end
  if tv == "boolean" then return tostring(v) end
  if tv == "table" then
    if depth > 3 then return "..." end
    local k = kind(v)
    local parts = {}
    if k == "array" then
      for i = 1, #v do
        parts[#parts + 1] = M.format_value(v[i], depth + 1)
        if i >= 8 and #v > 8 then parts[#parts + 1] = "..."; break end
      end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys = dsforge.sorted_keys(v)
    for i, key in ipairs(keys) do
      parts[#parts + 1] = json_string(tostring(key)) .. ": " .. M.format_value(v[key], depth + 1)
      if i >= 8 and #keys > 8 then parts[#parts + 1] = "..."; break end
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

-- "zero_optimization.offload_param.device", "optimizer.params.betas[1]", or
-- "the top level" for the empty path.
function M.path_text(path)
  local out = {}
  for _, p in ipairs(path) do
    if math.type(p) == "integer" then
      out[#out + 1] = "[" .. p .. "]"
    else
      if #out > 0 then out[#out + 1] = "." end
      out[#out + 1] = tostring(p)
    end
  end
  if #out == 0 then return "the top level" end
  return table.concat(out)
end

local alias_cache = setmetatable({}, { __mode = "k" })

-- Field lookup in an object node: returns field node, canonical field name,
-- and "field" or "alias".
-- alias -> field name, for the fields of schema node obj (made once per
-- node; read-only).
function M.aliases(obj)
  local amap = alias_cache[obj]
  if not amap then
    amap = {}
    for _, name in ipairs(dsforge.sorted_keys(obj.fields)) do
      local fn = obj.fields[name]
      if fn.aliases then
        for _, a in ipairs(fn.aliases) do amap[a] = name end
      end
    end
    alias_cache[obj] = amap
  end
  return amap
end

function M.lookup(obj, key)
  if type(obj) ~= "table" or type(obj.fields) ~= "table" or type(key) ~= "string" then return nil end
  local f = obj.fields[key]
  if f then return f, key, "field" end
  local name = M.aliases(obj)[key]
  if name then return obj.fields[name], name, "alias" end
  return nil
end

-- The schema node at a path of keys (aliases allowed; integers index arrays).
function M.resolve(path)
  local node = ROOT
  for _, p in ipairs(path) do
    if type(node) ~= "table" then return nil end
    local field = M.lookup(node, p)
    if math.type(p) == "integer" then
      node = node.items
    elseif field then
      node = field
    elseif node.type == "map" then
      node = node.values
    else
      return nil
    end
  end
  return node
end

-- Human text for a node's default.
function M.default_text(node, lang)
  if node.default_text ~= nil then return M.text(node.default_text, lang) end
  if node.default ~= nil then return M.format_value(node.default) end
  return "none"
end

local function values_equal(a, b, ci)
  if type(a) == "number" and type(b) == "number" then return a == b end
  if type(a) == "string" and type(b) == "string" then
    if ci then return a:lower() == b:lower() end
    return a == b
  end
  if type(a) == "table" and type(b) == "table" and a ~= NULL and b ~= NULL then
    for _, k in ipairs(dsforge.sorted_keys(a)) do
      if not values_equal(a[k], b[k], ci) then return false end
    end
    for _, k in ipairs(dsforge.sorted_keys(b)) do
      if a[k] == nil then return false end
    end
    return true
  end
  return a == b
end
M.values_equal = values_equal

---------------------------------------------------------------------------
-- edit distance / suggestions
---------------------------------------------------------------------------

local function levenshtein(a, b)
  local la, lb = #a, #b
  if la == 0 then return lb end
  if lb == 0 then return la end
  local prev = {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    local cur = { [0] = i }
    local ca = a:byte(i)
    for j = 1, lb do
      local cost = (ca == b:byte(j)) and 0 or 1
      local d = prev[j] + 1
      if cur[j - 1] + 1 < d then d = cur[j - 1] + 1 end
      if prev[j - 1] + cost < d then d = prev[j - 1] + cost end
      cur[j] = d
    end
    prev = cur
  end
  return prev[lb]
end
M.levenshtein = levenshtein

-- The edit distance of a and b when it is at most `bound`, else bound + 1.
-- Bounded: strings whose lengths differ by more than the bound are not
-- compared, only the diagonal band |i - j| <= bound is computed, and the
-- walk stops as soon as a whole row exceeds the bound, so a search over
-- every key of the schema costs about one comparison of the few keys of
-- a similar length (issue 15: the unbounded search was 84% of `check` on
-- a file with an unknown key).
local ROW_A, ROW_B = {}, {}
local function levenshtein_within(a, b, bound)
  local la, lb = #a, #b
  if la - lb > bound or lb - la > bound then return bound + 1 end
  local over = bound + 1
  if la == 0 or lb == 0 then
    local d = math.max(la, lb)
    return d <= bound and d or over
  end
  -- (two rows reused by every call: only cells this call wrote are read)
  local prev, cur = ROW_A, ROW_B
  for j = 0, lb do prev[j] = j <= bound and j or over end
  for i = 1, la do
    local lo, hi = i - bound, i + bound
    if lo < 1 then lo = 1 end
    if hi > lb then hi = lb end
    cur[lo - 1] = (lo == 1 and i <= bound) and i or over
    local ca, rowmin = a:byte(i), over
    for j = lo, hi do
      local d = prev[j - 1] + ((ca == b:byte(j)) and 0 or 1)
      local up = (j <= i - 1 + bound) and prev[j] + 1 or over
      local left = cur[j - 1] + 1
      if up < d then d = up end
      if left < d then d = left end
      if d > over then d = over end
      cur[j] = d
      if d < rowmin then rowmin = d end
    end
    if hi < lb then cur[hi + 1] = over end
    if rowmin > bound then return over end
    prev, cur = cur, prev
  end
  local d = prev[lb]
  return d <= bound and d or over
end
M.levenshtein_within = levenshtein_within

-- Closest candidate (sorted list of strings) when it is close enough: the
-- first of the nearest within max(1, min(3, #word // 4)) edits.
--
-- A list is prepared once (lowered_of): its candidates lower-cased, in
-- buckets by length, each with the set of bytes it contains (a 64-bit
-- mask, a byte's bit at byte % 64). A candidate is compared only when
-- both can be within the bound: lengths at most bound apart, and at most
-- bound distinct bytes of either missing from the other (each edit brings
-- in or takes out at most one; bytes sharing a bit only make the test
-- weaker). The distance itself only within the best found so far; ties go
-- to the earlier candidate. So the result is the one comparing every
-- candidate in full gives, at the cost of a few of them per word (issue
-- 30: a file of 40,000 unknown keys spent 95% of check here).
local lowered_of = setmetatable({}, { __mode = "k" })

local function byte_mask(s)
  local m = 0
  for i = 1, #s do m = m | (1 << (s:byte(i) & 63)) end
  return m
end

-- Whether more than bound bits are set in x.
local function more_bits(x, bound)
  for _ = 1, bound do
    if x == 0 then return false end
    x = x & (x - 1)
  end
  return x ~= 0
end

local function prepare(candidates)
  local p = { n = #candidates, by_len = {} }
  for i, c in ipairs(candidates) do
    local lc = c:lower()
    local b = p.by_len[#lc]
    if not b then
      b = {}
      p.by_len[#lc] = b
    end
    b[#b + 1] = { i, c, lc, byte_mask(lc) }
  end
  return p
end

function M.suggest(word, candidates)
  if type(word) ~= "string" then return nil end
  local lw = word:lower()
  local nw = #lw
  local limit = math.max(1, math.min(3, #word // 4))
  local p = lowered_of[candidates]
  if not p or p.n ~= #candidates then
    p = prepare(candidates)
    lowered_of[candidates] = p
  end
  local mw = byte_mask(lw)
  local best, besti, bestd
  for len = nw - limit, nw + limit do
    local b = p.by_len[len]
    if b then
      for k = 1, #b do
        local e = b[k]
        local bound = bestd or limit
        local dl = len - nw
        if dl < 0 then dl = -dl end
        if e[2] ~= word and dl <= bound then
          local lc, mc = e[3], e[4]
          if not more_bits(mc & ~mw, bound) and not more_bits(mw & ~mc, bound) then
            local d = (lc == lw) and 0 or levenshtein_within(lw, lc, bound)
            if d <= bound and (not bestd or d < bestd or e[1] < besti) then
              best, besti, bestd = e[2], e[1], d
            end
          end
        end
      end
    end
  end
  return best
end

return M
