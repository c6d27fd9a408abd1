-- Explains every key of a DeepSpeed config: meaning, default and whether the
-- value differs from DeepSpeed's default, in English or Chinese.

local schema = require("deepspeed.schema")
local sc = require("deepspeed.schema_check")

local M = {}

local UNKNOWN_DOC = {
  en = "Not a DeepSpeed key (DeepSpeed ignores it, or rejects it inside a pydantic section).",
  zh = "不是 DeepSpeed 的配置键（DeepSpeed 会忽略它；在 pydantic 配置段中会拒绝它）。",
}
local FREE_DOC = {
  en = "Free-form entry passed through by DeepSpeed.",
  zh = "自由格式的条目，由 DeepSpeed 原样传递。",
}

local function lang_of(lang)
  if lang == "zh" then return "zh" end
  return "en"
end

local function is_object(v)
  if type(v) ~= "table" or v == dsforge.null then return false end
  local k = dsforge.kind(v)
  return k == "object"
end

-- Whether v converts to JSON exactly (the host refuses integral numbers
-- beyond +-2^53, e.g. the default sys.maxsize of
-- model_persistence_threshold, or a value like 1e20 in the file).
local SAFE = 2^53
local function json_safe(v)
  if type(v) == "number" then
    return not (v == math.floor(v) and (v > SAFE or v < -SAFE))
  end
  if type(v) == "table" and v ~= dsforge.null then
    for _, k in ipairs(dsforge.sorted_keys(v)) do
      if not json_safe(v[k]) then return false end
    end
  end
  return true
end
M.json_safe = json_safe

local function status_of(node, v)
  if node.default == nil then return "no-default" end
  if sc.values_equal(v, node.default, node.case_insensitive) then return "default" end
  return "changed"
end

local dv = require("deepspeed.dsversion")

-- "since 0.16.9", "0.14.5 to 0.15.4", plus "renamed from X in V": which
-- covered DeepSpeed releases read the key (generated data, dsdata/), or nil
-- when every one does.
function M.versions_text(path, node, lang)
  for _, x in ipairs(path) do
    if type(x) ~= "string" then return nil end
  end
  local first, last = dv.span(table.concat(path, "."))
  local parts = {}
  local zh = lang == "zh"
  if first and last == dv.newest.version then
    parts[#parts + 1] = (zh and "自 DeepSpeed %s 起读取" or "read since DeepSpeed %s"):format(first)
  elseif first then
    parts[#parts + 1] = (zh and "仅 DeepSpeed %s 至 %s 读取" or "read by DeepSpeed %s to %s only"):format(first, last)
  elseif node and node.unreleased then
    parts[#parts + 1] = zh and "尚无 DeepSpeed 发布版读取" or "read by no DeepSpeed release yet"
  elseif node and node.since then
    parts[#parts + 1] = (zh and "自 DeepSpeed %s 起" or "since DeepSpeed %s"):format(node.since)
  end
  local r = node and node.renamed_from
  if r then
    parts[#parts + 1] = (zh and "%s 起由 %s 改名而来" or "renamed from %s in %s"):format(
      zh and r.since or r.key, zh and r.key or r.since)
  end
  if #parts == 0 then return nil end
  return table.concat(parts, "; ")
end

-- Rows for every key present in cfg, in sorted path order.
function M.rows(cfg, lang)
  lang = lang_of(lang)
  local rows = {}
  local function visit(tbl, node, path, free)
    for _, key in ipairs(dsforge.sorted_keys(tbl)) do
      local v = tbl[key]
      local p = {}
      for i, x in ipairs(path) do p[i] = x end
      p[#p + 1] = key
      local f, canonical
      if node then
        f, canonical = sc.lookup(node, key)
        if not f and node.type == "map" then f = node.values end
      end
      -- value_text stands in for value when value has no exact JSON form
      local row = { path = dsforge.array(p) }
      if json_safe(v) then row.value = v else row.value_text = sc.format_value(v) end
      local child_node, child_free = nil, false
      if f then
        row.doc = sc.text(f.doc, lang)
        if canonical then
          p[#p] = canonical
          local vt = M.versions_text(p, f, lang)
          p[#p] = key
          if vt then
            row.versions = vt
            row.doc = row.doc .. " [" .. vt .. "]"
          end
        end
        if json_safe(f.default) then row.default = f.default end
        row.default_text = sc.default_text(f, lang)
        row.status = status_of(f, v)
        if f.fields or f.type == "map" then
          child_node = f
          child_free = f.open == true or (f.type == "map" and f.values == nil)
        else
          child_free = true
        end
      elseif free or (node and (node.open or node.type == "map")) then
        row.doc = FREE_DOC[lang]
        row.default_text = "none"
        row.status = "no-default"
        child_free = true
      else
        row.doc = UNKNOWN_DOC[lang]
        row.default_text = "none"
        row.status = "unknown"
      end
      rows[#rows + 1] = row
      if is_object(v) then
        visit(v, child_node, p, child_free)
      end
    end
  end
  if is_object(cfg) then visit(cfg, schema.root, {}, false) end
  return rows
end

-- The doc of the schema node at path (field names or aliases), or nil.
function M.section_doc(path, lang)
  if type(path) ~= "table" then return nil end
  local node
  if #path == 0 then node = schema.root else node = sc.resolve(path) end
  if not node or not node.doc then return nil end
  return sc.text(node.doc, lang_of(lang))
end

return M
