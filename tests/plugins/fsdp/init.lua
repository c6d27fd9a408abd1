-- tests/plugins/fsdp/init.lua -- a plugin for another config family,
-- written from contrib/docs/plugins.md alone: PyTorch FSDP settings as a
-- JSON file. It owns the target "fsdp" (a profile names it; check finds
-- it by the file's "$schema" or its keys), declares one rule and one
-- emitter, and runs beside the built-in DeepSpeed plugin without either
-- judging the other's configs. tests/cli/test_families.py drives it with
-- the profile in profiles/.
local SCHEMA = "https://example.invalid/fsdp-settings.schema.json"

local STRATEGIES = { FULL_SHARD = true, SHARD_GRAD_OP = true,
                     NO_SHARD = true, HYBRID_SHARD = true }

return {
  name = "fsdp",
  interface = 1,
  version = "0.1.0",
  summary = "PyTorch FSDP settings files (a test of config families)",
  targets = {
    owns = { "fsdp" },
    -- A file is an FSDP settings file when it says so ($schema) or holds
    -- the key only such files have.
    recognise = function(cfg)
      if cfg["$schema"] == SCHEMA or cfg.sharding_strategy ~= nil then
        return "fsdp"
      end
      return nil
    end,
  },
  rules = {
    { id = "fsdp-sharding-strategy", severity = "error",
      summary = "sharding_strategy is one of torch's ShardingStrategy names",
      fix = "use FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD",
      check = function(cfg, ctx)
        local s = cfg.sharding_strategy
        if not STRATEGIES[s] then
          ctx.report{ path = { "sharding_strategy" },
                      message = "'" .. tostring(s) .. "' is no ShardingStrategy" }
        end
      end },
  },
  emitters = {
    { name = "fsdp-env", summary = "the settings as environment lines",
      file = "{profile}-{variant}.fsdp.env",
      emit = function(v, ctx)
        return "FSDP_SHARDING_STRATEGY=" .. tostring(v.config.sharding_strategy)
          .. "\nFSDP_TARGET=" .. ctx.target .. "\n"
      end },
  },
}
