"""Hardening (issue 11): bad input ends with the documented exit code at
the place it comes from (README "Exit codes"): edits deeper than a config
may nest and numbers a param cannot hold are usage errors (exit 2) when
the argument is read, never a plugin's script error (exit 5)."""
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


if __name__ == "__main__":
    unittest.main()
