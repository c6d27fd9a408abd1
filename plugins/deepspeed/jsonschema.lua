-- JSON Schema (draft 2020-12, or draft-07 with the annotations editors
-- read: deepspeed.jsonschema_editor) for the DeepSpeed config, generated
-- from deepspeed.schema. "auto" is accepted exactly on the keys Hugging
-- Face fills.

local schema = require("deepspeed.schema")
local sc = require("deepspeed.schema_util")

local M = {}

local NULL = dsforge.null
local A, O = dsforge.array, dsforge.object

local JSON_TYPE = {
  int = "integer", float = "number", bool = "boolean", string = "string",
  object = "object", map = "object", array = "array",
}

-- Whether v converts to JSON exactly (integral numbers beyond +-2^53 do
-- not: the host refuses them).
local SAFE = 2^53
local function json_safe(v)
  if type(v) == "number" then
    return not (v == math.floor(v) and (v > SAFE or v < -SAFE))
  end
  if type(v) == "table" and v ~= NULL then
    for _, k in ipairs(dsforge.sorted_keys(v)) do
      if not json_safe(v[k]) then return false end
    end
  end
  return true
end

local LUA_TYPE = { int = "number", float = "number", bool = "boolean", string = "string" }

-- The spellings of an enum value DeepSpeed accepts (case-insensitive enums
-- get lower, upper and capitalised forms).
local function enum_values(node, lua_type)
  local out, seen = {}, {}
  local function add(v)
    if not seen[v] then seen[v] = true; out[#out + 1] = v end
  end
  for _, e in ipairs(node.enum) do
    if type(e) == lua_type then
      if lua_type == "string" and node.case_insensitive then
        add(e:lower()); add(e:upper()); add(e:sub(1, 1):upper() .. e:sub(2):lower())
      else
        add(e)
      end
    end
  end
  if lua_type == "string" then table.sort(out) end
  return out
end

local function add_bounds(s, node)
  if node.min ~= nil then s.minimum = node.min end
  if node.max ~= nil then s.maximum = node.max end
  if node.exclusive_min ~= nil then s.exclusiveMinimum = node.exclusive_min end
  if node.exclusive_max ~= nil then s.exclusiveMaximum = node.exclusive_max end
end

local object_schema

-- While generate(rel) runs: the release (nil: the hand-written schema as
-- is) and the dotted path of the object being written (nil inside arrays
-- and maps, where the release data says nothing).
local cur_rel, cur_path
-- While generate runs for draft 07: deepspeed.jsonschema_editor (else nil).
local cur_ed
local at = require("deepspeed.atrelease")

-- Schema of a key the release reads that the hand-written schema does
-- not have, from the generated facts (t: type, "?" nullable; d: default).
local FACT_TYPE = { int = "integer", float = "number", bool = "boolean", string = "string",
                    object = "object", array = "array" }
local function fact_schema(fact)
  local t = fact and fact.t or "any"
  local nullable = t:sub(-1) == "?"
  if nullable then t = t:sub(1, -2) end
  local s = O {}
  if FACT_TYPE[t] then
    s.type = nullable and A { FACT_TYPE[t], "null" } or FACT_TYPE[t]
  end
  s.description = "Read by DeepSpeed " .. cur_rel.version .. " (not in the hand-written schema)."
  local d = fact and fact.d
  if d ~= nil and d ~= NULL and d ~= "<expr>" and json_safe(d) then s.default = d end
  return s
end

-- Schema of one type of a scalar/union node, without null.
local function type_schema(node, t)
  if t == "any" then return O {} end
  if t == "object" then return object_schema(node) end
  if t == "map" then
    local s = { type = "object" }
    local saved = cur_path
    cur_path = nil -- free-form keys: the release data says nothing below
    if node.values then s.additionalProperties = M.node_schema(node.values, nil) else s.additionalProperties = true end
    cur_path = saved
    return s
  end
  if t == "array" then
    local s = { type = "array" }
    local saved = cur_path
    cur_path = nil
    if node.items then s.items = M.node_schema(node.items, nil) end
    cur_path = saved
    -- a string is one item (DeepSpeed's mode="before" validator wraps it)
    if node.str_to_list and s.items then return { anyOf = A { s, s.items } } end
    return s
  end
  local s = { type = JSON_TYPE[t] }
  if node.enum then
    local vals = enum_values(node, LUA_TYPE[t])
    if #vals > 0 then s.enum = A(vals) end
    if cur_ed then cur_ed.enum_descriptions(s, node) end
  end
  if t == "int" or t == "float" then add_bounds(s, node) end
  return s
end

local function base_schema(node)
  local types = sc.types_of(node)
  local s
  if #types == 1 then
    local t = types[1]
    s = type_schema(node, t)
    if node.legacy_bool then
      -- object keywords only constrain objects, so a type list keeps the
      -- error messages for the object form precise
      s.type = A { s.type, "boolean" }
    end
    if node.nullable and t ~= "any" then
      if s.anyOf then
        table.insert(s.anyOf, { type = "null" })
      elseif type(s.type) == "table" then
        table.insert(s.type, "null")
      elseif type(s.type) == "string" then
        s.type = A { s.type, "null" }
        if s.enum then
          table.insert(s.enum, NULL)
          if cur_ed then cur_ed.enum_null_added(s) end
        end
      end
    end
    return s
  end
  local alts = {}
  for _, t in ipairs(types) do alts[#alts + 1] = type_schema(node, t) end
  if node.nullable then alts[#alts + 1] = { type = "null" } end
  return { anyOf = A(alts) }
end

-- Schema of a node as the value of key `key` (nil for array items / map values).
function M.node_schema(node, key)
  local s = base_schema(node)
  local auto_ok = node.hf_auto and key ~= nil and (node.hf_auto_key == nil or node.hf_auto_key == key)
  if auto_ok then
    s = { anyOf = A { s, { const = "auto" } } }
  end
  s.description = sc.text(node.doc, "en")
  -- (object_schema sets cur_path to "parent.field." before the call)
  local rd = cur_rel and cur_path and key and at.default(cur_rel, cur_path:sub(1, -2))
  if rd ~= nil and json_safe(rd) then
    s.default = rd
  elseif node.default ~= nil then
    if json_safe(node.default) then
      s.default = node.default
    else
      -- e.g. sys.maxsize: no exact JSON number, so say it in words
      s.description = s.description .. " Default: " .. sc.default_text(node, "en") .. "."
    end
  end
  if node.deprecated then s.deprecated = true end
  if cur_ed then cur_ed.annotate(s, node, key) end
  return s
end

-- With a release: does it read the field name of the object at cur_path?
local function read_here(name)
  if not (cur_rel and cur_path) then return true end
  local parts = {}
  for k in (cur_path .. name):gmatch("[^.]+") do parts[#parts + 1] = k end
  return at.status(cur_rel, parts) == "read"
end

object_schema = function(node)
  local props = O {}
  local exclusive = {}
  local path = cur_path
  local strict = node.strict == true
  if cur_rel and path then
    local st = at.strict(cur_rel, path == "" and "" or path:sub(1, -2))
    if st ~= nil then strict = st end
  end
  for _, name in ipairs(dsforge.sorted_keys(node.fields or {})) do
    local f = node.fields[name]
    if read_here(name) then
      cur_path = path and (path .. name .. ".")
      props[name] = M.node_schema(f, name)
      for _, a in ipairs(f.aliases or {}) do
        props[a] = M.node_schema(f, a)
        if strict then exclusive[#exclusive + 1] = { name, a } end
      end
      cur_path = path
    end
    local dep = f.deprecated
    if dep and strict and dep.copies ~= false and dep.both ~= "ignored" and props[name] then
      local rnode, rname = sc.lookup(node, dep.replacement)
      if rnode and props[rname] then
        exclusive[#exclusive + 1] = { name, rname }
        for _, a in ipairs(rnode.aliases or {}) do exclusive[#exclusive + 1] = { name, a } end
      end
    end
  end
  if cur_rel and path then
    local sp = path == "" and "" or path:sub(1, -2)
    for _, k in ipairs(at.extra_keys(cur_rel, sp, node)) do
      props[k] = fact_schema(at.fact(cur_rel, path .. k))
    end
  end
  local s = {
    type = "object",
    properties = props,
    additionalProperties = not (strict and not node.open),
  }
  if #exclusive > 0 then
    local all = {}
    for _, pair in ipairs(exclusive) do
      all[#all + 1] = { ["not"] = { type = "object", required = A { pair[1], pair[2] } } }
    end
    s.allOf = A(all)
  end
  return s
end

-- The whole JSON Schema document as a Lua table: of the hand-written
-- schema (DeepSpeed's main branch), or with rel (a covered release from
-- deepspeed.dsversion) of what that release reads: its keys, defaults and
-- strict sections. draft: "2020-12" (nil) or "07" (with the annotations
-- VS Code reads).
function M.generate(rel, draft)
  cur_rel, cur_path = rel, rel and "" or nil
  cur_ed = draft == "07" and require("deepspeed.jsonschema_editor") or nil
  local ok, s = pcall(object_schema, schema.root)
  local ed = cur_ed
  cur_rel, cur_path, cur_ed = nil, nil, nil
  if not ok then error(s, 0) end
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
  s["$id"] = "https://dsforge.dev/schema/deepspeed.json"
  s.title = "DeepSpeed configuration (DeepSpeed " .. (rel and rel.version or schema.deepspeed_version) .. ")"
  s.description = sc.text(schema.root.doc, "en")
    .. " \"auto\" is accepted only on the keys the Hugging Face Trainer/Accelerate fill."
  if ed then ed.finish(s) end
  return s
end

return M
