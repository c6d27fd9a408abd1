-- plugins/cluster/init.lua -- a sweep taken to a cluster as one submission.
--
-- Pure modules, loaded with require("cluster.<module>") when an emitter
-- first runs (a gen run that emits none of them does not pay for them):
--   slurm    slurm-array: one sbatch job array per resource shape
--   k8s      Kubeflow Trainer v2 TrainJobs and the ConfigMaps of the JSON
--   sky      one SkyPilot task YAML per variant
-- The files these emitters write, and the params and --emit-opt options
-- they read, are documented in contrib/docs/cluster.md.

local require = require

local lazy = setmetatable({}, { __index = function(t, name)
  local m = require("cluster." .. name)
  t[name] = m
  return m
end })

return {
  name = "cluster",
  interface = 1,
  version = "0.1.0",
  summary = "a sweep sent to a cluster as one submission: Slurm job arrays, Kubernetes TrainJobs, SkyPilot tasks",
  -- Its jobs launch DeepSpeed runs with the launch plugin's words: it
  -- adds to the deepspeed plugin's targets (plugins.md, Targets).
  targets = { adds = { "deepspeed", "hf" } },
  emitters = {
    {
      name = "slurm-array",
      scope = "run",
      summary = "the sweep as Slurm job arrays, one per resource shape, and a submit script"
        .. " (--max-parallel, --canary; contrib/docs/cluster.md)",
      row = function(...) return lazy.slurm.row(...) end,
      emit = function(...) return lazy.slurm.emit(...) end,
    },
    {
      name = "k8s",
      scope = "run",
      summary = "Kubeflow Trainer v2 TrainJobs (one per variant) and the ConfigMaps of their"
        .. " configs, in k8s.yaml (--emit-opt image=...; contrib/docs/cluster.md)",
      row = function(...) return lazy.k8s.row(...) end,
      emit = function(...) return lazy.k8s.emit(...) end,
    },
    {
      name = "skypilot",
      summary = "a SkyPilot task per variant (sky launch FILE): the GPUs the estimate fits,"
        .. " torchrun across SkyPilot's nodes (contrib/docs/cluster.md)",
      file = "{profile}-{variant}.sky.yaml",
      emit = function(...) return lazy.sky.emit(...) end,
    },
  },
}
