"""The built-in profiles describe a machine the way people do (nodes x GPUs
per node), keep what the command line fixes, and say what would fit when
nothing does."""
import json
import os
import re
import shlex
import unittest

import dsf
from dsf import run


def zero(cfg):
    z = cfg["zero_optimization"]
    off = "none"
    if "offload_param" in z:
        off = "all"
    elif "offload_optimizer" in z:
        off = "optimizer"
    return z["stage"], off


class Machine(dsf.TempDirTest):
    def gen_json(self, *args):
        res = run("gen", *args, "--stdout")
        self.assertEqual(res.rc, 0, res)
        return json.loads(res.out)

    def test_gpus_per_node_alone_sets_the_world_size(self):
        cfg = self.gen_json("8xa100", "--tier", "small",
                            "--param", "gpus_per_node=4")
        # micro 1 x accumulation 8 x 4 GPUs
        self.assertEqual(cfg["train_batch_size"], 32)

    def test_nodes_multiply_the_world_size(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--param", "nodes=2")
        self.assertEqual(cfg["train_batch_size"], 1 * 8 * 16)

    def test_an_explicit_world_size_is_kept(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--param", "nodes=2",
                            "--param", "world_size=4")
        self.assertEqual(cfg["train_batch_size"], 32)

    def test_manifest_records_nodes_and_the_derived_world_size(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--param", "nodes=2", "-o", out)
        self.assertEqual(res.rc, 0, res)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        for v in m["variants"]:
            self.assertEqual(v["params"]["nodes"], 2)
            self.assertEqual(v["params"]["world_size"], 16)


class PlannerKeepsExplicitParams(dsf.TempDirTest):
    def variants(self, *args):
        out = os.path.join(self.tmp, "out")
        res = run("gen", *args, "-o", out)
        self.assertEqual(res.rc, 0, res)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        got = {}
        for v in m["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                got[v["name"]] = (v["params"], json.load(f))
        return got

    def test_matrix_zero_stage_gives_configs_with_that_stage(self):
        got = self.variants("small-gpu-offload", "--matrix", "zero_stage=2,3")
        self.assertEqual(len(got), 6)
        for name, (params, cfg) in got.items():
            stage = int(name.rsplit("-", 1)[1])
            self.assertEqual(zero(cfg)[0], stage, name)
            self.assertEqual(params["zero_stage"], stage, name)

    def test_matrix_offload_gives_configs_with_that_offload(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--matrix", "offload=optimizer,all")
        for name, (params, cfg) in got.items():
            off = name.rsplit("-", 1)[1]
            self.assertEqual(zero(cfg)[1], off, name)
        # parameter offload needs stage 3: the planner picked it
        self.assertEqual(zero(got["small.offload-all"][1])[0], 3)

    def test_explicit_micro_batch_is_kept_and_accumulation_follows(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--param", "micro_batch_size=2")
        params, cfg = got["small"]
        self.assertEqual(cfg["train_micro_batch_size_per_gpu"], 2)
        self.assertEqual(cfg["gradient_accumulation_steps"], 8)  # 16 / 2

    def test_contradicting_params_are_an_error_naming_both(self):
        res = run("gen", "small-gpu-offload", "--param", "offload=all",
                  "--param", "zero_stage=2")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("offload=all", res.err)
        self.assertIn("zero_stage=2", res.err)
        res = run("gen", "small-gpu-offload", "--tier", "small",
                  "--param", "micro_batch_size=2",
                  "--param", "gradient_accumulation=2",
                  "--param", "global_batch=16")
        self.assertEqual(res.rc, 3, res)
        for word in ("micro_batch_size=2", "gradient_accumulation=2",
                     "global_batch=16"):
            self.assertIn(word, res.err)


class NothingFits(dsf.TempDirTest):
    ARGS = ["small-gpu-offload", "--tier", "small", "--param",
            "model=llama-2-13b", "--param", "cpu_mem_gb=64"]

    def test_a_table_of_what_was_tried_and_changes_that_fit(self):
        res = run("gen", *self.ARGS)
        self.assertEqual(res.rc, 3, res)
        lines = res.err.splitlines()
        # attributed to the profile, not to a plugin file
        self.assertRegex(lines[0], r"^\S*profiles/small-gpu-offload\.lua:\d+: "
                         r"error: ")
        self.assertNotIn("plugins/deepspeed", res.err)
        self.assertIn("nothing fits llama-2-13b on 1 GPU of 24 GiB", lines[0])
        self.assertLess(len(lines[0]), 160)
        tried = [l for l in lines if l.startswith("  ZeRO-")]
        self.assertEqual(len(tried), 8, res.err)
        self.assertTrue(all(len(l) < 100 for l in lines[1:10]), res.err)
        self.assertIn("changes that fit, cheapest first:", res.err)

    def test_every_suggested_change_really_fits(self):
        res = run("gen", *self.ARGS)
        fixes = re.findall(r"^    ((?:--param [^\s:]+ ?)+)", res.err, re.M)
        self.assertGreaterEqual(len(fixes), 2, res.err)
        for fix in fixes:
            ok = run("gen", *self.ARGS, *shlex.split(fix))
            self.assertEqual(ok.rc, 0, (fix, ok))

    def test_dropping_a_fixed_choice_is_suggested(self):
        res = run("gen", "small-gpu-offload", "--tier", "large",
                  "--param", "offload=none")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("without --param offload=none", res.err)


CTX_PROFILE = """
local function helper(p)
  if p.n > 3 then
    dsforge.fail("n is too large", 2)
  end
end
return {
  params = { n = 1, m = 1 },
  prepare = function(p, ctx)
    helper(p)
    return nil
  end,
  build = function(p, ctx)
    return { train_micro_batch_size_per_gpu = 1, given = dsforge.sorted_keys(ctx.given) }
  end,
}
"""


class Context(dsf.TempDirTest):
    def test_ctx_given_names_what_the_command_line_set(self):
        d = self.profile("ctxp", CTX_PROFILE)
        res = run("gen", "ctxp", "--profile-path", d, "--param", "m=2",
                  "--matrix", "n=2", "--stdout")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(json.loads(res.out)["given"], ["m", "n"])
        res = run("gen", "ctxp", "--profile-path", d, "--stdout")
        self.assertEqual(json.loads(res.out)["given"], [])

    def test_fail_with_a_level_names_the_callers_line(self):
        d = self.profile("ctxp", CTX_PROFILE)
        res = run("gen", "ctxp", "--profile-path", d, "--param", "n=5")
        self.assertEqual(res.rc, 3, res)
        self.assertRegex(res.err, r"ctxp\.lua:10: error: n is too large")


if __name__ == "__main__":
    unittest.main()
