-- The Hugging Face "auto" list of the hand-written schema
-- (schema.hf_auto_paths) names keys DeepSpeed reads: each is a generated
-- key of some covered release (through the hand-written aliases), a key
-- of a section DeepSpeed hands on whole, or a constructor argument of a scheduler or optimizer DeepSpeed builds.

local dv = require("deepspeed.dsversion")
local sc = require("deepspeed.schema_check")
local schema = require("deepspeed.schema")

local function canonical(path)
  local node, out = schema.root, {}
  for i, k in ipairs(path) do
    local f, c = nil, nil
    if node then f, c = sc.lookup(node, k) end
    node, out[i] = f, c or k
  end
  return table.concat(out, ".")
end

local function is_ctor_arg(section, key)
  for _, r in ipairs(dv.releases) do
    local d = dv.data(r)
    local tbl = section == "scheduler" and d.schedulers or d.optimizers
    for _, name in ipairs(dsforge.sorted_keys(tbl)) do
      for _, a in ipairs(tbl[name].args) do
        if a == key then return true end
      end
    end
  end
  return false
end

return {
  hf_auto_paths_are_generated_keys = function()
    local missing = {}
    for _, p in ipairs(schema.hf_auto_paths) do
      local dp = canonical(p)
      local ok = false
      for _, r in ipairs(dv.releases) do
        local d = dv.data(r)
        if d.keys[dp] then ok = true; break end
        -- under a section DeepSpeed hands on whole (amp goes to apex)
        local prefix = dp:match("^(.*)%.[^.]*$")
        if prefix and d.open[prefix] then ok = true; break end
      end
      if not ok and #p == 3 and p[2] == "params" then ok = is_ctor_arg(p[1], p[3]) end
      if not ok then missing[#missing + 1] = dp end
    end
    T.eq(table.concat(missing, " "), "")
    T.truthy(#schema.hf_auto_paths > 10)
  end,

  a_made_up_path_is_caught = function()
    T.eq(dv.data(dv.newest).keys[canonical({ "zero_optimization", "stage4_bucket" })], nil)
    T.eq(is_ctor_arg("optimizer", "learning_rate"), false)
    T.truthy(is_ctor_arg("optimizer", "lr"))
  end,
}
