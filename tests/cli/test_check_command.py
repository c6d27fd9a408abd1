"""`dsforge check CONFIG -- COMMAND...` (issue 12 item 2): the plugins'
command checks (the built-in launch plugin's, and test plugins') run on a
config and a training command; each finding is reported at the argument
(argv index, column in the command line) and at the config key; the
command's world size reaches the config's batch rules; a gen -o output's
params are the config's intent; JSON output; usage and plugin errors."""
import json
import os
import re
import shlex
import subprocess

import dsf
from dsf import run

ISSUE_CMD = ["deepspeed", "--num_gpus", "8", "train.py",
             "--per_device_train_batch_size", "4",
             "--gradient_accumulation_steps", "16", "--bf16"]

CFG = """{
  "train_micro_batch_size_per_gpu": 2,
  "gradient_accumulation_steps": 16,
  "gradient_clipping": 1.0,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 0}
}
"""

TB = """{
  "train_batch_size": 256,
  "train_micro_batch_size_per_gpu": 2,
  "gradient_accumulation_steps": 16,
  "gradient_clipping": 1.0,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 0}
}
"""

GOOD_FLAGS = ["--deepspeed", "cfg.json", "--per_device_train_batch_size", "2",
              "--gradient_accumulation_steps", "16", "--bf16"]


def run_sh(cwd, script, env, *args):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run(["bash", script, *args], cwd=cwd, env=e,
                          stdin=subprocess.DEVNULL).returncode


def col(words, i):
    """1-based column of words[i] in the words joined by spaces (plain
    words only)."""
    return len(" ".join(words[:i])) + 2 if i else 1


class CheckCommand(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.cfg = self.write("cfg.json", CFG)
        self.tb = self.write("tb.json", TB)

    def check(self, *args, env=None):
        return run("check", *args, cwd=self.tmp, env=env)

    def findings(self, res):
        return [f for f in json.loads(res.out) if f["file"] == "<command>"
                or "argv" in f]

    def test_issue_example_reports_both_places(self):
        res = self.check("cfg.json", "--", *ISSUE_CMD)
        self.assertExit(res, 1)
        # argv[4] is --per_device_train_batch_size, at column 33
        self.assertEqual(col(ISSUE_CMD, 4), 33)
        self.assertIn("<command>:1:33: error: argv[4] "
                      "--per_device_train_batch_size: ds "
                      "train_micro_batch_size_per_gpu=2 vs hf "
                      "per_device_train_batch_size=4", res.err)
        self.assertIn("[trainer-mismatch]", res.err)
        self.assertIn("cfg.json:2:3: note: train_micro_batch_size_per_gpu: "
                      "set here; the command's argv[4] "
                      "--per_device_train_batch_size disagrees", res.err)
        # the caret under the argument in the command line
        self.assertIn("    " + " ".join(ISSUE_CMD) + "\n" + " " * 36 + "^",
                      res.err)
        self.assertIn("no-deepspeed-flag", res.err)

    def test_consistent_command_exits_0(self):
        for flags in (GOOD_FLAGS,
                      ["--deepspeed=cfg.json",
                       "--per_device_train_batch_size=2",
                       "--gradient_accumulation_steps=16", "--bf16=true"]):
            with self.subTest(flags=flags):
                res = self.check("cfg.json", "--", "deepspeed", "--num_gpus",
                                 "8", "train.py", *flags)
                self.assertExit(res, 0)
                self.assertNotIn("<command>", res.err)

    def test_equals_form_is_located(self):
        words = ["deepspeed", "--num_gpus=8", "train.py",
                 "--deepspeed=cfg.json", "--per_device_train_batch_size=4",
                 "--gradient_accumulation_steps=16", "--bf16"]
        res = self.check("--format", "json", "cfg.json", "--", *words)
        self.assertExit(res, 1)
        f = [x for x in self.findings(res)
             if x["path"] == "train_micro_batch_size_per_gpu"
             and x["rule"] == "trainer-mismatch"]
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["argv"], [4])
        self.assertEqual(f[0]["col"], col(words, 4))
        self.assertEqual(f[0]["config"], {"file": "cfg.json", "line": 2,
                                          "col": 3})

    def test_json_output(self):
        res = self.check("cfg.json", "--format", "json", "--", *ISSUE_CMD)
        self.assertExit(res, 1)
        out = json.loads(res.out)
        self.assertEqual(res.err, "")
        mm = [f for f in out if f.get("rule") == "trainer-mismatch"]
        self.assertEqual(mm, [{
            "file": "<command>", "line": 1, "col": 33, "severity": "error",
            "rule": "trainer-mismatch",
            "path": "train_micro_batch_size_per_gpu",
            "message": "ds train_micro_batch_size_per_gpu=2 vs hf "
                       "per_device_train_batch_size=4: the Trainer raises "
                       "ValueError at start-up",
            "argv": [4], "columns": [33],
            "config": {"file": "cfg.json", "line": 2, "col": 3}}])
        nd = [f for f in out if f.get("rule") == "no-deepspeed-flag"][0]
        self.assertEqual((nd["file"], nd["argv"], nd["severity"]),
                         ("<command>", [], "warning"))

    def test_strict_fails_on_the_commands_warnings(self):
        words = ["deepspeed", "--num_gpus", "8", "train.py"] + GOOD_FLAGS[2:]
        self.assertExit(self.check("cfg.json", "--", *words), 0)
        res = self.check("cfg.json", "--strict", "--", *words)
        self.assertExit(res, 1)
        self.assertIn("no-deepspeed-flag", res.err)

    def test_torchrun_world_size_and_batch_identity(self):
        for launcher in (["torchrun"],
                         ["python", "-m", "torch.distributed.run"]):
            with self.subTest(launcher=launcher):
                words = launcher + ["--nnodes=1", "--nproc-per-node=4",
                                    "train.py", "--deepspeed", "tb.json",
                                    "--per_device_train_batch_size", "2",
                                    "--gradient_accumulation_steps", "16",
                                    "--bf16"]
                res = self.check("--format", "json", "tb.json", "--", *words)
                self.assertExit(res, 1)
                out = json.loads(res.out)
                n = len(launcher)
                bi = [f for f in out if f.get("rule") == "batch-identity"]
                # at the command (its world-size arguments) ...
                cmd = [f for f in bi if f["file"] == "<command>"]
                self.assertEqual(cmd[0]["argv"], [n, n + 1])
                self.assertIn("256 != micro batch 2 * accumulation 16 * "
                              "world size 4", cmd[0]["message"])
                # ... and DeepSpeed's own rule on the file, at world size 4
                rule = [f for f in bi if f["file"] == "tb.json"]
                self.assertIn("world size 4", rule[0]["message"])
        ok = self.check("tb.json", "--", "torchrun", "--nproc_per_node", "8",
                        "train.py", "--deepspeed", "./tb.json",
                        "--per_device_train_batch_size", "2",
                        "--gradient_accumulation_steps", "16", "--bf16")
        self.assertExit(ok, 0)

    def test_world_size_from_the_environment(self):
        words = ["python", "train.py", "--deepspeed", "tb.json"] + [
            "--per_device_train_batch_size", "2",
            "--gradient_accumulation_steps", "16", "--bf16"]
        res = self.check("tb.json", "--", *words, env={"WORLD_SIZE": "4"})
        self.assertExit(res, 1)
        self.assertIn("accumulation 16 * world size 4 (WORLD_SIZE)", res.err)
        self.assertExit(self.check("tb.json", "--", *words,
                                   env={"WORLD_SIZE": "8"}), 0)
        # a leading NAME=value word is the command's environment too
        self.assertExit(self.check("tb.json", "--", "WORLD_SIZE=8", *words,
                                   env={"WORLD_SIZE": "4"}), 0)

    def test_hostfile(self):
        self.write("hosts", "node1 slots=8\nnode2 slots=8  # second\n")
        words = ["deepspeed", "--hostfile=hosts", "train.py", "--deepspeed",
                 "tb.json", "--per_device_train_batch_size", "2",
                 "--gradient_accumulation_steps", "16", "--bf16"]
        res = self.check("tb.json", "--", *words)
        self.assertExit(res, 1)
        self.assertIn("world size 16", res.err)
        self.write("hosts", "node1 slots=4\nnode2 slots=4\n")
        self.assertExit(self.check("tb.json", "--", *words), 0)
        words[1] = "--hostfile=missing"
        res = self.check("tb.json", "--", *words)
        self.assertExit(res, 1)
        self.assertIn("<command>:1:11: error: argv[1] --hostfile=missing: "
                      "cannot read missing", res.err)

    def test_accelerate_config_file(self):
        self.write("acc.yaml", "\n".join([
            "compute_environment: LOCAL_MACHINE",
            "deepspeed_config:",
            "  deepspeed_config_file: 'tb.json'   # the JSON",
            "  gradient_accumulation_steps: 16",
            "distributed_type: DEEPSPEED",
            'mixed_precision: "fp16"',
            "num_machines: 1",
            "num_processes: 8", ""]))
        words = ["accelerate", "launch", "--config_file", "acc.yaml",
                 "train.py", "--per_device_train_batch_size", "2",
                 "--gradient_accumulation_steps", "16", "--bf16"]
        res = self.check("--format", "json", "tb.json", "--", *words)
        self.assertExit(res, 1)
        got = {(f["rule"], tuple(f["argv"]), f.get("path"))
               for f in self.findings(res)}
        self.assertEqual(got, {
            ("precision", (2,), "bf16.enabled"),
            ("accumulation-twice", (2, 7), "gradient_accumulation_steps")})
        # num_processes: 8 is the world size: no batch-identity finding
        self.write("acc.yaml", "distributed_type: DEEPSPEED\n"
                   "num_processes: 4\n")
        res = self.check("tb.json", "--", *words)
        self.assertIn("world size 4", res.err)
        self.write("acc.yaml", "num_processes: [1, 2\n")
        res = self.check("tb.json", "--", *words)
        self.assertIn("acc.yaml:1: flow collections are not supported",
                      res.err)

    def test_precision_disagreement(self):
        res = self.check("--format", "json", "cfg.json", "--", "deepspeed",
                         "--num_gpus", "8", "train.py", *GOOD_FLAGS,
                         "--fp16")
        self.assertExit(res, 1)
        rules = {(f["rule"], tuple(f["argv"])) for f in self.findings(res)}
        self.assertIn(("precision", (10, 11)), rules)

    def test_accumulation_counted_twice(self):
        res = self.check("--format", "json", "cfg.json", "--", "deepspeed",
                         "--num_gpus", "8", "train.py", "--deepspeed",
                         "cfg.json", "--per_device_train_batch_size", "32",
                         "--gradient_accumulation_steps", "16", "--bf16")
        twice = [f for f in self.findings(res)
                 if f["rule"] == "accumulation-twice"]
        self.assertEqual(twice[0]["argv"], [6])
        self.assertIn("micro batch 2 x accumulation 16", twice[0]["message"])

    def test_other_config_file(self):
        res = self.check("cfg.json", "--", "deepspeed", "--num_gpus", "8",
                         "train.py", "--deepspeed", "my dir/other.json",
                         *GOOD_FLAGS[2:])
        self.assertExit(res, 0)
        # the quoted word moves the columns after it
        self.assertIn("<command>:1:33: warning: argv[4] --deepspeed: the "
                      "command gives my dir/other.json", res.err)
        self.assertIn("--deepspeed 'my dir/other.json' "
                      "--per_device_train_batch_size", res.err)

    def test_manifest_gives_the_intent_and_target(self):
        out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "base", "--tier", "medium", "--target",
                            "hf", "-o", out), 0)
        f = os.path.join(out, "base-medium.json")
        words = ["deepspeed", "--num_gpus", "8", "train.py", "--deepspeed", f,
                 "--per_device_train_batch_size", "2",
                 "--gradient_accumulation_steps", "8", "--bf16",
                 "--warmup_steps", "100", "--max_steps", "10000"]
        # no --target: the manifest's (hf) accepts the "auto" values
        res = self.check(f, "--", *words)
        self.assertExit(res, 0)
        self.assertIn("warning: optimizer.params.lr: the Trainer fills "
                      "optimizer.params.lr = 5e-05 from its default (the "
                      "command does not pass --learning_rate); the config "
                      "intends 0.0001 [default-differs]", res.err)
        self.assertIn("adam_beta1", res.err)
        ok = self.check(f, "--", *words, "--learning_rate", "1e-4",
                        "--adam_beta2", "0.95", "--gradient_checkpointing")
        self.assertExit(ok, 0)
        self.assertNotIn("default-differs", ok.err)
        # without the manifest's params nothing is intended
        with open(f) as fh:
            text = fh.read()
        copy = self.write("copy/base-medium.json", text)
        res = self.check("--target", "hf", copy, "--", *words)
        self.assertNotIn("default-differs", res.err)
        # a changed file is not the variant any more
        with open(f, "a") as fh:
            fh.write("\n")
        res = self.check(f, "--target", "hf", "--", *words)
        self.assertIn("differs from the file", res.err)
        self.assertNotIn("default-differs", res.err)

    def test_usage_errors(self):
        res = self.check("cfg.json", "tb.json", "--", "deepspeed", "t.py")
        self.assertExit(res, 2)
        self.assertIn("checks one CONFIG, not 2", res.err)
        res = self.check("cfg.json", "--")
        self.assertExit(res, 2)
        self.assertIn("needs a COMMAND after '--'", res.err)
        # words after -- are the command's, never dsforge's options
        res = self.check("cfg.json", "--", "python", "t.py", "--help")
        self.assertEqual(res.out, "")
        self.assertIn("no-deepspeed-flag", res.err)

    def test_readme_example_is_what_check_prints(self):
        with open(os.path.join(dsf.SOURCE_DIR, "README.md"),
                  encoding="utf-8") as f:
            section = f.read().split("### Checking a training command",
                                     1)[1].split("\n## ", 1)[0]
        cfg = re.findall(r"```json\n(.*?)```", section, re.S)[0]
        cmd = re.findall(r"```sh\n(.*?)```", section, re.S)[0]
        block = re.findall(r"```\n(<command>.*?)```", section, re.S)[0]
        self.write("ds_config.json", cfg)
        self.assertExit(self.check("ds_config.json"), 0)
        words = shlex.split(cmd)
        self.assertEqual(words[:3], ["dsforge", "check", "ds_config.json"])
        res = self.check(*words[2:])
        self.assertIn("exits 1", section)
        self.assertExit(res, 1)
        lines = res.err.splitlines()
        for line in block.splitlines():
            self.assertIn(line, lines)

    def test_the_commands_gen_emits_pass(self):
        """The launch script `gen --emit launch` writes, run with fake
        launchers that record their argv, gives a command that `check`
        finds nothing in, for every built-in profile and tier, at both
        targets (the two features agree with each other)."""
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        for name in ("deepspeed", "torchrun", "accelerate"):
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n{ printf '%s\\0' " + name +
                        "; for a in \"$@\"; do printf '%s\\0' \"$a\"; "
                        "done; } > \"$ARGV_OUT\"\n")
            os.chmod(path, 0o755)
        env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
               "ARGV_OUT": os.path.join(self.tmp, "argv")}
        for target in ("deepspeed", "hf"):
            out = "run-" + target
            for prof in dsf.BUILTIN_PROFILES:
                res = run("gen", prof, "--target", target, "--emit",
                          "hf-args,accelerate,launch", "--train-cmd",
                          "train.py --output_dir 'my ckpt'", "-o", out,
                          cwd=self.tmp)
                self.assertExit(res, 0)
                for tier in dsf.TIERS:
                    for launcher in ("deepspeed", "torchrun", "accelerate"):
                        stem = "%s/%s-%s" % (out, prof, tier)
                        with self.subTest(target=target, variant=stem,
                                          launcher=launcher):
                            sh = run_sh(self.tmp, stem + ".launch.sh", env,
                                        launcher)
                            self.assertEqual(sh, 0)
                            with open(env["ARGV_OUT"], "rb") as f:
                                words = f.read().decode().split("\0")[:-1]
                            res = self.check(stem + ".json", "--format",
                                             "json", "--", *words)
                            self.assertExit(res, 0)
                            self.assertEqual(self.findings(res), [])

    def test_completion_stops_at_the_command(self):
        self.assertIn("--world-size",
                      run("__complete", "check", "cfg.json", "--w").out)
        res = run("__complete", "check", "cfg.json", "--", "deepspeed",
                  "--w")
        self.assertExit(res, 0)
        self.assertEqual(res.out, "")

    # issue 29: a command that runs CONFIG through the Trainer (or
    # accelerate) selects target hf for its own rules, and says so; it
    # printed an [auto-value] error for every "auto" before the hint.
    AUTO = ('{\n  "train_batch_size": "auto",\n'
            '  "train_micro_batch_size_per_gpu": "auto",\n'
            '  "gradient_accumulation_steps": "auto",\n'
            '  "gradient_clipping": "auto",\n'
            '  "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},\n'
            '  "zero_optimization": {"stage": 2, "overlap_comm": true}\n}\n')

    def test_a_trainer_command_selects_target_hf(self):
        self.write("auto.json", self.AUTO)
        words = ["torchrun", "--nproc_per_node", "8", "train.py",
                 "--deepspeed", "auto.json"]
        res = self.check("auto.json", "--", *words)
        self.assertExit(res, 0)
        self.assertNotIn("[auto-value]", res.err)
        self.assertIn("<command>:1:%d: note: argv[4] --deepspeed: the "
                      "command runs auto.json through the Hugging Face "
                      "Trainer (--deepspeed), which fills its \"auto\" "
                      "values: checked at target hf" % col(words, 4),
                      res.err)
        self.assertIn("[command-target]", res.err)
        # --target wins, and the note says the command's target is not used
        res = self.check("auto.json", "--target", "deepspeed", "--", *words)
        self.assertExit(res, 1)
        self.assertEqual(res.err.count("[auto-value]"), 5, res.err)
        self.assertIn("checked at target deepspeed all the same", res.err)

    def test_accelerate_config_file_selects_target_hf(self):
        self.write("auto.json", self.AUTO)
        res = self.check("auto.json", "--", "accelerate", "launch",
                         "--num_processes", "8", "--use_deepspeed",
                         "--deepspeed_config_file", "auto.json", "train.py")
        self.assertExit(res, 0)
        self.assertNotIn("[auto-value]", res.err)
        self.assertIn("through accelerate (deepspeed_config_file)", res.err)

    def test_a_command_that_does_not_run_config_keeps_the_target(self):
        # plain DeepSpeed reads the config itself: "auto" stays an error
        self.write("auto.json", self.AUTO)
        res = self.check("auto.json", "--", "deepspeed", "--num_gpus", "8",
                         "train.py", "--deepspeed_config", "auto.json")
        self.assertExit(res, 1)
        self.assertIn("[auto-value]", res.err)
        self.assertNotIn("[command-target]", res.err)

    def test_help_describes_it(self):
        res = run("check", "--help")
        self.assertExit(res, 0)
        self.assertIn("CONFIG -- COMMAND", res.out)
        self.assertIn("argv[N]", res.out)


PLUG = r'''
return {
  name = "cc", version = "1",
  check_command = {
    env = { "DSF_TEST_VISIBLE" },
    run = function(cfg, words, ctx)
      local mode = words[#words]
      if mode == "env" then
        return { { severity = "note", rule = "cc-env", message =
          tostring(ctx.env.DSF_TEST_VISIBLE) .. "/" .. tostring(ctx.env.HOME) } }
      elseif mode == "read" then
        return { { severity = "note", rule = "cc-read", args = { 1 },
          message = (ctx.read_text(words[1])) } }
      elseif mode == "sneak" then
        return { { severity = "note", rule = "cc", message = ctx.read_text("/etc/passwd") } }
      elseif mode == "badargs" then
        return { { severity = "note", rule = "cc", message = "x", args = { #words + 1 } } }
      elseif mode == "badsev" then
        return { { severity = "fatal", rule = "cc", message = "x" } }
      elseif mode == "notalist" then
        return 42
      elseif mode == "badtarget" then
        return { findings = {}, target = "fsdp" }
      elseif mode == "boom" then
        error("kaput")
      end
      return { { severity = "error", rule = "cc-first", args = { 2, 1 },
                 path = "gradient_clipping", message = "seen " .. #words
                   .. " words, " .. ctx.config_file .. ", " .. ctx.target } }
    end,
  },
}
'''


class PluginCommandChecks(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.write("plugins/cc/init.lua", PLUG)
        self.write("cfg.json", CFG)
        self.env = {"DSFORGE_PLUGIN_PATH": os.path.join(self.tmp, "plugins"),
                    "DSF_TEST_VISIBLE": "yes"}

    def check(self, *words):
        return run("check", "cfg.json", "--format", "json", "--", *words,
                   cwd=self.tmp, env=self.env)

    def mine(self, res):
        return [f for f in json.loads(res.out)
                if f.get("rule", "").startswith("cc")]

    def test_findings_are_mapped(self):
        res = self.check("a", "b c", "d")
        self.assertExit(res, 1)
        f = self.mine(res)
        self.assertEqual(f, [{
            "file": "<command>", "line": 1, "col": 1, "severity": "error",
            "rule": "cc-first", "path": "gradient_clipping",
            "message": "seen 3 words, cfg.json, deepspeed",
            "argv": [0, 1], "columns": [1, 3],
            "config": {"file": "cfg.json", "line": 4, "col": 3}}])

    def test_env_only_what_is_declared(self):
        f = self.mine(self.check("env"))
        self.assertEqual(f[0]["message"], "yes/nil")

    def test_reads_only_named_files(self):
        f = self.mine(self.check("cfg.json", "read"))
        self.assertEqual(f[0]["message"], CFG)
        res = self.check("sneak")
        self.assertExit(res, 5)
        self.assertIn("not a word of the command", res.err)

    def test_bad_results_are_script_errors(self):
        for mode, word in (("badargs", "word numbers"),
                           ("badsev", "'severity'"),
                           ("notalist", "list of findings"),
                           ("badtarget", "returned target 'fsdp', not one of "
                            "--target's values"),
                           ("boom", "kaput")):
            with self.subTest(mode=mode):
                res = self.check(mode)
                self.assertExit(res, 5)
                self.assertIn(word, res.err)
                self.assertIn("plugin cc check_command", res.err)

    # ctx.read_text reaches the C data of its call; kept by the plugin and
    # called later (here by its rule, which runs after the command check),
    # it raises instead of reading the freed stack of that call.
    def test_read_text_kept_past_its_call_is_refused(self):
        self.write("plugins/cc/init.lua", (
            'local kept\n'
            'return { name = "cc", version = "1",\n'
            '  check_command = { run = function(cfg, words, ctx)\n'
            '    kept = ctx.read_text; return {} end },\n'
            '  rules = { { id = "cc-late", severity = "warning", summary = "s",\n'
            '    check = function(cfg, ctx)\n'
            '      if kept then kept("cfg.json") end\n'
            '    end } } }\n'))
        res = self.check("deepspeed", "train.py", "cfg.json")
        self.assertExit(res, 5)
        self.assertIn("plugins/cc/init.lua:7: error: ctx.read_text was kept "
                      "past the call that handed it over", res.err)
        self.assertIn("raised by rule cc-late (plugin cc)", res.err)
        self.assertNotIn("Sanitizer", res.err)

    def test_bad_declarations_are_input_errors(self):
        for decl, word in (("3", "must be a table"),
                           ("{ run = function() end, x = 1 }",
                            "unknown field"),
                           ("{ env = { 'A-B' }, run = function() end }",
                            "environment variable names"),
                           ("{ env = {} }", "needs a 'run' function")):
            with self.subTest(decl=decl):
                self.write("bad/b/init.lua", 'return { name = "b", version '
                           '= "1", check_command = %s }' % decl)
                res = run("check", "cfg.json", "--", "x", cwd=self.tmp,
                          env={"DSFORGE_PLUGIN_PATH":
                               os.path.join(self.tmp, "bad")})
                self.assertExit(res, 3)
                self.assertIn("plugin 'b': check_command", res.err)
                self.assertIn(word, res.err)


    def test_no_plugin_checks_commands(self):
        # a local "launch" without check_command shadows the built-in one
        self.write("nolaunch/launch/init.lua",
                   'return { name = "launch", version = "0" }')
        res = run("check", os.path.join(self.tmp, "cfg.json"), "--",
                  "deepspeed", "t.py", cwd=os.path.join(self.tmp, "nolaunch"),
                  env={"DSFORGE_PLUGIN_PATH":
                       os.path.join(self.tmp, "nolaunch")})
        self.assertExit(res, 3)
        self.assertIn("no loaded plugin checks commands", res.err)


if __name__ == "__main__":
    import unittest
    unittest.main()


class IntegersAsPythonReadsThem(dsf.TempDirTest):
    """An integer option of the training command is read as the Trainer's
    argument parser reads it, with Python's int() (issue 30): any size,
    digits of any script, single underscores. Each sample's verdict is
    held against python3's own int()."""

    def setUp(self):
        super().setUp()
        self.write("cfg.json", CFG)

    def check(self, *args):
        return run("check", *args, cwd=self.tmp)

    SAMPLES = ["2", " 2 ", "+2", "0_2", "2_", "_2", "2__0", "02", "-2",
               "99999999999999999999", "\u0662", "\u0968", "\uff12",
               "\U0001d7d0", "2.0", "2e0", "0x2", "", "two", "\u00b2",
               "1\u0660"]

    def test_each_sample_has_pythons_verdict(self):
        for s in self.SAMPLES:
            with self.subTest(sample=s):
                try:
                    want = int(s)
                except ValueError:
                    want = None
                words = ["deepspeed", "--num_gpus", "8", "train.py",
                         "--deepspeed", "cfg.json",
                         "--per_device_train_batch_size", s,
                         "--gradient_accumulation_steps", "16", "--bf16"]
                res = self.check("cfg.json", "--format", "json", "--",
                                 *words)
                self.assertIn(res.rc, (0, 1), repr(res))
                text = res.out + res.err
                refused = "needs an integer" in text
                self.assertEqual(refused, want is None, repr(res))
                if want is not None:
                    # read as that number: it agrees with the config's 2
                    # exactly when Python's value is 2
                    self.assertEqual(res.rc == 0, want == 2, repr(res))
