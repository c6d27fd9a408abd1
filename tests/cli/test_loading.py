"""A command loads only the plugin modules it calls (issue 15): with the
built-in plugins on disk (DSFORGE_DATADIR) and a module replaced by one
that fails as soon as it is loaded, a command that must not load it still
succeeds with the same output, and one that does load it fails (the
replacement is seen)."""
import os
import shutil
import unittest

import dsf

CONFIG = """{
  "train_batch_size": 64,
  "train_micro_batch_size_per_gpu": 8,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 3, "overlap_comm": true},
  "optimizer": {"type": "AdamW", "params": {"lr": 0.0001}}
}
"""


class LoadsOnlyWhatItCalls(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.data = os.path.join(self.tmp, "data")
        for kind in ("plugins", "profiles"):
            shutil.copytree(os.path.join(dsf.SOURCE_DIR, kind),
                            os.path.join(self.data, kind))
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.work)
        self.cfg = self.write("work/ds.json", CONFIG)

    def run_with(self, poisoned, *args):
        """Runs dsforge with each module in poisoned (a path under
        plugins/) replaced by one that raises when it is loaded."""
        for rel in poisoned:
            with open(os.path.join(self.data, "plugins", rel), "w") as f:
                f.write('error("%s was loaded")\n' % rel)
        return dsf.run(*args, cwd=self.work,
                       env={"DSFORGE_DATADIR": self.data})

    def same_as_builtin(self, poisoned, *args):
        want = dsf.run(*args, cwd=self.work)
        self.assertEqual(want.rc, 0, want)
        got = self.run_with(poisoned, *args)
        self.assertEqual((got.rc, got.out, got.err), (0, want.out, want.err))

    def test_explain_file_loads_no_walk_and_no_rules(self):
        self.same_as_builtin(
            ["deepspeed/schema_check.lua", "deepspeed/rules.lua",
             "deepspeed/atrelease.lua", "deepspeed/batch.lua",
             "deepspeed/estimate.lua", "deepspeed/summary.lua",
             "deepspeed/models.lua", "deepspeed/explain_key.lua",
             "deepspeed/commands_run.lua"],
            "explain", self.cfg)

    def test_explain_key_loads_no_walk(self):
        self.same_as_builtin(["deepspeed/schema_check.lua", "deepspeed/rules.lua"],
                             "explain", "zero_optimization.stage")

    def test_estimate_loads_no_schema(self):
        self.same_as_builtin(
            ["deepspeed/schema.lua", "deepspeed/schema_check.lua",
             "deepspeed/schema_util.lua", "deepspeed/rules.lua",
             "deepspeed/explain.lua", "deepspeed/dsversion.lua",
             "deepspeed/summary.lua", "deepspeed/activations.lua",
             "deepspeed/commands_doc.lua"],
            "estimate", "--model", "llama-2-7b", "--stage", "3")

    def test_check_loads_no_command_and_no_summary(self):
        self.same_as_builtin(
            ["deepspeed/commands_run.lua", "deepspeed/commands_doc.lua",
             "deepspeed/summary.lua",
             "deepspeed/explain.lua", "deepspeed/estimate.lua",
             "deepspeed/models.lua", "deepspeed/memory.lua",
             "deepspeed/cells.lua"],
            "check", self.cfg)

    def test_gen_and_check_load_no_command_declaration(self):
        # the plugin's `commands` is a function: only a command that runs
        # or lists plugin commands calls it (and requires commands.lua)
        self.same_as_builtin(["deepspeed/commands.lua"], "check", self.cfg)
        self.same_as_builtin(["deepspeed/commands.lua"], "gen", "8xa100")
        for args in (("estimate", "--model", "llama-2-7b"), ("plugins",)):
            r = self.run_with(["deepspeed/commands.lua"], *args)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn("deepspeed/commands.lua was loaded", r.err)

    def test_estimate_and_explain_read_no_summary_declaration(self):
        # columns and report are functions: gen calls them, these never do
        for args in (("estimate", "--model", "llama-2-7b", "--stage", "3"),
                     ("explain", self.cfg)):
            self.same_as_builtin(["deepspeed/columns.lua"], *args)
        r = self.run_with(["deepspeed/columns.lua"], "gen", "8xa100")
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("deepspeed/columns.lua was loaded", r.err)

    def test_estimate_and_explain_draw_no_cells(self):
        for args in (("estimate", "--model", "llama-2-7b", "--stage", "3"),
                     ("explain", self.cfg)):
            self.same_as_builtin(["deepspeed/cells.lua"], *args)

    def test_gen_draws_its_cells(self):
        # cells.lua is required when the summary table's first cell is
        # drawn: the same table as before, and a replaced copy runs.
        want = dsf.run("gen", "8xa100", cwd=self.work)
        self.assertEqual(want.rc, 0, want)
        self.assertIn("gpu_gib", want.out)
        got = dsf.run("gen", "8xa100", cwd=self.work,
                      env={"DSFORGE_DATADIR": self.data})
        self.assertEqual((got.rc, got.out, got.err), (0, want.out, want.err))
        r = self.run_with(["deepspeed/cells.lua"], "gen", "8xa100")
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("deepspeed/cells.lua was loaded", r.out + r.err)

    def test_plugin_help_loads_no_command(self):
        self.same_as_builtin(["deepspeed/commands_run.lua", "deepspeed/commands_doc.lua",
                              "deepspeed/summary.lua"],
                             "estimate", "--help")

    def test_schema_loads_no_estimate(self):
        self.same_as_builtin(["deepspeed/commands_run.lua"], "schema")

    def test_each_command_loads_its_own_work(self):
        # estimate's work (commands_run.lua) and explain/schema's
        # (commands_doc.lua) are required by the command that runs them.
        for poisoned, args in (
                ("deepspeed/commands_run.lua",
                 ("estimate", "--model", "llama-2-7b", "--stage", "3")),
                ("deepspeed/commands_doc.lua", ("explain", "zero_optimization.stage")),
                ("deepspeed/commands_doc.lua", ("schema",))):
            r = self.run_with([poisoned], *args)
            self.assertNotEqual(r.rc, 0, r)
            self.assertIn(poisoned + " was loaded", r.err)

    def test_explain_key_loads_its_module(self):
        # explain_key.lua is required where a key is explained: the same
        # text as before, and a replaced copy is what runs.
        args = ("explain", "zero_optimization.stage3_gather_16bit_weights_on_model_save",
                "--lang", "zh")
        want = dsf.run(*args, cwd=self.work)
        self.assertEqual(want.rc, 0, want)
        self.assertIn("(DeepSpeed ", want.out)
        got = dsf.run(*args, cwd=self.work, env={"DSFORGE_DATADIR": self.data})
        self.assertEqual((got.rc, got.out, got.err), (0, want.out, want.err))
        r = self.run_with(["deepspeed/explain_key.lua"], *args)
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("deepspeed/explain_key.lua was loaded", r.err)

    def test_the_replacement_is_seen(self):
        r = self.run_with(["deepspeed/schema_check.lua"], "check", self.cfg)
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("deepspeed/schema_check.lua was loaded", r.err)


if __name__ == "__main__":
    unittest.main()
