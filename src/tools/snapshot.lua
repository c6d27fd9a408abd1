-- snapshot.lua -- run by dsf_precompile at build time (src/tools/precompile.c)
-- for a built-in data module: runs it with a stand-in dsforge (array,
-- object, null) and returns Lua text that builds the same value as one
-- table constructor, checked to build an equal value (shape, markers,
-- scalars and their integer/float kinds, shared tables).
--
-- Parts built on first use: in the DeepSpeed schema, each top-level
-- section's `fields` and `doc` are a separate chunk (a "part"), returned
-- as the second result (a list of Lua texts). The section node starts
-- with its other keys and a metatable: reading `fields` or `doc`, or
-- pairs(), loads and runs the part, which fills the node in place. In a
-- release's facts (dsdata/vX_Y_Z.lua), `keys` ("section.key" -> fact)
-- starts empty and reading a key loads the part holding its section's
-- keys (the text before the first dot); in the model catalog
-- (catalog.lua), `models` the same way by model name (llama-2-7b alone,
-- llama-3.1-8b with the other llama-3.x names), so an estimate undumps
-- one model's entry, not all of them. Once every part of a table is
-- in, its metatable is gone and it is the plain table the source builds
-- (same identity). The main chunk is called with a loader, PART(i) ->
-- part i's function (lua/chunk.c); a part is called with (t, S, A, O, N).
-- A command that reads five sections neither undumps nor builds the
-- other thirty. Only next() or a C walk over such a table not yet read
-- whole (pairs() reads it whole) would see part of it.
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

-- The tables built from parts (plain tables reached once): lazy[t] =
-- "fields" (a schema section) or "prefix" (a release's keys).
local lazy = {}
local function plain(t) return type(t) == "table" and getmetatable(t) == nil and seen[t] == 1 end
if rel == "plugins/deepspeed/schema.lua" and type(value.root) == "table"
   and type(value.root.fields) == "table" then
  for _, node in next, value.root.fields do
    if plain(node) and type(node.fields) == "table" then lazy[node] = "fields" end
  end
elseif rel:find("^plugins/deepspeed/dsdata/v[%d_]+%.lua$") and plain(value.keys) then
  for k in next, value.keys do
    if type(k) ~= "string" then fail("a release's keys are strings") end
  end
  lazy[value.keys] = "prefix"
elseif rel == "plugins/deepspeed/catalog.lua" and plain(value.models) then
  for k in next, value.models do
    if type(k) ~= "string" then fail("a model's name is a string") end
  end
  lazy[value.models] = "prefix"
end
-- The part a key of a lazy table goes to (nil: built with the table).
local function group_of(how, k)
  if how == "fields" then return (k == "fields" or k == "doc") and "" or nil end
  return (k:match("^[^.]*"))
end
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
local chunks = {} -- the parts' texts
local function body(t)
  local how = lazy[t]
  local parts, n = {}, #t
  if how then n = 0 end
  for i = 1, n do parts[i] = ser(t[i]) end
  local keys, groups, gnames = {}, {}, {}
  for k in next, t do
    local g = how and group_of(how, k)
    if g then
      if not groups[g] then groups[g] = {}; gnames[#gnames + 1] = g end
      table.insert(groups[g], k)
    elseif not (math.type(k) == "integer" and k >= 1 and k <= n) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, before)
  for _, k in ipairs(keys) do
    parts[#parts + 1] = "[" .. lit(k) .. "]=" .. ser(t[k])
  end
  local mt = getmetatable(t)
  local s = "{" .. table.concat(parts, ",") .. "}"
  if mt == ARR then return "A" .. s elseif mt == OBJ then return "O" .. s end
  if not how then return s end
  -- Z(eager keys, { group = part index }, FIELDS or PREFIX)
  table.sort(gnames, before)
  local index = {}
  for _, g in ipairs(gnames) do
    local ks = groups[g]
    table.sort(ks, before)
    local sets = { "local t, S, A, O, N = ...\n" }
    for _, k in ipairs(ks) do sets[#sets + 1] = "t[" .. lit(k) .. "] = " .. ser(t[k]) .. "\n" end
    chunks[#chunks + 1] = table.concat(sets)
    index[#index + 1] = "[" .. lit(g) .. "]=" .. #chunks
  end
  return "Z(" .. s .. ",{" .. table.concat(index, ",") .. "}," .. (how == "fields" and "FIELDS" or "PREFIX") .. ")"
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
local out = { "local PART = ...\n",
              "local A, O, N = dsforge.array, dsforge.object, dsforge.null\n",
              "local S = {}\n" }
if #chunks > 0 then
  out[#out + 1] = [[
local setmetatable, rawget, next, type, match = setmetatable, rawget, next, type, string.match
local function FIELDS(k) if k == "fields" or k == "doc" then return "" end end
local function PREFIX(k) if type(k) == "string" then return match(k, "^[^.]*") end end
-- One metatable for every table built from parts; its parts and how keys
-- map to them are looked up by the table (no closures per table).
local PARTS, GROUP = {}, {}
local function build(t, parts, g)
  local i = parts[g]
  if i then
    parts[g] = nil
    if next(parts) == nil then setmetatable(t, nil); PARTS[t], GROUP[t] = nil, nil end
    PART(i)(t, S, A, O, N)
  end
end
local MT = {
  __index = function(t, k)
    local parts = PARTS[t]
    local g = parts and GROUP[t](k)
    if g and parts[g] then build(t, parts, g); return rawget(t, k) end
  end,
  __pairs = function(t)
    local parts = PARTS[t]
    if parts then for g in next, parts do build(t, parts, g) end end
    return next, t, nil
  end,
}
local function Z(t, parts, group_of)
  PARTS[t], GROUP[t] = parts, group_of
  return setmetatable(t, MT)
end
]]
end
for i, d in ipairs(defs) do out[#out + 1] = "S[" .. i .. "] = " .. d .. "\n" end
out[#out + 1] = "return " .. main .. "\n"
local text = table.concat(out)
-- The text must build the same value: shape, markers, scalars, sharing.
local function part(i) return assert(load(chunks[i], "=" .. rel)) end
local again = assert(load(text, "=" .. rel))(part)
local pairs_of = {}
local function same(a, b)
  if a == NULL or b == NULL then return a == b end
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b and math.type(a) == math.type(b) end
  if pairs_of[a] then return pairs_of[a] == b end
  pairs_of[a] = b
  -- A table built from parts: each key read (through __index) loads its
  -- part, and pairs() the ones left.
  local mb = getmetatable(b)
  if mb and mb.__pairs then
    if getmetatable(a) ~= nil then return false end
    for k, v in next, a do
      if rawget(b, k) == nil and not same(v, b[k]) then return false end
    end
    pairs(b)
  end
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in next, a do if not same(v, rawget(b, k)) then return false end end
  for k in next, b do if rawget(a, k) == nil then return false end end
  return true
end
if not same(value, again) then fail("its snapshot builds a different value") end
return text, chunks
