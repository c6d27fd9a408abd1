-- plugins/launch/init.lua -- from a finished DeepSpeed config to a run.
--
-- Pure modules, loaded with require("launch.<module>"):
--   trainer  the Hugging Face TrainingArguments that reproduce a variant,
--            and the Trainer's own "auto" fill and mismatch checks
--   render   text emitters: hf-args (JSON, command line), accelerate YAML,
--            deepspeed / torchrun / accelerate launch / Slurm scripts
--   quote    sh and YAML quoting
--   cmdline  a training command parsed into facts, checked against a config
-- (contrib/docs/launch.md). Emitters and commands are declared here once
-- the plugin contract supports them.

return {
  name = "launch",
  version = "0.1.0",
  summary = "Trainer arguments, accelerate and launcher files, training command checks",
}
