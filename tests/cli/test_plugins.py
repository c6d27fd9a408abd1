"""Plugins: a team adds a rule without recompiling. A plugin folder outside
the source tree, found through --plugin-path or DSFORGE_PLUGIN_PATH, is
listed by `dsforge plugins` and enforced by `check` and `gen`; broken
plugins give a clear error naming the plugin and its file, never a crash.

Exit codes (contrib/docs/plugins.md): 1 rule errors, 3 bad declarations, 5 Lua
errors (syntax, runtime, a rule that raises or reports an undeclared id).
"""
import json
import os
import re
import unittest

import dsf
from dsf import run

CLUSTER_X = """-- cluster X only schedules ZeRO-3 jobs
return {
  name = "cluster-x",
  version = "%(version)s",
  summary = "rules of cluster X",
  rules = {
    {
      id = "cluster-x-stage3",
      severity = "error",
      summary = "stage must be 3 on cluster X",
      fix = "set zero_optimization.stage to 3",
      check = function(cfg, ctx)
        local z = cfg.zero_optimization
        local stage = type(z) == "table" and z.stage or nil
        if stage ~= 3 then
          ctx.report{ path = { "zero_optimization", "stage" },
                      message = "stage must be 3 on cluster X, got "
                        .. tostring(stage) }
        end
      end,
    },
  },
}
"""

STAGE2 = """{
  "train_micro_batch_size_per_gpu": 1,
  "gradient_clipping": 1.0,
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
  "zero_optimization": {"stage": 2, "overlap_comm": true}
}
"""
STAGE3 = STAGE2.replace('"stage": 2', '"stage": 3')

RULE = "cluster-x-stage3"


def plugin_text(**fields):
    """A one-rule plugin "bx" whose parts can be replaced."""
    f = {"name": '"bx"', "version": '"1.0"', "id": '"bx-rule"',
         "severity": '"error"', "summary": '"a rule"',
         "check": "function(cfg, ctx) end", "extra": ""}
    f.update(fields)
    rule = ", ".join("%s = %s" % (k, f[k]) for k in
                     ("id", "severity", "summary", "check") if f[k] is not None)
    head = ", ".join("%s = %s" % (k, f[k]) for k in ("name", "version")
                     if f[k] is not None)
    return "return { %s, rules = { { %s } }%s }\n" % (head, rule, f["extra"])


class PluginTest(dsf.TempDirTest):
    def add_plugin(self, name, text, root="plugins"):
        """Writes <tmp>/<root>/<name>/init.lua; returns <tmp>/<root>."""
        self.write(os.path.join(root, name, "init.lua"), text)
        return os.path.join(self.tmp, root)

    def cluster_x(self, root="plugins", version="1.0"):
        return self.add_plugin("cluster-x", CLUSTER_X % {"version": version},
                               root)

    def check_json(self, *args):
        res = run("check", "--format", "json", *args)
        self.assertIn(res.rc, (0, 1), repr(res))
        return res, json.loads(res.out)

    def assertNoCrash(self, res):
        # a signal gives a negative return code; sanitizers print reports
        self.assertGreaterEqual(res.rc, 0, repr(res))
        self.assertNotIn("Sanitizer", res.err)
        self.assertNotIn("Segmentation", res.err)


class ExternalPlugin(PluginTest):
    def test_outside_the_source_tree(self):
        root = self.cluster_x()
        self.assertFalse(os.path.abspath(root).startswith(
            os.path.abspath(dsf.SOURCE_DIR) + os.sep))

    def test_plugins_lists_it_and_the_builtin(self):
        root = self.cluster_x()
        res = run("plugins", "--plugin-path", root)
        self.assertExit(res, 0)
        lines = res.out.splitlines()
        head = [l for l in lines if l.startswith("cluster-x ")]
        self.assertEqual(len(head), 1, res.out)
        self.assertIn("cluster-x 1.0", head[0])
        self.assertIn("--plugin-path", head[0])
        self.assertIn(os.path.join(root, "cluster-x"), head[0])
        self.assertIn("rules of cluster X", res.out)
        rule = [l for l in lines if l.split()[:1] == [RULE]]
        self.assertEqual(len(rule), 1, res.out)
        self.assertIn("error", rule[0])
        self.assertIn("stage must be 3 on cluster X", rule[0])
        # shadows nothing: the built-in plugin and its rules are still there
        self.assertTrue(any(l.startswith("deepspeed ") for l in lines))
        self.assertRegex(res.out, r"(?m)^\s+batch-identity\s+error\s")

    def test_check_enforces_it(self):
        root = self.cluster_x()
        path = self.write("s2.json", STAGE2)
        res, findings = self.check_json("--plugin-path", root, path)
        self.assertExit(res, 1)
        mine = [f for f in findings if f["rule"] == RULE]
        self.assertEqual(len(mine), 1, findings)
        self.assertEqual(mine[0]["severity"], "error")
        self.assertEqual(mine[0]["path"], "zero_optimization.stage")
        self.assertIn("got 2", mine[0]["message"])
        self.assertEqual(mine[0]["fix"], "set zero_optimization.stage to 3")
        line = STAGE2.splitlines().index(
            [l for l in STAGE2.splitlines() if '"stage"' in l][0]) + 1
        self.assertEqual(mine[0]["line"], line)
        self.assertEqual(mine[0]["col"],
                         STAGE2.splitlines()[line - 1].index('"stage"') + 1)
        # text output names the rule
        res = run("check", "--plugin-path", root, path)
        self.assertRegex(res.err, r"(?m)^%s:%d:\d+: error: .*\[%s\]$" %
                         (re.escape(path), line, RULE))
        # stage 3 passes; the built-in rules still run alongside
        path = self.write("s3.json", STAGE3)
        res, findings = self.check_json("--plugin-path", root, path)
        self.assertExit(res, 0)
        self.assertEqual([f for f in findings if f["rule"] == RULE], [])

    def test_without_the_plugin_nothing_is_enforced(self):
        path = self.write("s2.json", STAGE2)
        res, findings = self.check_json(path)
        self.assertExit(res, 0)
        self.assertEqual([f for f in findings if f["rule"] == RULE], [])

    def test_builtin_rules_still_run(self):
        root = self.cluster_x()
        path = self.write("both.json", json.dumps({
            "train_micro_batch_size_per_gpu": 1, "gradient_clipping": 1.0,
            "fp16": {"enabled": True}, "bf16": {"enabled": True},
            "zero_optimization": {"stage": 1}}))
        res, findings = self.check_json("--plugin-path", root, path)
        rules = {f["rule"] for f in findings}
        self.assertIn(RULE, rules)
        self.assertIn("precision-conflict", rules)

    def test_gen_enforces_it_and_writes_nothing(self):
        root = self.cluster_x()
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--param", "zero_stage=2",
                  "--plugin-path", root, "-o", out)
        self.assertExit(res, 1)
        self.assertIn(RULE, res.err)
        self.assertIn("stage must be 3 on cluster X", res.err)
        self.assertFalse(os.path.exists(out))
        res = run("gen", "8xa100", "--param", "zero_stage=3",
                  "--plugin-path", root, "-o", out)
        self.assertExit(res, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        self.assertIn("cluster-x", [p["name"] for p in manifest["plugins"]])
        for v in manifest["variants"]:
            res, findings = self.check_json(
                "--plugin-path", root, "--world-size",
                str(v["params"]["world_size"]), os.path.join(out, v["file"]))
            self.assertExit(res, 0)

    def test_environment_variable_works_the_same(self):
        root = self.cluster_x()
        env = {"DSFORGE_PLUGIN_PATH": root}
        res = run("plugins", env=env)
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^cluster-x 1\.0 .*DSFORGE_PLUGIN_PATH")
        self.assertRegex(res.out, r"(?m)^\s+%s\s+error\s" % RULE)
        path = self.write("s2.json", STAGE2)
        res = run("check", "--format", "json", path, env=env)
        self.assertExit(res, 1)
        self.assertIn(RULE, [f["rule"] for f in json.loads(res.out)])
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--param", "zero_stage=2", "-o", out,
                  env=env)
        self.assertExit(res, 1)
        self.assertFalse(os.path.exists(out))
        res = run("gen", "8xa100", "--param", "zero_stage=3", "-o", out,
                  env=env)
        self.assertExit(res, 0)
        self.assertTrue(os.path.exists(os.path.join(out, "manifest.json")))

    def test_first_directory_wins_for_a_name(self):
        first = self.cluster_x("first", version="1.0")
        second = self.cluster_x("second", version="2.0")
        res = run("plugins", "--plugin-path", first, "--plugin-path", second)
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^cluster-x 1\.0 ")
        self.assertNotRegex(res.out, r"(?m)^cluster-x 2\.0 ")
        self.assertEqual(len(re.findall(r"(?m)^\s+%s\s" % RULE, res.out)), 1)
        res = run("plugins", "--plugin-path", second,
                  env={"DSFORGE_PLUGIN_PATH": first})
        self.assertRegex(res.out, r"(?m)^cluster-x 2\.0 ")

    def test_rule_context_and_helper_module(self):
        # ctx carries target, mode and params (check: --world-size is the
        # world_size param); modules of the folder are required as
        # "<plugin>.<module>"
        root = self.add_plugin("ctxp", """
local fmt = require("ctxp.fmt")
return {
  name = "ctxp", version = "0.1", summary = "context probe",
  rules = {
    { id = "ctxp-probe", severity = "note", summary = "reports its ctx",
      check = function(cfg, ctx)
        ctx.report{ message = fmt.line(ctx), path = "" }
      end },
  },
}
""")
        self.write("plugins/ctxp/fmt.lua", """
local M = {}
function M.line(ctx)
  return "world=" .. ctx.params.world_size .. " target=" .. ctx.target
    .. " mode=" .. ctx.mode .. " world_size field=" .. tostring(ctx.world_size)
end
return M
""")
        path = self.write("s3.json", STAGE3)
        res, findings = self.check_json("--plugin-path", root,
                                        "--world-size", "4", "--target",
                                        "hf", path)
        probe = [f for f in findings if f["rule"] == "ctxp-probe"]
        self.assertEqual(len(probe), 1)
        self.assertEqual(probe[0]["severity"], "note")
        self.assertIn("world=4 target=hf mode=check world_size field=nil",
                      probe[0]["message"])


LAZY = """return {
  name = "lz", version = "1.0",
  rules = function()
    dsforge.warn("lz: rules loaded")
    return { { id = "lz-stage3", severity = "error", summary = "stage 3 only",
               check = function(cfg, ctx)
                 if cfg.zero_optimization.stage ~= 3 then
                   ctx.report{ path = { "zero_optimization", "stage" },
                               message = "lz wants stage 3" }
                 end
               end } }
  end,
  commands = { { name = "lzcmd", summary = "runs no rule",
                 run = function() return "lz ran\\n" end } },
}
"""


class BuiltinVersion(PluginTest):
    def test_the_list_and_the_findings_name_the_same_deepspeed_release(self):
        # issue 29: the list said DeepSpeed 0.19.6, findings 0.19.5; both
        # come from the newest covered release now
        with open(os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow",
                               "releases.txt")) as f:
            newest = f.read().split()[-1].lstrip("v")
        # the generated list the rules read names the same newest release
        with open(os.path.join(dsf.SOURCE_DIR, "plugins", "deepspeed",
                               "dsdata", "releases.lua")) as f:
            listed = re.findall(r'version = "([^"]+)"', f.read())
        self.assertEqual(listed[-1], newest)
        res = run("plugins", "--json", cwd=self.tmp)
        self.assertExit(res, 0)
        ds = [p for p in json.loads(res.out) if p["name"] == "deepspeed"][0]
        self.assertEqual(ds["version"], newest + "-1")
        self.assertTrue(ds["summary"].startswith("DeepSpeed %s " % newest),
                        ds["summary"])
        cfg = self.write("c.json", '{"train_micro_batch_size_per_gpu": 1}')
        res = run("check", cfg, cwd=self.tmp)
        m = re.search(r"DeepSpeed (\S+), the release checked against", res.err)
        self.assertTrue(m, res.err)
        self.assertEqual(m.group(1), newest)
        text = run("plugins", cwd=self.tmp).out
        self.assertIn("deepspeed %s-1" % newest, text)
        self.assertNotRegex(text, r"DeepSpeed (?!%s)\d+\.\d+\.\d+ config"
                            % re.escape(newest))


class LazyRules(PluginTest):
    """rules = function() ... end: called once, when a command first needs
    the rules; a command that runs none never calls it."""

    def test_check_and_listing_call_it_a_command_does_not(self):
        root = self.add_plugin("lz", LAZY)
        s2 = self.write("s2.json", STAGE2)
        res = run("check", "--plugin-path", root, s2)
        self.assertExit(res, 1)
        self.assertIn("lz wants stage 3 [lz-stage3]", res.err)
        self.assertEqual(res.err.count("lz: rules loaded"), 1, res.err)
        res = run("check", "--plugin-path", root,
                  self.write("s3.json", STAGE3))
        self.assertNotIn("lz-stage3", res.err)
        res = run("plugins", "--plugin-path", root)
        self.assertExit(res, 0)
        self.assertIn("lz-stage3", res.out)
        res = run("lzcmd", "--plugin-path", root)
        self.assertExit(res, 0)
        self.assertEqual(res.out, "lz ran\n")
        self.assertNotIn("rules loaded", res.err)

    def test_a_rules_function_that_fails(self):
        s3 = self.write("s3.json", STAGE3)
        root = self.add_plugin("lz", LAZY.replace(
            'dsforge.warn("lz: rules loaded")', 'error("no rules today")'))
        res = run("check", "--plugin-path", root, s3)
        self.assertNoCrash(res)
        self.assertExit(res, 5)
        self.assertIn("no rules today", res.err)
        root = self.add_plugin("lz", LAZY.replace(
            'dsforge.warn("lz: rules loaded")', 'do return 42 end'), "p2")
        res = run("check", "--plugin-path", root, s3)
        self.assertExit(res, 3)
        self.assertIn("the 'rules' function must return a list", res.err)


LAZY_COMMANDS = """return {
  name = "lc", version = "1.0",
  commands = function()
    dsforge.warn("lc: commands loaded")
    return { { name = "lccmd", summary = "says hello",
               run = function() return "lc ran\\n" end } }
  end,
}
"""


class LazyCommands(PluginTest):
    """commands = function() ... end: called once, when a plugin command
    runs or is listed; gen and check never call it."""

    def test_a_plugin_command_calls_it_gen_and_check_do_not(self):
        root = self.add_plugin("lc", LAZY_COMMANDS)
        res = run("lccmd", "--plugin-path", root)
        self.assertExit(res, 0)
        self.assertEqual(res.out, "lc ran\n")
        self.assertEqual(res.err.count("lc: commands loaded"), 1, res.err)
        for args in (("check", self.write("s3.json", STAGE3)),
                     ("gen", "8xa100")):
            res = run(*args, "--plugin-path", root)
            self.assertExit(res, 0)
            self.assertNotIn("commands loaded", res.err)

    def test_a_commands_function_that_fails(self):
        s3 = self.write("s3.json", STAGE3)
        for body, code, msg in (
                ('error("no commands today")', 5, "no commands today"),
                ("do return 42 end", 3,
                 "the 'commands' function must return a list of commands")):
            root = self.add_plugin("lc", LAZY_COMMANDS.replace(
                'dsforge.warn("lc: commands loaded")', body), body[:2])
            for args in (("lccmd",), ("plugins",)):
                res = run(*args, "--plugin-path", root)
                self.assertNoCrash(res)
                self.assertExit(res, code)
                self.assertIn(msg, res.err)
            # a built-in command never calls it
            res = run("check", "--plugin-path", root, s3)
            self.assertExit(res, 0)

    def test_help_says_when_the_commands_cannot_be_read(self):
        """help lists the built-in commands, then the plugin's error and
        that no plugin command is listed (not a silently shorter list);
        help of a plugin command gives the error, not "unknown command"."""
        root = self.add_plugin("lc", LAZY_COMMANDS.replace(
            'dsforge.warn("lc: commands loaded")', 'error("no commands today")'))
        init = os.path.join(root, "lc", "init.lua")
        for args in (("help",), ("--help",)):
            res = run(*args, "--plugin-path", root)
            self.assertNoCrash(res)
            self.assertExit(res, 5)
            self.assertIn("  gen ", res.out)
            self.assertNotIn("Commands from plugins", res.out)
            self.assertIn("no commands today", res.err)
            self.assertIn(init + ":", res.err)
            self.assertIn("commands could not be read: none is listed above",
                          res.err)
        for name in ("estimate", "lccmd"):
            res = run("help", name, "--plugin-path", root)
            self.assertExit(res, 5)
            self.assertIn("no commands today", res.err)
            self.assertIn("'%s' is not a built-in command, and the plugins "
                          "that may declare it did not load" % name, res.err)
            self.assertNotIn("unknown command", res.err)
        res = run("help", "gen", "--plugin-path", root)  # built-in: as ever
        self.assertExit(res, 0)
        self.assertIn("Usage: dsforge gen", res.out)
        # and with the plugin fixed, both are listed again
        root = self.add_plugin("lc", LAZY_COMMANDS, "ok")
        res = run("help", "--plugin-path", root)
        self.assertExit(res, 0)
        self.assertIn("Commands from plugins", res.out)
        self.assertIn("lccmd", res.out)
        self.assertIn("estimate", res.out)


class BrokenPlugins(PluginTest):
    def broken(self, text, *cmd):
        """Runs cmd (default: check a clean file) with plugin bx = text."""
        root = self.add_plugin("bx", text)
        if not cmd:
            cmd = ("check", self.write("s3.json", STAGE3))
        # bounded by run()'s timeout (a hang fails the test)
        res = run(cmd[0], "--plugin-path", root, *cmd[1:])
        self.assertNoCrash(res)
        return res, os.path.join(root, "bx", "init.lua")

    def assertNames(self, res, init, line=None):
        """The error names the plugin's file (and line) and the plugin."""
        if line is None:
            self.assertIn(init + ":", res.err)
        else:
            self.assertIn("%s:%d:" % (init, line), res.err)

    def test_syntax_error_exits_5_with_file_and_line(self):
        text = 'return {\n  name = "bx",\n  version = "1.0"\n  rules = {}\n}\n'
        for cmd in ((), ("plugins",), ("schema",)):
            with self.subTest(cmd=cmd):
                res, init = self.broken(text, *cmd)
                self.assertExit(res, 5)
                self.assertNames(res, init, 4)
                self.assertIn("'bx'", res.err)

    def test_syntax_error_in_gen_writes_nothing(self):
        out = os.path.join(self.tmp, "out")
        res, init = self.broken("return {", "gen", "8xa100", "-o", out)
        self.assertExit(res, 5)
        self.assertNames(res, init, 1)
        self.assertFalse(os.path.exists(out))

    def test_runtime_error_in_init_exits_5(self):
        text = 'local t = nil\nlocal x = t.field\nreturn {}\n'
        res, init = self.broken(text)
        self.assertExit(res, 5)
        self.assertNames(res, init, 2)
        self.assertIn("'bx'", res.err)
        res, init = self.broken('error("cannot start")\n')
        self.assertExit(res, 5)
        self.assertIn("cannot start", res.err)
        self.assertNames(res, init, 1)
        # the sandbox: no io
        res, init = self.broken('local f = io.open("/etc/passwd")\n'
                                'return {}\n')
        self.assertExit(res, 5)
        self.assertIn("io", res.err)

    def test_bad_declarations_exit_3(self):
        cases = {
            "missing version": (plugin_text(version=None), "version"),
            "version not a string": (plugin_text(version="1"), "version"),
            "name not the folder": (plugin_text(name='"other"'), "name"),
            "missing name": (plugin_text(name=None), "name"),
            "rule without id": (plugin_text(id=None), "id"),
            "rule id not lower-case": (plugin_text(id='"Bad_Rule"'), "id"),
            "rule without severity": (plugin_text(severity=None),
                                      "severity"),
            "rule with bad severity": (plugin_text(severity='"fatal"'),
                                       "severity"),
            "rule without summary": (plugin_text(summary=None), "summary"),
            "check not a function": (plugin_text(check='"yes"'), "check"),
            "unknown field": (plugin_text(extra=', colour = "red"'),
                              "colour"),
            "not a table": ("return 42\n", "table"),
            "rules not a list": ('return { name = "bx", version = "1", '
                                 'rules = 5 }\n', "rules"),
            "duplicate rule id": (
                'return { name = "bx", version = "1", rules = {\n'
                '  { id = "dup", severity = "error", summary = "a" },\n'
                '  { id = "dup", severity = "note", summary = "b" } } }\n',
                "dup"),
        }
        for name, (text, word) in cases.items():
            with self.subTest(case=name):
                res, init = self.broken(text)
                self.assertExit(res, 3)
                self.assertNames(res, init)
                self.assertIn("plugin 'bx'", res.err)
                self.assertIn(word, res.err)
                self.assertEqual(res.out, "")

    def test_rule_id_taken_by_another_plugin_exits_3(self):
        res, _ = self.broken(plugin_text(id='"unknown-key"'))
        self.assertExit(res, 3)
        self.assertIn("unknown-key", res.err)
        self.assertIn("'bx'", res.err)
        self.assertIn("'deepspeed'", res.err)
        # bx's list is read when it is declared, deepspeed's (a function)
        # when check first needs the rules: the ids of both are one index.
        self.assertRegex(res.err, r"plugin 'deepspeed': rule id 'unknown-key' "
                         r"is already declared by plugin 'bx' \(.*/bx/init\.lua\)")
        self.assertIn("hint: rule ids are global: rename the rule", res.err)
        # the same from a rules function of bx, and within one list
        res, _ = self.broken(
            'return { name = "bx", version = "1", rules = function() return {\n'
            '  { id = "bx-a", severity = "error", summary = "a" },\n'
            '  { id = "version-key", severity = "note", summary = "b" } } end }\n')
        self.assertExit(res, 3)
        self.assertRegex(res.err, r"rule id 'version-key' is already declared "
                         r"by plugin '(deepspeed|bx)'")
        for rules in ('{ id = "dup", severity = "error", summary = "a" },\n'
                      '{ id = "other", severity = "error", summary = "a" },\n'
                      '{ id = "dup", severity = "note", summary = "b" }',):
            for lazy in (False, True):
                body = ("function() return { %s } end" if lazy else "{ %s }") % rules
                res, _ = self.broken('return { name = "bx", version = "1", '
                                     'rules = %s }\n' % body)
                self.assertExit(res, 3)
                self.assertIn("plugin 'bx': rule id 'dup' is declared twice",
                              res.err)

    def test_rule_raising_at_run_time_exits_5(self):
        text = ('return { name = "bx", version = "1", rules = {\n'
                '  { id = "bx-raises", severity = "error", summary = "s",\n'
                '    check = function(cfg, ctx)\n'
                '      error("rule exploded")\n'
                '    end } } }\n')
        res, init = self.broken(text)
        self.assertExit(res, 5)
        self.assertNames(res, init, 4)
        self.assertIn("rule exploded", res.err)
        res, init = self.broken(text.replace('error("rule exploded")',
                                             "local x = cfg.nope.deeper"))
        self.assertExit(res, 5)
        self.assertNames(res, init, 4)
        # gen stops too, without writing
        out = os.path.join(self.tmp, "out")
        res, _ = self.broken(text, "gen", "8xa100", "-o", out)
        self.assertExit(res, 5)
        self.assertFalse(os.path.exists(out))

    def test_report_param_must_be_names(self):
        # ctx.report's param (the params a finding depends on): a name or
        # a list of names; anything else is the rule's bug
        for param in ("42", '{ "a", 7 }'):
            with self.subTest(param=param):
                text = ('return { name = "bx", version = "1", rules = {\n'
                        '  { id = "bx-p", severity = "error", summary = "s",\n'
                        '    check = function(cfg, ctx)\n'
                        '      ctx.report{ message = "m", param = %s }\n'
                        '    end } } }\n' % param)
                res, init = self.broken(text)
                self.assertExit(res, 5)
                self.assertNames(res, init, 4)
                self.assertIn("ctx.report: 'param' must be a name or a list "
                              "of names", res.err)
        ok = ('return { name = "bx", version = "1", rules = {\n'
              '  { id = "bx-p", severity = "warning", summary = "s",\n'
              '    check = function(cfg, ctx)\n'
              '      ctx.report{ message = "m", param = { "a", "b" } }\n'
              '    end } } }\n')
        res, _ = self.broken(ok)
        self.assertExit(res, 0)
        self.assertIn("m [bx-p]", res.err)

    def test_wanted_bounds_what_a_rule_composes(self):
        # ctx.wanted (plugins.md, Rules): of 250 findings of one rule and
        # severity, 100 are kept (the first by path) and 150 counted; a
        # rule that asks composes only the ones kept, one that does not
        # ask is bounded the same way
        for asks in (True, False):
            loop = ('for i = 1, 250 do\n'
                    '  local key = string.format("k%03d", i)\n'
                    + ('  if ctx.wanted("bx-many", "warning", {}, key) then\n'
                       '    composed = composed + 1\n'
                       '    ctx.report{ path = key, message = "m", '
                       'severity = "warning" }\n'
                       '  end\n' if asks else
                       '  composed = composed + 1\n'
                       '  ctx.report{ path = { key }, message = "m", '
                       'severity = "warning" }\n')
                    + 'end\n'
                    'dsforge.warn("composed " .. composed)\n')
            text = ('local composed = 0\n'
                    'return { name = "bx", version = "1", rules = {\n'
                    '  { id = "bx-many", severity = "warning", summary = "s",\n'
                    '    check = function(cfg, ctx)\n' + loop +
                    '    end } } }\n')
            with self.subTest(asks=asks):
                res, _ = self.broken(text)
                self.assertExit(res, 0)
                self.assertEqual(res.err.count(": warning: k"), 100)
                self.assertIn("k001: m [bx-many]", res.err)
                self.assertIn("k100: m [bx-many]", res.err)
                self.assertNotIn("k101: m", res.err)
                self.assertIn("note: 150 more warnings not shown (at most "
                              "100 of one rule and severity per file) "
                              "[bx-many]", res.err)
                # walked in order: once 100 are kept, none after sorts
                # before the last of them, so none more is composed
                self.assertIn("composed %d" % (100 if asks else 250),
                              res.err)

    def test_wanted_refuses_what_is_not_a_finding(self):
        for call, why in (
                ('ctx.wanted("bx-other", "warning", {}, "k")', "not declared"),
                ('ctx.wanted("unknown-key", "warning", {}, "k")',
                 "belongs to plugin 'deepspeed'"),
                ('ctx.wanted("bx-rule", "fatal", {}, "k")', "bad severity"),
                ('ctx.wanted("bx-rule", "error", 42)', "'path' must be")):
            with self.subTest(call=call):
                res, _ = self.broken(plugin_text(
                    check="function(cfg, ctx) %s end" % call))
                self.assertExit(res, 5)
                self.assertIn("ctx.wanted", res.err)
                self.assertIn(why, res.err)

    # contrib/docs/plugins.md: "A rule that raises stops the run with exit
    # code 5 and names the rule."
    def test_rule_raising_at_run_time_names_the_rule(self):
        text = ('return { name = "bx", version = "1", rules = {\n'
                '  { id = "bx-raises", severity = "error", summary = "s",\n'
                '    check = function(cfg, ctx) error("boom") end } } }\n')
        res, _ = self.broken(text)
        self.assertExit(res, 5)
        self.assertIn("bx-raises", res.err)

    def test_rule_raising_a_non_string_exits_5(self):
        res, _ = self.broken(plugin_text(
            check="function(cfg, ctx) error({code = 1}) end"))
        self.assertExit(res, 5)
        self.assertIn("bx-rule", res.err)

    def test_rule_reporting_an_undeclared_id_exits_5(self):
        res, init = self.broken(plugin_text(
            check='function(cfg, ctx) ctx.report{rule = "bx-other", '
                  'message = "m"} end'))
        self.assertExit(res, 5)
        self.assertIn("bx-other", res.err)
        self.assertIn("not declared", res.err)
        self.assertNames(res, init, 1)
        # a rule of another plugin is not this plugin's to report
        res, _ = self.broken(plugin_text(
            check='function(cfg, ctx) ctx.report{rule = "unknown-key", '
                  'message = "m"} end'))
        self.assertExit(res, 5)
        self.assertIn("unknown-key", res.err)
        self.assertIn("deepspeed", res.err)
        # a finding without a message is a bug in the rule
        res, _ = self.broken(plugin_text(
            check="function(cfg, ctx) ctx.report{path = 'x'} end"))
        self.assertExit(res, 5)
        self.assertIn("message", res.err)

    def test_rule_that_never_ends_is_stopped(self):
        root = self.add_plugin("bx", plugin_text(
            check="function(cfg, ctx) while true do end end"))
        path = self.write("s3.json", STAGE3)
        res = run("check", "--plugin-path", root, "--max-instructions",
                  "1000000", path, timeout=120)
        self.assertNoCrash(res)
        self.assertExit(res, 5)
        self.assertIn("bx-rule", res.err)

    def test_rule_that_never_ends_reports_the_limit(self):
        root = self.add_plugin("bx", plugin_text(
            check="function(cfg, ctx) while true do end end"))
        path = self.write("s3.json", STAGE3)
        res = run("check", "--plugin-path", root, "--max-instructions",
                  "1000000", path, timeout=120)
        self.assertExit(res, 5)
        self.assertIn("instruction limit", res.err)

    def test_rule_that_eats_memory_is_stopped(self):
        root = self.add_plugin("bx", plugin_text(
            check="function(cfg, ctx) local t = {} "
                  "while true do t[#t + 1] = string.rep('x', 4096) end end"))
        path = self.write("s3.json", STAGE3)
        res = run("check", "--plugin-path", root, "--max-memory", "16",
                  path, timeout=120)
        self.assertNoCrash(res)
        self.assertExit(res, 5)
        self.assertIn("memory limit", res.err)
        self.assertIn("bx-rule", res.err)

    # A plugin's checks run in one protected call, each under limits of
    # its own: three checks that each use most of --max-instructions all
    # run; an error in the second is reported as the second's, and the
    # third does not run.
    BATCH = (
        'return { name = "bx", version = "1", rules = {\n'
        '  { id = "bx-a", severity = "error", summary = "s",\n'
        '    check = function(cfg, ctx) local x = 0\n'
        '      for i = 1, 300000 do x = x + i end end },\n'
        '  { id = "bx-b", severity = "error", summary = "s",\n'
        '    check = function(cfg, ctx) local x = 0\n'
        '      for i = 1, 300000 do x = x + i end\n'
        '      if cfg.boom then error("boom") end\n'
        '      if cfg.fail then dsforge.fail("failed input") end\n'
        '      if cfg.loop then while true do end end\n'
        '      if cfg.mem then local t = {}\n'
        '        while true do t[#t + 1] = string.rep("x", 4096) end end\n'
        '    end },\n'
        '  { id = "bx-c", severity = "error", summary = "s",\n'
        '    check = function(cfg, ctx) local x = 0\n'
        '      for i = 1, 300000 do x = x + i end\n'
        '      ctx.report{path = "q", message = "c ran"} end },\n'
        '} }\n')

    def run_batch(self, extra):
        root = self.add_plugin("bx", self.BATCH)
        path = self.write("b.json", json.dumps(
            dict({"train_micro_batch_size_per_gpu": 1}, **extra)))
        res = run("check", "--plugin-path", root, "--max-instructions",
                  "1000000", "--max-memory", "16", path, timeout=120)
        self.assertNoCrash(res)
        return res, os.path.join(root, "bx", "init.lua")

    def test_each_check_has_its_own_limits(self):
        res, _ = self.run_batch({})
        self.assertExit(res, 1)
        self.assertIn("q: c ran [bx-c]", res.err)
        self.assertNotIn("limit", res.err)

    def test_a_check_that_fails_is_named_in_a_batch(self):
        res, init = self.run_batch({"boom": True})
        self.assertExit(res, 5)
        self.assertIn("%s:8: error: boom\n  hint: raised by rule bx-b "
                      "(plugin bx): a bug in the plugin, not in the config"
                      % init, res.err)
        self.assertNotIn("c ran", res.err)
        res, init = self.run_batch({"loop": True})
        self.assertExit(res, 5)
        self.assertIn("%s:10: error: instruction limit of 1000000 exceeded\n"
                      "  hint: the script ran past a sandbox limit while "
                      "running rule bx-b (plugin bx)" % init, res.err)
        res, init = self.run_batch({"fail": True})
        self.assertExit(res, 3)
        self.assertIn("%s:9: error: failed input\n  hint: reported by rule "
                      "bx-b (plugin bx)" % init, res.err)
        res, _ = self.run_batch({"mem": True})
        self.assertExit(res, 5)
        self.assertIn("dsforge: error: rule bx-b (plugin bx): memory limit "
                      "of 16 MiB exceeded", res.err)

    # ctx.report (and ctx.identity) reach the C data of the call that
    # handed them over; kept by the plugin and called after that call (by
    # a resolver, a summary or the next variant's rule), they raise
    # instead of reading the freed stack of the call (ctx.report used to
    # crash under the sanitizers).
    def test_ctx_report_kept_past_its_call_is_refused(self):
        kept = ('local kept\n'
                'return { name = "bx", version = "1",\n'
                '  resolvers = { { name = "late", run = function(cfg, ctx)\n'
                '    if kept and WHERE == "resolver" then kept{ message = "m" } end\n'
                '  end } },\n'
                '  summarize = function(cfg, ctx)\n'
                '    if kept and WHERE == "summary" then kept{ message = "m" } end\n'
                '  end,\n'
                '  rules = { { id = "bx-kept", severity = "warning", summary = "s",\n'
                '    check = function(cfg, ctx)\n'
                '      if kept and WHERE == "rule" then kept{ message = "m" } end\n'
                '      kept = ctx.report\n'
                '    end } } }\n')
        lines = {"resolver": 4, "summary": 7, "rule": 11}
        for fn in ("report", "identity"):
            for where, line in sorted(lines.items()):
                with self.subTest(fn=fn, where=where):
                    out = os.path.join(self.tmp, "out-%s-%s" % (fn, where))
                    text = kept.replace("WHERE", '"%s"' % where)
                    if fn == "identity":
                        text = (text.replace("kept{ message = \"m\" }",
                                             'kept("steps_per_print")')
                                .replace("ctx.report", "ctx.identity"))
                    res, init = self.broken(text, "gen", "8xa100", "-o", out)
                    self.assertExit(res, 5)
                    self.assertNames(res, init, line)
                    self.assertIn("ctx.%s was kept past the call that "
                                  "handed it over" % fn, res.err)
                    self.assertFalse(os.path.exists(out))

    def test_a_folder_without_init_lua_is_not_a_plugin(self):
        self.write("plugins/notes/README.md", "not a plugin\n")
        root = os.path.join(self.tmp, "plugins")
        res = run("plugins", "--plugin-path", root)
        self.assertExit(res, 0)
        self.assertNotIn("notes", res.out)


if __name__ == "__main__":
    unittest.main()


class ProjectRoot(PluginTest):
    """One project root, found upward from the current directory, for
    profiles, plugins and the lock alike (issue 29): a team rule is not
    skipped from a subdirectory."""

    def setUp(self):
        super().setUp()
        self.write("dsforge.repos.json", '{"repositories": {}}\n')
        self.cluster_x()
        self.profile("team", 'return { name = "team", summary = "ours", '
                     'extends = "8xa100" }\n')
        self.sub = os.path.join(self.tmp, "sub", "deeper")
        os.makedirs(self.sub)
        self.config = self.write("s2.json", STAGE2)

    def test_check_is_the_same_from_a_subdirectory(self):
        for cwd in (self.tmp, self.sub):
            res = run("check", "--format", "json", self.config, cwd=cwd)
            self.assertExit(res, 1)
            self.assertIn(RULE, [f["rule"] for f in json.loads(res.out)],
                          "the project's rule was skipped from %s" % cwd)

    def test_list_and_plugins_name_the_project(self):
        root = os.path.realpath(self.tmp)
        res = run("list", cwd=self.sub)
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^team\s+small,medium,large\s+"
                         r"project\s+ours$")
        self.assertIn("project: %s (" % root, res.out)
        res = run("plugins", cwd=self.sub)
        self.assertExit(res, 0)
        self.assertIn("cluster-x 1.0 (project: %s" %
                      os.path.join(root, "plugins", "cluster-x"), res.out)
        self.assertIn("project: %s (" % root, res.out)

    def test_outside_a_project_nothing_is_said(self):
        os.remove(os.path.join(self.tmp, "dsforge.repos.json"))
        res = run("list", cwd=self.sub)
        self.assertExit(res, 0)
        self.assertNotIn("project:", res.out)
        self.assertNotRegex(res.out, r"(?m)^team\s")


class FindingEdits(PluginTest):
    """ctx.report's edit: the machine-readable fix of a finding, printed by
    check --format json as "edits" (a list of alternatives), with paths in
    canonical text and the finding's path as the default; a bad one is a
    bug in the rule (exit 5)."""

    def rule(self, report):
        check = "function(cfg, ctx) ctx.report{ %s } end" % report
        return self.add_plugin("bx", plugin_text(check=check))

    def test_edits_in_json_and_not_in_text(self):
        root = self.rule('path = {"zero_optimization", "stage"}, message = "m",'
                         ' fix = "use 3", edit = {'
                         '{op = "set", value = 3},'
                         '{op = "move", path = "zero_optimization.stage",'
                         ' to = {"zero", "stage"}},'
                         '{op = "rename", to = "stage_"},'
                         '{op = "remove", path = {"optimizer", "params", "lr"}}}')
        path = self.write("s2.json", STAGE2)
        res, findings = self.check_json("--plugin-path", root, path)
        mine = [f for f in findings if f["rule"] == "bx-rule"]
        self.assertEqual(mine[0]["edits"], [
            {"op": "set", "path": "zero_optimization.stage", "value": 3},
            {"op": "move", "path": "zero_optimization.stage",
             "to": "zero.stage"},
            {"op": "rename", "path": "zero_optimization.stage",
             "to": "stage_"},
            {"op": "remove", "path": "optimizer.params.lr"}])
        self.assertEqual(mine[0]["fix"], "use 3")
        text = run("check", "--plugin-path", root, path)
        self.assertIn("hint: use 3", text.err)
        self.assertNotIn("edits", text.err + text.out)
        self.assertNotIn("stage_", text.err + text.out)
        # one edit (not a list) is a list of one
        root = self.rule('path = "gradient_clipping", message = "m",'
                         ' edit = {op = "remove"}')
        res, findings = self.check_json("--plugin-path", root, path)
        mine = [f for f in findings if f["rule"] == "bx-rule"]
        self.assertEqual(mine[0]["edits"],
                         [{"op": "remove", "path": "gradient_clipping"}])
        # a finding without one has no "edits"
        root = self.rule('path = "gradient_clipping", message = "m"')
        res, findings = self.check_json("--plugin-path", root, path)
        mine = [f for f in findings if f["rule"] == "bx-rule"]
        self.assertNotIn("edits", mine[0])

    def test_bad_edits_are_the_rules_bug(self):
        for edit, why in (
                ('{op = "replace"}', "'op' must be"),
                ('{op = "rename"}', "a rename needs 'to'"),
                ('{op = "move", to = 7}', "a move needs 'to'"),
                ('{op = "set"}', "a set needs 'value'"),
                ('{op = "remove", path = ""}', "'path' must be"),
                ('"remove it"', "'edit' must be an edit"),
                ('{{op = "remove"}, 3}', "a list of edits holds only")):
            root = self.rule('path = "gradient_clipping", message = "m", '
                             'edit = ' + edit)
            path = self.write("s2.json", STAGE2)
            res = run("check", "--format", "json", "--plugin-path", root,
                      path)
            self.assertExit(res, 5)
            self.assertIn("ctx.report: " + why, res.err, edit)
            self.assertNoCrash(res)
            # the text output shows no edit: they are not read for it
            self.assertExit(run("check", "--plugin-path", root, path), 1)
