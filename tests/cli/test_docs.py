"""The numbers the README and contrib/docs state agree with what the CLI
itself says (--help, plugins --json, list --json, its output): each check
extracts the number from the doc and from a command, and compares them."""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

import dsf
from dsf import run
from test_launch_render import FAKE

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

    def test_from_config_to_run_commands_work_verbatim(self):
        """The README's "From config to run" commands, run as written:
        gen through the CLI, then bash and sbatch with fake launchers on
        PATH that record their argv; the script shown is the one gen
        writes."""
        section = read_doc("README.md").split("## From config to run", 1)[1]
        section = section.split("\n## ", 1)[0]
        blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
        self.assertEqual(len(blocks), 2)
        bindir = os.path.join(self.cwd, "bin")
        os.makedirs(bindir)
        fakes = {p: FAKE for p in ["deepspeed", "torchrun", "accelerate",
                                   "srun"]}
        fakes["scontrol"] = "#!/bin/sh\nprintf 'n1\\nn2\\nn3\\nn4\\n'\n"
        # sbatch runs the script where it was submitted, with a job id
        fakes["sbatch"] = ("#!/bin/sh\nSLURM_JOB_ID=7 SLURM_JOB_NODELIST="
                           "'n[1-4]' exec bash \"$1\"\n")
        for name, text in fakes.items():
            with open(os.path.join(bindir, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(bindir, name), 0o755)
        env = dict(os.environ)
        env["PATH"] = bindir + os.pathsep + env["PATH"]
        env["FAKE_OUT"] = os.path.join(self.cwd, "argv.jsonl")
        for block in blocks:
            for line in block.strip().splitlines():
                words = shlex.split(line)
                with self.subTest(line=line):
                    if words[0] == "dsforge":
                        res = run(*words[1:], cwd=self.cwd)
                        self.assertEqual(res.rc, 0, res)
                        continue
                    self.assertIn(words[0], ("bash", "sbatch"))
                    if os.path.exists(env["FAKE_OUT"]):
                        os.unlink(env["FAKE_OUT"])
                    p = subprocess.run(words, cwd=self.cwd, env=env,
                                       capture_output=True, text=True,
                                       timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    with open(env["FAKE_OUT"], encoding="utf-8") as f:
                        call = json.loads(f.readline())
                    argv = call["argv"]
                    # the training command, then the variant's JSON
                    i = argv.index("train.py")
                    self.assertEqual(argv[i:i + 5], [
                        "train.py", "--model_name_or_path", "gpt2",
                        "--output_dir", "ckpt"])
                    ds = argv[argv.index("--deepspeed") + 1]
                    self.assertTrue(os.path.isfile(os.path.join(self.cwd, ds)),
                                    ds)
        shown = re.findall(r"```\n(#!/usr/bin/env bash\n.*?)```", section,
                           re.S)[0]
        path = re.search(r"where `(run/[^`]+\.launch\.sh)` is", section)
        with open(os.path.join(self.cwd, path.group(1)),
                  encoding="utf-8") as f:
            self.assertEqual(shown, f.read())


if __name__ == "__main__":
    unittest.main()
