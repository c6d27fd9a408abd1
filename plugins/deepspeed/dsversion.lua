-- plugins/deepspeed/dsversion.lua -- which DeepSpeed release the facts come from.
--
-- The generated data in dsdata/ (contrib/dsknow/extract.py, one file per
-- covered release, plus index.lua) says which keys each release reads,
-- their defaults and constraints, and the constructors of its schedulers
-- and optimizers. Only index.lua and the chosen release's file are loaded.
--
--   M.resolve(spec)   -> rel, note | nil, err   spec "X.Y" or "X.Y.Z" or nil
--   M.data(rel)       -> the release's generated table (loaded once)
--   M.reads(rel, path)-> true when the release reads the dotted key path
--   M.span(path)      -> first, last covered release reading path, or nil
--                        (nil: every covered release reads it, or none)
--   M.cmp(a, b)       -> -1, 0, 1 for version strings
--   M.checked(ctx)    -> the release a rule or summary of ctx is for, and
--                        the version asked for (nil: none)
--   M.releases, M.newest

local index = require("deepspeed.dsdata.index")

local M = {}

M.releases = index.releases
-- dotted key -> { first, last } covered release reading it, for the keys
-- not read by every covered release (read-only; M.span reads it)
M.spans = index.span
M.newest = index.releases[#index.releases]

local function parse(v)
  local a, b, c = v:match("^(%d+)%.(%d+)%.?(%d*)$")
  if not a then return nil end
  return { tonumber(a), tonumber(b), c ~= "" and tonumber(c) or nil }
end

-- The parts of a version string, parsed once per string in a run (the
-- walk compares the chosen release with a key's span on every key of a
-- span, in every file). The tables are shared: read, never changed.
local parsed = {}
local function parts(v)
  local p = parsed[v]
  if p == nil then
    p = parse(v) or false
    parsed[v] = p
  end
  return p or nil
end

function M.cmp(x, y)
  local a, b = parts(x), parts(y)
  for i = 1, 3 do
    local p, q = a[i] or 0, b[i] or 0
    if p ~= q then return p < q and -1 or 1 end
  end
  return 0
end

-- The covered release for spec: exact, the newest patch of "X.Y", or the
-- nearest earlier one (with a note saying so).
function M.resolve(spec)
  if spec == nil or spec == "" then return M.newest, nil end
  local p = type(spec) == "string" and parts((spec:gsub("^v", "")))
  if not p then
    return nil, string.format("DeepSpeed version %q is not X.Y or X.Y.Z", tostring(spec))
  end
  spec = spec:gsub("^v", "")
  if p[3] == nil then
    local best
    for _, r in ipairs(index.releases) do
      local q = parts(r.version)
      if q[1] == p[1] and q[2] == p[2] then best = r end
    end
    if best then return best, nil end
    spec = spec .. ".0"
  end
  local best
  for _, r in ipairs(index.releases) do
    if M.cmp(r.version, spec) <= 0 then best = r end
  end
  if not best then
    return nil, string.format("DeepSpeed %s is older than the oldest covered release %s (covered: %s)",
      spec, index.releases[1].version, M.covered_text())
  end
  if best.version == spec then return best, nil end
  if best == M.newest and M.cmp(spec, best.version) > 0 then
    return best, string.format("DeepSpeed %s is newer than the newest covered release: using the facts of %s", spec, best.version)
  end
  return best, string.format("DeepSpeed %s is not a covered release: using the facts of %s, the nearest earlier one", spec, best.version)
end

-- The covered release a rule or summary of ctx is for, and the version
-- asked for: ctx.ds_version (--ds-version), else the profile's ds_version
-- param, else the newest (a bad one: the newest; schema_check reports it).
function M.checked(ctx)
  local spec = ctx and ctx.ds_version
  local params = ctx and ctx.params
  if spec == nil and type(params) == "table" and type(params.ds_version) == "string" then
    spec = params.ds_version
  end
  return M.resolve(spec) or M.newest, spec
end

function M.covered_text()
  local out = {}
  for i, r in ipairs(index.releases) do out[i] = r.version end
  return table.concat(out, ", ")
end

local loaded = {}
function M.data(rel)
  local d = loaded[rel.module]
  if not d then
    d = require("deepspeed.dsdata." .. rel.module)
    loaded[rel.module] = d
  end
  return d
end

function M.span(path)
  local s = index.span[path]
  if s then return s[1], s[2] end
  return nil
end

-- Does rel read path? Without loading the release's file when the index
-- answers (every covered release reads the key, or the span decides).
function M.reads(rel, path)
  local s = index.span[path]
  if s then
    return M.cmp(rel.version, s[1]) >= 0 and M.cmp(rel.version, s[2]) <= 0
  end
  return M.data(rel).keys[path] ~= nil
end

return M
