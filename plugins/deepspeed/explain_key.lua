-- plugins/deepspeed/explain_key.lua -- `explain KEY` (explain.lua's
-- M.key): what a key means, its type and default in a release and in
-- every covered one. Kept apart from explain.lua so that `explain FILE`
-- does not load it (issue 15).

local schema = require("deepspeed.schema")
local sc = require("deepspeed.schema_util")
local dv = require("deepspeed.dsversion")
local M = require("deepspeed.explain")
local lang_of = M.lang_of

local at = setmetatable({}, { __index = function(t, k)
  local m = require("deepspeed.atrelease")
  setmetatable(t, { __index = m })
  return m[k]
end })

local K = {}

local KEY_WORDS = {
  en = { type = "type", default = "default", none = "none", computed = "computed in code",
         per = "per covered release:", read = "read", notread = "not read", reads = "reads %s",
         alias = "alias %s", deprecated = "deprecated, replaced by %s", chosen = "the release explained",
         notkey = "%s is not a DeepSpeed key: no covered release (%s) reads it",
         badpath = "'%s' is not a key path (key names separated by '.')",
         mean = "did you mean \"%s\"?", choose = "choose a release that reads it: --ds-version %s",
         renamed = "DeepSpeed renamed it to %s in %s" },
  zh = { type = "类型", default = "默认", none = "无", computed = "由代码计算",
         per = "各已覆盖版本：", read = "读取", notread = "不读取", reads = "读取 %s",
         alias = "别名 %s", deprecated = "已弃用，由 %s 取代", chosen = "所解释的版本",
         notkey = "%s 不是 DeepSpeed 的配置键：没有已覆盖版本（%s）读取它",
         badpath = "'%s' 不是键路径（键名以 '.' 分隔）",
         mean = "是否想写 \"%s\"？", choose = "请选择读取它的版本：--ds-version %s",
         renamed = "DeepSpeed 在 %s 中将其改名为 %s" },
}

local function fact_default(fact, W)
  local d = fact.d
  if d == nil or d == dsforge.null then return W.none end
  if d == "<expr>" then return W.computed end
  return sc.format_value(d)
end

-- The field of parent whose renamed_from names key, as "name", "since".
local function renamed_to(parent, key)
  for _, name in ipairs(dsforge.sorted_keys(parent and parent.fields or {})) do
    local r = parent.fields[name].renamed_from
    if r and r.key == key then return name, r.since end
  end
  return nil
end

-- explain KEY: what the key means, its type and default in release rel,
-- the releases that read it (since/until/renamed from) and its default in
-- each covered release. A key rel does not read is an error naming the
-- first (or last) covered release that does. Returns the text, or nil and
-- an error table {message, hint, kind}.
function K.key(text, rel, lang)
  lang = lang_of(lang)
  local W = KEY_WORDS[lang]
  local parts = {}
  for k in (text .. "."):gmatch("([^.]*)%.") do
    if k == "" then return nil, { message = W.badpath:format(text), kind = "usage" } end
    parts[#parts + 1] = k
  end
  -- canonical names (aliases allowed) through the hand-written schema
  local node, parent, canon = schema.root, nil, {}
  for i, k in ipairs(parts) do
    parent = node
    local f, c = nil, nil
    if node then f, c = sc.lookup(node, k) end
    node, canon[i] = f, c or k
  end
  local dp = table.concat(canon, ".")
  local known = node ~= nil
  for _, r in ipairs(dv.releases) do
    if known then break end
    known = dv.data(r).keys[dp] ~= nil
  end
  local prefix = #parts > 1 and (table.concat(canon, ".", 1, #parts - 1) .. ".") or ""
  if not known then
    local cands = {}
    if parent and parent.fields then
      for _, name in ipairs(dsforge.sorted_keys(parent.fields)) do cands[#cands + 1] = name end
    end
    local s = sc.suggest(parts[#parts], cands)
    return nil, { message = W.notkey:format(text, dv.covered_text()),
      hint = s and W.mean:format(prefix .. s) or nil, kind = "usage" }
  end
  local st, sdp, first, last = at.status(rel, canon)
  if st ~= "read" then
    local hint
    local new, since = renamed_to(parent, parts[#parts])
    if new then
      hint = lang == "zh" and W.renamed:format(since, prefix .. new) or W.renamed:format(prefix .. new, since)
    elseif st == "not-yet" and first and dv.resolve(first) and dv.cmp(first, dv.newest.version) <= 0 then
      hint = W.choose:format(first)
    elseif st == "no-longer" and last then
      hint = W.choose:format(last)
    end
    return nil, { message = M.release_text(rel, st, sdp, first, last, lang), hint = hint, kind = "usage" }
  end
  local out = { string.format("%s  (DeepSpeed %s)", dp, rel.version) }
  if node and node.doc then out[#out + 1] = "    " .. sc.text(node.doc, lang) end
  local fact = at.fact(rel, dp)
  local ty = fact and fact.t
  if not ty and node then ty = table.concat(sc.types_of(node), "|") end
  local dtext
  if fact and fact.d ~= nil then dtext = fact_default(fact, W)
  elseif node then dtext = sc.default_text(node, lang) end
  local facts = {}
  if ty then facts[#facts + 1] = W.type .. " " .. ty end
  if dtext then facts[#facts + 1] = W.default .. " " .. dtext end
  if fact and fact.alias then facts[#facts + 1] = W.alias:format(fact.alias) end
  if fact and fact.deprecated and fact.new then facts[#facts + 1] = W.deprecated:format(fact.new) end
  if #facts > 0 then out[#out + 1] = "    " .. table.concat(facts, "; ") end
  -- what "auto" becomes, where the Hugging Face Trainer fills it
  if node and node.hf_auto and (node.hf_auto_key == nil or node.hf_auto_key == parts[#parts]) then
    out[#out + 1] = "    " .. M.auto_text(prefix .. parts[#parts], true, lang)
  end
  local vt = M.versions_text(canon, node, lang)
  if vt then out[#out + 1] = "    " .. vt end
  out[#out + 1] = "    " .. W.per
  local old = node and node.renamed_from and node.renamed_from.key
  for _, r in ipairs(dv.releases) do
    local line
    if at.status(r, canon) == "read" then
      local f = at.fact(r, dp)
      line = f and (W.default .. " " .. fact_default(f, W)) or W.read
      if f and f.alias then line = line .. "; " .. W.alias:format(f.alias) end
      if f and f.deprecated and f.new then line = line .. "; " .. W.deprecated:format(f.new) end
    else
      line = W.notread
      if old and dv.data(r).keys[prefix .. old] then line = line .. " (" .. W.reads:format(prefix .. old) .. ")" end
    end
    out[#out + 1] = string.format("    %s %-7s %s%s", r == rel and "*" or " ", r.version, line,
      r == rel and ("  <- " .. W.chosen) or "")
  end
  return table.concat(out, "\n") .. "\n"
end

return K
