-- plugins/launch/init.lua -- from a finished DeepSpeed config to a run.
--
-- Pure modules, loaded with require("launch.<module>"):
--   trainer  the Hugging Face TrainingArguments that reproduce a variant,
--            and the Trainer's own "auto" fill and mismatch checks
--   render   text emitters: hf-args (JSON, command line), accelerate YAML,
--            the launch script (deepspeed / torchrun / accelerate launch /
--            Slurm), and each launcher's script alone
--   quote    sh and YAML quoting
--   cmdline  a training command parsed into facts, checked against a config
--   cmdcheck the check_command hook of `dsforge check CONFIG -- COMMAND...`
--   machine  the machine_params hook of `gen --detect`
--   params   the params the launch files read, checked where they enter
--   yaml     the YAML subset of an accelerate config file
--   emit     the emitters below: one variant's files from those modules
-- (contrib/docs/launch.md). The emitters below are what `gen --emit`
-- writes next to every variant's JSON (contrib/docs/plugins.md,
-- "Emitters").

local require = require

-- The modules are loaded when a hook first runs, not when the plugin is
-- declared: a command that runs none of them (most gen, check, estimate
-- runs) does not pay for them (issue 15).
local lazy = setmetatable({}, { __index = function(t, name)
  local m = require("launch." .. name)
  t[name] = m
  return m
end })

return {
  name = "launch",
  interface = 1,
  version = "0.2.0",
  summary = "Trainer arguments, accelerate and launcher files, training command checks",
  -- Its files and checks are about DeepSpeed configs: it adds to the
  -- deepspeed plugin's targets (plugins.md, Targets).
  targets = { adds = { "deepspeed", "hf" } },
  -- the variables cmdcheck reads (its M.env; a test keeps them equal)
  check_command = { env = { "WORLD_SIZE" },
    run = function(...) return lazy.cmdcheck.run(...) end },
  machine_params = function(...) return lazy.machine.params(...) end,
  emitters = {
    {
      name = "hf-args",
      summary = "the Hugging Face TrainingArguments that reproduce the variant, as JSON"
        .. " and as a bash array",
      files = { "{profile}-{variant}.hf-args.json", "{profile}-{variant}.hf-args.sh" },
      emit = function(...) return lazy.emit.hf_args(...) end,
    },
    {
      name = "accelerate",
      summary = "an accelerate config (DeepSpeed with the variant's JSON) for"
        .. " accelerate launch --config_file",
      file = "{profile}-{variant}.accelerate.yaml",
      emit = function(...) return lazy.emit.accelerate(...) end,
    },
    {
      name = "launch",
      summary = "a launch script: bash FILE deepspeed|torchrun|accelerate, or sbatch FILE"
        .. " (Slurm: srun + torchrun rendezvous)",
      file = "{profile}-{variant}.launch.sh",
      emit = function(...) return lazy.emit.launch(...) end,
    },
  },
}
