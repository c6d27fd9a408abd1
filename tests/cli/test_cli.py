"""The command line itself: help, version, usage errors, exit codes, the
colour policy, and that the README keeps documenting every rule."""
import json
import os
import pty
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

import dsf
from dsf import run

COMMANDS = ["gen", "list", "show", "check", "explain", "schema", "plugins",
            "estimate", "repo", "detect", "lsp"]


class Help(unittest.TestCase):
    def test_top_level_help_lists_commands_and_exit_codes(self):
        for flag in ("--help", "-h", "help"):
            res = run(flag)
            self.assertEqual(res.rc, 0, res)
            for c in COMMANDS:
                self.assertRegex(res.out, r"(?m)^  %s\s" % c)
            for code in range(6):
                self.assertRegex(res.out, r"(?m)^  %d  " % code)
            self.assertEqual(res.err, "")

    def test_every_command_has_help(self):
        for c in COMMANDS:
            res = run(c, "--help")
            self.assertEqual(res.rc, 0, res)
            self.assertTrue(res.out.startswith("Usage: dsforge %s" % c) or
                            res.out.startswith("Usage:"), res.out[:80])
            self.assertEqual(res.err, "")

    def test_version(self):
        for flag in ("--version", "-V"):
            res = run(flag)
            self.assertEqual(res.rc, 0)
            self.assertRegex(res.out, r"^dsforge \d+\.\d+\.\d+\n$")


class UsageErrors(unittest.TestCase):
    def test_no_arguments(self):
        res = run()
        self.assertEqual(res.rc, 2)
        self.assertIn("Usage: dsforge", res.err)
        self.assertEqual(res.out, "")

    def test_unknown_command_is_one_line_plus_hint(self):
        res = run("generate")
        self.assertEqual(res.rc, 2)
        lines = res.err.splitlines()
        self.assertEqual(lines[0], "dsforge: error: unknown command "
                                   "'generate'")
        self.assertIn("dsforge --help", lines[1])
        self.assertEqual(len(lines), 2)

    def test_unknown_option_of_every_command(self):
        for c in COMMANDS:
            res = run(c, "--frobnicate")
            self.assertEqual(res.rc, 2, (c, res))
            self.assertIn("unknown option '--frobnicate'", res.err)
            self.assertIn("dsforge %s --help" % c, res.err)
            self.assertEqual(res.out, "")

    def test_a_mistyped_top_level_option_suggests_the_option(self):
        # issue 29: '--verison' suggested 'version', which is no option
        for typo, want in (("--verison", "--version"), ("--hlep", "--help")):
            with self.subTest(typo=typo):
                res = run(typo)
                self.assertEqual(res.rc, 2, res)
                self.assertEqual(res.err.splitlines(), [
                    "dsforge: error: unknown option '%s'" % typo,
                    "  hint: did you mean '%s'? (try 'dsforge --help')"
                    % want])

    def test_missing_option_value(self):
        res = run("gen", "8xa100", "--tier")
        self.assertEqual(res.rc, 2)
        self.assertIn("option needs a value: '--tier'", res.err)

    def test_bad_limits(self):
        for opt, val in (("--max-memory", "0"), ("--max-seconds", "x"),
                         ("--max-instructions", "-5")):
            res = run("gen", "8xa100", opt, val)
            self.assertEqual(res.rc, 2, res)
            self.assertIn(opt, res.err)


class Colour(dsf.TempDirTest):
    def run_on_terminal(self, *args, env=None):
        """Runs dsforge with stderr on a pseudo-terminal."""
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        if env:
            e.update(env)
        p = subprocess.Popen([dsf.DSFORGE] + list(args), stdout=subprocess.PIPE,
                             stderr=slave, env=e, cwd=self.tmp)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        p.wait(timeout=60)
        p.stdout.close()
        os.close(master)
        return p.returncode, b"".join(chunks).decode()

    def bad_file(self):
        return self.write("bad.json", '{"zero_optimization": {"stagee": 3}}')

    def test_colour_on_a_terminal(self):
        rc, err = self.run_on_terminal("check", self.bad_file())
        self.assertEqual(rc, 1)
        self.assertIn("\x1b[", err)

    def test_no_colour_with_NO_COLOR(self):
        rc, err = self.run_on_terminal("check", self.bad_file(),
                                       env={"NO_COLOR": "1"})
        self.assertEqual(rc, 1)
        self.assertIn("unknown-key", err)
        self.assertNotIn("\x1b[", err)

    def test_no_colour_when_not_a_terminal(self):
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        p = subprocess.run([dsf.DSFORGE, "check", self.bad_file()], env=e,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertNotIn("\x1b[", p.stderr)


class Readme(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(dsf.SOURCE_DIR, "README.md")) as f:
            self.readme = f.read()

    def test_lists_every_rule_of_the_builtin_plugins(self):
        res = run("plugins", "--json")
        self.assertEqual(res.rc, 0, res)
        for plugin in res.json():
            for rule in plugin["rules"]:
                self.assertRegex(
                    self.readme,
                    r"\| `%s` \| %s \|" % (re.escape(rule["id"]),
                                          rule["severity"]),
                    "README's rule table lacks %s (regenerate it with "
                    "contrib/rules-table.sh)" % rule["id"])

    def test_documents_the_exit_codes(self):
        for code in range(6):
            self.assertRegex(self.readme, r"(?m)^\| %d \| " % code)

    def test_usage_examples_run(self):
        """Every example of "Using it" that needs no network runs as
        shown (with a team.json and a ds_config.json in the directory)."""
        section = self.readme.split("## Using it", 1)[1].split("\n## ", 1)[0]
        block = re.findall(r"```sh\n(.*?)```", section, re.S)[0]
        commands = [l.split("  #")[0].strip() for l in block.splitlines()
                    if l.startswith("dsforge ")]
        self.assertGreater(len(commands), 10)
        tmp = tempfile.mkdtemp(prefix="dsforge-readme-")
        try:
            with open(os.path.join(tmp, "team.json"), "w") as f:
                f.write('{"steps_per_print": 10}')
            with open(os.path.join(dsf.GOLDEN_DIR, "8xa100-small.json")) as f:
                golden = f.read()
            with open(os.path.join(tmp, "ds_config.json"), "w") as f:
                f.write(golden)
            with open(os.path.join(tmp, "config.json"), "w") as f:
                f.write('{"model_type": "llama", "hidden_size": 2048, '
                        '"intermediate_size": 8192, "num_hidden_layers": 16, '
                        '"num_attention_heads": 32, "vocab_size": 128256}')
            ran = 0
            for cmd in commands:
                args = shlex.split(cmd)[1:]
                if args[0] == "repo" or any("/" in a and "@" in a
                                            for a in args):
                    continue  # needs a repository server
                out = args[args.index(">") + 1] if ">" in args else None
                if out:
                    args = args[:args.index(">")]
                res = run(*args, cwd=tmp)
                self.assertEqual(res.rc, 0, "%s\n%r" % (cmd, res))
                ran += 1
            self.assertGreater(ran, 10)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_quick_start_has_the_two_commands(self):
        section = self.readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
        blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
        self.assertEqual(len(blocks), 2)
        self.assertIn("build/dsforge gen 8xa100 -o out", blocks[0])
        self.assertEqual(blocks[1].strip(), "contrib/test.sh")


class ExitCodes(dsf.TempDirTest):
    def test_each_documented_code_is_reachable(self):
        good = self.write("good.json", json.dumps({
            "train_batch_size": 8, "train_micro_batch_size_per_gpu": 8,
            "gradient_clipping": 1.0}))
        bad = self.write("bad.json", '{"fp16": {"enabled": true}, '
                                     '"bf16": {"enabled": true}}')
        prof = self.profile("boom", "return { name = 'boom', summary = 's', "
                                    "build = function() error('boom') end }")
        self.assertEqual(run("check", good).rc, 0)
        self.assertEqual(run("check", bad).rc, 1)
        self.assertEqual(run("check").rc, 2)
        self.assertEqual(run("check", os.path.join(self.tmp, "nope")).rc, 3)
        self.assertEqual(run("repo", "path", "nosuchrepo",
                             cwd=self.tmp).rc, 3)
        self.assertEqual(run("gen", "boom", "--profile-path", prof).rc, 5)


BAD_CONFIG = """{
  "train_batch_size": 7,
  "train_micro_batch_size_per_gpu": 2,
  "gradient_accumulation_steps": 1,
  "fp16": {"enabled": true},
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 9}
}
"""


class StandsAlone(dsf.TempDirTest):
    """The built-in profiles and plugins are inside the executable: an
    installed binary and one copied alone (no share/, no source tree, run
    from elsewhere) behave exactly like the one in the build tree."""

    def check_binary(self, exe):
        work = os.path.join(self.tmp, "work")
        os.makedirs(work, exist_ok=True)
        env = dict(os.environ, HOME=os.path.join(self.tmp, "home"),
                   XDG_CONFIG_HOME="", XDG_CACHE_HOME="")
        env.pop("DSFORGE_DATADIR", None)

        def run_exe(*args):
            return subprocess.run([exe, *args], capture_output=True,
                                  text=True, timeout=60, cwd=work, env=env)

        with open(os.path.join(work, "bad.json"), "w") as f:
            f.write(BAD_CONFIG)
        r = run_exe("check", "bad.json", "--world-size", "8")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("bad.json:", r.stderr)
        self.assertIn("error:", r.stderr)
        r = run_exe("gen", "8xa100", "--tier", "small", "--stdout")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(dsf.GOLDEN_DIR, "8xa100-small.json")) as f:
            self.assertEqual(r.stdout, f.read())
        r = run_exe("list")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("8xa100", "base", "high-performance", "long-sequence",
                     "small-gpu-offload"):
            self.assertRegex(r.stdout, r"(?m)^%s +small,medium,large +"
                             r"built-in " % name)
        r = run_exe("plugins")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("deepspeed", r.stdout)
        self.assertIn("<built-in>/plugins/deepspeed", r.stdout)
        self.assertEqual(os.listdir(work), ["bad.json"])

    def test_copied_alone(self):
        exe = os.path.join(self.tmp, "elsewhere", "dsforge")
        os.makedirs(os.path.dirname(exe))
        shutil.copy(dsf.DSFORGE, exe)
        self.check_binary(exe)

    def test_installed(self):
        build = os.path.dirname(os.path.abspath(dsf.DSFORGE))
        prefix = os.path.join(self.tmp, "prefix")
        p = subprocess.run(["cmake", "--install", build, "--prefix",
                            prefix], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_binary(os.path.join(prefix, "bin", "dsforge"))


class ListsEachProfileOnce(dsf.TempDirTest):
    def test_a_copy_identical_to_a_built_in_is_listed_once(self):
        prof = os.path.join(self.tmp, "profiles")
        os.makedirs(prof)
        shutil.copy(os.path.join(dsf.SOURCE_DIR, "profiles", "base.lua"),
                    prof)
        with open(os.path.join(dsf.SOURCE_DIR, "profiles",
                               "8xa100.lua")) as f:
            text = f.read()
        with open(os.path.join(prof, "8xa100.lua"), "w") as f:
            f.write(text + "-- edited\n")
        r = run("list", cwd=self.tmp)
        self.assertExit(r, 0)
        rows = [l.split()[0] for l in r.out.splitlines()[1:]]
        self.assertEqual(rows.count("base"), 1, r.out)
        # an edited copy really shadows the built-in: both are shown
        self.assertEqual(rows.count("8xa100"), 2, r.out)
        self.assertIn("shadowed", r.out)


if __name__ == "__main__":
    unittest.main()
