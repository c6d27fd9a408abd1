-- plugins/deepspeed/init.lua -- DeepSpeed knowledge for dsforge.
--
-- The schema (schema.lua) drives the key/type/value rules
-- (schema_check.lua); cross-field rules and lint live in rules.lua; the
-- "auto" resolver uses the Hugging Face formulas in hf.lua; summary.lua
-- gives each variant's summary (memory, fit, HF arguments), the summary
-- table's columns and the memory-fit rule (columns.lua). Helper modules
-- (memory, activations, models, planner, hf, batch) are loaded by profiles
-- and commands with require("deepspeed.<module>") when they need them.

-- What the plugin declares about summaries (columns, report layout, the
-- memory-fit rule), loaded when the core first reads one of them: gen and
-- plugins do, estimate and explain never; the estimate itself
-- (summary.lua) is loaded when a variant is first summarized (issue 15).
local function decl() return require("deepspeed.columns") end

-- The rules, loaded when a command first runs or lists them (check, gen,
-- plugins): estimate and explain never load the schema walk or rules.lua.
local function rules()
  local list = {}
  for _, r in ipairs(require("deepspeed.schema_check").rules) do list[#list + 1] = r end
  for _, r in ipairs(require("deepspeed.rules").rules) do list[#list + 1] = r end
  for _, r in ipairs(require("deepspeed.rules_sections").rules) do list[#list + 1] = r end
  list[#list + 1] = decl().fit_rule
  return list
end

-- The DeepSpeed release the rules check against by default, the one their
-- findings name: the newest covered release (dsdata/releases.lua, generated
-- by contrib/dsknow; deepspeed.dsversion reads the same). Written here as
-- a literal, since every command declares the plugin and reading the list
-- would cost each of them a module load; tests/cli/test_plugins.py
-- (BuiltinVersion) holds it equal to releases.lua and to what findings say.
local newest = "0.19.5"

return {
  name = "deepspeed",
  interface = 1,
  version = newest .. "-1",
  summary = "DeepSpeed " .. newest .. " config schema, rules, memory model and \"auto\" resolution",
  rules = rules,
  -- The config family (plugins.md, Targets): a DeepSpeed config given to
  -- deepspeed.initialize as is ("deepspeed", the default of a profile
  -- or file that names none), or to the Hugging Face Trainer or
  -- Accelerate, which fill its "auto" values ("hf").
  targets = { owns = { "deepspeed", "hf" }, default = "deepspeed",
    -- for the core's texts: "validate DeepSpeed config files", --target's
    -- help, the values a target leaves for its program to fill
    family = "DeepSpeed",
    help = {
      check = 'deepspeed (default): the file is given to deepspeed.initialize as is, so "auto" '
        .. 'is an error; hf: Hugging Face Trainer/Accelerate fill "auto" on the keys they own',
      gen = '\'hf\' keeps "auto" where Hugging Face fills it (default: deepspeed)',
      diff = "as for gen (default: deepspeed)",
    },
    fills = { hf = { "auto" } } },
  -- estimate, explain, schema (commands.lua), loaded when a plugin
  -- command first runs or is listed: gen and check never load them.
  commands = function() return require("deepspeed.commands").commands end,
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
    {
      -- gen --probe STEPS (the probe_steps param): the variant runs STEPS
      -- steps as a comparable benchmark and ends (probe.lua).
      name = "probe",
      -- (the core calls it only for a variant whose probe_steps is set:
      -- other variants do not pay for handing it the config)
      when = "probe_steps",
      run = function(cfg, ctx)
        return require("deepspeed.probe").apply(cfg, ctx.params, ctx.variant)
      end,
    },
  },
  -- The options it adds to check and gen (--ds-version, --world-size,
  -- --strict-fit): options.lua, read when a command parses its options.
  options = function() return require("deepspeed.options") end,
  -- Per variant: estimated memory, whether it fits, HF arguments.
  summarize = function(cfg, ctx)
    return require("deepspeed.summary").variant(cfg, ctx.params or {}, ctx)
  end,
  columns = function() return decl().columns end,
  report = function() return decl().report_layout() end,
}
