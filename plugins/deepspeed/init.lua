-- plugins/deepspeed/init.lua -- DeepSpeed knowledge for dsforge.
--
-- The schema (schema.lua) drives the key/type/value rules
-- (schema_check.lua); cross-field rules and lint live in rules.lua; the
-- "auto" resolver uses the Hugging Face formulas in hf.lua; summary.lua
-- gives each variant's summary (memory, fit, HF arguments), the summary
-- table's columns and the memory-fit rule. Helper modules
-- (memory, activations, models, planner, hf, batch) are loaded by profiles
-- and commands with require("deepspeed.<module>") when they need them.

local schema_check = require("deepspeed.schema_check")
local cross = require("deepspeed.rules")
local summary = require("deepspeed.summary")

local rules = {}
for _, r in ipairs(schema_check.rules) do rules[#rules + 1] = r end
for _, r in ipairs(cross.rules) do rules[#rules + 1] = r end
rules[#rules + 1] = summary.fit_rule

return {
  name = "deepspeed",
  interface = 1,
  version = "0.19.6-1",
  summary = "DeepSpeed 0.19.6 config schema, rules, memory model and \"auto\" resolution",
  rules = rules,
  -- estimate, explain, schema (commands.lua)
  commands = require("deepspeed.commands").commands,
  resolvers = {
    {
      -- At --target deepspeed, replace every "auto" with what Hugging Face
      -- would fill, computed from the variant's params; what cannot be
      -- computed stays "auto" and the auto-value rule reports it.
      name = "hf-auto",
      run = function(cfg, ctx)
        if ctx.target ~= "deepspeed" or not ctx.params then return nil end
        local resolve = require("deepspeed.resolve")
        return resolve.auto(cfg, ctx.params, 1)
      end,
    },
  },
  -- Per variant: estimated memory, whether it fits, HF arguments.
  summarize = function(cfg, ctx)
    return summary.variant(cfg, ctx.params or {})
  end,
  columns = summary.columns,
  report = summary.report_layout(),
}
