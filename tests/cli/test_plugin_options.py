"""Options that plugins add to the built-in commands (the `options` field
of a declaration, contrib/docs/plugins.md "Options"; issue 35): the core
parses them from the declaration and shows them wherever the command's own
options are shown -- its --help, `help COMMAND`, the man page and the
completion -- and without the plugin they do not exist."""
import os
import unittest

import dsf
from dsf import run


class PluginOptions(dsf.TempDirTest):
    def test_help_man_and_completion_show_them(self):
        for cmd, opt in (("check", "--world-size N"),
                         ("check", "--ds-version X.Y[.Z]"),
                         ("gen", "--ds-version X.Y[.Z]"),
                         ("gen", "--strict-fit")):
            self.assertIn(opt, run(cmd, "--help").out, cmd)
            self.assertIn(opt, run("help", cmd).out, cmd)
        man = run("__man").out
        check = man.split(".SS check\n", 1)[1].split(".SS ", 1)[0]
        self.assertIn("\\fB\\-\\-world\\-size\\fR", check)
        gen = man.split(".SS gen\n", 1)[1].split(".SS ", 1)[0]
        self.assertIn("\\fB\\-\\-strict\\-fit\\fR", gen)
        self.assertIn("--world-size",
                      run("__complete", "check", "c.json", "--wor").out.split())
        self.assertIn("--strict-fit",
                      run("__complete", "gen", "base", "--stri").out.split())

    def test_without_the_plugin_they_are_unknown(self):
        # only the plugin declares them: a plugin path without it (no
        # built-in plugins) knows no --world-size
        empty = os.path.join(self.tmp, "data")
        os.makedirs(os.path.join(empty, "plugins"))
        os.makedirs(os.path.join(empty, "profiles"))
        env = {"DSFORGE_DATADIR": empty}
        r = run("check", "--help", env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertNotIn("--world-size", r.out)
        cfg = os.path.join(self.tmp, "c.json")
        with open(cfg, "w") as f:
            f.write("{}")
        r = run("check", "--world-size", "2", cfg, env=env)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("unknown option '--world-size'", r.err)

    def test_the_texts_of_the_commands_come_from_the_targets(self):
        # the family's name ("validate DeepSpeed config files"), --target's
        # values and help are the plugins' (targets.family, targets.help):
        # without plugins the texts name none; the same in --help, help
        # COMMAND and the man page
        for c in ("check", "gen", "diff"):
            self.assertEqual(run(c, "--help").out, run("help", c).out, c)
        self.assertIn("Validates DeepSpeed config files",
                      run("check", "--help").out)
        self.assertIn("--target deepspeed|hf", run("diff", "--help").out)
        self.assertIn("check       validate DeepSpeed config files",
                      run("--help").out)
        self.assertIn("DSFORGE_DS_VERSION: --ds-version of check, gen",
                      run("--help").out)
        empty = os.path.join(self.tmp, "data")
        os.makedirs(os.path.join(empty, "plugins"))
        os.makedirs(os.path.join(empty, "profiles"))
        env = {"DSFORGE_DATADIR": empty}
        h = run("check", "--help", env=env).out
        self.assertIn("Validates config files", h)
        self.assertIn("--target TARGET", h)
        self.assertNotIn("DeepSpeed", h)
        top = run("--help", env=env).out
        self.assertIn("check       validate config files", top)
        self.assertNotIn("DSFORGE_DS_VERSION", top)
        self.assertNotIn("DeepSpeed", run("__man", env=env).out)

    def test_their_errors_are_the_options_own(self):
        cfg = os.path.join(self.tmp, "c.json")
        with open(cfg, "w") as f:
            f.write('{"train_micro_batch_size_per_gpu": 1}')
        r = run("check", "--world-size", "0", cfg)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("--world-size: '0' is not a whole number between 1 "
                      "and 1000000", r.err)
        r = run("check", "--world-size=x", cfg)
        self.assertEqual(r.rc, 2, r)
        self.assertEqual(run("check", "--world-size", "8", cfg).rc, 0)


if __name__ == "__main__":
    unittest.main()
