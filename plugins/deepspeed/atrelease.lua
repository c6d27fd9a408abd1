-- plugins/deepspeed/atrelease.lua -- the hand-written schema seen at one
-- covered DeepSpeed release: whether the release reads a key, its default
-- there, whether a section rejects unknown keys there, and the keys it
-- reads that the (newest) hand-written schema does not have. The facts are
-- the generated ones (dsdata/, through deepspeed.dsversion); explain and
-- schema use them for --ds-version.
--
--   M.status(rel, parts)   -> "read" | "not-yet" | "no-longer" | "never",
--                             dotted path of the key (or ancestor) that
--                             decides, first release reading it, last one
--   M.fact(rel, dp)        -> the release's generated entry for dp, or nil
--   M.default(rel, dp)     -> the release's default for dp (nil: none known)
--   M.strict(rel, sp)      -> true/false when the release says, else nil
--   M.extra_keys(rel, sp, node) -> sorted keys the release reads directly
--                             under section sp that node does not declare

local dv = require("deepspeed.dsversion")
local sc = require("deepspeed.schema_util")
local schema = require("deepspeed.schema")

local M = {}

local NULL = dsforge.null

-- Status of one dotted key (its own facts only).
local function own_status(rel, dp, node)
  local first, last = dv.span(dp)
  if first then
    if dv.cmp(rel.version, first) < 0 then return "not-yet", first, last end
    if dv.cmp(rel.version, last) > 0 then return "no-longer", first, last end
    return "read", first, last
  end
  if node and node.unreleased then return "never" end
  if node and node.since and dv.cmp(rel.version, node.since) < 0
     and not dv.data(rel).keys[dp] then
    return "not-yet", node.since
  end
  return "read"
end

-- parts: canonical field names from the top level. A key is read only
-- when every section above it is.
function M.status(rel, parts)
  local node = schema.root
  local prefix = {}
  for _, k in ipairs(parts) do
    node = node and sc.lookup(node, k) or nil
    prefix[#prefix + 1] = k
    local dp = table.concat(prefix, ".")
    local st, first, last = own_status(rel, dp, node)
    if st ~= "read" then return st, dp, first, last end
  end
  return "read"
end

function M.fact(rel, dp)
  return dv.data(rel).keys[dp]
end

function M.default(rel, dp)
  local f = dv.data(rel).keys[dp]
  local d = f and f.d
  if d == nil or d == NULL or d == "<expr>" then return nil end
  return d
end

function M.strict(rel, sp)
  return dv.data(rel).strict[sp]
end

function M.extra_keys(rel, sp, node)
  local out = {}
  local keys = dv.data(rel).keys
  pairs(keys) -- the built-in facts load a section's keys when first read: all of them
  local prefix = sp == "" and "" or (sp .. ".")
  for _, dp in ipairs(dsforge.sorted_keys(keys)) do
    if dp:sub(1, #prefix) == prefix then
      local k = dp:sub(#prefix + 1)
      if not k:find(".", 1, true) and not (node and sc.lookup(node, k)) then
        out[#out + 1] = k
      end
    end
  end
  return out
end

return M
