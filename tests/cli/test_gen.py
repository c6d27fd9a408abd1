"""dsforge gen: golden outputs, precedence of layers, provenance,
determinism, all-or-nothing output and every bad-input case."""
import hashlib
import json
import os
import unittest

import dsf
from dsf import run

# A profile whose every layer can be observed: build sets a marker at
# several paths, so each pair of layers can be put in conflict.
LAYERED = """
return {
  name = "layered",
  summary = "precedence test profile",
  extends = "layered-base",
  params = { world_size = 1, mark = { default = "child", doc = "marker" } },
  tiers = {
    plain = { params = {} },
    over = { params = {}, config = { x = { tier = "tier" }, t = "tier" } },
  },
  tier_order = { "plain", "over" },
  build = function(p)
    return { x = { build = p.mark, child = true }, b = "child" }
  end,
}
"""
LAYERED_BASE = """
return {
  name = "layered-base",
  summary = "its parent",
  params = { base_only = { default = 1, doc = "a parent param" } },
  build = function(p)
    return {
      train_batch_size = 4, train_micro_batch_size_per_gpu = 4,
      gradient_accumulation_steps = 1, gradient_clipping = 1.0,
      optimizer = { type = "AdamW", params = { lr = 1e-4 } },
      x = { build = "parent", parent = true }, b = "parent", t = "build",
      f = "build", e = "build",
    }
  end,
}
"""


class GenTestCase(dsf.TempDirTest):
    def layered(self):
        self.profile("layered-base", LAYERED_BASE)
        return self.profile("layered", LAYERED)

    def gen_json(self, *args):
        res = run("gen", *args, "--stdout")
        self.assertExit(res, 0)
        return json.loads(res.out)


class Golden(GenTestCase):
    def test_every_builtin_profile_and_tier_matches_its_golden_file(self):
        for prof in dsf.BUILTIN_PROFILES:
            out = os.path.join(self.tmp, prof)
            res = run("gen", prof, "-o", out)
            self.assertExit(res, 0)
            self.assertNotIn("error", res.err)
            for tier in dsf.TIERS:
                name = "%s-%s.json" % (prof, tier)
                with open(os.path.join(out, name), "rb") as f:
                    got = f.read()
                with open(os.path.join(dsf.GOLDEN_DIR, name), "rb") as f:
                    want = f.read()
                self.assertEqual(got, want, "%s differs from tests/golden "
                                 "(run tests/golden/update.sh if intended)"
                                 % name)

    def test_summary_tables_match_their_golden_files(self):
        # The summary table of a dry run, for every built-in profile (all
        # tiers) and one matrix: tests/golden/summary/*.txt.
        cases = [(p, (p,)) for p in dsf.BUILTIN_PROFILES]
        cases.append(("8xa100-matrix", ("8xa100", "--tier", "small",
                                         "--matrix", "zero_stage=2,3")))
        for name, args in cases:
            res = run("gen", *args)
            self.assertExit(res, 0)
            with open(os.path.join(dsf.GOLDEN_DIR, "summary", name + ".txt"),
                      encoding="utf-8") as f:
                self.assertEqual(res.out, f.read(),
                                 "summary of %s differs from tests/golden/"
                                 "summary (run tests/golden/update.sh if "
                                 "intended)" % name)

    def test_builtin_outputs_respect_deepspeed_invariants(self):
        for prof in dsf.BUILTIN_PROFILES:
            out = os.path.join(self.tmp, prof)
            self.assertExit(run("gen", prof, "-o", out), 0)
            with open(os.path.join(out, "manifest.json")) as f:
                manifest = json.load(f)
            for v in manifest["variants"]:
                with open(os.path.join(out, v["file"])) as f:
                    cfg = json.load(f)
                world = v["params"]["world_size"]
                self.assertEqual(cfg["train_batch_size"],
                                 cfg["train_micro_batch_size_per_gpu"] *
                                 cfg["gradient_accumulation_steps"] * world)
                self.assertFalse(cfg["fp16"]["enabled"] and
                                 cfg["bf16"]["enabled"])
                zero = cfg.get("zero_optimization", {})
                if "offload_param" in zero:
                    self.assertEqual(zero["stage"], 3)
                self.assertNotIn('"auto"', json.dumps(cfg))


class Precedence(GenTestCase):
    """Layers, lowest first: chain builds (parent first), tier overlay,
    -f files (left to right), command-line edits (left to right)."""

    def test_child_build_overrides_parent_build(self):
        cfg = self.gen_json("layered", "--tier", "plain", "--profile-path",
                            self.layered())
        self.assertEqual(cfg["b"], "child")
        # objects merge deeply: both builds' members survive
        self.assertEqual(cfg["x"], {"build": "child", "child": True,
                                    "parent": True})

    def test_tier_overlay_overrides_build(self):
        cfg = self.gen_json("layered", "--tier", "over", "--profile-path",
                            self.layered())
        self.assertEqual(cfg["t"], "tier")
        self.assertEqual(cfg["x"]["tier"], "tier")
        self.assertEqual(cfg["x"]["build"], "child")

    def test_file_overrides_build_and_tier(self):
        f = self.write("o.json", '{"t": "file", "f": "file", '
                                 '"x": {"tier": "file"}}')
        cfg = self.gen_json("layered", "--tier", "over", "-f", f,
                            "--profile-path", self.layered())
        self.assertEqual(cfg["t"], "file")
        self.assertEqual(cfg["f"], "file")
        self.assertEqual(cfg["x"]["tier"], "file")

    def test_later_file_overrides_earlier_file(self):
        a = self.write("a.json", '{"f": "a", "only_a": 1}')
        b = self.write("b.json", '{"f": "b"}')
        cfg = self.gen_json("layered", "--tier", "plain", "-f", a, "-f", b,
                            "--profile-path", self.layered())
        self.assertEqual(cfg["f"], "b")
        self.assertEqual(cfg["only_a"], 1)

    def test_edit_overrides_build_tier_and_file(self):
        f = self.write("o.json", '{"t": "file", "e": "file"}')
        cfg = self.gen_json("layered", "--tier", "over", "-f", f,
                            "t=edit", "--set", "e=edit", "x.build=edit",
                            "--profile-path", self.layered())
        self.assertEqual(cfg["t"], "edit")
        self.assertEqual(cfg["e"], "edit")
        self.assertEqual(cfg["x"]["build"], "edit")

    def test_later_edit_overrides_earlier_edit(self):
        cfg = self.gen_json("layered", "--tier", "plain", "e=1", "e=2",
                            "--profile-path", self.layered())
        self.assertEqual(cfg["e"], 2)

    def test_arrays_are_replaced_not_merged(self):
        a = self.write("a.json", '{"arr": [1, 2, 3]}')
        b = self.write("b.json", '{"arr": [9]}')
        cfg = self.gen_json("layered", "--tier", "plain", "-f", a, "-f", b,
                            "--profile-path", self.layered())
        self.assertEqual(cfg["arr"], [9])

    def test_file_can_delete_a_key_and_set_null(self):
        f = self.write("o.json", """{
            // comments are fine in override files
            "b": {"$delete": true},
            "x": {"parent": {"$delete": true}},
            "n": null, /* JSON null is a value, not a delete */
        }""")
        cfg = self.gen_json("layered", "--tier", "plain", "-f", f,
                            "--profile-path", self.layered())
        self.assertNotIn("b", cfg)
        self.assertNotIn("parent", cfg["x"])
        self.assertIn("n", cfg)
        self.assertIsNone(cfg["n"])

    def test_edit_forms(self):
        cfg = self.gen_json(
            "layered", "--tier", "plain", "--profile-path", self.layered(),
            "+new.deep=3", "~b", "--unset", "x.parent", "s=hello",
            "j={\"k\": [1, 2]}", "q=\"7\"", "arr=[1,2]", "arr[1]=5",
            "arr[2]=6", '["dotted.key"].v=1')
        self.assertEqual(cfg["new"], {"deep": 3})
        self.assertNotIn("b", cfg)
        self.assertNotIn("parent", cfg["x"])
        self.assertEqual(cfg["s"], "hello")
        self.assertEqual(cfg["j"], {"k": [1, 2]})
        self.assertEqual(cfg["q"], "7")
        self.assertEqual(cfg["arr"], [1, 5, 6])
        self.assertEqual(cfg["dotted.key"], {"v": 1})

    def test_param_changes_inputs_before_build(self):
        cfg = self.gen_json("layered", "--tier", "plain", "--param",
                            "mark=from-param", "--profile-path",
                            self.layered())
        self.assertEqual(cfg["x"]["build"], "from-param")


class Provenance(GenTestCase):
    def test_why_lists_every_layer_that_touched_the_value(self):
        d = self.layered()
        f = self.write("o.json", '{\n  "t": "file"\n}\n')
        res = run("gen", "layered", "--tier", "over", "--profile-path", d,
                  "-f", f, "--set", "t=edit", "--why", "t")
        self.assertExit(res, 0)
        lines = res.out.splitlines()
        self.assertEqual(lines[0], 't (variant over) = "edit"')
        self.assertIn("profile  set       profile layered-base", lines[1])
        self.assertIn("layered-base.lua:", lines[1])
        self.assertIn("tier     override  tier overlay", lines[2])
        self.assertIn("file     override  -f %s (%s:2:3)" % (f, f), lines[3])
        self.assertIn('= "file"', lines[3])
        self.assertIn("edit     override  t=edit (argument #", lines[4])
        self.assertEqual(len(lines), 5)

    def test_why_reports_deletes_and_resolvers(self):
        res = run("gen", "8xa100", "--tier", "small", "~steps_per_print",
                  "--why", "steps_per_print")
        self.assertExit(res, 0)
        self.assertIn("(not set)", res.out)
        self.assertIn("delete", res.out)
        res = run("gen", "8xa100", "--tier", "small", "--why",
                  "optimizer.params.lr")
        self.assertExit(res, 0)
        self.assertIn('= "auto"', res.out)
        self.assertIn("plugin deepspeed resolver hf-auto", res.out)
        self.assertIn("= 0.0001", res.out)

    def test_why_is_printed_when_the_variant_has_errors(self):
        # issue 29: the provenance is needed exactly when a rule fails
        res = run("gen", "8xa100", "--tier", "small", "train_batch_size=7",
                  "--why", "train_batch_size")
        self.assertExit(res, 1)
        self.assertIn("[batch-identity]", res.err)
        lines = res.out.splitlines()
        self.assertEqual(lines[0], "train_batch_size (variant small) = 7")
        self.assertIn("edit     override  train_batch_size=7 (argument #5)",
                      res.out)

    def test_a_mistyped_key_of_an_edit_is_blamed_on_the_argument(self):
        # issue 29: the edit made "zero_optimizaton" (no event names the
        # object itself); it was blamed on the profile's build
        res = run("gen", "8xa100", "--tier", "small",
                  "zero_optimizaton.stage=2", "--stdout")
        line = [l for l in res.err.splitlines() if "[unknown-key]" in l]
        self.assertEqual(len(line), 1, res.err)
        self.assertTrue(line[0].startswith(
            "argument #5: warning: variant small: "
            "'zero_optimizaton.stage=2': zero_optimizaton: "), line[0])
        self.assertNotIn("8xa100.lua", res.err)

    def test_a_finding_on_a_param_is_blamed_on_the_param_argument(self):
        # issue 29: memory-fit depends on gpu_mem_gb, set by --param; it
        # was blamed on base.lua (the build), now on the argument
        for args, where in ((("--param", "gpu_mem_gb=1"),
                             "argument #5: warning: variant small: "
                             "'--param gpu_mem_gb=1': "),
                            (("--matrix", "gpu_mem_gb=1,2"),
                             "argument #5: warning: variant "
                             "small.gpu_mem_gb-2: '--matrix gpu_mem_gb': ")):
            with self.subTest(args=args):
                res = run("gen", "base", "--tier", "small", *args)
                self.assertExit(res, 0)
                line = [l for l in res.err.splitlines()
                        if "[memory-fit]" in l and where in l]
                self.assertEqual(len(line), 1, res.err)
                self.assertTrue(line[0].startswith(where), line[0])
                self.assertNotIn("base.lua", res.err)
        # the scheduler's warmup depends on warmup_steps (was base.lua's
        # "auto" line)
        res = run("gen", "8xa100", "--tier", "small", "--param",
                  "warmup_steps=20000")
        self.assertIn("argument #5: warning: variant small: '--param "
                      "warmup_steps=20000': scheduler.params.warmup_num_steps"
                      , res.err)
        self.assertNotIn("base.lua", res.err)
        # a param given that the finding does not depend on changes nothing
        res = run("gen", "base", "--tier", "small", "--param",
                  "learning_rate=0.1", "--param", "micro_batch_size=4096")
        self.assertIn("argument #7: warning: variant small: "
                      "'--param micro_batch_size=4096': ", res.err)

    def test_a_finding_on_a_resolved_auto_keeps_its_file_and_line(self):
        # issue 29: at --target deepspeed the hf-auto resolver (no file)
        # fills base.lua's "auto" betas; the constructor-args error on them
        # lost its file:line ("dsforge: error:"); it is located where the
        # "auto" was written
        res = run("gen", "base", "--tier", "small", "optimizer.type=RMSprop",
                  "--stdout")
        self.assertExit(res, 1)
        line = [l for l in res.err.splitlines() if "[constructor-args]" in l]
        self.assertEqual(len(line), 1, res.err)
        self.assertRegex(line[0], r"^<built-in>/profiles/base\.lua:\d+: "
                         r"error: variant small: optimizer\.params\.betas: ")
        self.assertNotIn("dsforge: error: variant", res.err)

    def test_diagnostics_point_at_the_layer_that_set_the_value(self):
        f = self.write("bad.json", '{\n  "zero_optimization": {\n'
                                   '    "stagee": 3\n  }\n}\n')
        res = run("gen", "8xa100", "--tier", "small", "-f", f)
        self.assertExit(res, 1)
        self.assertIn("%s:3:5: error: variant small: "
                      "zero_optimization.stagee" % f, res.err)
        self.assertIn("[unknown-key]", res.err)


class Output(GenTestCase):
    def test_writes_every_variant_and_a_manifest(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "-o", out)
        self.assertExit(res, 0)
        self.assertEqual(sorted(os.listdir(out)),
                         ["8xa100-large.json", "8xa100-medium.json",
                          "8xa100-small.json", "manifest.json"])
        # The summary table: a row per variant, the fits note, a footer.
        rows = res.out.splitlines()
        self.assertTrue(rows[0].startswith("variant"))
        self.assertEqual([r.split()[0] for r in rows[1:4]],
                         ["small", "medium", "large"])
        self.assertTrue(rows[4].startswith("fits: "))
        self.assertEqual(rows[5], "3 variants and manifest.json in " + out)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual(m["profile"], "8xa100")
        self.assertEqual([c["name"] for c in m["chain"]], ["base", "8xa100"])
        src = os.path.join(dsf.SOURCE_DIR, "profiles", "8xa100.lua")
        with open(src, "rb") as f:
            self.assertEqual(m["chain"][1]["sha256"],
                             hashlib.sha256(f.read()).hexdigest())
        for v in m["variants"]:
            with open(os.path.join(out, v["file"]), "rb") as f:
                self.assertEqual(v["sha256"],
                                 hashlib.sha256(f.read()).hexdigest())
            self.assertIn("world_size", v["params"])
            args = v["summary"]["hf_training_args"]
            self.assertEqual(args["per_device_train_batch_size"],
                             v["params"]["micro_batch_size"])
            self.assertTrue(args["bf16"])
        self.assertEqual(m["dsforge_version"],
                         run("--version").out.split()[1])

    def test_same_inputs_same_bytes(self):
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        args = ["--matrix", "micro_batch_size=1,2", "-f",
                self.write("o.json", '{"z": {"b": 1, "a": 2, "c": [3]}}')]
        self.assertExit(run("gen", "small-gpu-offload", "-o", a, *args), 0)
        self.assertExit(run("gen", "small-gpu-offload", "-o", b, *args), 0)
        self.assertEqual(self.listing(a), self.listing(b))

    def test_unchanged_files_are_left_alone(self):
        out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "8xa100", "-o", out), 0)
        before = {n: os.stat(os.path.join(out, n)) for n in os.listdir(out)}
        # Same inputs: no file is rewritten (same inode, same mtime).
        self.assertExit(run("gen", "8xa100", "-o", out), 0)
        for n, st in before.items():
            now = os.stat(os.path.join(out, n))
            self.assertEqual((now.st_ino, now.st_mtime_ns),
                             (st.st_ino, st.st_mtime_ns), n)
        # One variant changes: it and the manifest are replaced, no more.
        self.assertExit(run("gen", "8xa100", "-o", out, "--param",
                            "max_grad_norm=0.5", "--tier", "small"), 0)
        changed = {n for n, st in before.items()
                   if os.stat(os.path.join(out, n)).st_ino != st.st_ino}
        self.assertEqual(changed, {"8xa100-small.json", "manifest.json"})
        self.assertEqual(sorted(os.listdir(out)), sorted(before))

    def test_keys_are_sorted_and_integers_stay_integers(self):
        res = run("gen", "8xa100", "--tier", "small", "--stdout")
        self.assertExit(res, 0)
        cfg = json.loads(res.out)
        self.assertEqual(list(cfg.keys()), sorted(cfg.keys()))
        self.assertIn('"stage3_max_live_parameters": 1000000000', res.out)
        self.assertNotIn("e+", res.out)

    def test_matrix_is_the_product_for_each_tier(self):
        out = os.path.join(self.tmp, "m")
        res = run("gen", "8xa100", "--tier", "small,large", "--matrix",
                  "micro_batch_size=1,2", "--matrix", "precision=bf16,fp16",
                  "-o", out)
        self.assertExit(res, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            names = [v["name"] for v in json.load(f)["variants"]]
        self.assertEqual(names, [
            "small.micro_batch_size-1.precision-bf16",
            "small.micro_batch_size-1.precision-fp16",
            "small.micro_batch_size-2.precision-bf16",
            "small.micro_batch_size-2.precision-fp16",
            "large.micro_batch_size-1.precision-bf16",
            "large.micro_batch_size-1.precision-fp16",
            "large.micro_batch_size-2.precision-bf16",
            "large.micro_batch_size-2.precision-fp16"])
        with open(os.path.join(
                out, "8xa100-large.micro_batch_size-2.precision-fp16.json")) as f:
            cfg = json.load(f)
        self.assertEqual(cfg["train_micro_batch_size_per_gpu"], 2)
        self.assertEqual(cfg["gradient_accumulation_steps"], 16)
        self.assertTrue(cfg["fp16"]["enabled"])
        self.assertFalse(cfg["bf16"]["enabled"])

    def test_matrix_names_are_safe_file_names(self):
        out = os.path.join(self.tmp, "m")
        res = run("gen", "8xa100", "--tier", "small", "--matrix",
                  "learning_rate=1e-4,0.0003", "-o", out)
        self.assertExit(res, 0)
        for name in os.listdir(out):
            self.assertRegex(name, r"^[A-Za-z0-9_.-]+$")

    def test_stdout_needs_exactly_one_variant(self):
        res = run("gen", "8xa100", "--stdout")
        self.assertExit(res, 2)
        self.assertIn("exactly one variant", res.err)
        self.assertEqual(res.out, "")

    def test_target_hf_keeps_auto_where_hugging_face_fills_it(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--target", "hf")
        self.assertEqual(cfg["optimizer"]["params"]["lr"], "auto")
        self.assertEqual(cfg["zero_optimization"]["reduce_bucket_size"],
                         "auto")
        self.assertEqual(cfg["train_micro_batch_size_per_gpu"], 1)

    def test_target_deepspeed_resolves_auto_like_hugging_face(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--param",
                            "learning_rate=3e-5", "--param",
                            "model=llama-3.1-8b")
        self.assertEqual(cfg["optimizer"]["params"]["lr"], 3e-5)
        self.assertEqual(cfg["scheduler"]["params"]["warmup_max_lr"], 3e-5)
        h = 4096
        zero = cfg["zero_optimization"]
        self.assertEqual(zero["reduce_bucket_size"], h * h)
        self.assertEqual(zero["stage3_prefetch_bucket_size"],
                         int(0.9 * h * h))
        self.assertEqual(zero["stage3_param_persistence_threshold"], 10 * h)

    def test_unresolvable_auto_is_an_error_naming_what_is_missing(self):
        d = self.profile("auto", """return { name = "auto", summary = "s",
          params = { world_size = 1 },
          build = function(p) return { train_batch_size = 2,
            train_micro_batch_size_per_gpu = 2, gradient_clipping = 1.0,
            optimizer = { type = "AdamW", params = { lr = "auto" } } } end }""")
        out = os.path.join(self.tmp, "out")
        res = run("gen", "auto", "--profile-path", d, "-o", out)
        self.assertExit(res, 1)
        self.assertIn("learning_rate", res.err)
        self.assertIn("[auto-value]", res.err)
        self.assertFalse(os.path.exists(out))

    def test_memory_fit_warning_and_strict_fit_error(self):
        args = ["8xa100", "--tier", "large", "--param", "gpu_mem_gb=8"]
        res = run("gen", *args)
        self.assertExit(res, 0)
        self.assertIn("argument #5: warning: variant large: "
                      "'--param gpu_mem_gb=8': needs about", res.err)
        self.assertIn("[memory-fit]", res.err)
        self.assertIn(" NO", res.out)
        out = os.path.join(self.tmp, "o")
        res = run("gen", *args, "--strict-fit", "-o", out)
        self.assertExit(res, 1)
        self.assertFalse(os.path.exists(out))


class AllOrNothing(GenTestCase):
    FAILING_TIER = """return { name = "half", summary = "large is broken",
      params = { world_size = 1, stage = 2 },
      tiers = { small = {}, large = { stage = 1 } },
      build = function(p) return { train_batch_size = 1,
        train_micro_batch_size_per_gpu = 1, gradient_clipping = 1.0,
        optimizer = { type = "AdamW", params = { lr = 1e-4 } },
        zero_optimization = { stage = p.stage,
          offload_optimizer = p.stage < 2 and { device = "cpu", ratio = 0.5 } or nil } } end }"""

    def test_a_failing_variant_leaves_the_directory_untouched(self):
        d = self.profile("half", self.FAILING_TIER)
        out = os.path.join(self.tmp, "out")
        os.makedirs(out)
        with open(os.path.join(out, "half-small.json"), "w") as f:
            f.write("old contents\n")
        before = self.listing(out)
        res = run("gen", "half", "--profile-path", d, "-o", out)
        self.assertExit(res, 1)
        self.assertIn("partial-offload-stage", res.err)
        self.assertEqual(self.listing(out), before)

    def test_a_failing_variant_creates_no_directory(self):
        d = self.profile("half", self.FAILING_TIER)
        out = os.path.join(self.tmp, "new", "out")
        self.assertExit(run("gen", "half", "--profile-path", d, "-o", out), 1)
        # not even the parent -o's path made (small is staged before
        # large fails)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "new")))

    def test_an_unwritable_output_directory_is_an_input_error(self):
        blocker = self.write("file", "x")
        res = run("gen", "8xa100", "-o", os.path.join(blocker, "sub"))
        self.assertExit(res, 3)
        self.assertIn("cannot create directory", res.err)


class BadInput(GenTestCase):
    """Each: a clear message naming file/line or argument, the documented
    exit code, nothing written."""

    def gen_fails(self, code, *args, expect=()):
        out = os.path.join(self.tmp, "out-never")
        res = run("gen", *args, "-o", out)
        self.assertExit(res, code)
        self.assertFalse(os.path.exists(out), "output was written")
        self.assertEqual(res.out, "")
        for e in expect:
            self.assertIn(e, res.err)
        return res

    def test_unknown_profile_suggests_close_names(self):
        self.gen_fails(3, "8xa10", expect=["unknown profile '8xa10'",
                                           "did you mean '8xa100'?"])

    def test_syntax_error_in_profile(self):
        d = self.profile("syn", "return {\n  name = 'syn',\n  build = function(p\n")
        res = self.gen_fails(5, "syn", "--profile-path", d)
        self.assertRegex(res.err, r"syn\.lua:\d+: error: syntax error")

    def test_runtime_error_in_profile(self):
        d = self.profile("rt", "return { name = 'rt', summary = 's',\n"
                               "  build = function(p)\n"
                               "    return { a = nil + 1 }\n  end }\n")
        res = self.gen_fails(5, "rt", "--profile-path", d)
        self.assertIn("rt.lua:3: error:", res.err)
        self.assertIn("arithmetic", res.err)

    def test_build_returning_a_non_table(self):
        d = self.profile("nt", "return { name = 'nt', summary = 's',\n"
                               "  build = function(p) return 42 end }\n")
        self.gen_fails(3, "nt", "--profile-path", d,
                       expect=["build must return a table", "nt.lua:2"])

    def test_config_that_is_not_json(self):
        d = self.profile("nj", "return { name = 'nj', summary = 's',\n"
                               "  build = function(p) return { zero_optimization"
                               " = { offload_param = { device = print } } } end }\n")
        self.gen_fails(5, "nj", "--profile-path", d,
                       expect=["zero_optimization.offload_param.device",
                               "function"])

    def test_extends_cycle(self):
        self.profile("a", "return { name = 'a', extends = 'b', build = function() return {} end }")
        d = self.profile("b", "return { name = 'b', extends = 'a', build = function() return {} end }")
        self.gen_fails(3, "a", "--profile-path", d,
                       expect=["extends cycle: a -> b -> a"])

    def test_bad_param_declarations(self):
        cases = [
            ("{ x = { doc = 'no default' } }", "needs a default"),
            ("{ x = { default = 1, typ = 'integer' } }", "unknown field 'typ'"),
            ("{ x = { default = 'a', type = 'integer' } }", "must be an integer"),
            ("{ x = { default = 5, min = 10 } }", "out of range"),
            ("{ ['a.b'] = 1 }", "invalid param name"),
        ]
        for params, needle in cases:
            d = self.profile("pp", "return { name = 'pp', summary = 's', "
                                   "params = %s, build = function() "
                                   "return {} end }" % params)
            res = self.gen_fails(3, "pp", "--profile-path", d,
                                 expect=["pp.lua", needle])

    def test_fail_is_an_input_error_without_traceback(self):
        d = self.profile("ff", "return { name = 'ff', summary = 's',\n"
                               "  params = { n = 1 },\n"
                               "  build = function(p)\n"
                               "    if p.n > 1 then dsforge.fail('n must be 1') end\n"
                               "    return { train_batch_size = 1 } end }\n")
        res = self.gen_fails(3, "ff", "--profile-path", d, "--param", "n=2")
        self.assertIn("ff.lua:4: error: n must be 1", res.err)
        self.assertNotIn(" at ", res.err)  # no traceback
        # a fail the script catches itself is not an error
        d = self.profile("fc", "return { name = 'fc', summary = 's',\n"
                               "  build = function(p)\n"
                               "    pcall(dsforge.fail, 'ignored')\n"
                               "    return { train_batch_size = 1,\n"
                               "      train_micro_batch_size_per_gpu = 1,\n"
                               "      gradient_clipping = 1.0 } end }\n")
        self.assertExit(run("gen", "fc", "--profile-path", d, "--stdout"), 0)

    def test_planner_says_nothing_fits(self):
        res = self.gen_fails(3, "small-gpu-offload", "--param", "cpu_mem_gb=8",
                             "--param", "model=llama-2-7b")
        self.assertIn("nothing fits", res.err)
        self.assertIn("GiB", res.err)

    def test_unknown_profile_field(self):
        d = self.profile("uf", "return { name = 'uf', parmas = {}, "
                               "build = function() return {} end }")
        self.gen_fails(3, "uf", "--profile-path", d,
                       expect=["unknown profile field 'parmas'",
                               "did you mean 'params'?"])

    def test_unknown_tier(self):
        self.gen_fails(2, "8xa100", "--tier", "huge",
                       expect=["unknown tier 'huge'", "small, medium, large"])

    def test_unknown_param_lists_the_known_ones(self):
        self.gen_fails(2, "8xa100", "--param", "micro_batch=2",
                       expect=["unknown param 'micro_batch'",
                               "micro_batch_size", "world_size"])

    def test_ill_typed_and_out_of_range_params(self):
        self.gen_fails(2, "8xa100", "--param", "world_size=eight",
                       expect=["world_size", "integer"])
        self.gen_fails(2, "8xa100", "--param", "world_size=-1",
                       expect=["out of range"])
        self.gen_fails(2, "8xa100", "--param", "precision=fp8",
                       expect=["not one of"])
        self.gen_fails(2, "8xa100", "--matrix", "micro_batch_size=1,x",
                       expect=["micro_batch_size"])

    def test_malformed_override_file_names_line_and_column(self):
        f = self.write("bad.json", '{\n  "a": 1\n  "b": 2\n}\n')
        self.gen_fails(3, "8xa100", "-f", f,
                       expect=["%s:3:3: error: ',' or '}' expected" % f])

    def test_add_on_an_existing_key(self):
        self.gen_fails(2, "8xa100", "+steps_per_print=1",
                       expect=["+path adds a new key", "steps_per_print"])

    def test_delete_of_a_missing_key(self):
        self.gen_fails(2, "8xa100", "~no_such_key",
                       expect=["nothing to delete", "no_such_key"])

    def test_path_through_a_non_object(self):
        self.gen_fails(2, "8xa100", "steps_per_print.x=1",
                       expect=["non-object", "steps_per_print"])

    def test_bad_edit_syntax(self):
        self.gen_fails(2, "8xa100", "no-equals-sign",
                       expect=["expected path=value"])

    def test_validation_error_in_a_builtin_with_an_edit(self):
        self.gen_fails(1, "8xa100", "zero_optimization.stage=2",
                       "zero_optimization.offload_optimizer={\"device\":\"cpu\",\"ratio\":0.5}",
                       expect=["partial-offload-stage"])

    def test_a_warning_does_not_stop_gen(self):
        # offload_param below stage 3: DeepSpeed accepts it and ignores it
        res = run("gen", "8xa100", "--tier", "small", "--stdout", "zero_optimization.stage=2",
                  "zero_optimization.offload_param={\"device\":\"cpu\"}")
        self.assertExit(res, 0)
        self.assertIn("warning", res.err)
        self.assertIn("offload-param-ignored", res.err)


class ListAndShow(GenTestCase):
    def test_list_shows_builtins_with_tiers_and_origin(self):
        res = run("list")
        self.assertExit(res, 0)
        for p in dsf.BUILTIN_PROFILES:
            self.assertRegex(res.out, r"(?m)^%s\s+small,medium,large\s+built-in"
                             % p)

    def test_local_profile_shadows_builtin(self):
        self.profile("8xa100", "return { name = '8xa100', summary = 'mine',"
                               " build = function() return {} end }")
        res = run("list", "--json", cwd=self.tmp)
        self.assertExit(res, 0)
        entries = [e for e in res.json() if e["name"] == "8xa100"]
        self.assertEqual([(e["origin"], e["shadowed"]) for e in entries],
                         [("project", False), ("built-in", True)])
        self.assertEqual(entries[0]["summary"], "mine")

    def test_search_path_order(self):
        low = self.profile("p", "return { name = 'p', summary = 'env',"
                                " build = function() return {} end }", "low")
        high = self.profile("p", "return { name = 'p', summary = 'flag',"
                                 " build = function() return {} end }", "high")
        res = run("list", "--json", "--profile-path", high,
                  env={"DSFORGE_PATH": low})
        mine = [e for e in res.json() if e["name"] == "p"]
        self.assertEqual([e["origin"] for e in mine],
                         ["--profile-path", "DSFORGE_PATH"])
        self.assertEqual(mine[0]["summary"], "flag")

    def test_show_lists_chain_params_and_tiers(self):
        res = run("show", "8xa100")
        self.assertExit(res, 0)
        self.assertIn("1. base", res.out)
        self.assertIn("2. 8xa100", res.out)
        self.assertRegex(res.out, r"micro_batch_size\s+integer\s+default 2")
        self.assertIn("samples per GPU per forward pass", res.out)
        self.assertIn('params {"gradient_accumulation":16,'
                      '"micro_batch_size":4}', res.out)


if __name__ == "__main__":
    unittest.main()
