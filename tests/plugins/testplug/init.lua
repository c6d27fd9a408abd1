-- tests/plugins/testplug/init.lua -- the plugin interface's test plugin:
-- a resolver, a summarize hook, two summary columns and a rule, all
-- declared (contrib/docs/plugins.md) and run by dsforge with no C change.
-- tests/cli/test_contract.py drives it against the built-in profiles.
local fmt = require("testplug.fmt")

return {
  name = "testplug",
  interface = 1,
  version = "1.0.0",
  summary = "test plugin of the core/plugin contract",
  resolvers = {
    -- Pins steps_per_print to 7 (the rule below then warns).
    { name = "pin-spp", run = function(cfg)
        cfg.steps_per_print = 7
        return cfg
      end },
  },
  summarize = function(cfg, ctx)
    return { testplug_spp = cfg.steps_per_print,
             testplug_mode = ctx.mode }
  end,
  columns = {
    { name = "spp", header = "steps", align = "right", width = 3,
      value = function(v) return fmt.num(v.summary.testplug_spp) end },
    { name = "tier-len", header = "tierlen", show = "varies",
      note = "length of the tier's name",
      value = function(v) return tostring(#v.tier) end },
  },
  rules = {
    { id = "testplug-spp", severity = "warning", strict = "fit",
      summary = "steps_per_print of at least 10",
      fix = "print less often",
      check = function(cfg, ctx)
        local s = ctx.summary
        if ctx.mode == "gen" and s and s.testplug_spp < 10 then
          ctx.report{ path = { "steps_per_print" },
                      message = "prints every " .. fmt.num(s.testplug_spp)
                        .. " steps" }
        end
      end },
  },
}
