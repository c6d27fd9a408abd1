-- plugins/results/init.lua -- what a run left behind, read back by
-- `dsforge collect` (contrib/docs/results.md).
--
-- The readers turn one file each into values; `results.record` turns a
-- variant's findings into its record. Both are built in decl.lua, loaded
-- when collect first asks for them: no other command pays for them.

return {
  name = "results",
  interface = 1,
  version = "0.1.0",
  summary = "reads what each variant measured when it ran (dsforge collect): DeepSpeed's"
    .. " and the Trainer's own files, failures, the jobs' dsf-run.json",
  readers = function() return require("results.decl").readers end,
  results = function() return require("results.decl").results end,
}
