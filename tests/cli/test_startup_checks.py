"""Files DeepSpeed rejects at deepspeed.initialize (issue 28), and the
bounds DeepSpeed checks only from a release on, through gen and check.

DeepSpeed facts (deepspeedai/DeepSpeed at the covered tags):
ops/adam/fused_adam.py:87-88 (FusedAdam raises RuntimeError for amsgrad,
every covered release); runtime/lr_schedules.py: WarmupLR's
`isinstance(warmup_num_steps, int)` ValueError from v0.19.3 (695-696 at
v0.19.5), OneCycle's cycle_first_step_size ValueError from v0.19.4
(491-492 at v0.19.5) and the ZeroDivisionError of a 0-step cycle before
(486 at v0.19.2); runtime/precision_config.py:129-130, fp16.loss_scale >= 0
from v0.18.8.
"""
import json
import os
import unittest

import dsf
from dsf import run

BASE = {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
        "gradient_accumulation_steps": 8, "gradient_clipping": 1.0}


class StartupChecks(dsf.TempDirTest):
    def check(self, cfg, *args, text=None):
        return dsf.check_config(self, cfg, *args, text=text)

    def only(self, found, rule, path):
        return [f for f in found if f["rule"] == rule and f["path"] == path]

    def test_gen_refuses_amsgrad_with_fused_adam(self):
        out = os.path.join(self.tmp, "out")
        r = run("gen", "8xa100", "--tier", "medium",
                "+optimizer.params.amsgrad=true", "-o", out)
        self.assertEqual(r.rc, 1, r)
        self.assertIn("[optimizer-amsgrad]", r.err)
        self.assertIn("FusedAdam does not support the AMSGrad variant.",
                      r.err)
        self.assertFalse(os.path.exists(out), os.listdir(self.tmp))
        # the same profile without it writes its file
        r = run("gen", "8xa100", "--tier", "medium", "-o", out)
        self.assertEqual(r.rc, 0, r)

    def test_check_reports_amsgrad(self):
        cfg = dict(BASE, optimizer={"type": "AdamW",
                                    "params": {"lr": 1e-4, "amsgrad": True}})
        rc, found = self.check(cfg)
        self.assertEqual(rc, 1, found)
        hit = self.only(found, "optimizer-amsgrad", "optimizer.params.amsgrad")
        self.assertEqual(len(hit), 1, found)
        self.assertEqual(hit[0]["severity"], "error")
        cfg["zero_optimization"] = {"stage": 2, "offload_optimizer":
                                    {"device": "cpu"}}  # DeepSpeedCPUAdam
        rc, found = self.check(cfg)
        self.assertEqual(self.only(found, "optimizer-amsgrad",
                                   "optimizer.params.amsgrad"), [])

    def test_warmup_num_steps_float_from_0_19_3(self):
        text = json.dumps(dict(BASE, scheduler={"type": "WarmupLR"}))
        text = text[:-2] + ', "params": {"warmup_num_steps": 100.0}}}'
        self.assertEqual(json.loads(text)["scheduler"]["params"],
                         {"warmup_num_steps": 100.0})
        rc, found = self.check(None, "--ds-version", "0.19.5", text=text)
        self.assertEqual(rc, 1, found)
        hit = self.only(found, "scheduler-step-count",
                        "scheduler.params.warmup_num_steps")
        self.assertEqual(len(hit), 1, found)
        self.assertIn("got 100.0", hit[0]["message"])
        rc, found = self.check(None, "--ds-version", "0.19.2", text=text)
        self.assertEqual(rc, 0, found)
        rc, found = self.check(None, "--ds-version", "0.19.5",
                               text=text.replace("100.0", "100"))
        self.assertEqual(rc, 0, found)

    def test_onecycle_first_step_size_zero(self):
        cfg = dict(BASE, scheduler={"type": "OneCycle", "params": {
            "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4,
            "cycle_first_step_size": 0}})
        for v in ("0.14.5", "0.19.2", "0.19.5"):
            rc, found = self.check(cfg, "--ds-version", v)
            self.assertEqual(rc, 1, (v, found))
            self.assertEqual(len(self.only(
                found, "scheduler-step-count",
                "scheduler.params.cycle_first_step_size")), 1, (v, found))

    def test_bounds_scoped_to_the_releases_that_check_them(self):
        cfg = dict(BASE, fp16={"enabled": True, "loss_scale": -1})
        rc, found = self.check(cfg, "--ds-version", "0.17.6")
        self.assertEqual(rc, 0, found)
        self.assertEqual([f["severity"] for f in self.only(
            found, "out-of-range", "fp16.loss_scale")], ["warning"])
        rc, found = self.check(cfg, "--ds-version", "0.18.9")
        self.assertEqual(rc, 1, found)
        cfg = dict(BASE, scheduler={"type": "WarmupLR",
                                    "params": {"warmup_num_steps": 0}})
        rc, found = self.check(cfg, "--ds-version", "0.19.2")
        self.assertEqual(rc, 0, found)
        rc, found = self.check(cfg, "--ds-version", "0.19.5")
        self.assertEqual(rc, 1, found)

    def test_sequence_parallel_size_divides_the_world_size(self):
        # runtime/config.py:709-710 at v0.19.5: world_size / sp
        cfg = {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 2,
               "gradient_accumulation_steps": 2, "gradient_clipping": 1.0,
               "sequence_parallel_size": 2}
        rc, found = self.check(cfg, "--world-size", "8")
        self.assertEqual(rc, 1, found)
        hit = self.only(found, "batch-identity", "train_batch_size")
        self.assertEqual(len(hit), 1, found)
        self.assertIn("32 != 2 * 2 * 4.0", hit[0]["message"])
        cfg["gradient_accumulation_steps"] = 4
        rc, found = self.check(cfg, "--world-size", "8")
        self.assertEqual(rc, 0, found)
        # 0.17.6 reads a path as a string: the file as given passes there
        cfg["gradient_accumulation_steps"] = 2
        rc, found = self.check(cfg, "--world-size", "8", "--ds-version",
                               "0.17.6")
        self.assertEqual(rc, 0, found)
        rc, found = self.check(cfg, "--world-size", "8", "--ds-version",
                               "0.17.6", "--target", "hf")
        self.assertEqual(rc, 1, found)

    def test_command_zero_warmup_follows_the_release(self):
        # the Trainer fills warmup_num_steps 0 without --warmup_steps:
        # WarmupLR refuses it from 0.19.3 and takes max(2, 0) before
        cfg = {"train_micro_batch_size_per_gpu": "auto",
               "gradient_accumulation_steps": "auto",
               "train_batch_size": "auto", "gradient_clipping": 1.0,
               "scheduler": {"type": "WarmupLR",
                             "params": {"warmup_num_steps": "auto"}}}
        path = os.path.join(self.tmp, "c.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        sev = {}
        for v in ("0.17.6", "0.19.2", "0.19.5"):
            r = run("check", "--format", "json", "--ds-version", v, path,
                    "--", "deepspeed", "--num_gpus", "8", "train.py",
                    "--deepspeed", path)
            self.assertIn(r.rc, (0, 1), r)
            sev[v] = [f["severity"] for f in r.json()
                      if f["rule"] == "zero-warmup"]
        self.assertEqual(sev, {"0.17.6": ["warning"], "0.19.2": ["warning"],
                               "0.19.5": ["error"]})


if __name__ == "__main__":
    unittest.main()
