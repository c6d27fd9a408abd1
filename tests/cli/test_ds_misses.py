"""The dsforge/DeepSpeed disagreements listed in issue 10, one test each:
empty arrays where DeepSpeed needs an object, renamed keys, steps_per_print
0, negative gradient_clipping, stage-3-only "auto" keys below stage 3, the
warmup_steps minimum, the Hugging Face Trainer's json.load and its "only
replaces auto" behaviour, and check --strict.

DeepSpeed facts: runtime/config.py, runtime/constants.py, runtime/engine.py
(`(self.global_steps + 1) % self.steps_per_print()`), datastates/config.py
("datastates_ckpt"); accelerate utils/dataclasses.py (DeepSpeedPlugin
inserts gradient_accumulation_steps = 1 when absent).
"""
import json
import os
import unittest

import dsf
from dsf import run

BASE = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
        "gradient_clipping": 1.0}


class Misses(dsf.TempDirTest):
    def check(self, cfg, *args, text=None):
        return dsf.check_config(self, cfg, *args, text=text)

    def findings(self, cfg, *args, text=None):
        return self.check(cfg, *args, text=text)[1]

    def has(self, found, rule, path, severity):
        return any(f.get("rule") == rule and f.get("path") == path
                   and f["severity"] == severity for f in found)

    def test_empty_array_for_object_is_an_error(self):
        for key in ("scheduler", "optimizer", "zero_optimization", "bf16",
                    "fp16", "activation_checkpointing"):
            rc, found = self.check(dict(BASE, **{key: []}))
            self.assertEqual(rc, 1, key)
            self.assertTrue(self.has(found, "type-mismatch", key, "error"),
                            (key, found))
        cfg = dict(BASE, zero_optimization={"stage": 2,
                                            "offload_optimizer": []})
        rc, found = self.check(cfg)
        self.assertEqual(rc, 1)
        self.assertTrue(self.has(found, "type-mismatch",
                                 "zero_optimization.offload_optimizer",
                                 "error"), found)
        # an empty object is still fine
        rc, _ = self.check(dict(BASE, bf16={}))
        self.assertEqual(rc, 0)

    def test_edit_to_empty_array_fails_gen(self):
        out = os.path.join(self.tmp, "out")
        r = run("gen", "8xa100", "--tier", "small", "-o", out,
                "zero_optimization.offload_optimizer=[]")
        self.assertEqual(r.rc, 1, r)
        self.assertIn("offload_optimizer", r.err)
        self.assertFalse(os.path.exists(out))

    def test_renamed_keys(self):
        found = self.findings(dict(BASE, seq_parallel_communication_data_type="bf16",
                                   datastates_ckpt={}))
        self.assertEqual([f for f in found if f["severity"] != "note"], [])
        rc, found = self.check(dict(BASE, seq_parallel_communication_data_type="fp8"))
        self.assertEqual(rc, 1)
        self.assertTrue(self.has(found, "invalid-value",
                                 "seq_parallel_communication_data_type", "error"))
        found = self.findings(dict(BASE, seq_parallel_comm_data_type="bf16",
                                   datastates={}))
        self.assertTrue(self.has(found, "unknown-key", "seq_parallel_comm_data_type", "warning"))
        self.assertTrue(self.has(found, "unknown-key", "datastates", "warning"))

    def test_steps_per_print_zero_is_an_error(self):
        rc, found = self.check(dict(BASE, steps_per_print=0))
        self.assertEqual(rc, 1)
        self.assertTrue(self.has(found, "steps-per-print", "steps_per_print", "error"))
        self.assertIn("ZeroDivisionError", json.dumps(found))
        rc, found = self.check(dict(BASE, steps_per_print=5))
        self.assertEqual(rc, 0)
        self.assertTrue(self.has(found, "steps-per-print", "steps_per_print", "warning"))

    def test_negative_gradient_clipping_is_a_warning(self):
        rc, found = self.check(dict(BASE, gradient_clipping=-1))
        self.assertEqual(rc, 0, found)
        self.assertTrue(self.has(found, "gradient-clipping-negative",
                                 "gradient_clipping", "warning"), found)
        self.assertFalse(any(f["severity"] == "error" for f in found))

    def test_stage2_edit_on_stage3_profile(self):
        r = run("gen", "base", "--tier", "small", "--stdout",
                "zero_optimization.stage=2")
        self.assertEqual(r.rc, 0, r)
        zero = json.loads(r.out)["zero_optimization"]
        self.assertEqual(zero["stage"], 2)
        self.assertNotIn("auto", json.dumps(zero))
        for k in ("stage3_prefetch_bucket_size", "stage3_param_persistence_threshold"):
            self.assertNotIn(k, zero)
        # at stage 3 they are still resolved, not dropped
        r = run("gen", "base", "--tier", "small", "--stdout")
        zero = json.loads(r.out)["zero_optimization"]
        self.assertIsInstance(zero["stage3_prefetch_bucket_size"], int)

    def test_warmup_steps_minimum_is_one(self):
        r = run("gen", "base", "--tier", "small", "--param", "warmup_steps=0")
        self.assertEqual(r.rc, 2, r)
        self.assertIn("warmup_steps", r.err)
        self.assertNotIn("warmup_ratio", r.err)
        r = run("gen", "base", "--tier", "small", "--param", "warmup_steps=1")
        self.assertEqual(r.rc, 0, r)

    def test_hf_reads_files_as_json_load(self):
        auto = ('"train_micro_batch_size_per_gpu": "auto", '
                '"gradient_accumulation_steps": "auto"')
        for text, line, col in (("{\n // why\n " + auto + "\n}\n", 2, 2),
                                ("{" + auto + ",}", 1, len(auto) + 2),
                                ("{" + auto + " /* x */}", 1, len(auto) + 3)):
            rc, found = self.check(None, "--target", "hf", text=text)
            self.assertEqual(rc, 1, text)
            hits = [f for f in found if f.get("rule") == "hf-json-load"]
            self.assertEqual(len(hits), 1, found)
            self.assertEqual((hits[0]["line"], hits[0]["col"]), (line, col))
            self.assertIn("Trainer", hits[0]["message"])
            self.assertIn("json.load", hits[0]["message"])
            # plain DeepSpeed reads the file with hjson: no such finding
            _, found = self.check(None, text=text)
            self.assertFalse(any(f.get("rule") == "hf-json-load" for f in found))

    def test_hf_never_adds_missing_batch_keys(self):
        rc, found = self.check({"zero_optimization": {"stage": 0}}, "--target", "hf")
        self.assertEqual(rc, 1)
        self.assertTrue(self.has(found, "batch-missing",
                                 "train_micro_batch_size_per_gpu", "error"))
        self.assertIn("does not add a missing key", json.dumps(found))

    def test_hf_accelerate_inserts_gas_one(self):
        cfg = {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 4}
        rc, found = self.check(cfg)          # DeepSpeed derives gas = 4
        self.assertEqual(rc, 0, found)
        rc, found = self.check(cfg, "--target", "hf")
        self.assertEqual(rc, 1, found)
        hit = [f for f in found if f.get("rule") == "batch-identity"]
        self.assertEqual(len(hit), 1, found)
        self.assertIn("accelerate", hit[0]["message"])
        rc, found = self.check(dict(cfg, gradient_accumulation_steps="auto"),
                               "--target", "hf")
        self.assertFalse(any(f.get("rule") == "batch-identity" for f in found))

    def test_strict_makes_warnings_fail(self):
        cfg = dict(BASE, gradient_clipping=-1)
        self.assertEqual(self.check(cfg)[0], 0)
        self.assertEqual(self.check(cfg, "--strict")[0], 1)
        # notes alone do not fail under --strict
        cfg = {"train_batch_size": 8, "gradient_clipping": 1.0}
        rc, found = self.check(cfg, "--strict")
        self.assertTrue(any(f["severity"] == "note" for f in found))
        self.assertEqual(rc, 0, found)


if __name__ == "__main__":
    unittest.main()
