-- plugins/deepspeed/commands_doc.lua -- what the deepspeed plugin's
-- schema commands (explain, schema; declared in commands.lua) do when
-- they run: loaded by those commands only, so `estimate` does not undump
-- them, nor `explain` the estimate (commands_run.lua; issue 15). Each
-- M.<command>(opts, args, ctx) returns the text to print (or a table,
-- printed as JSON), or nil and an error table.

local M = {}

local function usage(msg, hint)
  return nil, { message = msg, hint = hint, kind = "usage" }
end

local LABELS = {
  en = { changed = "changed", default = "same as default", unknown = "not a DeepSpeed key",
         none = "no default", dword = "default", release = "not read by this release" },
  zh = { changed = "已修改", default = "同默认值", unknown = "DeepSpeed 不认识的键",
         none = "无默认值", dword = "默认", release = "该版本不读取" },
}

-- The covered release for ctx.ds_version (--ds-version or
-- $DSFORGE_DS_VERSION): the release, or nil and a usage error. A version
-- between covered releases uses the nearest earlier one, with a warning.
local function release_of(ctx)
  local dv = require("deepspeed.dsversion")
  local rel, note = dv.resolve(ctx.ds_version)
  if not rel then
    return nil, { message = note, hint = "covered releases: " .. dv.covered_text(), kind = "usage" }
  end
  if note then dsforge.warn(note) end
  return rel, ctx.ds_version ~= nil
end

-- A FILE argument rather than a KEY: a path, a JSON file name, or a file.
local function is_path(ctx, s)
  return s:find("/", 1, true) ~= nil or s:match("%.jsonc?$") ~= nil or s:match("%.hjson$") ~= nil
    or ctx.is_file(s)
end

function M.explain(opts, args, ctx)
  local lang = opts.lang or "en"
  if lang ~= "en" and lang ~= "zh" then return usage("--lang must be 'en' or 'zh'") end
  if #args == 0 then return usage("explain needs a FILE or a KEY") end
  if #args > 1 then return usage("explain takes one FILE or KEY") end
  local rel, asked = release_of(ctx)
  if not rel then return nil, asked end
  local ex = require("deepspeed.explain")
  if not is_path(ctx, args[1]) then return ex.key(args[1], rel, lang) end
  local doc, err = ctx.read_json(args[1])
  if doc == nil then return nil, err end
  local L = LABELS[lang]
  local out = {}
  for _, r in ipairs(ex.rows(doc, lang, asked and rel or nil)) do
    local p = {}
    for _, k in ipairs(r.path) do
      if type(k) == "string" then
        p[#p + 1] = (#p > 0 and "." or "") .. k
      else
        p[#p + 1] = string.format("[%d]", k - 1)
      end
    end
    -- value_text: the plugin's text for a value with no exact JSON form
    -- (an integral number beyond 2^53)
    local v = r.value ~= nil and ctx.json(r.value) or r.value_text or "?"
    local status = r.status
    local label = status == "changed" and L.changed or status == "default" and L.default
      or status == "unknown" and L.unknown or status == "not-in-release" and L.release or L.none
    -- the default, unless there is none to name ("none"); a key with no
    -- fixed default but a rule for it shows only that ("default derived
    -- ...", not "no default; default derived ...")
    local dtext = r.default_text and r.default_text ~= "" and r.default_text ~= "none"
      and (L.dword .. " " .. r.default_text) or nil
    if dtext and label == L.none then
      label, dtext = dtext, nil
    end
    local line = table.concat(p) .. " = " .. v .. "  [" .. label
    if dtext then line = line .. "; " .. dtext end
    out[#out + 1] = line .. "]"
    if r.doc and r.doc ~= "" then out[#out + 1] = "    " .. r.doc end
    if r.value == "auto" then
      out[#out + 1] = "    " .. ex.auto_text(table.concat(p), r.hf_auto, lang)
    end
  end
  if #out == 0 then return "" end
  return table.concat(out, "\n") .. "\n"
end

function M.schema(opts, args, ctx)
  if #args > 0 then return usage("schema takes no arguments") end
  local draft = opts.draft or "2020-12"
  if draft ~= "2020-12" and draft ~= "07" then
    return usage("--draft must be '2020-12' or '07'")
  end
  local rel, asked = release_of(ctx)
  if not rel then return nil, asked end
  return require("deepspeed.jsonschema").generate(asked and rel or nil, draft)
end

return M
