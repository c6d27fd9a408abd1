"""gen --probe STEPS (issue 32): every variant becomes a short, comparable
benchmark without a change to the training script: a throughput line at
every step, the flops profiler, DeepSpeed's autotuning metric file with
its start and end steps (named after the variant), and DeepSpeed's exit
after the probe (runtime/engine.py _autotuning_exit). The probe-config
rule warns when such a file is checked as a training config. DeepSpeed's
own parser accepts the probes of the built-in profiles at 0.14.5, 0.16.9
and 0.19.5 (tests/conformance/configs/probe__*.json, verdicts recorded
with contrib/dsknow/record.py)."""
import json
import os

import dsf
from dsf import run


def stdout_json(*args):
    res = run("gen", *args, "--stdout")
    assert res.rc == 0, repr(res)
    return json.loads(res.out), res


class Probe(dsf.TempDirTest):

    def test_what_a_probe_adds(self):
        cfg, res = stdout_json("8xa100", "--tier", "small", "--probe", "20")
        self.assertEqual(cfg["steps_per_print"], 1)
        self.assertEqual(cfg["flops_profiler"], {"enabled": True, "profile_step": 4,
                                                 "detailed": False})
        self.assertEqual(cfg["autotuning"], {
            "enabled": True, "start_profile_step": 4, "end_profile_step": 19,
            "metric": "throughput", "metric_path": "dsf-probe-8xa100-small.json"})
        # gen asked for it: neither the probe nor its print interval is a finding
        self.assertNotIn("probe-config", res.err)
        self.assertNotIn("steps-per-print", res.err)
        plain, _ = stdout_json("8xa100", "--tier", "small")
        self.assertNotIn("autotuning", plain)
        self.assertNotIn("flops_profiler", plain)
        for key in ("autotuning", "flops_profiler", "steps_per_print"):
            del cfg[key]
            plain.pop(key, None)
        self.assertEqual(cfg, plain)

    def test_every_variant_names_its_own_metric_file(self):
        out = os.path.join(self.tmp, "o")
        res = run("gen", "8xa100", "--matrix", "zero_stage=2,3", "--probe", "10", "-o", out)
        self.assertEqual(res.rc, 0, repr(res))
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        paths = set()
        for v in m["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                at = json.load(f)["autotuning"]
            self.assertEqual(at["metric_path"], "dsf-probe-" + v["file"])
            self.assertEqual((at["start_profile_step"], at["end_profile_step"]), (2, 9))
            self.assertEqual(v["params"]["probe_steps"], 10)
            paths.add(at["metric_path"])
        self.assertEqual(len(paths), 6)

    def test_why_names_the_probe(self):
        res = run("gen", "8xa100", "--tier", "small", "--probe", "8",
                  "--why", "autotuning.end_profile_step")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertIn("resolver probe", res.out)
        self.assertIn("= 7", res.out)

    def test_an_existing_section_is_kept_and_the_probe_wins(self):
        f = self.write("at.json", '{"autotuning": {"fast": false, "enabled": false},'
                       ' "flops_profiler": {"module_depth": 2}}')
        cfg, _ = stdout_json("8xa100", "--tier", "small", "-f", f, "--probe", "30")
        self.assertEqual(cfg["autotuning"]["fast"], False)
        self.assertEqual(cfg["autotuning"]["enabled"], True)
        self.assertEqual(cfg["flops_profiler"]["module_depth"], 2)
        self.assertEqual(cfg["autotuning"]["start_profile_step"], 6)

    def test_checked_as_a_training_config_it_warns(self):
        out = os.path.join(self.tmp, "o")
        self.assertEqual(run("gen", "8xa100", "--tier", "small", "--probe", "20",
                             "-o", out).rc, 0)
        f = os.path.join(out, "8xa100-small.json")
        res = run("check", f, "--world-size", "8")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertIn("[probe-config]", res.err)
        self.assertIn("exit() at global step 20", res.err)
        self.assertEqual(run("check", f, "--world-size", "8", "--strict").rc, 1)
        # a hand-made autotuning section in gen, without --probe: the same
        g = self.write("at.json", '{"autotuning": {"enabled": true}}')
        res = run("gen", "8xa100", "--tier", "small", "-f", g)
        self.assertIn("[probe-config]", res.err)
        self.assertIn("global step 6", res.err)

    def test_usage(self):
        for args, msg in ((("--probe", "1"), "--probe"),
                          (("--probe", "x"), "--probe")):
            with self.subTest(args=args):
                res = run("gen", "8xa100", *args)
                self.assertEqual(res.rc, 2, repr(res))
                self.assertIn(msg, res.err)
        prof = self.profile("bare", 'return { name = "bare", build = function() return'
                            ' { train_micro_batch_size_per_gpu = 1 } end }')
        res = run("gen", "bare", "--profile-path", prof, "--probe", "5")
        self.assertEqual(res.rc, 2, repr(res))
        self.assertIn("probe_steps", res.err)


if __name__ == "__main__":
    import unittest
    unittest.main()


class ResolverWhen(dsf.TempDirTest):
    """A resolver declared `when = PARAM` is called only on a variant
    whose PARAM is set (the probe resolver is one)."""

    def test_called_only_when_its_param_is_set(self):
        self.write(os.path.join("plugins", "w", "init.lua"), """return {
          name = "w", version = "1", summary = "s",
          resolvers = { { name = "only", when = "flag",
            run = function(cfg, ctx) cfg.flagged = ctx.params.flag return cfg end } } }""")
        prof = self.profile("p", 'return { name = "p", params = { flag = "" },'
                            ' build = function() return { train_micro_batch_size_per_gpu = 1 } end }')
        base = ("gen", "p", "--profile-path", prof, "--plugin-path",
                os.path.join(self.tmp, "plugins"), "--stdout")
        res = run(*base)
        self.assertEqual(res.rc, 0, repr(res))
        self.assertNotIn("flagged", res.out)
        res = run(*base, "--param", "flag=on")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertEqual(json.loads(res.out)["flagged"], "on")

    def test_a_when_that_is_no_name(self):
        self.write(os.path.join("plugins", "w", "init.lua"), """return {
          name = "w", version = "1", summary = "s",
          resolvers = { { name = "only", when = 3, run = function() end } } }""")
        res = run("gen", "8xa100", "--plugin-path", os.path.join(self.tmp, "plugins"))
        self.assertEqual(res.rc, 3, repr(res))
        self.assertIn("'when' must name a param", res.err)
