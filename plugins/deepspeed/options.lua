-- plugins/deepspeed/options.lua -- the options the deepspeed plugin adds
-- to the built-in commands (the `options` field of init.lua; "Options" in
-- contrib/docs/plugins.md) and gives its own commands (commands.lua):
-- --ds-version of check, gen and explain/schema, check's --world-size,
-- gen's --strict-fit. The core parses them from here, shows them in
-- --help, the man page and the completion scripts, and hands their
-- values to the hooks (ctx.ds_version, the param world_size, the rules of
-- strictness class "fit").

local M = {}

-- --ds-version (or DSFORGE_DS_VERSION): of the form X.Y or X.Y.Z (a
-- leading v allowed), and within the covered releases (the extracted
-- ones, up to 0.19.6, DeepSpeed's master, which the hand-written schema
-- describes: schema.lua's deepspeed_version, not loaded here): else a
-- usage error, in every command that takes the option.
function M.release(spec)
  local body = spec:gsub("^v", "", 1)
  local parts, ok = 0, true
  for part, dot in body:gmatch("([^.]*)(%.?)") do
    parts = parts + 1
    ok = ok and part:match("^%d%d?%d?%d?%d?$") ~= nil
    if dot == "" then break end
  end
  if not ok or parts < 2 or parts > 3 or body:sub(-1) == "." then
    return string.format("'%s' is not a DeepSpeed version (X.Y or X.Y.Z)", spec),
      "e.g. --ds-version 0.16.9"
  end
  return require("deepspeed.dsrange").outside(spec, "0.19.6")
end

-- --world-size: a whole number from 1 to 1000000.
local function world(n)
  local v = tonumber(n)
  if not n:match("^[+-]?%d+$") or not v or v < 1 or v > 1000000 then
    return string.format("'%s' is not a whole number between 1 and 1000000", n)
  end
  return nil
end

M.ds_version = {
  name = "ds-version", arg = "X.Y[.Z]", env = "DSFORGE_DS_VERSION", ctx = true,
  check = M.release,
}

M.builtin = {
  { name = "world-size", arg = "N", commands = { "check" }, param = true,
    default = "1", check = world,
    help = "world size (processes) for the batch rules (default 1); the "
      .. "data-parallel size is it divided by sequence_parallel_size where "
      .. "DeepSpeed divides" },
  { name = "ds-version", arg = "X.Y[.Z]", commands = { "check", "gen" },
    env = "DSFORGE_DS_VERSION", ctx = true, check = M.release,
    help = {
      check = "DeepSpeed release to check against (default: "
        .. "$DSFORGE_DS_VERSION, else the newest covered)",
      gen = "DeepSpeed release the rules check against (default: "
        .. "$DSFORGE_DS_VERSION, else the profile's ds_version param, else "
        .. "the newest)",
    } },
  { name = "strict-fit", commands = { "gen" }, strict = "fit",
    help = "a variant that does not fit the declared GPU memory is an "
      .. "error, not a warning" },
}

return M
