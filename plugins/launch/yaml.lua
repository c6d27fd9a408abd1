-- launch.yaml: the YAML subset an accelerate config file is written in
-- (`accelerate config` writes it with yaml.safe_dump, and launch.render's
-- accelerate_yaml writes it too): block mappings nested by indentation,
-- plain, single- and double-quoted scalars, `#` comments, `{}` and `[]`,
-- and block lists of scalars.
--
-- API
--   M.parse(text) -> value | nil, message, line
--     Scalars are typed as YAML 1.1's safe loader types them: true/false
--     (also yes/no/on/off, any case), null/~/empty, integers, floats;
--     anything else is a string. Anything outside the subset (anchors,
--     tags, flow collections with content, multi-line scalars, several
--     documents) is refused with its line number, never guessed.

local type, tonumber, math, table, utf8 = type, tonumber, math, table, utf8
local dsforge = dsforge

local M = {}

local BOOL = { ["true"] = true, yes = true, on = true,
  ["false"] = false, no = false, off = false }

local function unescape(s, line)
  local map = { n = "\n", t = "\t", r = "\r", ["\\"] = "\\", ['"'] = '"', ["/"] = "/",
    ["0"] = "\0", [" "] = " " }
  local out, i = {}, 1
  while i <= #s do
    local c = s:sub(i, i)
    if c == "\\" then
      local e = s:sub(i + 1, i + 1)
      if map[e] then out[#out + 1] = map[e]; i = i + 2
      elseif e == "x" or e == "u" or e == "U" then
        local n = e == "x" and 2 or e == "u" and 4 or 8
        local hex = s:sub(i + 2, i + 1 + n)
        if not hex:find("^%x+$") or #hex ~= n then return nil, "bad escape", line end
        out[#out + 1] = utf8.char(tonumber(hex, 16)); i = i + 2 + n
      else return nil, "unknown escape \\" .. e, line end
    else out[#out + 1] = c; i = i + 1 end
  end
  return table.concat(out)
end

-- A scalar's text (after "key:" or "- ") to its value.
local function scalar(s, line)
  s = s:gsub("^%s+", "")
  if s:sub(1, 1) == '"' then
    local i = 2
    while true do
      local c = s:sub(i, i)
      if c == "" then return nil, "unterminated double-quoted scalar", line end
      if c == "\\" then i = i + 2
      elseif c == '"' then break
      else i = i + 1 end
    end
    local rest = s:sub(i + 1)
    if not rest:find("^%s*$") and not rest:find("^%s+#") then
      return nil, "trailing text after a double-quoted scalar", line
    end
    return unescape(s:sub(2, i - 1), line)
  elseif s:sub(1, 1) == "'" then
    local i, out = 2, {}
    while true do
      local c = s:sub(i, i)
      if c == "" then return nil, "unterminated single-quoted scalar", line end
      if c == "'" then
        if s:sub(i + 1, i + 1) == "'" then out[#out + 1] = "'"; i = i + 2
        else break end
      else out[#out + 1] = c; i = i + 1 end
    end
    local rest = s:sub(i + 1)
    if not rest:find("^%s*$") and not rest:find("^%s+#") then
      return nil, "trailing text after a single-quoted scalar", line
    end
    return table.concat(out)
  end
  s = s:gsub("%s+#.*$", ""):gsub("%s+$", "")
  if s:find("^[&*!|>%%@`]") then
    return nil, "anchors, aliases, tags and block scalars are not supported", line
  end
  if s == "{}" then return dsforge.object({}) end
  if s == "[]" then return dsforge.array({}) end
  if s:find("^[%[{]") then return nil, "flow collections are not supported", line end
  if s == "" or s == "~" or s:lower() == "null" then return dsforge.null end
  local b = BOOL[s:lower()]
  if b ~= nil then return b end
  if s:find("^[-+]?%d+$") then return math.tointeger(tonumber(s)) or tonumber(s) end
  if s:find("^[-+]?%d*%.?%d+[eE][-+]?%d+$") or s:find("^[-+]?%d+%.%d*$")
    or s:find("^[-+]?%.%d+$") or s:find("^[-+]?%d*%.%d+[eE][-+]?%d+$") then
    return tonumber(s) + 0.0
  end
  return s
end

function M.parse(text)
  if type(text) ~= "string" then return nil, "not text", 0 end
  local lines = {}
  local n = 0
  for l in (text:gsub("\r\n", "\n") .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if l:find("\t") and l:match("^%s*"):find("\t") then
      return nil, "a tab in the indentation", n
    end
    local body = l:gsub("^%s+", "")
    if body == "---" and #lines == 0 then body = "" end
    if body == "..." or (body == "---" and #lines > 0) then
      return nil, "only one document is supported", n
    end
    if body ~= "" and body:sub(1, 1) ~= "#" then
      lines[#lines + 1] = { indent = #l - #body, text = body, n = n }
    end
  end
  local pos = 1
  local block
  -- A block at indentation `ind`: a mapping or a list.
  function block(ind)
    local first = lines[pos]
    if first.text:find("^%-%s") or first.text == "-" then
      local list = {}
      while lines[pos] and lines[pos].indent == ind and
        (lines[pos].text:find("^%-%s") or lines[pos].text == "-") do
        local l = lines[pos]
        local v, err, ln = scalar(l.text:sub(2), l.n)
        if err then return nil, err, ln end
        list[#list + 1] = v
        pos = pos + 1
      end
      return dsforge.array(list)
    end
    local map = {}
    while lines[pos] and lines[pos].indent == ind do
      local l = lines[pos]
      local key, rest = l.text:match("^([^:#'\"][^:]-):%s+(.*)$")
      if not key then key, rest = l.text:match("^([^:#'\"][^:]-):$"), "" end
      if not key then return nil, "expected 'key: value'", l.n end
      key = key:gsub("%s+$", "")
      if map[key] ~= nil then return nil, "duplicate key '" .. key .. "'", l.n end
      pos = pos + 1
      if rest:gsub("%s+#.*$", "") == "" then
        local nxt = lines[pos]
        if nxt and (nxt.indent > ind or (nxt.indent == ind and nxt.text:find("^%-"))) then
          local v, err, ln = block(nxt.indent)
          if err then return nil, err, ln end
          map[key] = v
        else
          map[key] = dsforge.null
        end
      else
        local v, err, ln = scalar(rest, l.n)
        if err then return nil, err, ln end
        map[key] = v
      end
    end
    if lines[pos] and lines[pos].indent > ind then
      return nil, "unexpected indentation", lines[pos].n
    end
    return map
  end
  if #lines == 0 then return dsforge.null end
  local v, err, ln = block(lines[1].indent)
  if err then return nil, err, ln end
  if lines[pos] then return nil, "unexpected indentation", lines[pos].n end
  return v
end

return M
