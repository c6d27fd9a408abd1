-- plugins/deepspeed/jsonschema_editor.lua -- what `schema --draft 07`
-- adds to deepspeed.jsonschema's output for editors (VS Code's JSON
-- language service, SchemaStore): the draft-07 form of `deprecated`
-- (deprecationMessage), markdownDescription, enumDescriptions and
-- defaultSnippets for the common blocks. Loaded only for --draft 07, so
-- the 2020-12 schema stays as it was.

local sc = require("deepspeed.schema_util")

local M = {}

local NULL = dsforge.null
local A, O = dsforge.array, dsforge.object

M.DRAFT = "http://json-schema.org/draft-07/schema#"
-- The address SchemaStore serves the file under once the catalog entry
-- (contrib/schemastore/catalog-entry.json) is merged.
M.ID = "https://json.schemastore.org/deepspeed.json"

-- What each value of an enum means, by the key's dotted path; a
-- case-insensitive enum's spellings share the lower-case value's text.
local ENUM_DOCS = {
  ["zero_optimization.stage"] = {
    [0] = "Disabled: plain data parallelism, every rank holds everything.",
    [1] = "Optimizer states partitioned across data-parallel ranks.",
    [2] = "Optimizer states and gradients partitioned.",
    [3] = "Optimizer states, gradients and parameters partitioned.",
  },
  ["zero_optimization.offload_optimizer.device"] = {
    none = "No offload.", cpu = "Optimizer states in CPU memory.",
    nvme = "Optimizer states on NVMe (needs nvme_path).",
  },
  ["zero_optimization.offload_param.device"] = {
    none = "No offload.", cpu = "Parameters in CPU memory (ZeRO stage 3).",
    nvme = "Parameters on NVMe (ZeRO stage 3; needs nvme_path).",
  },
  ["checkpoint.tag_validation"] = {
    warn = "Warn when the ranks' checkpoint tags differ (default).",
    ignore = "Do not compare the tags.",
    fail = "Fail when the ranks' checkpoint tags differ.",
  },
  ["communication_data_type"] = {
    fp16 = "Communicate gradients in fp16.", bf16 = "Communicate gradients in bf16.",
    fp32 = "Communicate gradients in fp32.",
  },
  ["seq_parallel_communication_data_type"] = {
    fp16 = "Sequence-parallel communication in fp16.", bf16 = "Sequence-parallel communication in bf16.",
    fp32 = "Sequence-parallel communication in fp32.",
  },
  ["gradient_allreduce_op"] = {
    sum = "Reduce gradients across ranks by summing.", mean = "Reduce gradients across ranks by averaging.",
  },
  ["scheduler.params.warmup_type"] = {
    log = "Logarithmic warm-up (default).", linear = "Linear warm-up.",
  },
}
local NULL_DOC = "null: not set (DeepSpeed's default applies)."

-- The schema nodes of ENUM_DOCS, made once: node -> value texts.
local by_node
local function enum_docs_of(node)
  if not by_node then
    by_node = {}
    for path, docs in pairs(ENUM_DOCS) do
      local parts = {}
      for k in path:gmatch("[^.]+") do parts[#parts + 1] = k end
      local n = sc.resolve(parts)
      if n then by_node[n] = docs end
    end
  end
  return by_node[node]
end

-- enumDescriptions for s.enum (set from node), one text per value.
function M.enum_descriptions(s, node)
  local docs = enum_docs_of(node)
  if not (docs and s.enum) then return end
  local out = {}
  for i, v in ipairs(s.enum) do
    local d = type(v) == "string" and docs[v:lower()] or docs[v]
    out[i] = d or ""
  end
  s.enumDescriptions = A(out)
end

-- After the enum of a nullable node gained null.
function M.enum_null_added(s)
  if s.enumDescriptions then table.insert(s.enumDescriptions, NULL_DOC) end
end

-- Markdown with the text's own characters kept literal.
local function md(text)
  return (text:gsub("([\\`*_%[%]<>])", "\\%1"))
end

-- The replacement a deprecated node names, in words.
local function deprecation_text(node)
  local dep = node.deprecated
  local msg = "Deprecated"
  if type(dep) == "table" and dep.replacement then
    msg = msg .. ": use " .. dep.replacement .. " instead"
  end
  if type(dep) == "table" and dep.note then msg = msg .. " (" .. sc.text(dep.note, "en") .. ")" end
  return msg .. "."
end

-- The draft-07 and VS Code form of s, the schema of node as key's value
-- (key nil for array items and map values).
function M.annotate(s, node, key)
  local parts = {}
  if node.deprecated then
    s.deprecated = nil -- a 2019-09 keyword; VS Code reads deprecationMessage
    s.deprecationMessage = deprecation_text(node)
    parts[#parts + 1] = "**" .. md(s.deprecationMessage) .. "**"
  end
  if s.description and s.description ~= "" then parts[#parts + 1] = md(s.description) end
  if s.default ~= nil then
    parts[#parts + 1] = "Default: `" .. sc.format_value(s.default) .. "`"
  end
  if s.anyOf and key ~= nil then
    for _, alt in ipairs(s.anyOf) do
      if alt.const == "auto" then
        parts[#parts + 1] = "`\"auto\"`: filled by the Hugging Face Trainer/Accelerate (not by plain DeepSpeed)."
      end
    end
  end
  if #parts > 0 then s.markdownDescription = table.concat(parts, "\n\n") end
end

-- The common blocks, offered when a value is completed for the key.
local SNIPPETS = {
  zero_optimization = {
    { label = "ZeRO stage 2", description = "Optimizer states and gradients partitioned",
      body = O { stage = 2, overlap_comm = true, contiguous_gradients = true, reduce_scatter = true,
                 reduce_bucket_size = 500000000, allgather_bucket_size = 500000000 } },
    { label = "ZeRO stage 3", description = "Optimizer states, gradients and parameters partitioned",
      body = O { stage = 3, overlap_comm = true, contiguous_gradients = true,
                 stage3_gather_16bit_weights_on_model_save = true } },
    { label = "ZeRO stage 3, CPU offload", description = "ZeRO-3 with optimizer states and parameters in CPU memory",
      body = O { stage = 3, overlap_comm = true, contiguous_gradients = true,
                 offload_optimizer = O { device = "cpu", pin_memory = true },
                 offload_param = O { device = "cpu", pin_memory = true },
                 stage3_gather_16bit_weights_on_model_save = true } },
  },
  bf16 = {
    { label = "bf16 enabled", description = "bf16 mixed precision (Ampere or newer GPUs)",
      body = O { enabled = true } },
  },
  optimizer = {
    { label = "AdamW", description = "DeepSpeed's fused AdamW (set lr for your model)",
      body = O { type = "AdamW",
                 params = O { lr = 0.0001, betas = A { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0.01 } } },
  },
  scheduler = {
    { label = "WarmupDecayLR", description = "Warm-up, then linear decay to 0 (set total_num_steps)",
      body = O { type = "WarmupDecayLR",
                 params = O { warmup_min_lr = 0, warmup_max_lr = 0.0001, warmup_num_steps = 1000,
                              total_num_steps = 10000 } } },
  },
}

-- A copy of body without the keys the section's schema does not have
-- (a release that does not read them).
local function fit(body, s)
  if dsforge.kind(body) ~= "object" or not s.properties then
    return body
  end
  local out = O {}
  for _, k in ipairs(dsforge.sorted_keys(body)) do
    local ps = s.properties[k]
    if ps then out[k] = fit(body[k], ps) end
  end
  return out
end

-- Adds defaultSnippets, the "$schema" key and the draft-07 header to the
-- root schema doc.
function M.finish(doc)
  local props = doc.properties
  for _, name in ipairs(dsforge.sorted_keys(SNIPPETS)) do
    local ps = props[name]
    if ps then
      local list = {}
      for _, sn in ipairs(SNIPPETS[name]) do
        list[#list + 1] = O { label = sn.label, description = sn.description, body = fit(sn.body, ps) }
      end
      ps.defaultSnippets = A(list)
    end
  end
  props["$schema"] = O {
    type = "string",
    description = "The JSON Schema of this file, for editors. DeepSpeed ignores unknown top-level keys, and dsforge check accepts this one.",
  }
  doc["$schema"] = M.DRAFT
  doc["$id"] = M.ID
  doc.markdownDescription = md(doc.description)
  return doc
end

return M
