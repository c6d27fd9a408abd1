-- Walks a parsed DeepSpeed config against deepspeed.schema and reports
-- findings with DeepSpeed's own acceptance rules (pydantic v2 lax coercion in
-- the pydantic sections, no coercion at the top level and in dict.get
-- sections). Never raises on any input shape.

local schema = require("deepspeed.schema")
local dv = require("deepspeed.dsversion")
local dictuse = require("deepspeed.dictuse")

-- Globals used on every value of every variant, as upvalues (a global
-- read goes through the sandbox environment's metatable).
local type, rawget, rawset, next, ipairs, pairs = type, rawget, rawset, next, ipairs, pairs
local tostring, tonumber, math, string, table = tostring, tonumber, math, string, table
local dsforge = dsforge

local M = {}

local NULL = dsforge.null
local ROOT = schema.root
local spans = dv.spans

---------------------------------------------------------------------------
-- small helpers: schema_util.lua (explain.lua, atrelease.lua and
-- jsonschema.lua load them without the walk), re-exported here
---------------------------------------------------------------------------

local kind = dsforge.kind

local util = require("deepspeed.schema_util")
for _, name in ipairs({ "types_of", "text", "format_value", "path_text", "lookup", "resolve",
    "default_text", "values_equal", "levenshtein", "levenshtein_within", "suggest" }) do
  M[name] = util[name]
end
local json_string, format_number, values_equal = util.json_string, util.format_number,
  util.values_equal

local function has_type(node, t)
  local types = M.types_of(node)
  for i = 1, #types do
    if types[i] == t then return true end
  end
  return false
end

---------------------------------------------------------------------------
-- edit distance / suggestions
---------------------------------------------------------------------------

-- The names and aliases of obj's fields, sorted; computed once per schema
-- node (the schema does not change during a run).
local candidates_of = {}
local function field_candidates(obj)
  local out = candidates_of[obj]
  if out then return out end
  out = {}
  for name, f in next, obj.fields or {} do
    out[#out + 1] = name
    if f.aliases then
      for _, a in ipairs(f.aliases) do out[#out + 1] = a end
    end
  end
  table.sort(out)
  candidates_of[obj] = out
  return out
end

-- The sorted path texts where `key` is a key of the schema (for misplaced
-- keys). The schema is walked once, at the first key asked, indexing every
-- field name and alias by the path texts where it is a key: each unknown
-- key then costs one lookup (issue 30: a walk of the whole schema per
-- distinct unknown key made a file of 40,000 of them take seconds). The
-- walk is the one a search for a single key made (sorted, each node once),
-- so the lists are the same.
local key_paths_index
local NO_PATHS = {}
local function key_paths(key)
  local index = key_paths_index
  if not index then
    index = {}
    local seen = {}
    local path = {}
    local function add(name, where)
      local l = index[name]
      if not l then
        l = {}
        index[name] = l
      end
      l[#l + 1] = where
    end
    local function visit(node)
      if type(node) ~= "table" or seen[node] then return end
      seen[node] = true
      if node.fields then
        for _, name in ipairs(dsforge.sorted_keys(node.fields)) do
          local f = node.fields[name]
          local where = M.path_text(path)
          -- (once per path even when an alias repeats the name)
          local matched = { [name] = true }
          add(name, where)
          if f.aliases then
            for _, a in ipairs(f.aliases) do
              if not matched[a] then
                matched[a] = true
                add(a, where)
              end
            end
          end
          path[#path + 1] = name
          visit(f)
          path[#path] = nil
        end
      end
      if node.items then visit(node.items) end
    end
    visit(ROOT)
    for _, l in next, index do table.sort(l) end
    key_paths_index = index
  end
  return index[key] or NO_PATHS
end

-- The field of node renamed from each old name (renamed_from.key): the
-- last in the fields' sorted order, once per schema node.
local renamed_of = setmetatable({}, { __mode = "k" })
local function renamed_from(node, key)
  local m = renamed_of[node]
  if not m then
    m = {}
    for _, name in ipairs(dsforge.sorted_keys(node.fields or {})) do
      local r = node.fields[name].renamed_from
      if r and r.key ~= nil then m[r.key] = { name = name, since = r.since } end
    end
    renamed_of[node] = m
  end
  return m[key]
end

-- What to say about the unknown key `key` of the object node `node`: the
-- text that follows the message (renamed, did you mean, wrong section,
-- the node's hint) and the fix. It depends only on the schema node and
-- the key, so it is computed once per (node, key) in a run: a key that
-- recurs in many files (a "_comment") costs one search, not one per file.
local advice_of = setmetatable({}, { __mode = "k" })
-- The advice is kept for at most MAX_ADVICE distinct unknown keys of a
-- section (the same mistyped key in every variant of a sweep is the case
-- it is kept for): a config of a million unknown keys (issue 30) would
-- otherwise keep a million tables. Past it, advice is made again each
-- time: the same text, whichever keys came first.
local MAX_ADVICE = 1000

local function unknown_advice(node, key)
  local per = advice_of[node]
  if not per then
    per = { keys = {}, n = 0 }
    advice_of[node] = per
  end
  local a = per.keys[key]
  if a then return a[1], a[2], a[3] end
  local msg, fix, edit = "", "remove it", nil
  local s = M.suggest(key, field_candidates(node))
  local renamed = renamed_from(node, key)
  if renamed then
    msg = msg .. string.format(" (DeepSpeed renamed it to \"%s\" in %s)", renamed.name, renamed.since)
    fix = string.format("rename it to \"%s\"", renamed.name)
    edit = { op = "rename", to = renamed.name }
  elseif s then
    msg = msg .. string.format(" (did you mean \"%s\"?)", s)
    fix = string.format("rename it to \"%s\"", s)
    edit = { op = "rename", to = s }
  else
    local locs = type(key) == "string" and key_paths(key) or nil
    if locs and #locs > 0 then
      local shown = {}
      for i = 1, math.min(3, #locs) do shown[i] = locs[i] end
      msg = msg .. string.format(" (\"%s\" is a key of %s: wrong section?)", key, table.concat(shown, ", "))
      fix = "move it to " .. shown[1]
      -- (a path of plain keys only: the text is a config path then)
      local dest = shown[1] == "the top level" and key or shown[1] .. "." .. key
      if dest:find("^[%a_][%w_.]*$") and not dest:find("%.%.") then
        edit = { op = "move", to = dest }
      end
    end
  end
  local hint = node.unknown_hints and type(key) == "string" and node.unknown_hints[key]
  if hint then msg = msg .. "; " .. M.text(hint, "en") end
  if per.n < MAX_ADVICE then
    per.n = per.n + 1
    per.keys[key] = { msg, fix, edit }
  end
  return msg, fix, edit
end

---------------------------------------------------------------------------
-- coercion
---------------------------------------------------------------------------

local TYPE_WORD = {
  int = "an integer", float = "a number", bool = "a boolean (true/false)", string = "a string",
  object = "an object", map = "an object", array = "an array", any = "any value",
}

local BOOL_STRINGS = {
  ["0"] = false, off = false, f = false, ["false"] = false, n = false, no = false,
  ["1"] = true, on = true, t = true, ["true"] = true, y = true, yes = true,
}

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local function is_finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

local function parse_float_string(s)
  local t = trim(s):lower()
  if t:find("x", 1, true) or t == "" then return nil end
  if t == "inf" or t == "+inf" or t == "infinity" or t == "+infinity" then return math.huge end
  if t == "-inf" or t == "-infinity" then return -math.huge end
  if t == "nan" then return 0 / 0 end
  if not t:match("^[+-]?[%d%.]+[e]?[+-]?%d*$") then return nil end
  return tonumber(t)
end

-- Python's float(s) (a mode="before" validator that calls it hands pydantic
-- a float): surrounding whitespace, "_" between digits, inf, infinity, nan.
local function python_float(s)
  local sign, rest = trim(s):lower():match("^([+-]?)(.*)$")
  if rest == "inf" or rest == "infinity" then return sign == "-" and -math.huge or math.huge end
  if rest == "nan" then return 0 / 0 end
  -- an underscore only between two digits
  if rest:find("_", 1, true)
     and (rest:find("^_") or rest:find("_$") or rest:find("[^%d]_") or rest:find("_[^%d]")) then
    return nil
  end
  local plain = rest:gsub("_", "")
  local mant, exp = plain:match("^([%d%.]+)(.*)$")
  if not mant or not (mant:match("^%d+%.?%d*$") or mant:match("^%.%d+$")) then return nil end
  if exp ~= "" and not exp:match("^e[+-]?%d+$") then return nil end
  return tonumber(sign .. plain)
end

-- An integer enum (pydantic validates Enum(value): 2 and 2.0 are members,
-- the string "2" is not in pydantic 1).
local function int_enum(node)
  local e = node.enum
  return e ~= nil and math.type(e[1]) == "integer"
end

-- Pydantic (lax mode) acceptance: v2, or v1 when v1 is true (DeepSpeed
-- before 0.15: numbers become strings, floats are truncated to ints, an
-- integer enum takes no strings). Returns ok, coerced value or message.
local function coerce_pydantic(v, t, node, v1)
  local k = kind(v)
  if t == "any" then return true, v end
  if t == "int" then
    if k == "integer" then return true, v end
    if k == "number" then
      if is_finite(v) and v == math.floor(v) then return true, math.tointeger(v) or v end
      if v1 and is_finite(v) and not int_enum(node) then
        return true, math.tointeger(v < 0 and math.ceil(v) or math.floor(v)) or v
      end
      return false, string.format("pydantic rejects %s for an integer field (int_from_float: the value has a fractional part)", format_number(v))
    end
    if k == "string" and v1 and int_enum(node) then
      return false, string.format("pydantic 1 validates the enum by value and the string %s is not one of its members (value is not a valid enumeration member)", json_string(v))
    end
    if k == "boolean" then
      if node.no_bool then return false, "a bool is rejected here; give an integer" end
      return true, v and 1 or 0
    end
    if k == "string" then
      local s = trim(v)
      if s:match("^[+-]?%d+$") then
        local n = math.tointeger(tonumber(s)) or tonumber(s)
        return true, n
      end
      return false, string.format("pydantic cannot parse the string %s as an integer (int_parsing; strings like \"5e8\" or \"1.5\" are rejected)", json_string(v))
    end
    return false, "pydantic expects an integer here"
  end
  if t == "float" then
    if k == "integer" or k == "number" then
      if node.no_bool and not is_finite(v) then return false, "the value must be finite" end
      return true, v
    end
    if k == "boolean" then
      if node.no_bool then return false, "a bool is rejected here; give a number" end
      return true, v and 1 or 0
    end
    if k == "string" then
      local n = parse_float_string(v)
      if n ~= nil then
        if node.no_bool and not is_finite(n) then return false, "the value must be finite" end
        return true, n
      end
      return false, string.format("pydantic cannot parse the string %s as a number (float_parsing)", json_string(v))
    end
    return false, "pydantic expects a number here"
  end
  if t == "bool" then
    if k == "boolean" then return true, v end
    if (k == "integer" or k == "number") and (v == 0 or v == 1) then return true, v == 1 end
    if k == "string" then
      local b = BOOL_STRINGS[trim(v):lower()]
      if b ~= nil then return true, b end
      return false, string.format("pydantic cannot parse the string %s as a boolean (bool_parsing)", json_string(v))
    end
    if k == "integer" or k == "number" then
      return false, string.format("pydantic rejects %s for a boolean field (only 0 and 1 are accepted as numbers)", format_number(v))
    end
    return false, "pydantic expects a boolean here"
  end
  if t == "string" then
    if k == "string" then return true, v end
    if v1 and (k == "integer" or k == "number" or k == "boolean") then return true, v end
    return false, "pydantic expects a string here (numbers and bools are not converted)"
  end
  if t == "object" or t == "map" then
    if k == "object" then return true, v end
    return false, "pydantic expects an object (dict) here"
  end
  if t == "array" then
    if k == "array" then return true, v end
    -- (a mode="before" validator makes it [v]: one item of the list)
    if k == "string" and node.str_to_list then return true, v end
    return false, "pydantic expects a list here"
  end
  return false, "unsupported type " .. tostring(t)
end

-- dict.get sections: no coercion. Returns ok, coerced or message, severity,
-- and for the failures whose severity depends on how DeepSpeed uses the
-- key (lenient_verdict) a word: "fraction", "number-string", "flag-string",
-- "section".
local function coerce_lenient(v, t, node)
  local k = kind(v)
  if t == "any" then return true, v end
  if t == "int" then
    if k == "integer" then return true, v end
    if k == "number" then
      if is_finite(v) and v == math.floor(v) then return true, v end
      return false, string.format("%s has a fractional part where DeepSpeed expects a whole number", format_number(v)), "error", "fraction"
    end
    if k == "boolean" then
      return false, "a bool where DeepSpeed expects an integer (Python would treat it as 0/1)", "warning"
    end
    if k == "string" then
      return false, string.format("DeepSpeed does no type conversion here; the string %s makes it crash (TypeError) when the value is used as a number", json_string(v)), "error", "number-string"
    end
    return false, "DeepSpeed expects an integer here", "error"
  end
  if t == "float" then
    if k == "integer" or k == "number" then return true, v end
    if k == "boolean" then
      return false, "a bool where DeepSpeed expects a number (Python would treat it as 0/1)", "warning"
    end
    if k == "string" then
      return false, string.format("DeepSpeed does no type conversion here; the string %s makes it crash (TypeError) when the value is used as a number", json_string(v)), "error", "number-string"
    end
    return false, "DeepSpeed expects a number here", "error"
  end
  if t == "bool" then
    if k == "boolean" then return true, v end
    if k == "integer" or k == "number" then
      if v == 0 or v == 1 then return true, v == 1 end
      return false, string.format("%s is not a boolean; Python treats any non-zero number as true", format_number(v)), "warning"
    end
    if k == "string" then
      return false, string.format("DeepSpeed does no type conversion here; the string %s is a non-empty string, which Python treats as true (even \"false\")", json_string(v)), "error", "flag-string"
    end
    return false, "DeepSpeed expects a boolean here", "error"
  end
  if t == "string" then
    if k == "string" then return true, v end
    return false, "DeepSpeed expects a string here", "error"
  end
  if t == "object" or t == "map" then
    if k == "object" then return true, v end
    return false, "DeepSpeed expects an object here and fails when it reads this section", "error", "section"
  end
  if t == "array" then
    if k == "array" then return true, v end
    return false, "DeepSpeed expects a list here", "error"
  end
  return false, "unsupported type " .. tostring(t), "error"
end

---------------------------------------------------------------------------
-- the walk
---------------------------------------------------------------------------

-- "a.b.c" for a path of string keys, or nil (array indices, top level).
local function path_dotted(path)
  local n = #path
  if n == 0 then return nil end
  for i = 1, n do
    if type(path[i]) ~= "string" then return nil end
  end
  return table.concat(path, ".")
end

-- The generated record of the key at path in the chosen release, or nil.
local function rel_key(st, path)
  local dp = st.rel and path_dotted(path)
  return dp and dv.data(st.rel).keys[dp] or nil
end

-- A new path: path plus key. (A plain list: ctx.report reads it as one.)
local function copy_path(path, key)
  local n = #path
  -- the common depths in one constructor (a table made at its size)
  if n == 0 then return { key } end
  if n == 1 then return { path[1], key } end
  if n == 2 then return { path[1], path[2], key } end
  local p = table.move(path, 1, n, 1, {})
  if key ~= nil then p[n + 1] = key end
  return p
end

-- Per object node, what the walk needs beyond plain field lookups: does
-- it have aliases at all, and which of its fields are deprecated (so the
-- common case, a section without either, costs nothing extra).
local node_facts = setmetatable({}, { __mode = "k" })
local function facts(node)
  local f = node_facts[node]
  if f then return f end
  f = { has_aliases = false, deprecated = {} }
  -- Only the few deprecated names are sorted, not every field (the top
  -- level has hundreds); each is followed by its aliases.
  local fields, names = node.fields, {}
  if fields then
    for name, fn in next, fields do
      local aliases = fn.aliases
      if aliases and #aliases > 0 then f.has_aliases = true end
      if fn.deprecated then names[#names + 1] = name end
    end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    f.deprecated[#f.deprecated + 1] = name
    local aliases = fields[name].aliases
    if aliases then
      for _, a in ipairs(aliases) do f.deprecated[#f.deprecated + 1] = a end
    end
  end
  node_facts[node] = f
  return f
end

local function enum_text(enum)
  local parts = {}
  for _, e in ipairs(enum) do parts[#parts + 1] = M.format_value(e) end
  return table.concat(parts, ", ")
end

local function enum_allows_auto(node)
  if not node.enum then return false end
  for _, e in ipairs(node.enum) do
    if e == "auto" then return true end
  end
  return false
end

local function default_phrase(node, name)
  local dt = M.default_text(node, "en")
  if node.default_text == nil and node.default == nil then
    return string.format("%s = None", name)
  end
  return string.format("%s = %s", name, dt)
end

-- use.when(cfg): a verdict that reads the whole config, not only the
-- value's own section. The walk of a top-level section that asks one is
-- not kept by the section cache (walk_section, below): its findings
-- depend on more than the section.
local function reads_cfg(st, use)
  st.read_cfg = true
  return use.when(st.cfg)
end

-- What plain DeepSpeed does with the string "auto" at this node, and
-- the severity: a pydantic model (pinfo.strict: the chosen release reads
-- this section with one) drops "auto" in DeepSpeedConfigModel.__init__
-- (runtime/config_utils.py; nested models too), so the default applies: a
-- warning. A dict.get read keeps the string: a flag is true (a warning,
-- unless DeepSpeed computes `x | y` with it), a number fails where
-- DeepSpeed computes with it (an error, or a warning when only a feature
-- this config does not enable uses it: dictuse.lua), anything else is
-- an invalid value (an error).
local function auto_behaviour(st, node, pinfo, name, path)
  local sec = #path > 1 and rel_key(st, table.move(path, 1, #path - 1, 1, {})) or nil
  if pinfo.strict and sec and sec.plain then
    -- a plain pydantic model (comms_logger up to 0.14): nothing drops "auto"
    return string.format("DeepSpeed %s reads this section with a plain pydantic model that does not drop \"auto\", so it fails with a ValidationError (\"auto\" is not %s)",
      st.rel.version, TYPE_WORD[M.types_of(node)[1]] or M.types_of(node)[1]), "error"
  end
  if pinfo.strict or node.auto_dropped then
    local rec = rel_key(st, path)
    local phrase = default_phrase(node, name)
    if rec and rec.d ~= nil and not node.auto_dropped then
      phrase = string.format("%s = %s", name, rec.d == NULL and "None" or M.format_value(rec.d))
    end
    return string.format("DeepSpeed's pydantic model silently drops \"auto\" here, so the default applies (%s)", phrase), "warning"
  end
  local use = dictuse.of(path_dotted(path))
  local types = M.types_of(node)
  local t = types[1]
  if t == "object" or t == "map" then
    return "DeepSpeed expects a section here and crashes when it reads the string \"auto\"", "error"
  end
  if t == "array" then
    return "DeepSpeed expects a list here and fails when it uses the string \"auto\" (e.g. as optimizer betas)", "error"
  end
  if t == "bool" then
    if use and use.op == "bitor" then
      return string.format("DeepSpeedConfig computes `%s | ...` with it (%s), which fails with TypeError for a string", name, use.source), "error"
    end
    return string.format("DeepSpeed reads it with dict.get and does not interpret it: the non-empty string \"auto\" is true in Python, so %s acts as true", name), "warning"
  end
  if t == "int" or t == "float" then
    if use and use.when and not reads_cfg(st, use) then
      return string.format("DeepSpeed keeps the string; only %s computes with it (and fails with TypeError), which this config does not enable, so it has no effect now", use.feature), "warning"
    end
    if use and use.fails then
      return string.format("DeepSpeed keeps the string and fails with a TypeError at %s", use.fails), "error"
    end
    return "DeepSpeed does not interpret it and crashes with a TypeError when it computes with the string (e.g. '>' not supported between 'str' and 'int')", "error"
  end
  return "DeepSpeed uses the literal string \"auto\", which is not a valid value here", "error"
end

-- The severity and message of a wrong type in a dict.get read, from how
-- DeepSpeed uses the key (see auto_behaviour and dictuse.lua).
local function lenient_verdict(st, path, v, why, msg, sev)
  local use = dictuse.of(path_dotted(path))
  if why == "flag-string" then
    if use and use.op == "bitor" then
      return msg .. string.format("; DeepSpeedConfig computes `x | y` with it (%s), which fails with TypeError", use.source), "error"
    end
    if v == "" then
      return "DeepSpeed does no type conversion here; the empty string is false in Python, so this acts as false", "warning"
    end
    return string.format("DeepSpeed does no type conversion here; the string %s is a non-empty string, which Python treats as true (even \"false\" or \"no\"), so this acts as true", json_string(v)), "warning"
  end
  if why == "number-string" and use and use.fails then
    return msg .. string.format(" (%s)", use.fails), "error"
  end
  if why == "number-string" and use and use.when then
    if reads_cfg(st, use) then
      return msg .. string.format(" (%s is on, and computes with it)", use.feature), "error"
    end
    return string.format("DeepSpeed does no type conversion here and keeps the string %s; only %s computes with it (and fails with TypeError), which this config does not enable, so it has no effect now", json_string(v), use.feature), "warning"
  end
  if why == "fraction" then
    return msg .. "; DeepSpeed does not check it and computes with the fraction as it is", "warning"
  end
  if why == "section" and use and use.op == "in" and (kind(v) == "string" or kind(v) == "array") then
    return string.format("DeepSpeed only tests %s (%s), which is false for %s, so the section has no effect", use.test, use.source, M.format_value(v)), "warning"
  end
  return msg, sev
end

-- edit: the machine-readable fix (ctx.report's edit), or nil.
local function report(st, rule, path, message, fix, severity, edit)
  local rec = st.record
  if rec then
    -- (a copy of the path: the receiver may keep or change the one it gets)
    rec[#rec + 1] = { rule, table.move(path, 1, #path, 1, {}), message, fix, severity, edit }
  end
  st.ctx.report({ rule = rule, path = path, message = message, fix = fix, severity = severity, edit = edit })
end

local check_value, no_bool_at

local function handle_auto(st, node, path, pinfo, key)
  local hf_ok = node.hf_auto and (node.hf_auto_key == nil or node.hf_auto_key == key)
  if st.target == "hf" and hf_ok then return end
  local where = M.path_text(path)
  local name = key ~= nil and tostring(key) or where
  local behaviour, severity = auto_behaviour(st, node, pinfo, name, path)
  local msg, fix
  if st.target == "hf" then
    if node.hf_auto and not hf_ok then
      msg = string.format("Hugging Face only fills \"auto\" under the spelling \"%s\", not \"%s\", so %s stays \"auto\": %s",
        node.hf_auto_key, name, where, behaviour)
      fix = string.format("rename the key to \"%s\" or give a concrete value", node.hf_auto_key)
    else
      msg = string.format("Hugging Face does not fill \"auto\" at %s, so DeepSpeed sees the string: %s", where, behaviour)
      fix = "replace \"auto\" with a concrete value"
    end
  else
    msg = string.format("\"auto\" at %s is a Hugging Face placeholder that plain DeepSpeed does not resolve: %s", where, behaviour)
    if hf_ok then
      fix = "give a concrete value, or validate with target \"hf\" if the config is only used through the Hugging Face Trainer/Accelerate"
    else
      fix = "replace \"auto\" with a concrete value"
    end
  end
  local edit
  if severity == "warning" and not (node.hf_auto and st.target ~= "hf") then
    fix = "remove the key to use the default, or give a concrete value"
    edit = { op = "remove" }
  end
  -- for plain DeepSpeed: the value DeepSpeed takes when the key is absent
  -- (a plain default only: not one the text says is computed)
  local d = node.default
  if st.target ~= "hf" and node.default_text == nil and d ~= nil and d ~= "auto"
     and (type(d) == "number" or type(d) == "boolean" or type(d) == "string") then
    edit = { op = "set", value = d }
  end
  report(st, "auto-value", path, msg, fix, severity, edit)
end

local function check_enum(st, node, v, path)
  if not node.enum then return end
  local relevant, ok = false, false
  for _, e in ipairs(node.enum) do
    if type(e) == type(v) then
      relevant = true
      if values_equal(e, v, node.case_insensitive) then ok = true; break end
    end
  end
  if not relevant or ok then return end
  local where = M.path_text(path)
  local msg = string.format("%s is not a valid value for %s; allowed: %s", M.format_value(v), where, enum_text(node.enum))
  local fix = "use one of " .. enum_text(node.enum)
  if type(v) == "string" then
    local cands = {}
    for _, e in ipairs(node.enum) do if type(e) == "string" then cands[#cands + 1] = e end end
    table.sort(cands)
    local s = M.suggest(v, cands)
    if s then
      if s:lower() == v:lower() then
        msg = msg .. string.format(" (the value is case-sensitive: did you mean \"%s\"?)", s)
      else
        msg = msg .. string.format(" (did you mean \"%s\"?)", s)
      end
      fix = string.format("use \"%s\"", s)
    end
  end
  if node.enum_severity == "warning" then
    msg = msg .. "; DeepSpeed warns and falls back to its default"
  end
  report(st, "invalid-value", path, msg, fix, node.enum_severity or "error")
end

-- Is the value at the dotted path true in Python (absent: false)? The
-- finding then depends on the config beyond the value (st.read_cfg).
local function truthy_path(st, dotted)
  st.read_cfg = true
  local v = st.cfg
  for part in dotted:gmatch("[^.]+") do
    if type(v) ~= "table" or kind(v) ~= "object" then return false end
    v = v[part]
  end
  if v == nil or v == dsforge.null or v == false or v == 0 or v == "" then return false end
  if type(v) == "table" then return next(v) ~= nil end
  return true
end

-- A value outside node's bounds. The bounds are the newest release's
-- pydantic constraints; a release that reads the key with dict.get does
-- not check them (node.range_by names the check DeepSpeed does there, if
-- any). (A function of its own: check_range runs on every number.)
local function out_of_range(st, node, v, path, bound_text, fix)
  local rec = node.range_by == nil and rel_key(st, path)
  if rec and rec.src == "dict" then
    report(st, "out-of-range", path,
      string.format("%s = %s is outside the range newer DeepSpeed releases accept (%s); DeepSpeed %s reads it with dict.get and does not check it, and uses the value as it is",
        M.path_text(path), format_number(v), bound_text, st.rel.version), fix, "warning")
    return
  end
  -- a bound DeepSpeed checks only from a release on (node.range_since):
  -- an older release takes the value as it is (node.range_before says what
  -- it does with it)
  if node.range_since and st.rel and dv.cmp(st.rel.version, node.range_since) < 0 then
    report(st, "out-of-range", path,
      string.format("%s = %s is outside the range DeepSpeed accepts from %s (%s); DeepSpeed %s does not check it%s",
        M.path_text(path), format_number(v), node.range_since, bound_text, st.rel.version,
        node.range_before and ("; " .. M.text(node.range_before, "en")) or ""), fix, "warning")
    return
  end
  -- a bound DeepSpeed checks only with a feature on (node.checked_when, a
  -- dotted flag it tests for Python truthiness)
  if node.checked_when and not truthy_path(st, node.checked_when) then
    report(st, "out-of-range", path,
      string.format("%s = %s is outside the range DeepSpeed checks (%s) only when %s is on; this config does not turn it on, so DeepSpeed never reads the value",
        M.path_text(path), format_number(v), bound_text, node.checked_when), fix, "warning")
    return
  end
  report(st, "out-of-range", path,
    string.format("%s = %s is out of range: it must be %s", M.path_text(path), format_number(v), bound_text), fix, "error")
end

local function check_range(st, node, v, path)
  if type(v) ~= "number" or v ~= v then return end
  if node.min ~= nil and v < node.min then
    return out_of_range(st, node, v, path, ">= " .. format_number(node.min), "use a value >= " .. format_number(node.min))
  end
  if node.exclusive_min ~= nil and v <= node.exclusive_min then
    return out_of_range(st, node, v, path, "> " .. format_number(node.exclusive_min), "use a value > " .. format_number(node.exclusive_min))
  end
  if node.max ~= nil and v > node.max then
    return out_of_range(st, node, v, path, "<= " .. format_number(node.max), "use a value <= " .. format_number(node.max))
  end
  if node.exclusive_max ~= nil and v >= node.exclusive_max then
    return out_of_range(st, node, v, path, "< " .. format_number(node.exclusive_max), "use a value < " .. format_number(node.exclusive_max))
  end
end

-- "a.b.c" for a path of string keys plus key, or nil (array indices).
local function dotted(path, key)
  local n = #path
  if n == 0 then return key end
  for i = 1, n do
    if type(path[i]) ~= "string" then return nil end
  end
  return table.concat(path, ".") .. "." .. key
end

-- Does the section at path reject unknown keys in the chosen release? The
-- generated data says for every release; the hand-written node otherwise.
local function strict_at(st, node, path)
  if st.rel and st.rel ~= dv.newest then
    local sp = #path == 0 and "" or dotted({}, table.concat(path, "."))
    for i = 1, #path do
      if type(path[i]) ~= "string" then sp = nil; break end
    end
    local v = sp and dv.data(st.rel).strict[sp]
    if v ~= nil then return v end
    -- a section this release does not read at all is ignored, not checked
    if sp and sp ~= "" and not dv.reads(st.rel, sp) then return false end
  end
  return node.strict == true
end

-- Is a hand-written field read by the chosen release? Reports when not.
local function check_version(st, f, dp, kp)
  local rel = st.rel
  if not rel or not dp then return end
  local v = rel.version
  local first, last = dv.span(dp)
  local why
  if first then
    if dv.cmp(v, first) < 0 then
      why = string.format("DeepSpeed %s does not read %s: the first covered release that reads it is %s", v, dp, first)
    elseif dv.cmp(v, last) > 0 then
      why = string.format("DeepSpeed %s does not read %s any more: the last covered release that reads it is %s", v, dp, last)
    end
  elseif f.unreleased then
    why = string.format("no DeepSpeed release up to %s reads %s (it is not in DeepSpeed's main branch either)",
      dv.newest.version, dp)
  elseif f.since and dv.cmp(st.requested or v, f.since) < 0 and not dv.data(rel).keys[dp] then
    why = string.format("DeepSpeed %s does not read %s: it first appears in %s", st.requested or v, dp, f.since)
  end
  if why then
    local strict = st.strict_here
    -- Like unknown-key: DeepSpeed fails only where the section rejects
    -- unknown keys; elsewhere it ignores the key (a warning).
    report(st, "version-key", kp, why .. (strict and ", and this section rejects unknown keys" or ", so it has no effect"),
      "remove it, or choose a DeepSpeed version that reads it (--ds-version)", strict and "error" or "warning")
    return true
  end
  return false
end

-- The first of a node's types (nil when it has none), for plain_ok.
local first_type = setmetatable({}, { __mode = "k" })

-- Is the scalar v (not "auto", not null, not a table) one that
-- check_value(st, v, node, ...) accepts without a finding, by its common
-- case: the node's first type takes v as it is (an integer-valued number
-- for "int", a finite number for "float", a boolean for "bool", a string
-- for "string", anything for "any"), v is one of the node's enum values
-- if it has any, and inside its bounds. Then the walk needs neither the
-- value's path nor check_value; anything else (false) goes through
-- check_value, which decides and reports as before. tv is type(v).
local function plain_ok(v, tv, node)
  local t = first_type[node]
  if t == nil then
    t = node.type
    if type(t) == "table" then t = t[1] end
    first_type[node] = t or false
  end
  if t == "bool" then
    if tv ~= "boolean" or node.legacy_bool then return false end
  elseif t == "string" then
    if tv ~= "string" then return false end
  elseif t == "int" then
    -- (v % 1 is NaN for infinities and NaN: those fail)
    if tv ~= "number" or v % 1 ~= 0 then return false end
  elseif t == "float" then
    if tv ~= "number" or v - v ~= 0 then return false end
  elseif t == "any" then
    if (tv == "boolean" and node.legacy_bool) or tv == "userdata" then return false end
  else
    return false
  end
  local enum = node.enum
  if enum then
    local hit = false
    for i = 1, #enum do
      if enum[i] == v then hit = true; break end
    end
    if not hit then return false end
  end
  if tv == "number" then
    local b = node.min
    if b ~= nil and v < b then return false end
    b = node.exclusive_min
    if b ~= nil and v <= b then return false end
    b = node.max
    if b ~= nil and v > b then return false end
    b = node.exclusive_max
    if b ~= nil and v >= b then return false end
  end
  return true
end

-- The dotted text of key under the object at dotted prefix (the walk asks
-- for it for every key: made once per prefix and key, not concatenated
-- again for every config).
local dotted_cache = {}
local function dotted_key(prefix, key)
  local m = dotted_cache[prefix]
  if not m then
    m = {}
    dotted_cache[prefix] = m
  end
  local dp = m[key]
  if not dp then
    dp = prefix .. "." .. key
    m[key] = dp
  end
  return dp
end

-- Shared by every object without aliases or deprecated fields, which
-- never writes to it (check_object's present and several).
local NONE = setmetatable({}, { __newindex = function() error("schema_check: NONE is read-only") end })

-- The section cache (section_cache.lua), required at the second config
-- a state checks; the number of configs checked.
local section_cache
local configs_checked = 0

-- check_value on the top-level section v (the value of field f under
-- key), or its findings again from the cache.
local function walk_section(st, v, f, path, pinfo, key)
  local per = st.sections
  if not per then return check_value(st, v, f, path, pinfo, key) end
  -- (the host's identity of the section, when it gives one:
  -- ctx.identity)
  local id = st.identity and st.identity(key)
  local kept = section_cache.lookup(per, key, v, id)
  if kept then
    for j = 1, #kept do
      local r = kept[j]
      report(st, r[1], table.move(r[2], 1, #r[2], 1, {}), r[3], r[4], r[5], r[6])
    end
    return
  end
  local found = {}
  st.record, st.read_cfg = found, false
  check_value(st, v, f, path, pinfo, key)
  st.record = nil
  if not st.read_cfg then section_cache.store(per, key, v, found, id) end
end

-- After this many keys of one object that are not fields of its schema
-- node, whether the release reads another is looked up in one table made
-- for the object's path (reads_under), not asked of the release's facts
-- key by key (a lookup in its lazily built table costs a pattern match).
local MANY_NOT_FIELDS = 64
-- rel -> dotted prefix ("" for the top level) -> set of the keys the
-- release reads right under it
local reads_under_of = setmetatable({}, { __mode = "k" })
local function reads_under(rel, prefix)
  local per = reads_under_of[rel]
  if not per then
    per = {}
    reads_under_of[rel] = per
  end
  local set = per[prefix]
  if set then return set end
  set = {}
  local pre = prefix == "" and "" or prefix .. "."
  local n = #pre
  for k in pairs(dv.data(rel).keys) do
    if k:sub(1, n) == pre then
      local child = k:sub(n + 1)
      if not child:find(".", 1, true) and dv.reads(rel, k) then set[child] = true end
    end
  end
  per[prefix] = set
  return set
end

local function check_object(st, v, node, path)
  -- strictness (pydantic or dict.get, so coercion too) follows the release
  local strict = node.strict == true
  if st.rel then strict = strict_at(st, node, path) end
  local pinfo = { strict = strict, auto_drop = node.pydantic_root == true }
  -- Path text only when a finding needs it (the walk runs per variant).
  local function in_where()
    return (#path == 0) and "at the top level" or ("in " .. M.path_text(path))
  end
  local nf = facts(node)
  local track = nf.has_aliases or #nf.deprecated > 0
  -- canonical name -> the first key used for it; and, only for a field
  -- given under more than one name, the list of the keys used
  local present, several = NONE, NONE
  if track then present, several = {}, {} end
  -- The dotted text of a key of this object is dotted(path, key): its
  -- prefix is the same for every key, so it is made once per object.
  local top, prefix = #path == 0, path_dotted(path)
  local fields = node.fields
  -- (the node's alias map, read when a key is not a field under its own
  -- name: most objects have none such)
  local aliases
  -- keys of v that are not fields so far, and once they are many, the
  -- keys the release reads under v (reads_under); what the first of them
  -- sets (most objects have none): whether the release can read a key of
  -- v that is not a field (a dotted path), ctx.wanted (except while the
  -- section cache records: what it records is reported again for another
  -- config, so none may be left out), and an unknown key's severity
  local here_count, here = 0, nil
  local rel_may, wanted, unknown_sev
  -- The keys in any order: what the walk finds does not depend on it (the
  -- findings are sorted by path, rule and message before anyone sees
  -- them, and no two keys report the same finding), and sorting them
  -- cost more than walking them.
  for key, child in next, v do
    -- (the key's path is made only when something needs it)
    local kp
    -- (M.lookup, with the common case first: a field under its own name)
    local f, canonical = fields[key], key
    if not f then
      -- (the keys of a JSON object are strings)
      if not aliases then aliases = util.aliases(node) end
      canonical = aliases[key]
      f = canonical and fields[canonical]
      if not f then
        here_count = here_count + 1
        if here_count == 1 then
          rel_may = not node.open and st.rel and (top or prefix ~= nil)
          wanted = not st.record and st.ctx.wanted
          unknown_sev = strict and "error" or "warning"
        elseif here_count == MANY_NOT_FIELDS and rel_may then
          here = reads_under(st.rel, prefix or "")
        end
      end
    end
    if f then
      if track then
        local first = present[canonical]
        if first == nil then
          present[canonical] = key
        else
          local used = several[canonical]
          if not used then
            used = { first }
            several[canonical] = used
          end
          used[#used + 1] = key
        end
      end
      if f.rejected then
        kp = copy_path(path, key)
        report(st, "rejected-key", kp, M.text(f.rejected, "en"),
          string.format("remove %s", M.path_text(kp)), "error")
      end
      local unread = false
      -- (key is a string: fields and aliases are named by strings)
      if st.rel then
        st.strict_here = strict -- (strict_at(st, node, path), above)
        local dp = top and canonical or prefix and dotted_key(prefix, canonical)
        -- (check_version says nothing of a key every covered release reads)
        if dp and (f.unreleased or f.since or spans[dp]) then
          kp = kp or copy_path(path, key)
          unread = check_version(st, f, dp, kp)
        end
      end
      -- a key the release does not read has no value to check
      if not unread then
        local tv = type(child)
        if tv == "table" and top then
          walk_section(st, child, f, kp or { key }, pinfo, key)
        elseif tv == "table" or child == "auto" or not plain_ok(child, tv, f) then
          check_value(st, child, f, kp or copy_path(path, key), pinfo, key)
        end
      end
    elseif rel_may
           and (here and here[key] or not here and dv.reads(st.rel, dotted(path, key))) then
      -- not in the (newest) hand-written schema, but this release reads it
      local dp = dotted(path, key)
      local first, last = dv.span(dp)
      kp = copy_path(path, key)
      report(st, "version-key", kp, string.format("DeepSpeed %s reads %s%s", st.rel.version, dp,
        last and string.format(" (covered releases %s to %s only)", first, last) or ""),
        "check it against the DeepSpeed version you run", "note")
      -- the old name of a renamed key: the release checks its value as the
      -- new name's (seq_parallel_comm_data_type: get_communication_data_type
      -- raises ValueError for another value, runtime/config.py:251-265 at
      -- v0.14.5)
      for _, name in ipairs(dsforge.sorted_keys(node.fields or {})) do
        local f = node.fields[name]
        if f.renamed_from and f.renamed_from.key == key then
          check_value(st, child, f, kp, pinfo, key)
          break
        end
      end
    elseif top and key == "$schema" then -- luacheck: ignore 542
      -- an editor's schema reference: DeepSpeed reads the top level with
      -- dict.get and ignores it, so it is no finding
    elseif not node.open and (not wanted or wanted("unknown-key", unknown_sev, path, key)) then
      -- (strict is the object's, from strict_at above; a finding past
      -- the bound is only counted: ctx.wanted, so a million unknown keys
      -- compose 100 messages)
      local msg
      local ktext = type(key) == "string" and json_string(key) or tostring(key)
      if strict then
        msg = string.format("%s is not a valid key %s; DeepSpeed rejects unknown keys in this section (pydantic: Extra inputs are not permitted) and fails at startup", ktext, in_where())
      else
        msg = string.format("%s is not a DeepSpeed key %s; DeepSpeed silently ignores it, so it has no effect", ktext, in_where())
      end
      local suffix, fix, edit = unknown_advice(node, key)
      kp = copy_path(path, key)
      report(st, "unknown-key", kp, msg .. suffix, fix, strict and "error" or "warning", edit)
    end
  end
  -- alias + field name (or two aliases) for the same field (present is
  -- empty unless the node has aliases or deprecated fields)
  for _, canonical in ipairs(next(several) and dsforge.sorted_keys(several) or several) do
    local used = several[canonical]
    if #used > 1 then
      table.sort(used)
      local sev = node.strict and "error" or "warning"
      report(st, "alias-with-field", copy_path(path, used[2]),
        string.format("%s are %s names of the same field \"%s\" %s; %s",
          table.concat((function() local q = {} for i, u in ipairs(used) do q[i] = json_string(u) end return q end)(), " and "),
          #used == 2 and "both" or "all", canonical, in_where(),
          node.strict and "DeepSpeed rejects giving more than one (extra_forbidden)" or "only one of them is used"),
        string.format("keep only one of them (e.g. \"%s\")", used[1]), sev,
        { op = "remove" })
    end
  end
  -- deprecated keys (only the node's deprecated names can match)
  for _, key in ipairs(nf.deprecated) do
    local f = rawget(v, key) ~= nil and M.lookup(node, key) or nil
    if f and f.deprecated then
      local dep = f.deprecated
      local kp = copy_path(path, key)
      local rnode, rcanon = M.lookup(node, dep.replacement)
      local rkeys = rnode and (several[rcanon] or present[rcanon] and { present[rcanon] })
      -- a null replacement the release takes for absent (dictuse: read by a
      -- pydantic model, e.g. get_bfloat16_config's `is None`): DeepSpeed
      -- reads the deprecated key
      local null_absent = false
      if rkeys and #rkeys == 1 and rawget(v, rkeys[1]) == NULL then
        local rpath = copy_path(path, rkeys[1])
        local use = dictuse.of(path_dotted(rpath))
        local rec = use and use.null == "absent" and rel_key(st, rpath)
        null_absent = rec and rec.src == "pydantic" or false
      end
      local note = dep.note and ("; " .. M.text(dep.note, "en")) or ""
      if null_absent then
        note = string.format("; \"%s\" is null, which DeepSpeed takes for absent, so it reads \"%s\"",
          rkeys[1], key)
        rkeys = nil
      end
      -- (a rename is the fix only where the value means the same under
      -- the new name, and that name is not given too)
      local same = dep.same_value and not null_absent and not (rkeys and #rkeys > 0)
      report(st, "deprecated-key", kp,
        string.format("\"%s\" is deprecated; use \"%s\" instead%s", key, dep.replacement, note),
        string.format("replace \"%s\" with \"%s\"", key, dep.replacement), "warning",
        same and { op = "rename", to = dep.replacement } or nil)
      if rkeys and #rkeys > 0 then
        if dep.both == "ignored" then
          report(st, "deprecated-with-replacement", kp,
            string.format("both \"%s\" and \"%s\" are given; DeepSpeed uses \"%s\" and ignores \"%s\"",
              key, rkeys[1], rkeys[1], key),
            string.format("remove \"%s\"", key), "warning", { op = "remove" })
        elseif dep.copies ~= false and node.strict then
          report(st, "deprecated-with-replacement", kp,
            string.format("both the deprecated \"%s\" and its replacement \"%s\" are given; DeepSpeed raises AssertionError \"Cannot provide deprecated parameter '%s' and replacing parameter '%s' together\"",
              key, rkeys[1], key, rcanon),
            string.format("remove \"%s\" and keep \"%s\"", key, rkeys[1]), "error", { op = "remove" })
        end
      end
    end
  end
end

-- node as the chosen release validates it: before node.no_bool_since
-- (the release whose mode="before" validator rejects bools and inf/nan)
-- pydantic's lax coercion takes them (a copy without no_bool, made once).
local lax_copy = setmetatable({}, { __mode = "k" })
no_bool_at = function(st, node)
  local since = node.no_bool_since
  if not since or not st.rel or dv.cmp(st.rel.version, since) >= 0 then return node end
  local c = lax_copy[node]
  if not c then
    c = {}
    for k, x in next, node do c[k] = x end
    c.no_bool = nil
    lax_copy[node] = c
  end
  return c
end

check_value = function(st, v, node, path, pinfo, key)
  -- "auto"
  if v == "auto" and not enum_allows_auto(node) then
    return handle_auto(st, node, path, pinfo, key)
  end
  -- legacy bool form of a section
  if node.legacy_bool and type(v) == "boolean" then
    local where = M.path_text(path)
    report(st, "deprecated-key", path,
      string.format("the bool form of %s is deprecated: true means stage 1 and false stage 0 (DeepSpeed logs a warning)", where),
      string.format("write %s as an object, e.g. {\"stage\": %d}", where, v and 1 or 0), "warning")
    return
  end
  -- null
  if v == NULL then
    local use = dictuse.of(path_dotted(path))
    if use and use.null == "absent" then
      local rec = rel_key(st, path)
      if rec and rec.src == "pydantic" then return end
    end
    local scalar = not (has_type(node, "object") or has_type(node, "map") or has_type(node, "array"))
    if node.nullable or has_type(node, "any")
       or (not pinfo.strict and scalar and node.default == nil and node.default_text == nil) then
      return
    end
    local msg
    local where = M.path_text(path)
    if pinfo.strict then
      msg = string.format("null is not allowed for %s (pydantic expects %s)", where, TYPE_WORD[M.types_of(node)[1]] or "a value")
    else
      msg = string.format("null at %s gives DeepSpeed None where it needs %s", where, TYPE_WORD[M.types_of(node)[1]] or "a value")
    end
    report(st, "type-mismatch", path, msg, "remove the key to get the default (" .. M.default_text(node, "en") .. ") or give a value", "error")
    return
  end
  -- type with coercion
  local types = M.types_of(node)
  local ok, coerced, first_msg, first_sev, first_why = false, nil, nil, nil, nil
  for i = 1, #types do
    local t = types[i]
    local good, res, sev, why
    if pinfo.strict then
      good, res = coerce_pydantic(v, t, node.no_bool_since and no_bool_at(st, node) or node, st.v1)
      sev = "error"
      -- a mode="before" validator calling float(v) first, from the release
      -- that has it (py_float_since)
      if not good and t == "float" and node.py_float_since and kind(v) == "string"
         and st.rel and dv.cmp(st.rel.version, node.py_float_since) >= 0 then
        local n = python_float(v)
        if n ~= nil and is_finite(n) then
          good, res = true, n
        elseif n ~= nil then
          res = "DeepSpeed's validator rejects a value that is not finite (inf/nan)"
        end
      end
    else
      good, res, sev, why = coerce_lenient(v, t, node)
      -- a dict.get read the code hands to Python's float() (py_float)
      if not good and t == "float" and node.py_float and kind(v) == "string" then
        local n = python_float(v)
        if n ~= nil then good, res = true, n end
      end
    end
    if good then ok, coerced = true, res; break end
    if first_msg == nil then first_msg, first_sev, first_why = res, sev, why end
  end
  -- pydantic 1 validates a model field by dict(value) (dict([]) is {}): an
  -- empty list for a section that is a field of a containing model (the
  -- monitors, node.auto_dropped) is accepted
  if not ok and st.v1 and node.auto_dropped and kind(v) == "array" and #v == 0 then
    local rec = rel_key(st, path)
    if rec and rec.src == "pydantic" then return end
  end
  if not ok and first_why then
    first_msg, first_sev = lenient_verdict(st, path, v, first_why, first_msg, first_sev)
  end
  -- a value DeepSpeed reads only with a feature on (node.checked_when)
  if not ok and node.checked_when and not truthy_path(st, node.checked_when) then
    first_msg = string.format("DeepSpeed reads it only when %s is on, which this config does not turn on, so it has no effect now", node.checked_when)
    first_sev = "warning"
  end
  if not ok then
    local where = M.path_text(path)
    local expected = {}
    for i, t in ipairs(types) do expected[i] = TYPE_WORD[t] or t end
    report(st, "type-mismatch", path,
      string.format("%s = %s: expected %s; %s", where, M.format_value(v), table.concat(expected, " or "), first_msg),
      "give " .. table.concat(expected, " or ") .. (node.default ~= nil and (" (default " .. M.default_text(node, "en") .. ")") or ""),
      first_sev or "error")
    return
  end
  if type(coerced) ~= "table" then
    -- (most nodes have neither an enum nor bounds)
    if node.enum then check_enum(st, node, coerced, path) end
    if node.min ~= nil or node.exclusive_min ~= nil or node.max ~= nil or node.exclusive_max ~= nil then
      check_range(st, node, coerced, path)
    end
    return
  end
  -- containers
  local k = kind(v)
  if k == "object" and has_type(node, "object") and node.fields then
    check_object(st, v, node, path)
  elseif k == "object" and has_type(node, "map") and node.values then
    local values = node.values
    for _, mk in ipairs(dsforge.sorted_keys(v)) do
      local c = v[mk]
      local tc = type(c)
      if tc == "table" or c == "auto" or not plain_ok(c, tc, values) then
        check_value(st, c, values, copy_path(path, mk), pinfo, mk)
      end
    end
  elseif k == "array" and node.items then
    local items = node.items
    for i = 1, #v do
      local c = v[i]
      local tc = type(c)
      if tc == "table" or c == "auto" or not plain_ok(c, tc, items) then
        check_value(st, c, items, copy_path(path, i), pinfo, nil)
      end
    end
  end
end

---------------------------------------------------------------------------
-- public API
---------------------------------------------------------------------------

-- Walks cfg against the schema; findings go to ctx.report.
function M.check(cfg, ctx)
  local st = { ctx = ctx, target = (ctx and ctx.target) or "deepspeed" }
  local spec = ctx and ctx.ds_version
  if spec == nil and ctx and type(ctx.params) == "table" and type(ctx.params.ds_version) == "string" then
    spec = ctx.params.ds_version
  end
  local rel, note = dv.resolve(spec)
  if not rel then
    report(st, "ds-version", dsforge.array {}, note,
      "use one of the covered releases: " .. dv.covered_text(), "error")
  else
    st.rel = rel
    st.v1 = dv.data(rel).pydantic == 1
    st.requested = type(spec) == "string" and spec:gsub("^v", "") or nil
    if note then
      report(st, "ds-version", dsforge.array {}, note, "pass a covered release with --ds-version to silence this", "note")
    end
  end
  local k = kind(cfg)
  if k ~= "object" then
    report(st, "type-mismatch", dsforge.array {},
      string.format("the DeepSpeed config must be a JSON object, got %s", k), "write the config as a JSON object {...}", "error")
    return
  end
  st.cfg = cfg
  configs_checked = configs_checked + 1
  if configs_checked > 1 and st.rel and type(st.target) == "string" then
    section_cache = section_cache or require("deepspeed.section_cache")
    st.sections = section_cache.for_context(st.rel, st.requested or "", st.target)
    -- Rules never change the config they check, and this walk is the
    -- first rule: the identities describe cfg as it is.
    local identity = ctx.identity
    if type(identity) == "function" then st.identity = identity end
  end
  check_object(st, cfg, ROOT, {})
end

-- For the tests: empties the section cache, and counts no config checked
-- (the next is walked without it, the one after with it).
function M.clear_section_cache()
  configs_checked = 0
  if section_cache then section_cache.clear() end
end

-- For the tests: the walk's shortcut for plain scalars, and check_value
-- itself on one value (st from opts: strict, v1, target; the findings
-- are returned), so a test can hold the shortcut to what it skips.
M.plain_ok = plain_ok
function M.check_leaf(node, v, path, opts)
  local found = {}
  local st = { ctx = { report = function(f) found[#found + 1] = f end },
               target = opts.target or "deepspeed", rel = dv.newest, v1 = opts.v1,
               cfg = {} }
  check_value(st, v, node, path, { strict = opts.strict }, path[#path])
  return found
end

M.rules = {
  { id = "unknown-key", severity = "error",
    summary = "keys DeepSpeed does not know: rejected in pydantic sections, silently ignored elsewhere",
    fix = "rename the key to the suggested DeepSpeed key or remove it",
    check = function(cfg, ctx) M.check(cfg, ctx) end },
  { id = "version-key", severity = "error",
    summary = "a key the chosen DeepSpeed release (--ds-version, default the newest covered) does not read yet, or no longer (an error in sections that reject unknown keys, a warning elsewhere)",
    fix = "remove the key or choose a release that reads it" },
  { id = "ds-version", severity = "note",
    summary = "which covered DeepSpeed release the facts come from when --ds-version names another one",
    fix = "pass a covered release with --ds-version" },
  { id = "type-mismatch", severity = "error",
    summary = "value type DeepSpeed would reject or misread (pydantic coercion, by release, in pydantic sections; none in dict.get reads, where a string flag acts as true and a value only an unused feature computes with is a warning)",
    fix = "give a value of the expected type" },
  { id = "invalid-value", severity = "error",
    summary = "value outside the set DeepSpeed accepts (enums such as offload device or ZeRO stage)",
    fix = "use one of the allowed values" },
  { id = "out-of-range", severity = "error",
    summary = "number outside the range DeepSpeed accepts (ge=0 fields, ratios in [0,1], positive batch sizes); a warning where the release reads the key with dict.get and does not check it",
    fix = "use a value inside the allowed range" },
  { id = "deprecated-key", severity = "warning",
    summary = "deprecated key or legacy form that DeepSpeed still reads but warns about",
    fix = "use the replacement key" },
  { id = "deprecated-with-replacement", severity = "error",
    summary = "a deprecated key together with its replacement (AssertionError in DeepSpeed)",
    fix = "remove the deprecated key" },
  { id = "alias-with-field", severity = "error",
    summary = "a pydantic alias and its field name given together (e.g. stage3_prefetch_bucket_size and prefetch_bucket_size)",
    fix = "keep only one spelling" },
  { id = "auto-value", severity = "error",
    summary = "\"auto\" where nothing fills it (plain DeepSpeed, or a key Hugging Face does not fill): an error where DeepSpeed then fails, a warning where a pydantic model drops it (the default applies) or a dict.get flag takes it as true",
    fix = "replace \"auto\" with a concrete value" },
  { id = "rejected-key", severity = "error",
    summary = "a key DeepSpeed reads only to raise an error (e.g. max_grad_norm in optimizer.params)",
    fix = "remove the key and use the supported setting" },
}

return M
