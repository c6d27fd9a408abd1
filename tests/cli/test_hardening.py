"""Hardening (issue 11): bad input ends with the documented exit code at
the place it comes from (README "Exit codes"): edits deeper than a config
may nest and numbers a param cannot hold are usage errors (exit 2) when
the argument is read, never a plugin's script error (exit 5)."""
import json
import os
import subprocess
import unittest

import dsf
from dsf import run

GEN = ["gen", "base", "--tier", "small", "--stdout"]


class EditDepth(dsf.TempDirTest):
    def test_a_600_key_path_is_a_usage_error(self):
        res = run(*GEN, ".".join(["k"] * 600) + "=1")
        self.assertExit(res, 2)
        self.assertIn("the edit nests 600 levels deep; a config nests at "
                      "most 200", res.err)
        self.assertEqual(res.out, "")

    def test_201_levels_is_a_usage_error(self):
        res = run(*GEN, ".".join(["k"] * 201) + "=1")
        self.assertExit(res, 2)
        self.assertIn("nests 201 levels deep", res.err)

    def test_path_plus_value_nesting_counts(self):
        res = run(*GEN, ".".join(["k"] * 199) + '={"a":{"b":1}}')
        self.assertExit(res, 2)
        self.assertIn("nests 201 levels deep", res.err)


class ParamNumbers(dsf.TempDirTest):
    def param(self, text):
        return run(*GEN, "--param", text)

    def assertRefused(self, text, message):
        res = self.param(text)
        self.assertExit(res, 2)
        self.assertIn(message, res.err)
        self.assertIn("--param " + text, res.err)  # names the argument
        self.assertEqual(res.out, "")

    def test_1e20_is_beyond_an_integer_param(self):
        self.assertRefused("num_training_steps=1e20",
                           "expects an integer of at most 2^53")

    def test_integers_beyond_2_53_are_refused_not_rounded(self):
        self.assertRefused("num_training_steps=9007199254740993",
                           "expects an integer of at most 2^53")
        self.assertRefused("num_training_steps=12345678901234567890",
                           "expects an integer of at most 2^53")

    def test_2_53_itself_is_kept(self):
        res = self.param("num_training_steps=9007199254740992")
        self.assertNotIn("2^53", res.err)

    def test_hex_is_refused(self):
        self.assertRefused("micro_batch_size=0x10",
                           "param 'micro_batch_size' expects an integer, "
                           "got '0x10'")

    def test_infinities_get_the_same_message(self):
        a = self.param("gpu_mem_gb=Infinity")
        b = self.param("gpu_mem_gb=-Infinity")
        self.assertExit(a, 2)
        self.assertExit(b, 2)
        self.assertEqual(a.err.replace("-Infinity", "Infinity"),
                         b.err.replace("-Infinity", "Infinity"))
        self.assertIn("expects a number, got 'Infinity'", a.err)

    def test_overflowing_number_is_refused(self):
        self.assertRefused("gpu_mem_gb=1e999", "out of the range of a number")

    def test_json_numbers_still_work(self):
        for text in ("gpu_mem_gb=40.5", "gpu_mem_gb=4e1",
                     "micro_batch_size=4", "num_training_steps=1e4"):
            self.assertExit(self.param(text), 0)


class WhyPath(dsf.TempDirTest):
    def test_bad_why_path_is_a_usage_error(self):
        res = run(*GEN, "--why", "a..b")
        self.assertExit(res, 2)
        self.assertIn("--why: invalid path 'a..b': empty key", res.err)


class Utf8(dsf.TempDirTest):
    """Every text input is UTF-8, checked where it is read."""

    def bad_file(self):
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "wb") as f:
            f.write(b'{\n  "train_batch_size": 8,\n  "x": "a\xffb"\n}\n')
        return path

    def test_file_is_an_input_error_with_line_and_column(self):
        path = self.bad_file()
        res = run("check", path)
        self.assertExit(res, 3)
        self.assertIn(path + ":3:10: error: invalid UTF-8 (byte 0xFF)",
                      res.err)
        # The excerpt shows the bad byte escaped, the caret under it.
        self.assertIn('      "x": "a\\xFFb"\n             ^\n', res.err)

    def test_override_file_is_an_input_error(self):
        path = self.bad_file()
        res = run(*GEN, "-f", path)
        self.assertExit(res, 3)
        self.assertIn(path + ":3:10: error: invalid UTF-8", res.err)
        self.assertEqual(res.out, "")

    def test_check_format_json_writes_valid_utf8(self):
        path = self.bad_file()
        p = subprocess.run([dsf.DSFORGE, "check", "--format", "json", path],
                           capture_output=True)
        self.assertEqual(p.returncode, 3, p)
        text = p.stdout.decode("utf-8")  # strict: raises on a bad byte
        json.loads(text) if text.strip() else None
        self.assertNotIn(b"\xff", p.stdout)

    def test_edit_value_is_a_usage_error(self):
        p = subprocess.run([dsf.DSFORGE] + GEN + [b"gradient_clipping=a\xff"],
                           capture_output=True)
        self.assertEqual(p.returncode, 2, p)
        self.assertIn(b"invalid UTF-8 (byte 0xFF at column 20)", p.stderr)

    def test_param_value_is_a_usage_error(self):
        p = subprocess.run([dsf.DSFORGE] + GEN + ["--param",
                                                  b"model=x\xff"],
                           capture_output=True)
        self.assertEqual(p.returncode, 2, p)
        self.assertIn(b"param 'model': invalid UTF-8", p.stderr)


# A profile whose text tries to drive the terminal: colour, carriage
# return, a fake second line, a bidi override, a C1 CSI.
HOSTILE = (
    'local bad = "\\27[31mred\\r\\nfake: ok\\226\\128\\174x\\194\\155y"\n'
    'return { name = "x", summary = "sum " .. bad,\n'
    '  params = { p = { default = 1, type = "integer", doc = "doc " .. bad } },\n'
    '  tiers = { small = { summary = "tier " .. bad, params = {} } },\n'
    '  build = function(p)\n'
    '    dsforge.warn("warn " .. bad)\n'
    '    print("print " .. bad)\n'
    '    return { train_batch_size = 8, train_micro_batch_size_per_gpu = 8,\n'
    '             gradient_accumulation_steps = 1 }\n'
    '  end }\n')
CLEAN = "^[[31mred^M^Jfake: ok<U+202E>x<U+009B>y"


class PrintedText(dsf.TempDirTest):
    """Text from scripts reaches the terminal neutralised, by one function
    (dsf_text_clean) used by every printer."""

    def setUp(self):
        super().setUp()
        self.pdir = self.profile("x", HOSTILE)

    def assertClean(self, text, *labels):
        self.assertNotIn("\x1b", text)
        self.assertNotIn("\r", text)
        self.assertNotIn("\u202e", text)
        self.assertNotIn("\u009b", text)
        for label in labels:
            self.assertIn(label + " " + CLEAN, text)

    def test_gen_warnings_and_print(self):
        res = run("gen", "x", "--profile-path", self.pdir, "--tier", "small",
                  "--stdout")
        self.assertExit(res, 0)
        self.assertClean(res.err, "warn")
        # print keeps real newlines between lines, but not a raw CR/ESC.
        self.assertIn("print ^[[31mred^M\nfake: ok<U+202E>x<U+009B>y",
                      res.err)

    def test_show(self):
        res = run("show", "x", "--profile-path", self.pdir)
        self.assertExit(res, 0)
        self.assertClean(res.out, "sum", "doc", "tier")

    def test_list(self):
        res = run("list", "--profile-path", self.pdir)
        self.assertExit(res, 0)
        self.assertClean(res.out, "sum")

    def test_error_message(self):
        pdir = self.profile("y", 'return { name = "y", summary = "s",\n'
                                 '  build = function(p)\n'
                                 '    dsforge.fail("no\\27[2J\\rpe") end }\n')
        res = run("gen", "y", "--profile-path", pdir, "--stdout")
        self.assertExit(res, 3)
        self.assertIn("error: no^[[2J^Mpe", res.err)
        self.assertNotIn("\x1b", res.err)


if __name__ == "__main__":
    unittest.main()
