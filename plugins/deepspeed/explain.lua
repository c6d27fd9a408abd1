-- Explains every key of a DeepSpeed config: meaning, default and whether the
-- value differs from DeepSpeed's default, in English or Chinese.

local schema = require("deepspeed.schema")
local sc = require("deepspeed.schema_util")

local M = {}

local UNKNOWN_DOC = {
  en = "Not a DeepSpeed key (DeepSpeed ignores it, or rejects it inside a pydantic section).",
  zh = "不是 DeepSpeed 的配置键（DeepSpeed 会忽略它；在 pydantic 配置段中会拒绝它）。",
}
-- A top-level "$schema": an editor's schema reference (schema --draft 07).
local SCHEMA_REF_DOC = {
  en = "The JSON Schema editors use for this file (dsforge schema --draft 07); DeepSpeed ignores it.",
  zh = "编辑器为此文件使用的 JSON Schema（dsforge schema --draft 07）；DeepSpeed 会忽略它。",
}
local FREE_DOC = {
  en = "Free-form entry passed through by DeepSpeed.",
  zh = "自由格式的条目，由 DeepSpeed 原样传递。",
}

local function lang_of(lang)
  if lang == "zh" then return "zh" end
  return "en"
end
M.lang_of = lang_of

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

-- A release's view (explain --ds-version, explain KEY): loaded on first use.
local at = setmetatable({}, { __index = function(t, k)
  local m = require("deepspeed.atrelease")
  setmetatable(t, { __index = m })
  return m[k]
end })

-- Why release rel does not read dp (M.status's answer), in words.
function M.release_text(rel, st, dp, first, last, lang)
  local zh = lang == "zh"
  if st == "not-yet" then
    if first and dv.cmp(first, dv.newest.version) > 0 then
      return (zh and "DeepSpeed %s 尚不读取 %s：%s 起才有" or
        "DeepSpeed %s does not read %s yet: it first appears in %s"):format(rel.version, dp, first)
    end
    return (zh and "DeepSpeed %s 尚不读取 %s：最早读取它的已覆盖版本是 %s" or
      "DeepSpeed %s does not read %s yet: the first covered release that reads it is %s"):format(rel.version, dp, first)
  elseif st == "no-longer" then
    return (zh and "DeepSpeed %s 已不再读取 %s：最后读取它的已覆盖版本是 %s" or
      "DeepSpeed %s no longer reads %s: the last covered release that reads it is %s"):format(rel.version, dp, last)
  end
  return (zh and "截至 DeepSpeed %s 没有发布版读取 %s" or
    "no DeepSpeed release up to %s reads %s"):format(dv.newest.version, dp)
end

-- What "auto" becomes, per target: filled by the Hugging Face Trainer at
-- target hf (with what, from deepspeed.hf_auto), never by DeepSpeed.
local AUTO = {
  en = { filled = "\"auto\": at target hf the Hugging Face Trainer (or accelerate) replaces it with %s;"
           .. " plain DeepSpeed (target deepspeed) does not, and fails on the string or drops it"
           .. " ('dsforge check' says which)",
         kept = "\"auto\": neither the Hugging Face Trainer (target hf) nor plain DeepSpeed (target"
           .. " deepspeed) replaces it here: DeepSpeed sees the string ('dsforge check' says what it"
           .. " does with it)",
         some = "a value of its own" },
  zh = { filled = "\"auto\"：目标 hf 时 Hugging Face Trainer（或 accelerate）将其替换为 %s；"
           .. "纯 DeepSpeed（目标 deepspeed）不替换，会因该字符串报错或丢弃它（'dsforge check' 会说明是哪种）",
         kept = "\"auto\"：Hugging Face Trainer（目标 hf）和纯 DeepSpeed（目标 deepspeed）都不会在此替换它："
           .. "DeepSpeed 看到的是该字符串（'dsforge check' 会说明其后果）",
         some = "它自己算出的值" },
}

-- The line explain prints for an "auto" value at the dotted path (hf_auto:
-- the Trainer fills it there).
function M.auto_text(path, hf_auto, lang)
  lang = lang_of(lang)
  local A = AUTO[lang]
  if not hf_auto then return A.kept end
  for _, k in ipairs(require("deepspeed.hf_auto")) do
    if k.path == path then return string.format(A.filled, k.description) end
  end
  return string.format(A.filled, A.some)
end

-- Rows for every key present in cfg, in sorted path order. With rel (a
-- release asked for with --ds-version), defaults are that release's and a
-- key it does not read has the status "not-in-release".
function M.rows(cfg, lang, rel)
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
        -- the Hugging Face Trainer fills "auto" here (under this spelling)
        row.hf_auto = f.hf_auto == true and (f.hf_auto_key == nil or f.hf_auto_key == key)
        if rel and canonical then
          p[#p] = canonical
          M.at_release(row, rel, p, f, v, lang)
          p[#p] = key
        end
        if f.fields or f.type == "map" then
          child_node = f
          child_free = f.open == true or (f.type == "map" and f.values == nil)
        else
          child_free = true
        end
      elseif #p == 1 and key == "$schema" then
        row.doc = SCHEMA_REF_DOC[lang]
        row.default_text = "none"
        row.status = "no-default"
        child_free = true
      elseif free or (node and (node.open or node.type == "map")) then
        row.doc = FREE_DOC[lang]
        row.default_text = "none"
        row.status = "no-default"
        child_free = true
      else
        row.doc = UNKNOWN_DOC[lang]
        row.default_text = "none"
        row.status = "unknown"
        if rel then M.release_only(row, rel, p, v, lang) end
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

-- The release's view of a row: its default there, and whether it reads
-- the key at all.
function M.at_release(row, rel, p, f, v, lang)
  for _, x in ipairs(p) do
    if type(x) ~= "string" then return end
  end
  local d = at.default(rel, table.concat(p, "."))
  if d ~= nil and json_safe(d) then
    row.default, row.default_text = d, sc.format_value(d)
    row.status = sc.values_equal(v, d, f.case_insensitive) and "default" or "changed"
  end
  local st, dp, first, last = at.status(rel, p)
  if st ~= "read" then
    row.status = "not-in-release"
    row.default, row.default_text = nil, "none"
    row.doc = (row.doc or "") .. " [" .. M.release_text(rel, st, dp, first, last, lang) .. "]"
  end
end

local RELEASE_ONLY_DOC = {
  en = "Read by DeepSpeed %s (a key the hand-written schema, written for the newest DeepSpeed, does not have).",
  zh = "DeepSpeed %s 读取此键（按最新 DeepSpeed 编写的手写 schema 中没有它）。",
}

-- A key the hand-written schema does not have that release rel reads
-- (an old name such as seq_parallel_comm_data_type at 0.14.5).
function M.release_only(row, rel, p, v, lang)
  for _, x in ipairs(p) do
    if type(x) ~= "string" then return end
  end
  local fact = at.fact(rel, table.concat(p, "."))
  if not fact then return end
  row.doc = RELEASE_ONLY_DOC[lang]:format(rel.version)
  local d = fact.d
  if d ~= nil and d ~= dsforge.null and d ~= "<expr>" and json_safe(d) then
    row.default, row.default_text = d, sc.format_value(d)
    row.status = sc.values_equal(v, d, false) and "default" or "changed"
  else
    row.status = "no-default"
  end
end

-- The doc of the schema node at path (field names or aliases), or nil.
function M.section_doc(path, lang)
  if type(path) ~= "table" then return nil end
  local node
  if #path == 0 then node = schema.root else node = sc.resolve(path) end
  if not node or not node.doc then return nil end
  return sc.text(node.doc, lang_of(lang))
end

-- explain KEY (explain_key.lua, loaded when a key is explained: an
-- explain FILE does not undump it, issue 15). A tail call, so an error's
-- level names the caller as before.
function M.key(text, rel, lang)
  return require("deepspeed.explain_key").key(text, rel, lang)
end

return M
