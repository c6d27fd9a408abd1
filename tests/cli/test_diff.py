"""dsforge diff: the semantic diff of files, output variants, output
directories and profile variants, with provenance and consequences."""
import json
import os
import unittest

import dsf
from dsf import run


def leaves(doc, path=""):
    """Every leaf of a JSON document by dsforge's canonical path."""
    if isinstance(doc, dict) and doc:
        out = {}
        for k, v in doc.items():
            out.update(leaves(v, "%s.%s" % (path, k) if path else k))
        return out
    if isinstance(doc, list) and doc:
        out = {}
        for i, v in enumerate(doc):
            out.update(leaves(v, "%s[%d]" % (path, i)))
        return out
    return {path: doc}


class DiffTest(dsf.TempDirTest):
    def json_file(self, name, obj_or_text):
        text = obj_or_text if isinstance(obj_or_text, str) \
            else json.dumps(obj_or_text)
        return self.write(name, text)

    def diff_json(self, *args, code=1):
        res = run("diff", *args, "--format", "json")
        self.assertExit(res, code)
        return res.json()


class Files(DiffTest):
    def test_same_file_is_equal(self):
        f = self.json_file("f.json", {"a": 1, "b": {"c": [1, 2]}})
        res = run("diff", f, f)
        self.assertExit(res, 0)
        self.assertIn("no differences", res.out)
        self.assertEqual(res.err, "")

    def test_numbers_by_value_and_key_order_ignored(self):
        a = self.json_file("a.json", '{"r": 5e8, "x": 1.0, "o": {"p": 1, "q": 2}}')
        b = self.json_file("b.json", '{"o": {"q": 2, "p": 1}, "x": 1, "r": 500000000}')
        self.assertExit(run("diff", a, b), 0)
        c = self.json_file("c.json", '{"o": {"q": 2, "p": 1}, "x": 1, "r": 500000001}')
        out = self.diff_json(a, c)
        self.assertEqual([(d["path"], d["change"], d["a"], d["b"])
                          for d in out["differences"]],
                         [("r", "changed", 500000000, 500000001)])

    def test_arrays_element_by_element(self):
        a = self.json_file("a.json", {"betas": [0.9, 0.95], "l": [1]})
        b = self.json_file("b.json", {"betas": [0.9, 0.999], "l": [1, {"k": 2}]})
        out = self.diff_json(a, b)
        self.assertEqual([(d["path"], d["change"]) for d in out["differences"]],
                         [("betas[1]", "changed"), ("l[1].k", "added")])
        self.assertNotIn("a", out["differences"][1])
        out = self.diff_json(b, a)
        self.assertEqual([(d["path"], d["change"]) for d in out["differences"]],
                         [("betas[1]", "changed"), ("l[1].k", "removed")])

    def test_text_output_marks_each_change(self):
        a = self.json_file("a.json", {"x": 1, "gone": True})
        b = self.json_file("b.json", {"x": 2, "new": "v"})
        res = run("diff", a, b)
        self.assertExit(res, 1)
        self.assertEqual(res.out.splitlines()[2:],
                         ["- gone: true -> (absent)", "+ new: (absent) -> \"v\"",
                          "~ x: 1 -> 2", "3 differences"])

    def test_ignore_a_path_and_everything_below(self):
        a = self.json_file("a.json", {"z": {"q": 1, "r": [1]}, "zz": 1, "k": 1})
        b = self.json_file("b.json", {"z": {"q": 2, "r": [2]}, "zz": 2, "k": 1})
        out = self.diff_json(a, b, "--ignore", "z")
        self.assertEqual([d["path"] for d in out["differences"]], ["zz"])
        self.diff_json(a, b, "--ignore", "z", "--ignore", "zz", code=0)
        # The path is read like any config path.
        self.diff_json(a, b, "--ignore", '["z"]', "--ignore", "zz", code=0)

    def test_bad_input_and_usage(self):
        a = self.json_file("a.json", {"x": 1})
        bad = self.json_file("bad.json", '{"x": 1')
        res = run("diff", a, os.path.join(self.tmp, "missing.json"))
        self.assertExit(res, 3)
        self.assertIn("missing.json", res.err)
        res = run("diff", a, bad)
        self.assertExit(res, 3)
        self.assertRegex(res.err, r"bad\.json:1:\d+: error")
        self.assertEqual(res.out, "")
        self.assertExit(run("diff", a), 2)
        self.assertExit(run("diff", a, a, "--format", "yaml"), 2)
        self.assertExit(run("diff", a, a, "--ignore", "a..b"), 2)
        self.assertExit(run("diff", a, a, "--param", "x=1"), 2)
        self.assertExit(run("diff", a, a, "--bogus"), 2)

    def test_help(self):
        res = run("diff", "--help")
        self.assertExit(res, 0)
        self.assertIn("DIR:VARIANT", res.out)
        self.assertIn("diff", run("--help").out)


class Variants(DiffTest):
    def gen_stdout(self, *args):
        res = run("gen", *args, "--stdout")
        self.assertExit(res, 0)
        return json.loads(res.out)

    def test_small_vs_large_lists_exactly_the_differing_paths(self):
        small = leaves(self.gen_stdout("8xa100", "--tier", "small"))
        large = leaves(self.gen_stdout("8xa100", "--tier", "large"))
        want = sorted(p for p in set(small) | set(large)
                      if small.get(p) != large.get(p))
        self.assertTrue(want)
        out = self.diff_json("8xa100:small", "8xa100:large")
        self.assertFalse(out["equal"])
        self.assertEqual(sorted(d["path"] for d in out["differences"]), want)
        for d in out["differences"]:
            self.assertEqual(d["a"], small[d["path"]])
            self.assertEqual(d["b"], large[d["path"]])
            for side in ("a_origin", "b_origin"):
                self.assertEqual(d[side]["kind"], "profile", d)
                self.assertRegex(d[side]["where"],
                                 r"^profile \S+ \(<built-in>/profiles/\S+\.lua:\d+\)$")
        cons = {c["path"]: c for c in out["consequences"]["summary"]}
        self.assertLess(cons["gpu_bytes"]["a"], cons["gpu_bytes"]["b"])
        self.assertEqual((cons["batch.global"]["a"], cons["batch.global"]["b"]),
                         (small["train_batch_size"], large["train_batch_size"]))
        self.assertEqual({p["path"] for p in out["params"]},
                         {"micro_batch_size", "gradient_accumulation"})

    def test_text_names_both_origins_and_the_consequences(self):
        res = run("diff", "8xa100:small", "8xa100:large")
        self.assertExit(res, 1)
        lines = res.out.splitlines()
        i = lines.index("~ train_batch_size: 64 -> 512")
        self.assertTrue(lines[i + 1].startswith("    a: profile set profile base ("))
        self.assertTrue(lines[i + 2].startswith("    b: profile set profile base ("))
        self.assertIn("consequences:", lines)
        self.assertTrue(any(l.startswith("  ~ gpu_bytes: ") and "GiB" in l
                            for l in lines))
        self.assertIn("  ~ batch.global: 64 -> 512", lines)

    def test_same_variant_is_equal(self):
        res = run("diff", "8xa100:medium", "8xa100:medium")
        self.assertExit(res, 0)

    def test_per_side_edits_are_named_as_their_layer(self):
        out = self.diff_json("8xa100:small", "8xa100:small",
                             "--b-set", "zero_optimization.overlap_comm=false",
                             "--a-param", "model=llama-2-13b")
        paths = [d["path"] for d in out["differences"]]
        self.assertIn("zero_optimization.overlap_comm", paths)
        d = out["differences"][paths.index("zero_optimization.overlap_comm")]
        self.assertEqual(d["b_origin"]["kind"], "edit")
        self.assertRegex(d["b_origin"]["where"],
                         r"^zero_optimization.overlap_comm=false \(argument #\d+\)$")
        self.assertEqual(d["a_origin"]["kind"], "profile")
        # The finding that overlap_comm off brings appears on side B only.
        added = out["consequences"]["findings_added"]
        self.assertIn("overlap-comm-off", [f["rule"] for f in added])
        self.assertEqual(out["consequences"]["findings_removed"], [])
        self.assertIn("model", [p["path"] for p in out["params"]])

    def test_shared_edits_and_params_apply_to_both_sides(self):
        out = self.diff_json("8xa100:small", "8xa100:large", "--param",
                             "micro_batch_size=2", "--param",
                             "gradient_accumulation=8", "steps_per_print=50",
                             code=0)
        self.assertTrue(out["equal"])
        out = self.diff_json("8xa100:small", "8xa100:small",
                             "steps_per_print=50", "--b-set", "steps_per_print=60")
        d, = out["differences"]
        self.assertEqual((d["path"], d["a"], d["b"]), ("steps_per_print", 50, 60))
        self.assertEqual(d["a_origin"]["kind"], "edit")

    def test_profile_with_several_tiers_needs_one(self):
        res = run("diff", "8xa100", "8xa100:small")
        self.assertExit(res, 2)
        self.assertIn("PROFILE:TIER", res.err)
        self.assertExit(run("diff", "8xa100:nope", "8xa100:small"), 2)
        self.assertExit(run("diff", "no-such-profile:small", "8xa100:small"), 3)


class OutputDirs(DiffTest):
    def gen(self, name, *args):
        out = os.path.join(self.tmp, name)
        self.assertExit(run("gen", "8xa100", "-o", out, *args), 0)
        return out

    def test_dir_variant_against_a_profile_variant(self):
        o = self.gen("o")
        self.assertExit(run("diff", o + ":small", "8xa100:small"), 0)
        out = self.diff_json(o + ":small", o + ":large")
        self.assertIn("train_batch_size", [d["path"] for d in out["differences"]])
        self.assertNotIn("a_origin", out["differences"][0])
        # The manifest's summaries give the consequences.
        self.assertIn("gpu_bytes", [c["path"] for c in out["consequences"]["summary"]])
        res = run("diff", o + ":huge", o + ":small")
        self.assertExit(res, 3)
        self.assertIn("small, medium, large", res.err)

    def test_directories_pair_variants_by_name(self):
        a = self.gen("a")
        self.assertExit(run("diff", a, a), 0)
        b = self.gen("b", "--param", "micro_batch_size=2")
        out = self.diff_json(a, b)
        self.assertEqual(len(out["variants"]), 3)
        differ = [v for v in out["variants"] if not v["equal"]]
        self.assertEqual(len(differ), 2)  # medium already uses micro 2
        c = self.gen("c", "--tier", "small")
        out = self.diff_json(a, c)
        self.assertEqual(out["only_in_a"], ["medium", "large"])
        res = run("diff", a, b)
        self.assertExit(res, 1)
        self.assertIn("2 of 3 paired variants differ", res.out)
        self.assertExit(run("diff", a, a + ":small"), 2)

    def test_directories_with_no_variant_in_common_are_an_error(self):
        # issue 29: "0 of 0 paired variants differ" with exit 1; nothing
        # was compared, which is neither equal nor different
        a = self.gen("a")
        m = os.path.join(self.tmp, "m")
        self.assertExit(run("gen", "base", "--tier", "small", "--matrix",
                            "gpu_mem_gb=40,80", "-o", m), 0)
        res = run("diff", a, m)
        self.assertExit(res, 3)
        self.assertEqual(res.out, "")
        self.assertIn("error: no variant of %s has a namesake in %s (3 and 2 "
                      "variants): nothing to compare" % (a, m), res.err)
        self.assertIn("DIR:VARIANT", res.err)


class Sides(DiffTest):
    def test_a_third_side_is_a_clear_usage_error(self):
        # issue 29: it was taken for an edit ("expected path=value")
        res = run("diff", "8xa100:small", "base:small", "team:large")
        self.assertExit(res, 2)
        self.assertIn("argument #4: 'team:large' is a third side, but diff "
                      "compares two, A and B", res.err)
        self.assertIn("two at a time", res.err)
        self.assertNotIn("expected", res.err)
        # edits after the two sides still work
        res = run("diff", "8xa100:small", "8xa100:small", "~steps_per_print",
                  "+x.y=1", "steps_per_print=5")
        self.assertExit(res, 0)


if __name__ == "__main__":
    unittest.main()
