-- plugins/launch/init.lua -- from a finished DeepSpeed config to a run.
--
-- Pure modules, loaded with require("launch.<module>"):
--   trainer  the Hugging Face TrainingArguments that reproduce a variant,
--            and the Trainer's own "auto" fill and mismatch checks
--   render   text emitters: hf-args (JSON, command line), accelerate YAML,
--            deepspeed / torchrun / accelerate launch / Slurm scripts
--   quote    sh and YAML quoting
--   cmdline  a training command parsed into facts, checked against a config
--   cmdcheck the check_command hook of `dsforge check CONFIG -- COMMAND...`
--   machine  the machine_params hook of `gen --detect`
--   yaml     the YAML subset of an accelerate config file
-- (contrib/docs/launch.md).

local cmdcheck = require("launch.cmdcheck")

return {
  name = "launch",
  interface = 1,
  version = "0.1.0",
  summary = "Trainer arguments, accelerate and launcher files, training command checks",
  check_command = { env = cmdcheck.env, run = cmdcheck.run },
  machine_params = require("launch.machine").params,
}
