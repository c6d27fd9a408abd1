-- tests/plugins/fsdp/profiles/fsdp-tiny.lua -- the FSDP test plugin's
-- profile: its target is the plugin's, not the default (DeepSpeed).
return {
  name = "fsdp-tiny",
  target = "fsdp",
  summary = "FSDP settings for a small run (test of config families)",
  params = { sharding = "FULL_SHARD", offload = false },
  tiers = {
    full = { summary = "parameters, gradients and optimizer sharded",
      params = { sharding = "FULL_SHARD" } },
    grad = { summary = "gradients and optimizer sharded",
      params = { sharding = "SHARD_GRAD_OP" } },
  },
  tier_order = { "full", "grad" },
  emit = { "fsdp-env" },
  build = function(p)
    return {
      ["$schema"] = "https://example.invalid/fsdp-settings.schema.json",
      sharding_strategy = p.sharding,
      cpu_offload = p.offload,
      limit_all_gathers = true,
    }
  end,
}
