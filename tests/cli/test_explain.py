"""dsforge explain FILE: every key of the file with its meaning, DeepSpeed's
default and whether the file changes it, in English and Chinese; unknown
keys flagged; exit codes.

Defaults are DeepSpeed's code defaults (../shared/reference/deepspeed.md
sections 1-2), e.g. stage3_prefetch_bucket_size 5e7 where the docs say 5e8.
"""
import json
import os
import re
import unittest

import dsf
from dsf import run

# A ZeRO-3 + CPU offload config in the style of the seeds'
# ds_config_zero3.json, with concrete values, two "auto"s, a misspelled
# ZeRO key and an unknown top-level key.
ZERO3 = """{
  // ZeRO-3 with CPU offload
  "bf16": {"enabled": true},
  "optimizer": {
    "type": "AdamW",
    "params": {"lr": 3e-5, "betas": [0.9, 0.95], "eps": 1e-8,
               "weight_decay": 0.0}
  },
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "cpu", "pin_memory": false},
    "overlap_comm": true,
    "contiguous_gradients": true,
    "sub_group_size": 1e9,
    "reduce_bucket_size": 5e8,
    "stage3_prefetch_bucket_size": 5e8,
    "stage3_param_persistence_threshold": 1e6,
    "stage3_max_live_parameters": 1e9,
    "stage3_max_reuse_distance": 1e9,
    "stage3_gather_16bit_weights_on_model_save": true,
    "stage3_prefech_bucket_size": 1
  },
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": 1.0,
  "steps_per_print": 2000,
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": 4,
  "wall_clock_breakdown": false,
  "min_lr": 5e-7
}
"""

CHANGED, SAME, NONE, UNKNOWN = "changed", "same", "none", "unknown"
LABELS = {
    "en": {CHANGED: "changed", SAME: "same as default", NONE: "no default",
           UNKNOWN: "not a DeepSpeed key"},
    "zh": {CHANGED: "已修改", SAME: "同默认值", NONE: "无默认值",
           UNKNOWN: "DeepSpeed 不认识的键"},
}
DEFAULT_WORD = {"en": "default", "zh": "默认"}

# path -> (status, text the printed default must contain or None).
# "auto" values are left out of the status check (what "auto" becomes is
# decided by Hugging Face, not by the file).
EXPECTED = {
    "bf16": (NONE, None),
    "bf16.enabled": (CHANGED, "false"),
    "optimizer": (NONE, None),
    "optimizer.type": (NONE, None),
    "optimizer.params": (NONE, None),
    # no fixed default: it depends on the optimizer
    "optimizer.params.lr": (NONE, "1e-3"),
    "optimizer.params.betas": (CHANGED, "0.999"),
    "optimizer.params.eps": (SAME, "1e-08"),
    "optimizer.params.weight_decay": (SAME, "0"),
    "zero_optimization": (NONE, None),
    "zero_optimization.stage": (CHANGED, "0"),
    "zero_optimization.offload_optimizer": (NONE, None),
    "zero_optimization.offload_optimizer.device": (CHANGED, '"none"'),
    "zero_optimization.offload_optimizer.pin_memory": (SAME, "true"),
    "zero_optimization.offload_param": (NONE, None),
    "zero_optimization.offload_param.device": (CHANGED, '"none"'),
    # pin_memory defaults to true since v0.19.5
    "zero_optimization.offload_param.pin_memory": (CHANGED, "true"),
    # its default depends on the stage (true at stage 3)
    "zero_optimization.overlap_comm": (NONE, "stage == 3"),
    "zero_optimization.contiguous_gradients": (SAME, "true"),
    "zero_optimization.sub_group_size": (SAME, "1000000000"),
    "zero_optimization.reduce_bucket_size": (SAME, "500000000"),
    # the code default is 5e7 (the docs say 5e8)
    "zero_optimization.stage3_prefetch_bucket_size": (CHANGED, "50000000"),
    "zero_optimization.stage3_param_persistence_threshold": (CHANGED,
                                                             "100000"),
    "zero_optimization.stage3_max_live_parameters": (SAME, "1000000000"),
    "zero_optimization.stage3_max_reuse_distance": (SAME, "1000000000"),
    "zero_optimization.stage3_gather_16bit_weights_on_model_save": (
        CHANGED, "false"),
    "zero_optimization.stage3_prefech_bucket_size": (UNKNOWN, None),
    "gradient_clipping": (SAME, "1"),
    "steps_per_print": (NONE, None),
    "train_micro_batch_size_per_gpu": (NONE, None),
    "wall_clock_breakdown": (SAME, "false"),
    "min_lr": (UNKNOWN, None),
}
AUTO_KEYS = {"gradient_accumulation_steps", "train_batch_size"}

# "path = value  [status; default D]"; the default part only for keys
# whose default is known (status changed / same as default).
ROW_RE = re.compile(r"^(?P<path>\S+) = (?P<value>.*)  "
                    r"\[(?P<label>[^;\]]+)(?:; (?P<dword>\S+) "
                    r"(?P<default>.*))?\]$")
CJK = re.compile(r"[\u4e00-\u9fff]")


def key_paths(obj, prefix=""):
    """Every key path of a JSON object, depth first in sorted key order."""
    out = []
    for k in sorted(obj):
        path = prefix + k
        out.append((path, obj[k]))
        if isinstance(obj[k], dict):
            out += key_paths(obj[k], path + ".")
    return out


def strip_comments(text):
    return "\n".join(re.sub(r"^\s*//.*$", "", l) for l in text.splitlines())


def parse(out):
    """[(row dict, doc line or None)] from explain's output; a row whose
    value is "auto" has the line saying what it becomes as "auto"."""
    rows = []
    for line in out.splitlines():
        m = ROW_RE.match(line)
        if m:
            rows.append(dict(m.groupdict(), doc=None, auto=None))
        elif line.startswith("    ") and rows and rows[-1]["doc"] is None:
            rows[-1]["doc"] = line.strip()
        elif (line.startswith('    "auto"') and rows
              and rows[-1]["value"] == '"auto"' and rows[-1]["auto"] is None):
            rows[-1]["auto"] = line.strip()
        else:
            raise AssertionError("unexpected explain line: %r" % line)
    return rows


class Explain(dsf.TempDirTest):
    def explain(self, path, lang=None):
        args = ["explain", path] + (["--lang", lang] if lang else [])
        res = run(*args)
        self.assertExit(res, 0)
        return parse(res.out)

    def check_rows(self, lang):
        path = self.write("zero3.json", ZERO3)
        rows = self.explain(path, lang)
        want = key_paths(json.loads(strip_comments(ZERO3)))
        # every key of the file, once, in order
        self.assertEqual([r["path"] for r in rows], [p for p, _ in want])
        self.assertEqual(set(EXPECTED) | AUTO_KEYS, {p for p, _ in want})
        labels = LABELS[lang or "en"]
        for row, (path, value) in zip(rows, want):
            with self.subTest(path=path, lang=lang):
                self.assertEqual(json.loads(row["value"]), value)
                self.assertTrue(row["doc"], "no meaning for %s" % path)
                if path in AUTO_KEYS:
                    self.assertTrue(row["label"] in labels.values() or
                                    row["label"].startswith(
                                        DEFAULT_WORD[lang or "en"] + " "),
                                    row)
                    self.assertIn(" hf ", row["auto"])
                    continue
                status, default = EXPECTED[path]
                if status == NONE and default is not None:
                    # no fixed default, but a rule: "[default RULE]", never
                    # "[no default; default RULE]" (issue 29)
                    self.assertTrue(row["label"].startswith(
                        DEFAULT_WORD[lang or "en"] + " "), row)
                    self.assertIn(default, row["label"])
                    continue
                self.assertEqual(row["label"], labels[status])
                if status in (CHANGED, SAME) or default is not None:
                    self.assertEqual(row["dword"], DEFAULT_WORD[lang or "en"])
                    self.assertTrue(row["default"])
                if status == UNKNOWN:  # nothing to name, nothing shown
                    self.assertIsNone(row["default"])
                if default is not None:
                    self.assertIn(default, row["default"] or "")
        return {r["path"]: r for r in rows}

    def test_english(self):
        rows = self.check_rows(None)
        self.assertIn("ZeRO stage", rows["zero_optimization.stage"]["doc"])
        self.assertIn("Not a DeepSpeed key", rows["min_lr"]["doc"])
        self.assertEqual(rows, self.check_rows("en"))

    def test_chinese(self):
        en = {r["path"]: r for r in self.explain(
            self.write("zero3.json", ZERO3))}
        zh = self.check_rows("zh")
        for path, row in zh.items():
            with self.subTest(path=path):
                self.assertRegex(row["doc"], CJK)
                self.assertNotEqual(row["doc"], en[path]["doc"])
                self.assertEqual(row["value"], en[path]["value"])

    def test_unknown_keys_are_flagged_at_any_depth(self):
        text = json.dumps({
            "zero_optimization": {"stage": 2, "overlap_com": True,
                                  "offload_optimizer": {"devise": "cpu"}},
            "my_cluster": {"queue": "long"},
            "fp16": {"enabled": False, "loss_scal": 0},
        })
        rows = {r["path"]: r for r in self.explain(self.write("u.json", text))}
        for path in ("zero_optimization.overlap_com", "my_cluster",
                     "my_cluster.queue",
                     "zero_optimization.offload_optimizer.devise",
                     "fp16.loss_scal"):
            with self.subTest(path=path):
                self.assertEqual(rows[path]["label"], "not a DeepSpeed key")
        for path in ("zero_optimization.stage", "fp16.enabled",
                     "zero_optimization.offload_optimizer"):
            self.assertNotEqual(rows[path]["label"], "not a DeepSpeed key")

    def test_overlap_comm_and_stage_defaults(self):
        text = json.dumps({"zero_optimization": {"stage": 0,
                                                 "overlap_comm": False}})
        rows = {r["path"]: r for r in self.explain(self.write("s.json", text))}
        self.assertEqual(rows["zero_optimization.stage"]["label"],
                         "same as default")
        self.assertEqual(rows["zero_optimization.overlap_comm"]["label"],
                         "default stage == 3 (true for stage 3, false "
                         "otherwise)")

    def test_numbers_beyond_json_precision(self):
        # model_persistence_threshold defaults to sys.maxsize, and a file may
        # hold a number JSON cannot carry exactly: explain still works
        text = ('{"zero_optimization": {"stage": 3, '
                '"stage3_model_persistence_threshold": 1000, '
                '"sub_group_size": 1e20}}')
        rows = {r["path"]: r for r in self.explain(self.write("b.json", text))}
        row = rows["zero_optimization.stage3_model_persistence_threshold"]
        self.assertEqual(row["label"], "changed")
        self.assertIn("sys.maxsize", row["default"])
        row = rows["zero_optimization.sub_group_size"]
        self.assertEqual(float(row["value"]), 1e20)
        self.assertEqual(row["label"], "changed")

    def test_says_what_auto_becomes_per_target(self):
        # issue 29: explain did not say what "auto" becomes
        text = json.dumps({"train_micro_batch_size_per_gpu": "auto",
                           "gradient_accumulation_steps": "auto",
                           "steps_per_print": "auto"})
        for lang in ("en", "zh"):
            rows = {r["path"]: r for r in self.explain(
                self.write("a.json", text), lang)}
            with self.subTest(lang=lang):
                mb = rows["train_micro_batch_size_per_gpu"]["auto"]
                self.assertIn("TrainingArguments.per_device_train_batch_size",
                              mb)
                self.assertIn(" hf ", mb)
                self.assertIn(" deepspeed", mb)
                gas = rows["gradient_accumulation_steps"]
                self.assertIn("TrainingArguments.gradient_accumulation_steps",
                              gas["auto"])
                # its default is a rule: said once, as the default
                self.assertFalse(gas["label"].startswith(
                    LABELS[lang][NONE]), gas)
                self.assertTrue(gas["label"].startswith(
                    DEFAULT_WORD[lang] + " "), gas)
                # a key the Trainer does not fill: nobody replaces it
                spp = rows["steps_per_print"]["auto"]
                self.assertNotIn("TrainingArguments", spp)
                self.assertIn(" hf", spp)
        en = {r["path"]: r for r in self.explain(self.write("a.json", text))}
        self.assertEqual(en["train_micro_batch_size_per_gpu"]["auto"],
                         '"auto": at target hf the Hugging Face Trainer (or '
                         "accelerate) replaces it with "
                         "TrainingArguments.per_device_train_batch_size; "
                         "plain DeepSpeed (target deepspeed) does not, and "
                         "fails on the string or drops it ('dsforge check' "
                         "says which)")
        self.assertIn("neither the Hugging Face Trainer (target hf) nor "
                      "plain DeepSpeed", en["steps_per_print"]["auto"])

    def test_explain_key_says_what_auto_becomes_where_the_trainer_fills_it(self):
        res = run("explain", "train_micro_batch_size_per_gpu")
        self.assertExit(res, 0)
        self.assertIn('\n    "auto": at target hf the Hugging Face Trainer (or '
                      "accelerate) replaces it with "
                      "TrainingArguments.per_device_train_batch_size;",
                      res.out)
        # only under the spelling the Trainer fills
        res = run("explain", "zero_optimization.stage3_prefetch_bucket_size")
        self.assertIn("int(0.9 * hidden_size * hidden_size)", res.out)
        for key in ("zero_optimization.prefetch_bucket_size",
                    "steps_per_print"):
            res = run("explain", key)
            self.assertExit(res, 0)
            self.assertNotIn('"auto"', res.out)

    def test_empty_object_explains_nothing(self):
        res = run("explain", self.write("e.json", "{}"))
        self.assertExit(res, 0)
        self.assertEqual(res.out, "")


class ExplainErrors(dsf.TempDirTest):
    def test_missing_file_exits_3(self):
        path = os.path.join(self.tmp, "absent.json")
        res = run("explain", path)
        self.assertExit(res, 3)
        self.assertIn(path, res.err)
        self.assertEqual(res.out, "")

    def test_syntax_error_exits_3(self):
        path = self.write("bad.json", '{\n  "stage": \n}\n')
        res = run("explain", path)
        self.assertExit(res, 3)
        self.assertRegex(res.err, r"%s:3:1: error" % re.escape(path))

    def test_bad_lang_exits_2(self):
        path = self.write("ok.json", '{"train_batch_size": 8}')
        for lang in ("fr", "EN", ""):
            with self.subTest(lang=lang):
                res = run("explain", path, "--lang", lang)
                self.assertExit(res, 2)
                self.assertIn("--lang", res.err)
                self.assertEqual(res.out, "")

    def test_usage_errors_exit_2(self):
        path = self.write("ok.json", '{"train_batch_size": 8}')
        self.assertExit(run("explain"), 2)
        self.assertExit(run("explain", path, path), 2)
        self.assertExit(run("explain", path, "--lang"), 2)
        res = run("explain", "--help")
        self.assertExit(res, 0)
        self.assertIn("--lang", res.out)


if __name__ == "__main__":
    unittest.main()
