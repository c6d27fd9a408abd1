-- snapshot.lua -- run by dsf_precompile at build time (src/tools/precompile.c)
-- for a built-in data module: runs it with a stand-in dsforge (array,
-- object, null) and returns Lua text that builds the same value as one
-- table constructor, checked to build an equal value (shape, markers,
-- scalars and their integer/float kinds, shared tables).
local chunk, rel = ...
local ARR, OBJ = {}, {}
local NULL = setmetatable({}, { __name = "null" })
dsforge = {
  array = function(t) return setmetatable(t or {}, ARR) end,
  object = function(t) return setmetatable(t or {}, OBJ) end,
  null = NULL,
}
local value = chunk()
local function fail(msg) error(rel .. ": not a data module: " .. msg, 0) end
-- Tables reached more than once are built once and shared (S[i]).
local seen, active = {}, {}
local function count(t)
  seen[t] = (seen[t] or 0) + 1
  if seen[t] > 1 then return end
  if active[t] then fail("a table contains itself") end
  active[t] = true
  local mt = getmetatable(t)
  if mt ~= nil and mt ~= ARR and mt ~= OBJ then fail("a table has a metatable") end
  for k, v in next, t do
    local tk = type(k)
    if tk ~= "string" and tk ~= "number" then fail("a " .. tk .. " key") end
    if type(v) == "table" and v ~= NULL then count(v)
    elseif type(v) == "function" or type(v) == "userdata" or type(v) == "thread" then
      fail("a " .. type(v) .. " value")
    end
  end
  active[t] = nil
end
if type(value) ~= "table" then fail("it returns a " .. type(value)) end
count(value)
local function lit(v)
  if v == NULL then return "N" end
  local tv = type(v)
  if tv == "string" or tv == "number" then return string.format("%q", v) end
  if tv == "boolean" then return tostring(v) end
  fail("a " .. tv .. " value")
end
local function before(a, b)
  local ta, tb = math.type(a) or type(a), math.type(b) or type(b)
  if ta ~= tb then return ta < tb end
  return a < b
end
local defs, names, ser = {}, {}, nil
local function body(t)
  local parts, n = {}, #t
  for i = 1, n do parts[i] = ser(t[i]) end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, before)
  for _, k in ipairs(keys) do
    parts[#parts + 1] = "[" .. lit(k) .. "]=" .. ser(t[k])
  end
  local mt = getmetatable(t)
  local s = "{" .. table.concat(parts, ",") .. "}"
  if mt == ARR then return "A" .. s elseif mt == OBJ then return "O" .. s end
  return s
end
function ser(v)
  if type(v) ~= "table" or v == NULL then return lit(v) end
  if seen[v] == 1 then return body(v) end
  if not names[v] then
    local b = body(v)
    defs[#defs + 1] = b
    names[v] = "S[" .. #defs .. "]"
  end
  return names[v]
end
local main = ser(value)
local out = { "local A, O, N = dsforge.array, dsforge.object, dsforge.null\n",
              "local S = {}\n" }
for i, d in ipairs(defs) do out[#out + 1] = "S[" .. i .. "] = " .. d .. "\n" end
out[#out + 1] = "return " .. main .. "\n"
local text = table.concat(out)
-- The text must build the same value: shape, markers, scalars, sharing.
local again = assert(load(text, "=" .. rel))()
local pairs_of = {}
local function same(a, b)
  if a == NULL or b == NULL then return a == b end
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b and math.type(a) == math.type(b) end
  if pairs_of[a] then return pairs_of[a] == b end
  pairs_of[a] = b
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in next, a do if not same(v, rawget(b, k)) then return false end end
  for k in next, b do if rawget(a, k) == nil then return false end end
  return true
end
if not same(value, again) then fail("its snapshot builds a different value") end
return text
