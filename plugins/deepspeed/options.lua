-- plugins/deepspeed/options.lua -- the options the plugin adds to check
-- and gen ("Options" in contrib/docs/plugins.md); their checks:
-- options_check.lua. ctx.ds_version, the param world_size, the rules of
-- strictness class "fit".
local function check(name)
  return function(v) return require("deepspeed.options_check")[name](v) end
end
return {
  { name = "world-size", arg = "N", commands = { "check" }, param = true,
    default = "1", check = check("world"),
    help = "world size (processes) for the batch rules (default 1); the data-parallel size is it divided by sequence_parallel_size where DeepSpeed divides" },
  { name = "ds-version", arg = "X.Y[.Z]", commands = { "check", "gen" },
    env = "DSFORGE_DS_VERSION", ctx = true, check = check("release"),
    help = {
      check = "DeepSpeed release to check against (default: $DSFORGE_DS_VERSION, else the newest covered)",
      gen = "DeepSpeed release the rules check against (default: $DSFORGE_DS_VERSION, else the profile's ds_version param, else the newest)",
    } },
  { name = "strict-fit", commands = { "gen" }, strict = "fit",
    help = "a variant that does not fit the declared GPU memory is an error, not a warning" },
}
