-- launch.quote: the one sh quoting function and the one YAML quoting
-- function every renderer uses.
--
-- API
--   M.sh(word)      -> the word as one POSIX sh word: unchanged when it is
--                      made only of [A-Za-z0-9_@%+=:,./-] (and not empty),
--                      else in single quotes with each ' written '\''.
--                      Inside single quotes nothing is special: $(...),
--                      backticks, \, newlines and non-ASCII bytes stay as
--                      they are. Raises on a NUL byte (no sh word holds one).
--   M.sh_words(list) -> the words quoted and joined by single spaces
--   M.yaml(s)       -> a YAML double-quoted scalar: \ and " escaped,
--                      control characters as \n \t \r or \xNN, the C1
--                      range, U+2028/U+2029 and U+FEFF as \uXXXX (what a
--                      YAML 1.1 reader such as PyYAML refuses raw or folds);
--                      other UTF-8 text kept. Raises on invalid UTF-8 (YAML
--                      text is Unicode).
--   M.split(s)      -> the words of a command line written as for sh, or
--                      nil, message: blanks separate words; '...' keeps
--                      everything; "..." keeps everything but \ before
--                      $ ` " \ and newline; \ outside quotes keeps the
--                      next character. Nothing is expanded: an unquoted
--                      $ ` ; & | < > ( ) { } * ? [ ~ or # is refused (~ and
--                      # only at a word's start), so a word is never
--                      silently other than what a shell would have made.

local type, error, string, table, utf8, ipairs, math = type, error, string, table, utf8, ipairs, math

local M = {}

-- Quoted words, kept: the same flags and paths recur in every variant.
-- Bounded memories of quoted words: full, one starts again (the recent
-- words are the ones that recur: a variant's paths in its several files,
-- a sweep's flags variant after variant).
local function memory() return { t = {}, n = 0 } end
local function remember(m, k, v)
  if m.n >= 4096 then m.t, m.n = {}, 0 end
  m.t[k] = v
  m.n = m.n + 1
end

local sh_memory = memory()

function M.sh(word)
  local q = sh_memory.t[word]
  if q then return q end
  if type(word) ~= "string" then
    if type(word) == "number" then word = string.format(math.type(word) == "integer"
      and "%d" or "%.17g", word)
    else
      error("launch.quote.sh: a word must be a string or a number, got " .. type(word), 2)
    end
  end
  if word:find("\0", 1, true) then
    error("launch.quote.sh: a shell word cannot contain a NUL byte", 2)
  end
  -- (Anchored "all of the set": the class is read once per word, not once
  -- per character as a search for the complement does.)
  if word:find("^[%w_@%%+=:,./-]+$") then q = word
  else q = "'" .. word:gsub("'", "'\\''") .. "'" end
  if #word <= 256 then remember(sh_memory, word, q) end
  return q
end

function M.sh_words(list)
  local out = {}
  for i, w in ipairs(list) do out[i] = M.sh(w) end
  return table.concat(out, " ")
end

local ESC = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\t"] = "\\t",
  ["\r"] = "\\r", ["\0"] = "\\0" }

local yaml_memory = memory()

function M.yaml(s)
  local q = yaml_memory.t[s]
  if q then return q end
  if type(s) ~= "string" then
    error("launch.quote.yaml: expected a string, got " .. type(s), 2)
  end
  -- Printable ASCII without \ and ": as it is (most values). One scan: the
  -- set is ] to ~, space, !, # to [ (a leading ] is literal in a set).
  if s:find("^[]-~ !#-[]*$") then
    q = '"' .. s .. '"'
    if #s <= 64 then remember(yaml_memory, s, q) end
    return q
  end
  -- ASCII whose only control characters are \n, \t and \r (a JSON text):
  -- those and \ and " escaped in one pass.
  if not s:find("[\0-\8\11\12\14-\31\127-\255]") then
    return '"' .. s:gsub('[\\"\n\t\r]', ESC) .. '"'
  end
  if not utf8.len(s) then
    error("launch.quote.yaml: the text is not valid UTF-8: " .. string.format("%q", s), 2)
  end
  local out = {}
  for _, c in utf8.codes(s) do
    local ch = utf8.char(c)
    if ESC[ch] then out[#out + 1] = ESC[ch]
    elseif c < 0x20 or c == 0x7f then out[#out + 1] = string.format("\\x%02X", c)
    elseif (c >= 0x80 and c <= 0x9f) or c == 0x2028 or c == 0x2029 or c == 0xfeff
      or c == 0xfffe or c == 0xffff then
      out[#out + 1] = string.format("\\u%04X", c)
    else out[#out + 1] = ch end
  end
  return '"' .. table.concat(out) .. '"'
end

-- M.train_command(text, param, who) -> words, quoted: the training
-- command the launch files run (gen --train-cmd's text, else the profile's
-- train_cmd param), split as sh would and quoted again; who (e.g. "the
-- launch emitter") names the caller in the error when there is none. A
-- missing, empty or unsplittable command is the user's error
-- (dsforge.fail). The last one is kept: every variant of a run, and every
-- emitter, has the same command.
local last_cmd = {}

function M.train_command(text, param, who)
  local from = "--train-cmd"
  if text == nil and param ~= nil then text, from = param, "the train_cmd param" end
  if text == nil then
    dsforge.fail(who .. " needs the training command (the script and its arguments):"
      .. " gen --train-cmd 'train.py --my-flag', or a train_cmd param in the profile", 0)
  end
  text = tostring(text)
  if last_cmd.text == text then return last_cmd.words, last_cmd.quoted end
  local words, err = M.split(text)
  if not words then dsforge.fail(from .. ": " .. err, 0) end
  if #words == 0 then dsforge.fail(from .. " is empty", 0) end
  last_cmd = { text = text, words = words, quoted = M.sh_words(words) }
  return words, last_cmd.quoted
end

local SPECIAL = "[$`;&|<>(){}*?%[~#]"

function M.split(s)
  if type(s) ~= "string" then return nil, "a command must be a string" end
  if s:find("\0", 1, true) then return nil, "a command cannot contain a NUL byte" end
  local words, cur, i, n = {}, nil, 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == " " or c == "\t" or c == "\n" then
      if cur then words[#words + 1] = cur; cur = nil end
      i = i + 1
    elseif c == "'" then
      local j = s:find("'", i + 1, true)
      if not j then return nil, "unterminated ' at character " .. i end
      cur = (cur or "") .. s:sub(i + 1, j - 1)
      i = j + 1
    elseif c == '"' then
      local part, j = {}, i + 1
      while true do
        if j > n then return nil, 'unterminated " at character ' .. i end
        local d = s:sub(j, j)
        if d == '"' then break end
        if d == "\\" and s:sub(j + 1, j + 1):find('^[$`"\\\n]') then
          if s:sub(j + 1, j + 1) ~= "\n" then part[#part + 1] = s:sub(j + 1, j + 1) end
          j = j + 2
        elseif d == "$" or d == "`" then
          return nil, "unescaped " .. d .. " inside \"...\" at character " .. j
            .. " (nothing is expanded: use '...' or \\" .. d .. ")"
        else
          part[#part + 1] = d
          j = j + 1
        end
      end
      cur = (cur or "") .. table.concat(part)
      i = j + 1
    elseif c == "\\" then
      if i == n then return nil, "a trailing \\" end
      local d = s:sub(i + 1, i + 1)
      if d ~= "\n" then cur = (cur or "") .. d end
      i = i + 2
    elseif c:find(SPECIAL) and not (c == "#" and cur) and not (c == "~" and cur) then
      return nil, "unquoted " .. c .. " at character " .. i
        .. " (nothing is expanded or redirected: quote it, '" .. c .. "')"
    else
      cur = (cur or "") .. c
      i = i + 1
    end
  end
  if cur then words[#words + 1] = cur end
  return words
end

return M
