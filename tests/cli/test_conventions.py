"""CLI conventions (issue 9 item 3): did-you-mean for commands, options
and subcommands; `help CMD`; --version listed; `check -` reads stdin;
parameter counts as 7e9, 7B, 1.3B, 350M; completion scripts (bash run for
real, zsh and fish syntax-checked and run when installed); the man page
through groff; help generated from the option tables."""
import json
import os
import re
import shutil
import subprocess
import unittest

import dsf
from dsf import run

BASH = shutil.which("bash")
ZSH = shutil.which("zsh")
FISH = shutil.which("fish")
GROFF = shutil.which("groff")


class DidYouMean(unittest.TestCase):
    def check(self, args, word, suggestion):
        res = run(*args)
        self.assertEqual(res.rc, 2, res)
        self.assertIn("'%s'" % word, res.err)
        self.assertIn("did you mean '%s'?" % suggestion, res.err)
        self.assertEqual(res.out, "")

    def test_commands(self):
        self.check(["chek", "x.json"], "chek", "check")
        self.check(["gne", "8xa100"], "gne", "gen")
        self.check(["estimat"], "estimat", "estimate")

    def test_options(self):
        self.check(["gen", "8xa100", "--tire", "large"], "--tire", "--tier")
        self.check(["check", "--world-szie", "8", "x.json"], "--world-szie",
                   "--world-size")
        # a common option too
        self.check(["list", "--profile-pth", "x"], "--profile-pth",
                   "--profile-path")

    def test_subcommands(self):
        self.check(["repo", "remve", "x"], "remve", "remove")
        self.check(["completion", "bsh"], "bsh", "bash")

    def test_nothing_close_gives_no_guess(self):
        res = run("gen", "8xa100", "--frobnicate")
        self.assertEqual(res.rc, 2)
        self.assertNotIn("did you mean", res.err)


class HelpAndVersion(unittest.TestCase):
    def test_help_cmd_is_cmd_help(self):
        for c in ("gen", "check", "repo", "estimate", "detect", "completion"):
            with self.subTest(cmd=c):
                a, b = run("help", c), run(c, "--help")
                self.assertEqual((a.rc, b.rc), (0, 0))
                self.assertEqual(a.out, b.out)
                self.assertTrue(a.out.startswith("Usage:"))

    def test_help_of_unknown_command(self):
        res = run("help", "gne")
        self.assertEqual(res.rc, 2)
        self.assertIn("did you mean 'gen'?", res.err)

    def test_version_and_completion_listed(self):
        out = run("--help").out
        self.assertIn("--version", out)
        self.assertRegex(out, r"(?m)^  completion\s")
        self.assertIn("dsforge help <command>", out)
        # the DeepSpeed plugin's commands, marked as such
        self.assertRegex(out, r"(?m)^  estimate\s.*\(plugin deepspeed\)$")

    def test_every_option_of_the_table_is_in_help_and_man(self):
        man = run("__man").out
        for c in ("gen", "check", "estimate", "explain", "repo", "list"):
            h = run(c, "--help").out
            opts = re.findall(r"(?m)^  (?:-\w, )?--([\w-]+)", h)
            self.assertTrue(opts, c)
            for o in opts:
                self.assertIn("\\-\\-" + o.replace("-", "\\-"), man,
                              (c, o))
        self.assertIn("Common options:", run("gen", "--help").out)


class Stdin(dsf.TempDirTest):
    def test_check_dash_reads_stdin(self):
        bad = '{\n  "train_batch_size": "x"\n}\n'
        path = self.write("in.json", bad)
        with open(path) as f:
            res = run("check", "-", stdin=f)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("<stdin>:2:3: error", res.err)
        with open(path) as f:
            res = run("check", "--format", "json", "-", stdin=f)
        self.assertEqual(res.rc, 1, res)
        files = {e["file"] for e in json.loads(res.out)}
        self.assertEqual(files, {"<stdin>"})

    def test_check_dash_malformed(self):
        path = self.write("in.json", '{"a": ')
        with open(path) as f:
            res = run("check", "-", stdin=f)
        self.assertEqual(res.rc, 3, res)
        self.assertIn("<stdin>:1:", res.err)


class Sizes(unittest.TestCase):
    ACCEPTED = {"7000000000": 7000000000, "7e9": 7000000000,
                "7E9": 7000000000, "7B": 7000000000, "7b": 7000000000,
                "1.3B": 1300000000, "1.3b": 1300000000, "350M": 350000000,
                "350m": 350000000, "125k": 125000, "1.5e3": 1500,
                "0.5T": 500000000000, "13.0B": 13000000000,
                "2.5e+9": 2500000000}
    REFUSED = ["ten", "1.35", "7GB", "7BB", "-7B", "0x10", "inf", "nan",
               "1e", "", "B", "1.3.5B", "7 B", "1e-3", "0", "1e16", "7B7"]

    def params(self, spelling):
        return run("estimate", "--params", spelling, "--json")

    def test_accepted(self):
        for s, n in self.ACCEPTED.items():
            with self.subTest(spelling=s):
                res = self.params(s)
                self.assertEqual(res.rc, 0, res)
                self.assertEqual(json.loads(res.out)["inputs"]["params"], n)

    def test_refused(self):
        for s in self.REFUSED:
            with self.subTest(spelling=s):
                res = self.params(s)
                self.assertEqual(res.rc, 2, res)
                self.assertIn("--params", res.err)
                self.assertEqual(res.out, "")

    def test_largest_layer_too(self):
        res = run("estimate", "--params", "7B", "--largest-layer", "131M",
                  "--json")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(json.loads(res.out)["inputs"]["largest_layer"],
                         131000000)


def bash_complete(line, env=None, script=None):
    """The candidates bash's completion offers at the end of line (with
    the script dsforge prints, or the one given)."""
    if script is None:
        script = run("completion", "bash").out
    words = line.split(" ")
    prog = (
        script + "\n"
        "COMP_WORDS=(%s)\n" % " ".join(
            "'%s'" % w for w in [dsf.DSFORGE] + words[1:]) +
        "COMP_CWORD=%d\n" % (len(words) - 1) +
        "COMP_LINE='%s'\nCOMP_POINT=${#COMP_LINE}\n" % line +
        "_dsforge\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([BASH, "--norc", "--noprofile"], input=prog, env=e,
                       capture_output=True, text=True, timeout=60)
    return [w for w in p.stdout.split("\n") if w]


@unittest.skipUnless(BASH, "bash not installed")
class BashCompletion(dsf.TempDirTest):
    def test_commands(self):
        self.assertEqual(bash_complete("dsforge g"), ["gen"])
        got = bash_complete("dsforge ")
        for c in ("gen", "check", "estimate", "repo", "help", "completion"):
            self.assertIn(c, got)

    def test_profiles(self):
        self.assertEqual(bash_complete("dsforge gen 8x"), ["8xa100"])
        self.assertIn("small-gpu-offload", bash_complete("dsforge show s"))

    def test_live_search_path(self):
        d = self.profile("zz-mine", 'return { name = "zz-mine", '
                         'extends = "base", tiers = { tiny = {} }, '
                         'build = function(p) return {} end }')
        env = {"DSFORGE_PATH": d}
        self.assertEqual(bash_complete("dsforge gen zz", env), ["zz-mine"])
        self.assertEqual(bash_complete("dsforge gen zz-mine --tier t", env),
                         ["tiny"])

    def test_options_and_values(self):
        self.assertEqual(bash_complete("dsforge gen 8xa100 --ti"),
                         ["--tier"])
        self.assertIn("--profile-path", bash_complete("dsforge gen --pro"))
        self.assertEqual(sorted(bash_complete("dsforge gen 8xa100 --tier ")),
                         ["large", "medium", "small"])
        self.assertEqual(bash_complete("dsforge gen 8xa100 --tier small,l"),
                         ["small,large"])
        self.assertEqual(bash_complete("dsforge check --target d"),
                         ["deepspeed"])
        self.assertIn("world_size=",
                      bash_complete("dsforge gen 8xa100 --param wor"))
        self.assertEqual(bash_complete("dsforge repo rem"), ["remove"])
        self.assertEqual(bash_complete("dsforge help es"), ["estimate"])
        self.assertEqual(bash_complete("dsforge completion z"), ["zsh"])

    def test_files_fall_back_to_the_shell(self):
        # no candidates: -o default lets bash complete file names
        self.assertEqual(bash_complete("dsforge check x"), [])


@unittest.skipUnless(ZSH, "zsh not installed")
class Zsh(dsf.TempDirTest):
    def test_syntax_and_candidates(self):
        path = self.write("_dsforge", run("completion", "zsh").out)
        p = subprocess.run([ZSH, "-n", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # run the function with compadd replaced by a printer
        prog = ("compdef() { :; }\n"
                "compadd() { while [[ $1 == -* ]]; do [[ $1 == -- ]] && "
                "{ shift; break; }; [[ $1 == -S ]] && shift; shift; done; "
                "print -l -- $@; }\n"
                "_files() { print FILES; }\n"
                "source %s\n"
                "words=(%s gen 8x); CURRENT=3; _dsforge\n"
                "words=(%s check x); CURRENT=3; _dsforge\n"
                % (path, dsf.DSFORGE, dsf.DSFORGE))
        p = subprocess.run([ZSH, "-f", "-c", prog], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.stdout.split(), ["8xa100", "FILES"], p.stderr)


@unittest.skipUnless(FISH, "fish not installed")
class Fish(dsf.TempDirTest):
    def test_syntax_and_candidates(self):
        path = self.write("dsforge.fish", run("completion", "fish").out)
        p = subprocess.run([FISH, "-n", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        bindir = os.path.dirname(os.path.abspath(dsf.DSFORGE))
        e = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
                 XDG_CONFIG_HOME=self.tmp, XDG_DATA_HOME=self.tmp)
        p = subprocess.run([FISH, "--no-config", "-c",
                            "source %s; complete -C 'dsforge gen 8x'" % path],
                           capture_output=True, text=True, env=e, timeout=60)
        self.assertEqual(p.stdout.split(), ["8xa100"], p.stderr)


class ManPage(dsf.TempDirTest):
    @unittest.skipUnless(GROFF, "groff not installed")
    def test_groff_has_no_warnings(self):
        man = run("__man")
        self.assertEqual(man.rc, 0)
        p = subprocess.run([GROFF, "-man", "-Tutf8", "-ww", "-z"],
                           input=man.out, capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        p = subprocess.run([GROFF, "-man", "-Tutf8"], input=man.out,
                           capture_output=True, text=True)
        text = re.sub(r".\x08", "", p.stdout)
        for c in ("gen", "check", "estimate", "repo", "completion"):
            self.assertRegex(text, r"(?m)^   %s$" % c)
        self.assertIn("EXIT CODES", text)
        self.assertIn("Declared by the plugin deepspeed.", text)

    # Where src/ reads a variable whose name is not a literal in the
    # getenv call: the name is a literal of the caller (a wrapper's
    # argument, a format) and the scan below finds it by its prefix or
    # file; a new such call must be added here and its names to the man
    # page. cmdcheck.c reads the variables plugins declare (`env`).
    INDIRECT_GETENV = {"core/paths.c", "core/dynlib.c", "fetch/repo_opts.c",
                       "plugin/cmdcheck.c", "plugin/options.c"}
    ENV_PREFIXES = ("DSFORGE_", "XDG_", "SSL_", "CURL_")

    def read_names(self):
        """Every environment variable name src/ and the built-in plugins
        read: getenv("NAME") literals, the names passed to the wrappers
        (literals with a prefix above: "DSFORGE_TOKEN_%s" gives
        DSFORGE_TOKEN_) and the `env` lists of command checks."""
        names, indirect = set(), set()
        src = os.path.join(dsf.SOURCE_DIR, "src")
        for root, _, files in os.walk(src):
            for f in files:
                if not f.endswith(".c"):
                    continue
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                names |= set(re.findall(r'getenv\("([A-Za-z0-9_]+)"\)', text))
                if re.search(r"getenv\([a-z_>.\[\]-]+\)", text):
                    indirect.add(os.path.relpath(path, src))
                for lit in re.findall(r'"([A-Z][A-Z0-9_]*)(?:%s)?"', text):
                    if lit.startswith(self.ENV_PREFIXES) and lit not in (
                            "DSFORGE_", "XDG_"):
                        names.add(lit)
        plugins = os.path.join(dsf.SOURCE_DIR, "plugins")
        for root, _, files in os.walk(plugins):
            for f in files:
                if f.endswith(".lua"):
                    with open(os.path.join(root, f), encoding="utf-8") as fh:
                        text = fh.read()
                        for lst in re.findall(r"\benv = \{([^}]*)\}", text):
                            names |= set(re.findall(r'"([A-Z0-9_]+)"', lst))
                        # an option's variable (plugin/options.c)
                        names |= set(re.findall(r'\benv = "([A-Z0-9_]+)"',
                                                text))
        return names, indirect

    def test_man_page_lists_every_environment_variable_read(self):
        # issue 29: ENVIRONMENT listed 5 of the variables read (not CI)
        names, indirect = self.read_names()
        self.assertEqual(indirect, self.INDIRECT_GETENV,
                         "a getenv of a computed name: list it above and "
                         "its names in the man page")
        for must in ("CI", "NO_COLOR", "DSFORGE_PATH", "DSFORGE_TOKEN_",
                     "XDG_STATE_HOME", "DSFORGE_FETCH_TIMEOUT",
                     "DSFORGE_LIBCURL", "WORLD_SIZE", "HOME"):
            self.assertIn(must, names)  # the scan finds them
        man = run("__man").out
        section = man.split(".SH ENVIRONMENT\n", 1)[1].split("\n.SH ", 1)[0]
        listed = set(re.findall(r"[A-Z][A-Z0-9_]+(?:<[A-Z]+>)?", section))
        listed |= {n.split("<")[0] for n in listed}
        missing = sorted(n for n in names if n not in listed)
        self.assertEqual(missing, [], "read but not in the man page's "
                                      "ENVIRONMENT")
        # and --help says the same
        self.assertIn(section.split("\n")[0].strip(),
                      run("--help").out)

    def test_built_and_installed(self):
        # the build writes build/dsforge.1 from the binary
        built = os.path.join(os.path.dirname(os.path.abspath(dsf.DSFORGE)),
                             "dsforge.1")
        self.assertTrue(os.path.isfile(built), built)
        with open(built) as f:
            self.assertEqual(f.read(), run("__man").out)
        prefix = os.path.join(self.tmp, "prefix")
        p = subprocess.run(["cmake", "--install", os.path.dirname(built),
                            "--prefix", prefix], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(prefix, "share", "man", "man1",
                               "dsforge.1")) as f:
            self.assertEqual(f.read(), run("__man").out)
        # the completion scripts, where Debian's shells look for them
        share = os.path.join(prefix, "share")
        for shell, path in (
                ("bash", "bash-completion/completions/dsforge"),
                ("zsh", "zsh/vendor-completions/_dsforge"),
                ("fish", "fish/vendor_completions.d/dsforge.fish")):
            with open(os.path.join(share, path)) as f:
                text = f.read()
            self.assertEqual(text, run("completion", shell).out, shell)
            if shell == "bash" and BASH:
                self.assertEqual(bash_complete("dsforge g", script=text),
                                 ["gen"])


if __name__ == "__main__":
    unittest.main()
