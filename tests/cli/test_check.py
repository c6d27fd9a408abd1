"""dsforge check: output format and positions, every rule family the issue
names, exit codes, the real-world configs (--target hf), the built-in
profiles' outputs (--target deepspeed), the seeds' example configs, and a
table-driven test of DeepSpeed's batch derivation through the CLI.

DeepSpeed behaviour is taken from ../shared/reference/deepspeed.md
(DeepSpeed runtime/config.py, runtime/zero/config.py, lr_schedules.py).
"""
import itertools
import json
import os
import re
import unittest

import dsf
from dsf import run, shared

# file:line:col: severity: message [rule-id]
DIAG_RE = re.compile(r"^(?P<file>[^\s].*?):(?P<line>\d+):(?P<col>\d+): "
                     r"(?P<severity>error|warning|note): (?P<message>.*) "
                     r"\[(?P<rule>[a-z0-9-]+)\]$")

FINDING_KEYS = {"file", "line", "col", "severity", "rule", "message", "fix"}


def position(text, needle, nth=0):
    """1-based (line, col) of the nth occurrence of needle in text."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return line, col


def parse_text(stderr):
    """The diagnostics of a text report: dicts with file, line, col,
    severity, message, rule and the hint (or None), in output order."""
    out = []
    for raw in stderr.splitlines():
        m = DIAG_RE.match(raw)
        if m:
            d = m.groupdict()
            d["line"], d["col"] = int(d["line"]), int(d["col"])
            d["hint"] = None
            out.append(d)
        elif raw.startswith("  hint: ") and out and out[-1]["hint"] is None:
            out[-1]["hint"] = raw[len("  hint: "):]
    return out


class CheckCase(dsf.TempDirTest):
    def check_json(self, path, *args):
        """Runs check --format json; returns (result, findings)."""
        res = run("check", "--format", "json", *args, path)
        self.assertIn(res.rc, (0, 1), repr(res))
        findings = json.loads(res.out)
        self.assertIsInstance(findings, list)
        return res, findings

    def only(self, findings, rule):
        return [f for f in findings if f.get("rule") == rule]

    def at(self, findings, path):
        return [f for f in findings if f.get("path") == path]

    def errors(self, findings):
        return [f for f in findings if f["severity"] == "error"]


# ---------------------------------------------------------------------------
# Output format and positions

ZERO_TYPO = """{
  "train_micro_batch_size_per_gpu": 2,
  "gradient_clipping": 1.0,
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
  "zero_optimization": {
    "stage": 2,
    "overlap_comm": true,
    "reduce_scater": true
  }
}
"""


class OutputFormat(CheckCase):
    def test_text_line_points_at_misspelled_zero_key_with_suggestion(self):
        path = self.write("typo.json", ZERO_TYPO)
        res = run("check", path)
        self.assertExit(res, 1)
        diags = [d for d in parse_text(res.err) if d["rule"] == "unknown-key"]
        self.assertEqual(len(diags), 1, res.err)
        d = diags[0]
        self.assertEqual(d["file"], path)
        self.assertEqual(d["severity"], "error")
        self.assertEqual((d["line"], d["col"]),
                         position(ZERO_TYPO, '"reduce_scater"'))
        self.assertIn("reduce_scater", d["message"])
        self.assertIn('did you mean "reduce_scatter"', d["message"])
        self.assertIsNotNone(d["hint"], res.err)
        self.assertIn("reduce_scatter", d["hint"])

    def test_every_finding_line_has_the_format_and_a_hint(self):
        path = self.write("typo.json", ZERO_TYPO)
        res = run("check", path)
        diags = parse_text(res.err)
        self.assertTrue(diags, res.err)
        # every line naming the file is a well-formed diagnostic
        for raw in res.err.splitlines():
            if raw.startswith(path + ":"):
                self.assertRegex(raw, DIAG_RE)
        for d in diags:
            self.assertIsNotNone(d["hint"], "no hint for %r" % d)

    def test_misspelled_top_level_key_is_a_warning(self):
        text = ('{\n  "train_micro_batch_size_per_gpu": 1,\n'
                '  "gradient_clipping": 1.0,\n'
                '  "gradient_acumulation_steps": 4\n}\n')
        path = self.write("top.json", text)
        res = run("check", path)
        # DeepSpeed ignores unknown top-level keys: a warning, exit 0
        self.assertExit(res, 0)
        d = [x for x in parse_text(res.err) if x["rule"] == "unknown-key"]
        self.assertEqual(len(d), 1, res.err)
        self.assertEqual(d[0]["severity"], "warning")
        self.assertEqual((d[0]["line"], d[0]["col"]),
                         position(text, '"gradient_acumulation_steps"'))
        self.assertIn('did you mean "gradient_accumulation_steps"',
                      d[0]["message"])

    def test_json_format_is_an_array_of_complete_findings(self):
        path = self.write("typo.json", ZERO_TYPO)
        res = run("check", "--format", "json", path)
        self.assertExit(res, 1)
        findings = json.loads(res.out)  # stdout holds only the JSON
        self.assertIsInstance(findings, list)
        self.assertTrue(findings)
        for f in findings:
            self.assertTrue(FINDING_KEYS <= set(f), f)
            self.assertEqual(f["file"], path)
            self.assertIsInstance(f["line"], int)
            self.assertIsInstance(f["col"], int)
            self.assertIn(f["severity"], ("error", "warning", "note"))
            self.assertRegex(f["rule"], r"^[a-z0-9-]+$")
            self.assertTrue(f["message"] and f["fix"])
        typo = self.only(findings, "unknown-key")
        self.assertEqual(len(typo), 1)
        self.assertEqual((typo[0]["line"], typo[0]["col"]),
                         position(ZERO_TYPO, '"reduce_scater"'))
        self.assertEqual(typo[0]["path"], "zero_optimization.reduce_scater")
        # the text report has the same findings at the same places
        text = parse_text(run("check", path).err)
        self.assertEqual(
            sorted((d["line"], d["col"], d["severity"], d["rule"])
                   for d in text),
            sorted((f["line"], f["col"], f["severity"], f["rule"])
                   for f in findings))

    def test_json_format_of_a_clean_file(self):
        path = self.write("clean.json", '{"train_batch_size": 8, '
                          '"train_micro_batch_size_per_gpu": 8, '
                          '"gradient_accumulation_steps": 1, '
                          '"gradient_clipping": 1.0}')
        res, findings = self.check_json(path)
        self.assertExit(res, 0)
        self.assertEqual(findings, [])

    def test_duplicate_keys_are_errors_naming_both_lines(self):
        text = ('{\n  "train_micro_batch_size_per_gpu": 1,\n'
                '  "gradient_clipping": 1.0,\n'
                '  "zero_optimization": {\n'
                '    "stage": 1,\n'
                '    "stage": 2\n'
                '  },\n'
                '  "steps_per_print": 100,\n'
                '  "steps_per_print": 200\n}\n')
        path = self.write("dup.json", text)
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        dups = self.only(findings, "duplicate-key")
        self.assertEqual(len(dups), 2, findings)
        for key, first in (("stage", 0), ("steps_per_print", 0)):
            l1, _ = position(text, '"%s"' % key, first)
            l2, c2 = position(text, '"%s"' % key, first + 1)
            hit = [f for f in dups if f["line"] == l2]
            self.assertEqual(len(hit), 1, dups)
            self.assertEqual(hit[0]["severity"], "error")
            self.assertEqual(hit[0]["col"], c2)
            self.assertIn("line %d" % l1, hit[0]["message"])
            self.assertIn(key, hit[0]["message"])

    def test_comments_are_accepted(self):
        # DeepSpeed reads files with hjson, so comments are fine
        text = ("/* cluster config */\n{\n"
                "  // the micro batch\n"
                '  "train_micro_batch_size_per_gpu": 4, /* per GPU */\n'
                '  "gradient_accumulation_steps": 2,\n'
                '  "gradient_clipping": 1.0 // as of v0.19.3\n}\n')
        path = self.write("comments.json", text)
        res, findings = self.check_json(path)
        self.assertExit(res, 0)
        self.assertEqual(self.errors(findings), [])

    def test_syntax_error_exits_3_with_position(self):
        text = '{\n  "train_batch_size": 8,\n  "gradient_clipping": ,\n}\n'
        path = self.write("broken.json", text)
        res = run("check", path)
        self.assertExit(res, 3)
        line, col = position(text, ",\n}")
        self.assertRegex(res.err, r"(?m)^%s:%d:%d: error: " %
                         (re.escape(path), line, col))

    def test_missing_file_exits_3(self):
        path = os.path.join(self.tmp, "absent.json")
        res = run("check", path)
        self.assertExit(res, 3)
        self.assertIn(path, res.err)

    def test_not_an_object_exits_3(self):
        path = self.write("list.json", "[1, 2]\n")
        self.assertExit(run("check", path), 3)

    def test_several_files_exit_with_the_worst_status(self):
        ok = self.write("ok.json", '{"train_micro_batch_size_per_gpu": 1, '
                        '"gradient_clipping": 1.0}')
        warn = self.write("warn.json", '{"train_micro_batch_size_per_gpu": 1,'
                          ' "gradient_clipping": 1.0, "zero_optimizaton": {}}')
        bad = self.write("bad.json", '{"train_micro_batch_size_per_gpu": 1, '
                         '"gradient_clipping": 1.0, "fp16": {"enabled": true},'
                         ' "bf16": {"enabled": true}}')
        broken = self.write("broken.json", "{")
        missing = os.path.join(self.tmp, "missing.json")
        self.assertExit(run("check", ok, ok), 0)
        self.assertExit(run("check", ok, warn), 0)
        for files in ((ok, bad), (bad, ok), (warn, bad, ok)):
            self.assertExit(run("check", *files), 1)
        for files in ((ok, bad, missing), (missing, bad), (broken, ok),
                      (bad, broken)):
            res = run("check", *files)
            self.assertExit(res, 3)
        # the readable files are still checked and reported
        res = run("check", missing, bad, broken)
        self.assertIn("%s:" % bad, res.err)
        self.assertIn("[precision-conflict]", res.err)
        self.assertIn(missing, res.err)
        self.assertIn("%s:1:" % broken, res.err)
        # json: every file's findings in one array
        res = run("check", "--format", "json", ok, warn, bad)
        self.assertExit(res, 1)
        files = {f["file"] for f in json.loads(res.out)
                 if f["severity"] != "note"}
        self.assertEqual(files, {warn, bad})

    def test_usage_errors_exit_2(self):
        ok = self.write("ok.json", '{"train_micro_batch_size_per_gpu": 1}')
        for args in (("check",), ("check", "--target", "torch", ok),
                     ("check", "--format", "xml", ok),
                     ("check", "--world-size", "0", ok),
                     ("check", "--world-size", "two", ok),
                     ("check", "--no-such-option", ok)):
            with self.subTest(args=args):
                res = run(*args)
                self.assertExit(res, 2)
                self.assertIn("error", res.err)

    def test_help(self):
        res = run("check", "--help")
        self.assertExit(res, 0)
        for word in ("--world-size", "--target", "--format"):
            self.assertIn(word, res.out)


# ---------------------------------------------------------------------------
# Values and rules

class Values(CheckCase):
    BASE = {"train_micro_batch_size_per_gpu": 1, "gradient_clipping": 1.0,
            "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}

    def config(self, name, text_zero):
        """A config whose zero_optimization is the given JSON text."""
        body = json.dumps(self.BASE)[:-1]
        text = '%s,\n "zero_optimization": %s\n}\n' % (body, text_zero)
        return self.write(name, text), text

    def test_5e8_is_an_integer_but_the_string_is_not(self):
        path, _ = self.config("ok.json", '{"stage": 2, "overlap_comm": true, '
                              '"reduce_bucket_size": 5e8, '
                              '"allgather_bucket_size": 2e8}')
        res, findings = self.check_json(path)
        self.assertExit(res, 0)
        self.assertEqual(self.errors(findings), [])
        path, text = self.config("str.json", '{"stage": 2, "overlap_comm": '
                                 'true, "reduce_bucket_size": "5e8"}')
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        bad = self.at(findings, "zero_optimization.reduce_bucket_size")
        self.assertEqual([f["rule"] for f in bad], ["type-mismatch"])
        self.assertEqual(bad[0]["severity"], "error")
        self.assertEqual((bad[0]["line"], bad[0]["col"]),
                         position(text, '"reduce_bucket_size"'))

    def test_fractional_prefetch_bucket_is_rejected(self):
        # 0.9 * 4096**2 as older transformers wrote it (DeepSpeed #6525)
        path, _ = self.config("float.json", '{"stage": 3, '
                              '"stage3_prefetch_bucket_size": 15099494.4}')
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        bad = self.at(findings, "zero_optimization.stage3_prefetch_bucket_size")
        self.assertEqual([f["rule"] for f in bad], ["type-mismatch"])
        self.assertIn("15099494.4", bad[0]["message"])
        # the integral value is fine
        path, _ = self.config("int.json", '{"stage": 3, '
                              '"stage3_prefetch_bucket_size": 15099494}')
        res, findings = self.check_json(path)
        self.assertEqual(self.at(
            findings, "zero_optimization.stage3_prefetch_bucket_size"), [])

    def test_upper_case_device_is_rejected_with_a_suggestion(self):
        path, text = self.config("cpu.json", '{"stage": 3, "offload_param": '
                                 '{"device": "CPU"}}')
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        bad = self.at(findings, "zero_optimization.offload_param.device")
        self.assertEqual([f["rule"] for f in bad], ["invalid-value"])
        self.assertEqual(bad[0]["severity"], "error")
        self.assertIn('"cpu"', bad[0]["message"] + bad[0]["fix"])
        self.assertEqual(bad[0]["line"], position(text, '"CPU"')[0])
        path, _ = self.config("lower.json", '{"stage": 3, "offload_param": '
                              '{"device": "cpu"}}')
        res, findings = self.check_json(path)
        self.assertExit(res, 0)

    def test_auto_is_an_error_for_plain_deepspeed(self):
        text = ('{\n  "train_micro_batch_size_per_gpu": "auto",\n'
                '  "gradient_accumulation_steps": "auto",\n'
                '  "gradient_clipping": "auto",\n'
                '  "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},\n'
                '  "zero_optimization": {"stage": 3, "overlap_comm": true,\n'
                '    "stage3_prefetch_bucket_size": "auto"}\n}\n')
        path = self.write("auto.json", text)
        res, findings = self.check_json(path, "--target", "deepspeed")
        self.assertExit(res, 1)
        auto = {f["path"]: f for f in self.only(findings, "auto-value")}
        self.assertEqual(set(auto), {
            "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
            "gradient_clipping", "optimizer.params.lr",
            "zero_optimization.stage3_prefetch_bucket_size"})
        for f in auto.values():
            self.assertIn("Hugging Face", f["message"])
        # what DeepSpeed does with it: a TypeError for top-level scalars
        # (an error), the default inside a pydantic section (a warning)
        self.assertEqual({p: f["severity"] for p, f in auto.items()}, {
            "train_micro_batch_size_per_gpu": "error",
            "gradient_accumulation_steps": "error",
            "gradient_clipping": "error", "optimizer.params.lr": "error",
            "zero_optimization.stage3_prefetch_bucket_size": "warning"})
        self.assertIn("TypeError",
                      auto["train_micro_batch_size_per_gpu"]["message"])
        self.assertIn("default", auto[
            "zero_optimization.stage3_prefetch_bucket_size"]["message"])
        self.assertEqual(
            auto["gradient_clipping"]["line"],
            position(text, '"gradient_clipping"')[0])

    def test_auto_is_fine_on_hf_keys_with_target_hf(self):
        text = json.dumps({
            "train_batch_size": "auto",
            "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto",
            "gradient_clipping": "auto",
            "bf16": {"enabled": "auto"},
            "optimizer": {"type": "AdamW", "params": {
                "lr": "auto", "betas": "auto", "eps": "auto",
                "weight_decay": "auto"}},
            "scheduler": {"type": "WarmupDecayLR", "params": {
                "warmup_min_lr": "auto", "warmup_max_lr": "auto",
                "warmup_num_steps": "auto", "total_num_steps": "auto"}},
            "zero_optimization": {
                "stage": 3, "overlap_comm": True,
                "reduce_bucket_size": "auto",
                "stage3_prefetch_bucket_size": "auto",
                "stage3_param_persistence_threshold": "auto",
                "stage3_gather_16bit_weights_on_model_save": True},
        }, indent=2)
        path = self.write("hf.json", text)
        res, findings = self.check_json(path, "--target", "hf")
        self.assertExit(res, 0)
        self.assertEqual(self.errors(findings), [])
        # Hugging Face never fills the stage: still an error with hf
        path = self.write("stage.json", '{"zero_optimization": '
                          '{"stage": "auto"}}')
        res, findings = self.check_json(path, "--target", "hf")
        self.assertExit(res, 1)
        bad = self.only(findings, "auto-value")
        self.assertEqual([f["path"] for f in bad], ["zero_optimization.stage"])
        self.assertIn("stage = 0", bad[0]["message"])

    def test_fp16_and_bf16_together(self):
        path = self.write("prec.json", json.dumps(dict(
            self.BASE, fp16={"enabled": True}, bf16={"enabled": True})))
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        self.assertEqual(len(self.only(findings, "precision-conflict")), 1)
        path = self.write("one.json", json.dumps(dict(
            self.BASE, fp16={"enabled": False}, bf16={"enabled": True})))
        res, findings = self.check_json(path)
        self.assertExit(res, 0)
        self.assertEqual(self.only(findings, "precision-conflict"), [])

    def test_reduce_bucket_size_zero(self):
        path, text = self.config("zero.json", '{"stage": 2, "overlap_comm": '
                                 'true, "reduce_bucket_size": 0}')
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        bad = self.only(findings, "reduce-bucket-zero")
        self.assertEqual(len(bad), 1)
        self.assertEqual(bad[0]["severity"], "error")
        self.assertEqual((bad[0]["line"], bad[0]["col"]),
                         position(text, '"reduce_bucket_size"'))
        self.assertIn("ZeroDivisionError", bad[0]["message"])

    def test_gradient_allreduce_sum_with_stage_3(self):
        for stage, want in ((3, 1), (2, 0), (1, 0)):
            with self.subTest(stage=stage):
                path = self.write("sum%d.json" % stage, json.dumps(dict(
                    self.BASE, gradient_allreduce_op="sum",
                    zero_optimization={"stage": stage,
                                       "overlap_comm": stage > 1})))
                res, findings = self.check_json(path, "--ds-version", "0.19.6")  # read from 0.19.6 on
                got = self.only(findings, "allreduce-sum-stage3")
                self.assertEqual(len(got), want, findings)
                self.assertExit(res, want)
                if got:
                    self.assertEqual(got[0]["severity"], "error")
                    self.assertEqual(got[0]["path"], "gradient_allreduce_op")

    def test_scheduler_missing_required_params(self):
        cases = [
            ("WarmupDecayLR", {"warmup_num_steps": 10}, {"total_num_steps"}),
            ("WarmupCosineLR", {}, {"total_num_steps"}),
            ("OneCycle", {"cycle_min_lr": 1e-5},
             {"cycle_max_lr"}),
            ("OneCycle", {}, {"cycle_min_lr", "cycle_max_lr"}),
            ("WarmupLR", {}, set()),
            ("WarmupDecayLR", {"total_num_steps": 1000}, set()),
        ]
        for i, (kind, params, missing) in enumerate(cases):
            with self.subTest(kind=kind, params=params):
                path = self.write("s%d.json" % i, json.dumps(dict(
                    self.BASE, scheduler={"type": kind, "params": params})))
                res, findings = self.check_json(path)
                got = self.only(findings, "scheduler-missing-param")
                self.assertEqual(
                    {f["path"] for f in got},
                    {"scheduler.params." + k for k in missing})
                for f in got:
                    self.assertEqual(f["severity"], "error")
                    self.assertIn(kind, f["message"])
                self.assertExit(res, 1 if missing else 0)

    def test_max_grad_norm_in_optimizer_params_is_rejected(self):
        text = ('{\n  "train_micro_batch_size_per_gpu": 1,\n'
                '  "gradient_clipping": 1.0,\n'
                '  "optimizer": {\n    "type": "AdamW",\n'
                '    "params": {"lr": 1e-4, "max_grad_norm": 1.0}\n  }\n}\n')
        path = self.write("mgn.json", text)
        res, findings = self.check_json(path)
        self.assertExit(res, 1)
        bad = self.only(findings, "rejected-key")
        self.assertEqual(len(bad), 1, findings)
        self.assertEqual(bad[0]["path"], "optimizer.params.max_grad_norm")
        self.assertEqual((bad[0]["line"], bad[0]["col"]),
                         position(text, '"max_grad_norm"'))
        self.assertIn("gradient_clipping", bad[0]["message"] + bad[0]["fix"])


# ---------------------------------------------------------------------------
# The seeds' example configs (transcribed; the seed files themselves are
# used too when ../shared is present)

# 002: the "zero2 示例" config, transcribed (HF Trainer config: "auto").
SEED_002_ZERO2 = """{
  "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000,
           "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto",
                "eps": "auto", "weight_decay": "auto"}},
  "scheduler": {"type": "WarmupDecayLR", "params": {
    "last_batch_iteration": -1, "total_num_steps": "auto",
    "warmup_min_lr": "auto", "warmup_max_lr": "auto",
    "warmup_num_steps": "auto"}},
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "cpu", "pin_memory": true},
    "allgather_partitions": true,
    "allgather_bucket_size": 5e8,
    "overlap_comm": true,
    "reduce_scatter": true,
    "reduce_bucket_size": 5e8,
    "contiguous_gradients": true
  },
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "steps_per_print": 2000,
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "wall_clock_breakdown": false
}
"""

# 003: the "original config" under review, for 8 GPUs (8 x 8 x 4 = 256),
# with the overlap_comm false and steps_per_print 2000 its table lists.
SEED_003_ORIGINAL = """{
  "train_batch_size": 256,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 4,
  "zero_optimization": {
    "stage": 2,
    "allgather_partitions": true,
    "allgather_bucket_size": 5e8,
    "overlap_comm": false,
    "reduce_scatter": true,
    "reduce_bucket_size": 5e8,
    "contiguous_gradients": true,
    "round_robin_gradients": true
  },
  "steps_per_print": 2000,
  "bf16": {"enabled": true},
  "gradient_clipping": 1.0
}
"""


def seed_file(prefix):
    d = shared("seeds")
    if not d:
        return None
    for name in sorted(os.listdir(d)):
        if name.startswith(prefix):
            return os.path.join(d, name)
    return None


class Seeds(CheckCase):
    def test_002_zero2_example_with_offload_param(self):
        path = self.write("zero2.json", SEED_002_ZERO2)
        res, findings = self.check_json(path, "--target", "hf")
        # DeepSpeed accepts offload_param at stage 2 and ignores it: a
        # warning, which --strict turns into a failure
        self.assertExit(res, 0)
        self.assertEqual(self.errors(findings), [])
        f = self.only(findings, "offload-param-ignored")[0]
        self.assertEqual(f["severity"], "warning")
        self.assertEqual(f["path"], "zero_optimization.offload_param")
        res, _ = self.check_json(path, "--target", "hf", "--strict")
        self.assertExit(res, 1)
        self.assertEqual((f["line"], f["col"]),
                         position(SEED_002_ZERO2, '"offload_param"'))
        self.assertIn("stage 3", f["message"] + f["fix"])
        # without offload_param the example is clean for the HF Trainer
        fixed = json.loads(SEED_002_ZERO2)
        del fixed["zero_optimization"]["offload_param"]
        path = self.write("fixed.json", json.dumps(fixed))
        res, findings = self.check_json(path, "--target", "hf")
        self.assertExit(res, 0)

    def test_003_original_config_has_overlap_comm_off(self):
        path = self.write("orig.json", SEED_003_ORIGINAL)
        res, findings = self.check_json(path, "--world-size", "8")
        self.assertExit(res, 0)  # works, but slow: a warning
        f = self.only(findings, "overlap-comm-off")
        self.assertEqual(len(f), 1, findings)
        self.assertEqual(f[0]["severity"], "warning")
        self.assertEqual((f[0]["line"], f[0]["col"]),
                         position(SEED_003_ORIGINAL, '"overlap_comm"'))
        self.assertEqual(self.only(findings, "batch-identity"), [])
        # 256 = 8 x 4 x 8 holds only on 8 GPUs
        res, findings = self.check_json(path, "--world-size", "4")
        self.assertExit(res, 1)
        self.assertEqual(len(self.only(findings, "batch-identity")), 1)
        # the optimised version fixes it
        fixed = SEED_003_ORIGINAL.replace('"overlap_comm": false',
                                          '"overlap_comm": true')
        path = self.write("fixed.json", fixed)
        res, findings = self.check_json(path, "--world-size", "8")
        self.assertEqual(self.only(findings, "overlap-comm-off"), [])

    @unittest.skipUnless(seed_file("002_"), "../shared/seeds absent")
    def test_002_seed_file_example(self):
        with open(seed_file("002_"), encoding="utf-8") as f:
            text = f.read()
        # the example runs from "## zero2 示例" to its explanation, with a
        # ``` fence in the middle
        body = text.split("## zero2 示例", 1)[1]
        body = body.split('\n1. `"fp16"`', 1)[0]
        body = "\n".join(l for l in body.splitlines() if l.strip() != "```")
        path = self.write("seed002.json", body)
        # DeepSpeed accepts it and ignores offload_param at stage 2: a
        # warning (contrib/docs/conformance.md), an error under --strict
        res, findings = self.check_json(path, "--target", "hf")
        self.assertExit(res, 0)
        self.assertEqual(self.errors(findings), [])
        # (and the stray top-level "min_lr", ignored by DeepSpeed)
        self.assertEqual(sorted(f["rule"] for f in findings
                                if f["severity"] == "warning"),
                         ["offload-param-ignored", "unknown-key"])
        res, _ = self.check_json(path, "--target", "hf", "--strict")
        self.assertExit(res, 1)

    @unittest.skipUnless(seed_file("003_"), "../shared/seeds absent")
    def test_003_seed_file_config(self):
        with open(seed_file("003_"), encoding="utf-8") as f:
            text = f.read()
        blocks = re.findall(r"```json\n(.*?)```", text, re.S)
        self.assertTrue(blocks)
        # the first block is the original config, with // comments; it
        # leaves overlap_comm out, which means false at stage 2
        path = self.write("seed003.json", blocks[0])
        res, findings = self.check_json(path, "--world-size", "8")
        self.assertExit(res, 0)
        self.assertEqual(len(self.only(findings, "overlap-comm-off")), 1)
        self.assertEqual(self.only(findings, "batch-identity"), [])


# ---------------------------------------------------------------------------
# Real-world configs and the built-in profiles' outputs

REALWORLD = shared("realworld-configs")


class RealWorld(CheckCase):
    @unittest.skipUnless(REALWORLD, "../shared/realworld-configs absent")
    def test_every_realworld_config_passes_target_hf(self):
        names = sorted(n for n in os.listdir(REALWORLD) if n.endswith(".json"))
        self.assertTrue(names)
        for name in names:
            with self.subTest(config=name):
                res, findings = self.check_json(
                    os.path.join(REALWORLD, name), "--target", "hf")
                self.assertEqual(self.errors(findings), [])
                self.assertExit(res, 0)

    @unittest.skipUnless(REALWORLD, "../shared/realworld-configs absent")
    def test_all_realworld_configs_in_one_run(self):
        names = sorted(os.path.join(REALWORLD, n)
                       for n in os.listdir(REALWORLD) if n.endswith(".json"))
        res = run("check", "--target", "hf", *names)
        self.assertExit(res, 0)
        self.assertNotRegex(res.err, r"(?m): error: ")


class BuiltinOutputs(CheckCase):
    def test_builtin_profiles_outputs_pass_target_deepspeed(self):
        for prof in dsf.BUILTIN_PROFILES:
            out = os.path.join(self.tmp, prof)
            res = run("gen", prof, "-o", out)
            self.assertExit(res, 0)
            with open(os.path.join(out, "manifest.json")) as f:
                manifest = json.load(f)
            self.assertTrue(manifest["variants"])
            for v in manifest["variants"]:
                with self.subTest(profile=prof, variant=v["name"]):
                    world = v["params"]["world_size"]
                    self.assertIsInstance(world, int)
                    res, findings = self.check_json(
                        os.path.join(out, v["file"]), "--world-size",
                        str(world), "--target", "deepspeed")
                    self.assertEqual(self.errors(findings), [])
                    self.assertExit(res, 0)


# ---------------------------------------------------------------------------
# Batch derivation: every given/missing combination, several world sizes

TB, MB, GAS = ("train_batch_size", "train_micro_batch_size_per_gpu",
               "gradient_accumulation_steps")
MISSING_MSG = ("Either train_batch_size or train_micro_batch_size_per_gpu "
               "needs to be provided")


def deepspeed_batch(tb, mb, gas, w):
    """DeepSpeedConfig._set_batch_related_parameters + _batch_assertion
    (deepspeed.md section 3), with None for a missing key. Returns
    ({key: value}, [derived keys]) or raises AssertionError(DeepSpeed's
    message)."""
    derived = []
    if tb is not None and mb is not None and gas is not None:
        pass
    elif tb is not None and mb is not None:
        gas = tb // mb // w
        derived = [GAS]
    elif tb is not None and gas is not None:
        mb = tb // w // gas
        derived = [MB]
    elif mb is not None and gas is not None:
        tb = mb * gas * w
        derived = [TB]
    elif tb is not None:
        gas, mb = 1, tb // w
        derived = [GAS, MB]
    elif mb is not None:
        tb, gas = mb * w, 1
        derived = [GAS, TB]
    else:
        raise AssertionError(MISSING_MSG)
    assert tb > 0, "Train batch size: %d has to be greater than 0" % tb
    assert mb > 0, "Micro batch size per gpu: %d has to be greater than 0" % mb
    assert gas > 0, "Gradient accumulation steps: %d has to be greater than 0" % gas
    assert tb == mb * gas * w, (
        "Check batch related parameters. train_batch_size is not equal to "
        "micro_batch_per_gpu * gradient_acc_step * world_size "
        "%d != %d * %d * %d" % (tb, mb, gas, w))
    return {TB: tb, MB: mb, GAS: gas}, sorted(derived)


# (TB, MB, GAS) triples; each combination uses the given subset
TRIPLES = [(32, 16, 1), (32, 8, 2), (33, 17, 2), (32, 18, 1), (64, 4, 4),
           (10, 3, 2), (8, 16, 1), (12, 2, 3), (48, 6, 4)]
WORLDS = [1, 2, 3, 4, 8]
COMBOS = list(itertools.product((True, False), repeat=3))
BATCH_RULES = ("batch-identity", "batch-missing", "batch-derived")


class BatchRules(CheckCase):
    def run_batch(self, values, world, target="deepspeed"):
        cfg = {"gradient_clipping": 1.0}
        cfg.update({k: v for k, v in values.items() if v is not None})
        path = self.write("batch.json", json.dumps(cfg))
        res, findings = self.check_json(path, "--world-size", str(world),
                                        "--target", target)
        return res, [f for f in findings if f["rule"] in BATCH_RULES]

    def test_upstream_cases_at_world_size_2(self):
        # tests/unit/runtime/test_ds_config_dict.py::TestBatchConfig
        for (tb, mb, gas), ok in (((32, 16, 1), True), ((32, 8, 2), True),
                                  ((33, 17, 2), False), ((32, 18, 1), False)):
            with self.subTest(tb=tb, mb=mb, gas=gas):
                res, found = self.run_batch({TB: tb, MB: mb, GAS: gas}, 2)
                self.assertExit(res, 0 if ok else 1)
                self.assertEqual([f["rule"] for f in found],
                                 [] if ok else ["batch-identity"])
                if not ok:
                    self.assertIn("%d != %d * %d * 2" % (tb, mb, gas),
                                  found[0]["message"])

    def test_every_given_missing_combination(self):
        seen = set()
        outcomes = {}
        for (has_tb, has_mb, has_gas), (tb, mb, gas), w in itertools.product(
                COMBOS, TRIPLES, WORLDS):
            given = (tb if has_tb else None, mb if has_mb else None,
                     gas if has_gas else None)
            if (given, w) in seen:
                continue
            seen.add((given, w))
            with self.subTest(tb=given[0], mb=given[1], gas=given[2],
                              world=w):
                res, found = self.run_batch(dict(zip((TB, MB, GAS), given)),
                                            w)
                rules = sorted(f["rule"] for f in found)
                try:
                    values, derived = deepspeed_batch(*given, w)
                except AssertionError as e:
                    msg = str(e)
                    outcomes.setdefault((has_tb, has_mb, has_gas),
                                        set()).add("fail")
                    self.assertExit(res, 1)
                    if msg == MISSING_MSG:
                        self.assertEqual(rules, ["batch-missing"])
                    else:
                        self.assertEqual(rules, ["batch-identity"])
                        self.assertEqual(found[0]["severity"], "error")
                    self.assertIn(msg, found[0]["message"])
                    continue
                outcomes.setdefault((has_tb, has_mb, has_gas),
                                    set()).add("ok")
                self.assertExit(res, 0)
                self.assertEqual(rules, ["batch-derived"] * len(derived))
                self.assertEqual(sorted(f["path"] for f in found), derived)
                for f in found:
                    self.assertEqual(f["severity"], "note")
                    # the note gives the derived value to pin
                    self.assertIn('"%s": %d' % (f["path"], values[f["path"]]),
                                  f["fix"])
        # the table covers a pass and a failure wherever DeepSpeed can fail
        self.assertEqual(len(outcomes), 8)
        for combo in ((True, True, True), (True, True, False),
                      (True, False, True), (True, False, False)):
            self.assertEqual(outcomes[combo], {"ok", "fail"}, combo)
        for combo in ((False, True, True), (False, True, False)):
            self.assertEqual(outcomes[combo], {"ok"}, combo)
        for combo in ((False, False, True), (False, False, False)):
            self.assertEqual(outcomes[combo], {"fail"}, combo)

    def test_floor_division_cases(self):
        # a floor to 0 is caught by the > 0 checks, a remainder by the
        # identity (deepspeed.md section 3)
        res, found = self.run_batch({TB: 8, MB: 16}, 1)
        self.assertExit(res, 1)
        self.assertIn("Gradient accumulation steps: 0 has to be greater "
                      "than 0", found[0]["message"])
        res, found = self.run_batch({TB: 10}, 4)
        self.assertExit(res, 1)
        self.assertIn("10 != 2 * 1 * 4", found[0]["message"])

    def test_missing_batch_is_an_error_for_the_hf_trainer_too(self):
        # the Trainer only replaces "auto"; it never adds a missing key
        # (transformers integrations/deepspeed.py fill_match)
        for values in ({}, {GAS: 4}):
            with self.subTest(values=values):
                res, found = self.run_batch(values, 2, target="hf")
                self.assertExit(res, 1)
                self.assertEqual([f["rule"] for f in found],
                                 ["batch-missing"])
                res, found = self.run_batch(values, 2)
                self.assertExit(res, 1)
                self.assertEqual([f["rule"] for f in found],
                                 ["batch-missing"])


if __name__ == "__main__":
    unittest.main()


# ---------------------------------------------------------------------------
# The machine-readable fixes ("edits") of the deepspeed rules

EDITS_CONFIG = """{
  "train_batch_size": 16,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8,
  "gradient_clipping": "auto",
  "wall_clock_breakdown": "auto",
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
  "zero_optimization": {"stage": 3, "overlap_com": true,
    "stage3_gather_fp16_weights_on_model_save": true,
    "prefetch_bucket_size": 10, "stage3_prefetch_bucket_size": 20},
  "bfloat16": {"enabled": true, "loss_scale": 0}
}
"""


class RuleEdits(CheckCase):
    def edits(self, findings, rule, path):
        f = [x for x in findings if x["rule"] == rule and x["path"] == path]
        self.assertEqual(len(f), 1, (rule, path, findings))
        return f[0].get("edits")

    def test_the_rules_fixes_as_edits(self):
        path = self.write("c.json", EDITS_CONFIG)
        _, found = self.check_json(path)
        self.assertEqual(self.edits(found, "unknown-key",
                                    "zero_optimization.overlap_com"),
                         [{"op": "rename", "path": "zero_optimization.overlap_com",
                           "to": "overlap_comm"}])
        # an fp16 key in bf16 (its old name here): moved to fp16
        self.assertEqual(self.edits(found, "unknown-key", "bfloat16.loss_scale"),
                         [{"op": "move", "path": "bfloat16.loss_scale",
                           "to": "fp16.loss_scale"}])
        # a deprecated name whose value means the same: renamed
        self.assertEqual(self.edits(found, "deprecated-key", "bfloat16"),
                         [{"op": "rename", "path": "bfloat16", "to": "bf16"}])
        old = "zero_optimization.stage3_gather_fp16_weights_on_model_save"
        self.assertEqual(self.edits(found, "deprecated-key", old),
                         [{"op": "rename", "path": old,
                           "to": "gather_16bit_weights_on_model_save"}])
        # an alias given with the field: the alias dropped
        self.assertEqual(
            self.edits(found, "alias-with-field",
                       "zero_optimization.stage3_prefetch_bucket_size"),
            [{"op": "remove",
              "path": "zero_optimization.stage3_prefetch_bucket_size"}])
        # the batch identity: train_batch_size or gas, at world size 1
        self.assertEqual(self.edits(found, "batch-identity", "train_batch_size"),
                         [{"op": "set", "path": "train_batch_size", "value": 32},
                          {"op": "set", "path": "gradient_accumulation_steps",
                           "value": 4}])
        # "auto" for plain DeepSpeed: the default value
        self.assertEqual(self.edits(found, "auto-value", "gradient_clipping"),
                         [{"op": "set", "path": "gradient_clipping", "value": 1}])
        self.assertEqual(self.edits(found, "auto-value", "wall_clock_breakdown"),
                         [{"op": "set", "path": "wall_clock_breakdown",
                           "value": False}])

    def test_edits_cross_worker_processes(self):
        # check -j 2 sends the findings of its second process through a
        # pipe (16 files a process at least: 40 files)
        paths = [self.write("c%d.json" % i, EDITS_CONFIG) for i in range(40)]
        one = run("check", "--format", "json", "-j", "1", *paths)
        two = run("check", "--format", "json", "-j", "2", *paths)
        self.assertEqual(two.out, one.out)
        edits = [f for f in json.loads(two.out) if "edits" in f]
        self.assertEqual(len(edits), 40 * 8, len(edits))
        self.assertEqual({f["file"] for f in edits}, set(paths))

    def test_world_size_and_rename_kinds(self):
        path = self.write("c.json", EDITS_CONFIG)
        _, found = self.check_json(path, "--world-size", "4")
        self.assertEqual(self.edits(found, "batch-identity", "train_batch_size"),
                         [{"op": "set", "path": "train_batch_size",
                           "value": 128},
                          {"op": "set", "path": "gradient_accumulation_steps",
                           "value": 1}])
        # a deprecated name whose value changes meaning is no rename
        path = self.write("d.json", '{"train_micro_batch_size_per_gpu": 1, '
                          '"zero_optimization": {"stage": 2, '
                          '"cpu_offload": true}}')
        _, found = self.check_json(path)
        self.assertIsNone(self.edits(found, "deprecated-key",
                                     "zero_optimization.cpu_offload"))
        # at target hf the Trainer fills "auto": no edit to a default
        path = self.write("e.json", '{"train_micro_batch_size_per_gpu": 1, '
                          '"gradient_clipping": "auto"}')
        _, found = self.check_json(path, "--target", "hf")
        self.assertEqual(self.only(found, "auto-value"), [])
