"""Input size and shape (issue 30): objects of many keys, findings per
file, and the one nesting limit (contrib/docs/threat-model.md).

Large objects: these tests hold linearity without timing anything. Each
runs a file far larger than a real config and asserts what the output
says; the subprocess timeout is generous (60 s, where the run takes well
under a second, or about 3 s for the 40,000-key check, in a release
build). A reader that walks an object once per key again would not fail
an assertion, it would blow the timeout: 200,000 keys cost about 2 * 10^10
key comparisons (minutes). That is the whole claim: a quadratic
regression at this size times out; a small constant-factor slowdown does
not fail anything (contrib/bench/large-object.sh measures that).

The 40,000-key check tests hold the findings bound, not linearity: main
took 19.6 s on that file, inside the timeout. The readers' linearity is
held by LargeObjects (diff, report and gen -f of 100,000-200,000 keys,
where a walk per key costs minutes).
"""
import json
import os
import unittest

import dsf
from dsf import run

GENEROUS = 60  # seconds; see the module's docstring
MAX_SHOWN = 100  # src/plugin/findings.h, DSF_FINDINGS_PER_GROUP


def unknown_keys_config(n):
    """A config with one known key and n unknown top-level keys, one a
    line (each finding has its own line)."""
    d = {"train_batch_size": 8}
    for i in range(n):
        d["unknown_key_%06d" % i] = i
    return json.dumps(d, indent=1)


NOTE_TAIL = "(at most 100 of one rule and severity per file) [unknown-key]"


class FindingsBound(dsf.TempDirTest):
    """At most 100 findings of one rule and severity per file, in every
    output; the rest counted in one note (plugin/findings.h)."""

    def test_40000_unknown_keys_show_100_and_count_the_rest(self):
        path = self.write("big.json", unknown_keys_config(40000))
        res = run("check", path, timeout=GENEROUS)
        self.assertExit(res, 0)  # warnings only: the exit status is kept
        lines = res.err.splitlines()
        shown = [l for l in lines if ": warning: " in l]
        self.assertEqual(len(shown), MAX_SHOWN)
        # the first 100 by path, then the count in one note, last
        self.assertIn("unknown_key_000000", shown[0])
        self.assertIn("unknown_key_000099", shown[-1])
        self.assertEqual(
            lines[-1],
            path + ": note: 39,900 more warnings not shown " + NOTE_TAIL)

    def test_the_kept_ones_do_not_depend_on_the_order_of_the_keys(self):
        # the same keys in two orders (and Lua walks a table in an order of
        # its own): the same 100 kept, the first by path
        keys = ["k%05d" % i for i in range(1000)]
        a = self.write("a.json", json.dumps(
            dict([("train_batch_size", 8)] + [(k, 1) for k in keys])))
        b = self.write("b.json", json.dumps(
            dict([(k, 1) for k in reversed(keys)] + [("train_batch_size", 8)])))
        shown = []
        for path in (a, b):
            res = run("check", "--format", "json", path)
            self.assertExit(res, 0)
            found = res.json()
            kept = sorted(f["path"] for f in found
                          if f["rule"] == "unknown-key"
                          and f["severity"] == "warning")
            self.assertEqual(kept, keys[:MAX_SHOWN])
            notes = [f for f in found if f["rule"] == "unknown-key"
                     and f["severity"] == "note"]
            self.assertEqual(len(notes), 1)
            self.assertIn("900 more warnings not shown", notes[0]["message"])
            shown.append(sorted((f.get("path", ""), f["rule"], f["severity"],
                                 f["message"]) for f in found))
        self.assertEqual(shown[0], shown[1])

    def test_a_file_of_one_line_is_linear_too(self):
        # every finding is on the same (15 MB) line: locating its excerpt
        # must not walk the line per finding (100,000 keys took 97 s)
        d = {"train_batch_size": 8}
        for i in range(100000):
            d["unknown_key_%06d" % i] = i
        path = self.write("one-line.json", json.dumps(d))
        res = run("check", path, timeout=GENEROUS)
        self.assertExit(res, 0)
        self.assertIn("99,900 more warnings not shown", res.err)

    def test_strict_still_counts_every_finding(self):
        path = self.write("big.json", unknown_keys_config(40000))
        res = run("check", "--strict", path, timeout=GENEROUS)
        self.assertExit(res, 1)
        self.assertIn("39,900 more warnings not shown", res.err)

    def test_json_holds_the_same_bound_and_count(self):
        path = self.write("big.json", unknown_keys_config(40000))
        res = run("check", "--format", "json", path, timeout=GENEROUS)
        self.assertExit(res, 0)
        found = [f for f in res.json() if f["rule"] == "unknown-key"]
        warnings = [f for f in found if f["severity"] == "warning"]
        self.assertEqual(len(warnings), MAX_SHOWN)
        self.assertEqual(warnings[-1]["path"], "unknown_key_000099")
        self.assertEqual(
            [f["message"] for f in found if f["severity"] == "note"],
            ["39,900 more warnings not shown (at most 100 of one rule and "
             "severity per file)"])

    def test_errors_past_the_bound_keep_the_exit_status(self):
        # unknown keys in a section that rejects them are errors: 100
        # shown, the rest counted, exit 1 all the same
        zero = {"stage": 2}
        for i in range(250):
            zero["bad_key_%04d" % i] = 1
        path = self.write("z.json", json.dumps(
            {"train_batch_size": 8, "zero_optimization": zero}, indent=1))
        res = run("check", path)
        self.assertExit(res, 1)
        self.assertEqual(res.err.count(": error: "), MAX_SHOWN)
        self.assertIn(": note: 150 more errors not shown", res.err)

    def test_one_over_the_bound_is_counted_singular(self):
        path = self.write("c.json", unknown_keys_config(MAX_SHOWN + 1))
        res = run("check", path)
        self.assertExit(res, 0)
        self.assertEqual(res.err.count(": warning: "), MAX_SHOWN)
        self.assertIn(": note: 1 more warning not shown", res.err)

    def test_at_the_bound_nothing_is_counted(self):
        path = self.write("c.json", unknown_keys_config(MAX_SHOWN))
        res = run("check", path)
        self.assertEqual(res.err.count(": warning: "), MAX_SHOWN)
        self.assertNotIn("not shown", res.err)

    def test_the_bound_is_per_file(self):
        a = self.write("a.json", unknown_keys_config(MAX_SHOWN + 5))
        b = self.write("b.json", unknown_keys_config(MAX_SHOWN + 7))
        res = run("check", a, b)
        self.assertExit(res, 0)
        self.assertEqual(res.err.count(": warning: "), 2 * MAX_SHOWN)
        self.assertIn(a + ": note: 5 more warnings not shown", res.err)
        self.assertIn(b + ": note: 7 more warnings not shown", res.err)
        # each file's note ends that file's diagnostics
        self.assertLess(res.err.index(a + ": note: 5 more"),
                        res.err.index(b + ":"))

    def test_a_million_keys_at_the_default_limits(self):
        # the config is the host's data, not the script's: a million keys
        # no longer end at the plugin state's 64 MiB (exit 5)
        path = os.path.join(self.tmp, "m.json")
        with open(path, "w") as f:
            f.write('{\n "train_batch_size": 8')
            for i in range(1000000):
                f.write(',\n "unknown_key_%07d": %d' % (i, i))
            f.write("\n}\n")
        res = run("check", path, timeout=GENEROUS)
        self.assertExit(res, 0)
        self.assertEqual(res.err.count(": warning: "), MAX_SHOWN)
        self.assertIn("999,900 more warnings not shown", res.err)

    def test_two_large_configs_with_an_optimizer_one_after_the_other(self):
        # each is the host's data while it is checked, and garbage after:
        # nothing a rule keeps (rules_optim.lua's memory of the last
        # config's optimizer) may hold the first alive in the state while
        # the second is checked, where it would count against the 64 MiB
        path = []
        for n in (1, 2):
            path.append(os.path.join(self.tmp, "big%d.json" % n))
            with open(path[-1], "w") as f:
                f.write('{"train_micro_batch_size_per_gpu": 1, '
                        '"gradient_accumulation_steps": 1, '
                        '"optimizer": {"type": "AdamW", "params": {}}')
                for i in range(300000):
                    f.write(', "k%06d": {"a": %d, "b": "v%d"}' % (i, i, i))
                f.write("}\n")
        res = run("check", "-j", "1", path[0], path[1], timeout=GENEROUS)
        self.assertExit(res, 0)
        self.assertNotIn("memory limit", res.err)
        self.assertEqual(res.err.count("more warnings not shown"), 2)


class LargeObjects(dsf.TempDirTest):
    """Readers whose per-key work is small: 100,000 or 200,000 keys in one
    object."""

    def test_diff_of_200000_keys(self):
        d = {"k%06d" % i: i for i in range(200000)}
        a = self.write("a.json", json.dumps(d))
        d["k123456"] = -1
        b = self.write("b.json", json.dumps(d))
        res = run("diff", a, b, timeout=GENEROUS)
        self.assertExit(res, 1)  # the files differ
        self.assertIn("~ k123456: 123456 -> -1", res.out)
        self.assertIn("1 difference", res.out)

    def test_gen_f_file_of_100000_keys(self):
        # merged into the tier's config and resolved: each key looked up
        # once (it was 16 s for 20,000 keys)
        d = {"k%06d" % i: i for i in range(100000)}
        path = self.write("big.json", json.dumps(d))
        res = run("gen", "8xa100", "--tier", "small", "--stdout", "-f", path,
                  timeout=GENEROUS)
        self.assertExit(res, 0)
        out = res.json()
        self.assertEqual(out["k099999"], 99999)
        self.assertEqual(len([k for k in out if k.startswith("k")]), 100000)

    def test_duplicates_in_a_large_object(self):
        # 20,000 keys, then every 1,000th again: each duplicate found, in
        # order, the first place named, the last value kept.
        lines = ['"k%05d": %d' % (i, i) for i in range(20000)]
        lines += ['"k%05d": -1' % i for i in range(0, 20000, 1000)]
        path = self.write("dups.json", "{\n" + ",\n".join(lines) + "\n}\n")
        res = run("check", "--format", "json", path, timeout=GENEROUS)
        self.assertExit(res, 1)
        dups = [f for f in res.json() if f["rule"] == "duplicate-key"]
        self.assertEqual([f["path"] for f in dups],
                         ["k%05d" % i for i in range(0, 20000, 1000)])
        self.assertEqual(dups[1]["line"], 20002 + 1)
        self.assertIn("(first at line 1002)", dups[1]["message"])

    def test_report_of_a_manifest_with_200000_keys(self):
        out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "8xa100", "-o", out), 0)
        mpath = os.path.join(out, "manifest.json")
        with open(mpath) as f:
            m = json.load(f)
        m["param_args"] = {"k%06d" % i: "v" for i in range(200000)}
        with open(mpath, "w") as f:
            json.dump(m, f)
        html = os.path.join(self.tmp, "r.html")
        res = run("report", out, "-o", html, timeout=GENEROUS)
        self.assertExit(res, 0)
        self.assertTrue(os.path.getsize(html) > 0)


def nested(depth, leaf="1"):
    """A value of depth levels of objects: {"a": {"a": ... leaf}}."""
    return '{"a": ' * depth + leaf + "}" * depth


class NestingLimit(dsf.TempDirTest):
    """One limit, 200 levels of objects and arrays, for every reader."""

    def test_json_file_at_the_limit_is_read(self):
        path = self.write("d.json", '{"x": ' + nested(199) + "}")
        res = run("check", path)
        self.assertNotIn("nesting", res.err)
        self.assertIn(res.rc, (0, 1))

    def test_json_file_past_the_limit_is_an_input_error(self):
        path = self.write("d.json", '{"x": ' + nested(200) + "}")
        res = run("check", path)
        self.assertExit(res, 3)
        self.assertIn(path + ":1:%d: error: nesting is too deep: more than "
                      "200 levels of objects and arrays" % (6 + 6 * 199 + 1),
                      res.err)

    def test_jsonc_file_past_the_limit(self):
        # comments and a trailing comma: the same reader, the same limit
        text = "// deep\n" + "[\n" * 201 + "1," + "]" * 201 + "\n"
        path = self.write("d.jsonc", text)
        res = run("check", path)
        self.assertExit(res, 3)
        self.assertIn(path + ":202:1: error: nesting is too deep", res.err)

    def test_gen_f_file_of_300_levels_is_an_input_error(self):
        # was: exit 5, "a bug in" the Hugging Face resolver
        path = self.write("deep.json", '{"x": ' + nested(299) + "}")
        res = run("gen", "8xa100", "--tier", "small", "--stdout", "-f", path)
        self.assertExit(res, 3)
        self.assertIn(path + ":1:", res.err)
        self.assertIn("more than 200 levels", res.err)
        self.assertNotIn("resolver", res.err)
        self.assertEqual(res.out, "")

    def test_gen_f_file_at_the_limit_is_generated(self):
        path = self.write("deep.json", '{"x": ' + nested(199) + "}")
        res = run("gen", "8xa100", "--tier", "small", "--stdout", "-f", path)
        self.assertExit(res, 0)
        self.assertEqual(res.out.count('"a"'), 199)

    def test_edit_value_past_the_limit_is_refused(self):
        # was: taken for a string
        value = "[" * 201 + "]" * 201
        res = run("gen", "8xa100", "--tier", "small", "--stdout",
                  "x=" + value)
        self.assertExit(res, 2)
        self.assertIn("the value nests more than 200 levels deep; a config "
                      "nests at most 200", res.err)

    def test_diff_manifest_past_the_limit(self):
        # the manifest reader parses with cJSON (limit 1000): refused too
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        for out in (a, b):
            self.assertExit(run("gen", "8xa100", "-o", out), 0)
        mpath = os.path.join(b, "manifest.json")
        with open(mpath) as f:
            text = f.read()
        with open(mpath, "w") as f:
            f.write(text.replace("{", '{"deep": ' + nested(300) + ",", 1))
        res = run("diff", a, b)
        self.assertExit(res, 3)
        self.assertIn(mpath + ":", res.err)
        self.assertIn("nesting is too deep: more than 200 levels", res.err)

    def test_profile_table_past_the_limit(self):
        d = self.profile("deep", (
            "local t = {} local c = t\n"
            "for i = 1, 201 do c.a = {} c = c.a end\n"
            "return { build = function(p, ctx)\n"
            "  return { train_micro_batch_size_per_gpu = 1, x = t }\n"
            "end }\n"))
        res = run("gen", "deep", "--profile-path", d, "--stdout")
        self.assertExit(res, 5)
        self.assertIn("tables are nested too deeply (more than 200 levels)",
                      res.err)


if __name__ == "__main__":
    unittest.main()
