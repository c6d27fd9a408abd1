-- launch.py: Python's view of JSON values, for reproducing what the HF
-- Trainer and accelerate print and compare.
--
-- API
--   M.eq(a, b)      Python == between two JSON values (1 == 1.0, True == 1,
--                   lists element-wise, dicts key-wise; None only == None)
--   M.str(v)        Python str() of a JSON value (as an f-string prints it)
--   M.num(x)        Python repr() of a number (5e-05, 0.0001, 1.0, 100)
--   M.is_array(v), M.is_object(v)

local type, rawget, next, tostring, tonumber, ipairs = type, rawget, next, tostring, tonumber, ipairs
local math, string, table = math, string, table
local dsforge = dsforge
local NULL = dsforge.null

local M = {}

function M.is_array(v)
  if type(v) ~= "table" or v == NULL or v == dsforge.delete then return false end
  if rawget(v, 1) ~= nil then return true end
  return next(v) == nil and dsforge.kind(v) == "array"
end

function M.is_object(v)
  if type(v) ~= "table" or v == NULL or v == dsforge.delete then return false end
  return not M.is_array(v)
end

-- repr(float): the shortest digits that read back as x; exponent form when
-- the decimal exponent is < -4 or >= 16 (Python's float_repr_style 'short').
local num_cache, num_cached = {}, 0
local function num(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  local e
  for p = 0, 16 do
    e = string.format("%." .. p .. "e", x)
    if tonumber(e) == x then break end
  end
  local sign, int, frac, exp = e:match("^(-?)(%d)%.?(%d*)e([-+]%d+)$")
  exp = tonumber(exp)
  local digits = (int .. frac):gsub("0+$", "")
  if digits == "" then digits = "0" end
  if exp < -4 or exp >= 16 then
    local mant = digits:sub(1, 1)
    if #digits > 1 then mant = mant .. "." .. digits:sub(2) end
    return string.format("%s%se%s%02d", sign, mant, exp < 0 and "-" or "+", math.abs(exp))
  end
  if exp < 0 then
    return sign .. "0." .. string.rep("0", -exp - 1) .. digits
  end
  if #digits <= exp + 1 then
    return sign .. digits .. string.rep("0", exp + 1 - #digits) .. ".0"
  end
  return sign .. digits:sub(1, exp + 1) .. "." .. digits:sub(exp + 2)
end

-- (Memoised: a sweep prints the same few floats thousands of times; the
-- cache is bounded so a hostile input cannot grow it without limit.)
function M.num(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  local s = num_cache[x]
  if s then return s end
  s = num(x)
  if x == x and num_cached < 4096 then
    num_cache[x] = s
    num_cached = num_cached + 1
  end
  return s
end

function M.eq(a, b)
  if a == NULL or b == NULL then return a == b end
  local ta, tb = type(a), type(b)
  if ta == "boolean" and tb == "number" then return (a and 1 or 0) == b end
  if ta == "number" and tb == "boolean" then return a == (b and 1 or 0) end
  if ta ~= tb then return false end
  if ta ~= "table" then return a == b end
  if M.is_array(a) ~= M.is_array(b) then return false end
  if M.is_array(a) then
    if #a ~= #b then return false end
    for i = 1, #a do if not M.eq(a[i], b[i]) then return false end end
    return true
  end
  for _, k in ipairs(dsforge.sorted_keys(a)) do
    if b[k] == nil or not M.eq(a[k], b[k]) then return false end
  end
  for _, k in ipairs(dsforge.sorted_keys(b)) do
    if a[k] == nil then return false end
  end
  return true
end

local function repr(v)
  if type(v) == "string" then return "'" .. v .. "'" end
  return M.str(v)
end

function M.str(v)
  if v == NULL or v == nil then return "None" end
  if v == true then return "True" end
  if v == false then return "False" end
  if type(v) == "number" then return M.num(v) end
  if type(v) == "string" then return v end
  if type(v) == "table" then
    local parts = {}
    if M.is_array(v) then
      for i = 1, #v do parts[#parts + 1] = repr(v[i]) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    for _, k in ipairs(dsforge.sorted_keys(v)) do
      parts[#parts + 1] = "'" .. tostring(k) .. "': " .. repr(v[k])
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

return M
