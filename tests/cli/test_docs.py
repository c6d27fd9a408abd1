"""The numbers the README and contrib/docs state agree with what the CLI
itself says (--help, plugins --json, list --json, its output): each check
extracts the number from the doc and from a command, and compares them."""
import json
import os
import re
import shlex
import tempfile
import shutil
import unittest

import dsf
from dsf import run

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
         "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def number(text):
    text = text.strip().lower()
    return WORDS[text] if text in WORDS else float(text.replace(",", ""))


def rules_of_deepspeed(out):
    return len([p for p in json.loads(out)
                if p["name"] == "deepspeed"][0]["rules"])


def builtin_profiles(out):
    return len([p for p in json.loads(out) if p["origin"] == "built-in"])


NOTHING_FITS = ["gen", "small-gpu-offload", "--tier", "small", "--param",
                "model=llama-2-13b", "--param", "cpu_mem_gb=64"]

# (doc, regex whose group 1 is the doc's number, command, regex whose group
# 1 is the CLI's number -- or a function of stdout+stderr --, scale: the
# doc's unit in the CLI's units)
CHECKS = [
    ("README.md", r"\(`--max-memory`, (\d+) MiB", ["gen", "--help"],
     r"--max-memory MIB .*\(default (\d+)\)", 1),
    ("README.md", r"\(`--max-instructions`, (\d+) million", ["gen", "--help"],
     r"--max-instructions N .*\(default (\d+)\)", 1e6),
    ("README.md", r"\(`--max-seconds`, (\d+) s", ["gen", "--help"],
     r"--max-seconds S .*\(default (\d+)\)", 1),
    ("contrib/docs/lua-environment.md", r"memory \(default (\d+) MiB\)",
     ["gen", "--help"], r"--max-memory MIB .*\(default (\d+)\)", 1),
    ("contrib/docs/lua-environment.md", r"instructions \(default (\d+) million\)",
     ["gen", "--help"], r"--max-instructions N .*\(default (\d+)\)", 1e6),
    ("README.md", r"(\d+) rules with stable ids", ["plugins", "--json"],
     rules_of_deepspeed, 1),
    ("README.md", r"sweeps; (\w+) built in:", ["list", "--json"],
     builtin_profiles, 1),
    ("README.md", r"with a (\d+) %\s+safety\s+margin", NOTHING_FITS,
     r"\((\d+)% kept free\)", 1),
]


def read_doc(rel):
    with open(os.path.join(dsf.SOURCE_DIR, rel), encoding="utf-8") as f:
        return f.read()


class DocsAgreeWithTheCli(unittest.TestCase):
    def setUp(self):
        # outside the repository: only built-in profiles on the path
        self.cwd = tempfile.mkdtemp(prefix="dsforge-docs-")

    def tearDown(self):
        shutil.rmtree(self.cwd, ignore_errors=True)

    def test_numbers(self):
        for doc, doc_re, cmd, cli, scale in CHECKS:
            with self.subTest(doc=doc, pattern=doc_re):
                m = re.search(doc_re, read_doc(doc))
                self.assertIsNotNone(m, "%s no longer states %r" % (doc, doc_re))
                res = run(*cmd, cwd=self.cwd)
                text = res.out + res.err
                if callable(cli):
                    got = cli(res.out)
                else:
                    c = re.search(cli, text)
                    self.assertIsNotNone(c, "%s no longer says %r" %
                                         (" ".join(cmd), cli))
                    got = number(c.group(1))
                self.assertEqual(number(m.group(1)) * scale, got,
                                 "%s says %s (%r) but 'dsforge %s' says %s" %
                                 (doc, m.group(1), doc_re, " ".join(cmd),
                                  got))

    def test_builtin_profile_names(self):
        m = re.search(r"built in: ((?:`[\w-]+`,?\s*(?:and\s+)?)+)",
                      read_doc("README.md"))
        named = set(re.findall(r"`([\w-]+)`", m.group(1)))
        res = run("list", "--json", cwd=self.cwd)
        self.assertEqual(named, {p["name"] for p in json.loads(res.out)
                                 if p["origin"] == "built-in"})

    def help_exit_codes(self):
        res = run("--help")
        section = res.out.split("Exit codes:", 1)[1].split("\n\n", 1)[0]
        return {int(c) for c in re.findall(r"(?m)^\s+(\d)\s", section)}

    def test_exit_code_table_matches_help(self):
        table = set(int(c) for c in re.findall(r"(?m)^\| (\d) \| ",
                                               read_doc("README.md")))
        self.assertEqual(table, self.help_exit_codes())

    def test_every_exit_code_the_docs_mention_exists(self):
        codes = self.help_exit_codes()
        docs = ["README.md"] + [
            os.path.join("contrib", "docs", f) for f in
            sorted(os.listdir(os.path.join(dsf.SOURCE_DIR, "contrib", "docs")))]
        for doc in docs:
            for m in re.finditer(r"exit(?:s with| code| status)?\s+(\d+)\b",
                                 read_doc(doc)):
                self.assertIn(int(m.group(1)), codes,
                              "%s: %r" % (doc, m.group(0)))

    def test_quick_start_summary_is_what_gen_prints(self):
        section = read_doc("README.md").split("## Quick start", 1)[1]
        block = re.findall(r"```\n(variant .*?)```", section, re.S)[0]
        # the Quick start's command writes to out/ (the summary's footer
        # says so)
        res = run("gen", "8xa100", "-o", "out", cwd=self.cwd)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(block.strip(), res.out.strip())

    def test_nothing_fits_example_is_what_gen_prints(self):
        doc = read_doc(os.path.join("contrib", "docs", "profiles.md"))
        m = re.search(r"\(here for\n`(gen [^`]*)`\)", doc)
        self.assertEqual(shlex.split(m.group(1)), NOTHING_FITS)
        block = re.findall(r"```\n(profiles/small-gpu-offload\.lua.*?)```",
                           doc, re.S)[0]
        res = run(*NOTHING_FITS, cwd=self.cwd)
        self.assertEqual(res.rc, 3, res)
        actual = [re.sub(r"^\S*profiles/", "profiles/", l)
                  for l in res.err.splitlines()]
        for line in block.splitlines():
            if line.strip() != "...":
                self.assertIn(line, actual)


if __name__ == "__main__":
    unittest.main()
