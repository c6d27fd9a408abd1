-- launch.cmdcheck: the plugin's check_command, run by
-- `dsforge check CONFIG -- COMMAND...` (contrib/docs/launch.md).
--
-- It parses the command with launch.cmdline (reading the hostfile and the
-- accelerate --config_file the command names through ctx.read_text),
-- checks it against the config and returns the findings with their
-- 1-based word numbers. When CONFIG is a gen output (ctx.variant), the
-- variant's params (ctx.params) are what the config intends: the values
-- the Trainer fills from its defaults are compared with them. The world
-- size the command gives is returned as the param world_size, for the
-- config's own batch rules.

local type, ipairs, pairs, pcall, tostring = type, ipairs, pairs, pcall, tostring
local math = math
local dsforge = dsforge
local cmdline = require("launch.cmdline")

local M = {}

-- The environment variables the check reads (declared to the core).
M.env = { "WORLD_SIZE" }

-- Launcher options that name a file the check reads.
local FILE_OPTS = { "hostfile", "H", "config_file" }

local function same_file(a, b)
  local function norm(p) return (p:gsub("^%./+", ""):gsub("/+", "/")) end
  return norm(a) == norm(b)
end

local function hidden_size(params)
  if type(params.model) ~= "string" then return nil end
  local ok, models = pcall(require, "deepspeed.models")
  if not ok then return nil end
  local ok2, m = pcall(models.get, params.model)
  return ok2 and type(m) == "table" and m.hidden_size or nil
end

function M.run(cfg, words, ctx)
  local env = ctx.env or {}
  local params = ctx.params or {}
  local opts = { gpus_per_node = math.tointeger(params.gpus_per_node) }
  local facts = cmdline.parse(words, env, nil, opts)
  local out = {}
  local files, any = {}, false
  for _, name in ipairs(FILE_OPTS) do
    local o = facts.options[name]
    if o and type(o.value) == "string" and files[o.value] == nil then
      local text, err = ctx.read_text(o.value)
      if text then
        files[o.value], any = text, true
      else
        files[o.value] = false
        out[#out + 1] = { severity = "error", rule = "unreadable-file", args = { o.index },
          message = "cannot read " .. o.value .. " (" .. tostring(err) .. "): the launcher"
            .. " would fail as well" }
      end
    end
  end
  if any then
    local readable = {}
    for k, v in pairs(files) do if v then readable[k] = v end end
    facts = cmdline.parse(words, env, readable, opts)
  end

  -- The Trainer's --deepspeed (or accelerate's deepspeed_config_file)
  -- should name the config being checked.
  local named = facts.flags.deepspeed
  local acc = facts.launcher == "accelerate" and facts.options.deepspeed_config_file
  for _, n in ipairs({ named or false, acc or false }) do
    if n and type(n.value) == "string" and not same_file(n.value, ctx.config_file) then
      out[#out + 1] = { severity = "warning", rule = "other-config", args = { n.index },
        message = "the command gives " .. n.value .. " as the DeepSpeed config, not "
          .. ctx.config_file .. ": the run uses that file, which was not checked" }
    end
  end

  -- The Trainer (--deepspeed CONFIG) and accelerate (its
  -- deepspeed_config_file) fill the config's "auto" values: the config's
  -- own rules apply at target hf. Unless the target was chosen (--target,
  -- the manifest), the check returns it, and says which target applies.
  local target
  for _, n in ipairs({ named or false, acc or false }) do
    if not target and n and type(n.value) == "string"
        and same_file(n.value, ctx.config_file) then
      target = n
    end
  end
  -- Said when it matters: the config holds an "auto" value.
  local function has_auto(v)
    if v == "auto" then return true end
    if type(v) == "table" then
      for _, x in pairs(v) do if has_auto(x) then return true end end
    end
    return false
  end
  if target and has_auto(cfg) and not (ctx.target_given and ctx.target == "hf") then
    local by = (target == acc) and "accelerate (deepspeed_config_file)"
      or "the Hugging Face Trainer (--deepspeed)"
    local msg = "the command runs " .. ctx.config_file .. " through " .. by
      .. ", which fills its \"auto\" values: "
    if not ctx.target_given then
      msg = msg .. "checked at target hf (--target deepspeed checks it as"
        .. " plain DeepSpeed reads it)"
    else
      msg = msg .. "checked at target " .. tostring(ctx.target)
        .. " all the same, as chosen (--target or the manifest)"
    end
    out[#out + 1] = { severity = "note", rule = "command-target",
      args = { target.index }, message = msg }
  end

  local intent = ctx.variant and params or nil
  local dsv = ctx.ds_version
  if dsv == nil and type(ctx.params) == "table" and type(ctx.params.ds_version) == "string" then
    dsv = ctx.params.ds_version
  end
  local findings = cmdline.check(cfg, facts, { params = intent,
    hidden_size = intent and hidden_size(intent) or nil, ds_version = dsv })
  for _, f in ipairs(findings) do
    out[#out + 1] = { severity = f.severity, rule = f.rule, message = f.message,
      path = f.path, args = dsforge.array(f.indexes or {}) }
  end
  -- The world size the command runs at is the one the config's batch
  -- rules should use (ctx.params.world_size, the data-parallel size).
  local learned = {}
  if math.type(facts.world_size) == "integer" and facts.world_size > 0 then
    learned.world_size = facts.world_size
  end
  return { findings = dsforge.array(out), params = dsforge.object(learned),
    target = (target and not ctx.target_given) and "hf" or nil }
end

return M
