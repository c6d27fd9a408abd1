"""Commands that plugins declare (contrib/docs/plugins.md, "Commands"): a
test plugin's command is routed, parsed from its option table, run in the
sandbox, and its output and exit status passed through; it appears in
--help, help CMD, completion and the man page; bad declarations are input
errors; a command reads only the files named on its command line."""
import json
import os

import dsf
from dsf import run

PLUGIN = r'''
return {
  name = "greet", version = "1.0",
  commands = {
    { name = "hello", summary = "say hello to NAMEs",
      usage = "hello [--shout] [NAME...]",
      description = "Greets every NAME.",
      options = {
        { name = "shout", short = "s", help = "in capitals" },
        { name = "times", arg = "N", help = "how many times" },
        { name = "mode", arg = "plain|fancy", help = "the style" },
        { name = "read", arg = "FILE", complete = "file",
          help = "print this JSON file instead" },
      },
      run = function(opts, args, ctx)
        if opts.read then
          local v, err = ctx.read_json(opts.read)
          if v == nil then return nil, err end
          return v
        end
        if opts.times == "0" then
          return nil, { message = "--times must be positive", hint = "use 1" }
        end
        local s = "hello " .. table.concat(args, ",")
        if opts.shout then s = s:upper() end
        if opts.mode then s = s .. " (" .. opts.mode .. ")" end
        return s .. "\n"
      end },
    { name = "status", summary = "prints and exits 1",
      run = function() return "half done\n", 1 end },
    { name = "sneak", summary = "reads a file it was not given",
      run = function(_, _, ctx) return ctx.read_json("/etc/hostname") end },
    { name = "boom", summary = "raises",
      run = function() error("kaput") end },
    { name = "failing", summary = "dsforge.fail",
      run = function() dsforge.fail("no such thing") end },
  },
}
'''


class PluginCommand(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.write("plugins/greet/init.lua", PLUGIN)
        self.pp = os.path.join(self.tmp, "plugins")
        self.env = {"DSFORGE_PLUGIN_PATH": self.pp}

    def r(self, *args):
        return run(*args, env=self.env)

    def test_runs_with_parsed_options(self):
        res = self.r("hello", "ann", "bob")
        self.assertExit(res, 0)
        self.assertEqual(res.out, "hello ann,bob\n")
        self.assertEqual(self.r("hello", "-s", "ann").out, "HELLO ANN\n")
        self.assertEqual(self.r("hello", "--mode=fancy", "x").out,
                         "hello x (fancy)\n")
        # the option path too, instead of the environment
        res = run("hello", "--plugin-path", self.pp, "z")
        self.assertEqual((res.rc, res.out), (0, "hello z\n"))

    def test_errors_and_status_pass_through(self):
        res = self.r("hello", "--times", "0")
        self.assertExit(res, 2)
        self.assertIn("error: --times must be positive", res.err)
        self.assertIn("hint: use 1", res.err)
        self.assertEqual(res.out, "")
        res = self.r("status")
        self.assertEqual((res.rc, res.out), (1, "half done\n"))
        res = self.r("boom")
        self.assertExit(res, 5)
        self.assertIn("kaput", res.err)
        res = self.r("failing")
        self.assertExit(res, 3)
        self.assertIn("no such thing", res.err)

    def test_read_json(self):
        path = self.write("in.json", '{"b": [1, 2], "a": null}')
        res = self.r("hello", "--read", path)
        self.assertExit(res, 0)
        self.assertEqual(json.loads(res.out), {"a": None, "b": [1, 2]})
        bad = self.write("bad.json", '{\n  "a": ]\n}')
        res = self.r("hello", "--read", bad)
        self.assertExit(res, 3)
        self.assertIn("%s:2:" % bad, res.err)
        # only files named on the command line
        res = self.r("sneak")
        self.assertExit(res, 5)
        self.assertIn("not on the command line", res.err)

    def test_option_errors_use_the_table(self):
        res = self.r("hello", "--shuot")
        self.assertExit(res, 2)
        self.assertIn("did you mean '--shout'?", res.err)
        res = self.r("hello", "--times")
        self.assertExit(res, 2)
        self.assertIn("needs a value", res.err)
        res = self.r("helo")
        self.assertExit(res, 2)
        self.assertIn("did you mean 'hello'?", res.err)

    def test_help_lists_and_describes_it(self):
        top = self.r("--help").out
        self.assertRegex(top, r"(?ms)^Commands from plugins:$.*"
                         r"^  hello\s+say hello to NAMEs \(plugin greet\)$")
        self.assertNotIn("hello", run("--help").out)
        h = self.r("hello", "--help")
        self.assertExit(h, 0)
        self.assertTrue(h.out.startswith("Usage: dsforge hello [--shout]"))
        for o in ("-s, --shout", "--times N", "--mode plain|fancy",
                  "--plugin-path DIR"):
            self.assertIn(o, h.out)
        self.assertEqual(self.r("help", "hello").out, h.out)
        # help finds it where the command would: --plugin-path, either side
        for args in (("help", "hello", "--plugin-path", self.pp),
                     ("help", "--plugin-path=" + self.pp, "hello")):
            res = run(*args)
            self.assertEqual((res.rc, res.out), (0, h.out))
        self.assertIn("hello", run("help", "--plugin-path", self.pp).out)
        res = run("help", "hello")
        self.assertExit(res, 2)
        self.assertIn("unknown command 'hello'", res.err)
        res = run("help", "gen", "check")
        self.assertExit(res, 2)
        self.assertIn("help takes one COMMAND", res.err)
        man = self.r("__man").out
        self.assertIn(".SS hello", man)
        self.assertIn("\\-\\-shout", man)

    def test_completion(self):
        self.assertIn("hello", self.r("__complete", "he").out.split())
        self.assertEqual(self.r("__complete", "hello", "--sh").out.split(),
                         ["--shout"])
        self.assertEqual(self.r("__complete", "hello", "--mode", "").out
                         .split(), ["plain", "fancy"])


BAD = {
    "no-run": ('{ name = "x", summary = "s" }', "needs a 'run' function"),
    "no-summary": ('{ name = "x", run = function() end }', "'summary'"),
    "bad-name": ('{ name = "X y", summary = "s", run = function() end }',
                 "'name'"),
    "unknown-field": ('{ name = "x", summary = "s", run = function() end, '
                      'colour = 1 }', "unknown field 'colour'"),
    "option-no-help": ('{ name = "x", summary = "s", run = function() end, '
                       'options = { { name = "a" } } }', "'help'"),
    "option-field": ('{ name = "x", summary = "s", run = function() end, '
                     'options = { { name = "a", help = "h", type = 1 } } }',
                     "unknown option field 'type'"),
    "option-help": ('{ name = "x", summary = "s", run = function() end, '
                    'options = { { name = "help", help = "h" } } }',
                    "not 'help'"),
    "short-long": ('{ name = "x", summary = "s", run = function() end, '
                   'options = { { name = "a", short = "ab", help = "h" } } }',
                   "'short' is one letter"),
}


class BadDeclarations(dsf.TempDirTest):
    def test_each_is_an_input_error(self):
        for name, (decl, word) in BAD.items():
            with self.subTest(case=name):
                self.write("p%s/bad/init.lua" % name,
                           'return { name = "bad", version = "1", '
                           'commands = { %s } }' % decl)
                res = run("plugins", "--plugin-path",
                          os.path.join(self.tmp, "p" + name))
                self.assertExit(res, 3)
                self.assertIn("plugin 'bad'", res.err)
                self.assertIn(word, res.err)

    def test_an_option_may_not_shadow_another(self):
        # the parse would give the word to one of the two and drop the other
        cases = {"common": ('{ name = "offline", help = "h" }',
                            "option '--offline' is a common option"),
                 "letter": ('{ name = "x", short = "h", help = "h" }',
                            "option '--x' (-h) is the letter of --help"),
                 "twice": ('{ name = "x", help = "h" }, '
                           '{ name = "y", short = "q", help = "h" }, '
                           '{ name = "x", help = "h" }',
                           "option '--x' is declared twice")}
        for name, (opts, word) in cases.items():
            with self.subTest(case=name):
                self.write("p%s/bad/init.lua" % name,
                           'return { name = "bad", version = "1", commands '
                           '= { { name = "hi", summary = "s", options = { %s '
                           '}, run = function() return "ran" end } } }'
                           % opts)
                res = run("hi", "--offline", "--plugin-path",
                          os.path.join(self.tmp, "p" + name))
                self.assertExit(res, 3)
                self.assertIn("plugin 'bad': command 'hi': " + word, res.err)
                self.assertNotIn("ran", res.out)

    def test_commands_must_be_a_list(self):
        self.write("p/bad/init.lua",
                   'return { name = "bad", version = "1", commands = 3 }')
        res = run("plugins", "--plugin-path", os.path.join(self.tmp, "p"))
        self.assertExit(res, 3)
        self.assertIn("'commands' must be a list", res.err)

    def test_each_command_must_be_a_table(self):
        self.write("p/bad/init.lua",
                   'return { name = "bad", version = "1", commands = '
                   '{ "estimate" } }')
        res = run("plugins", "--plugin-path", os.path.join(self.tmp, "p"))
        self.assertExit(res, 3)
        self.assertIn("plugin 'bad': command #1 must be a table, not a "
                      "string", res.err)

    def test_two_plugins_cannot_declare_one_name(self):
        self.write("p/deepspeed2/init.lua",
                   'return { name = "deepspeed2", version = "1", commands = '
                   '{ { name = "estimate", summary = "s", '
                   'run = function() end } } }')
        res = run("plugins", "--plugin-path", os.path.join(self.tmp, "p"))
        self.assertExit(res, 3)
        self.assertIn("already declared by plugin", res.err)

    def test_built_in_commands_win(self):
        self.write("p/mine/init.lua",
                   'return { name = "mine", version = "1", commands = '
                   '{ { name = "list", summary = "mine", '
                   'run = function() return "mine\\n" end } } }')
        res = run("list", "--plugin-path", os.path.join(self.tmp, "p"))
        self.assertExit(res, 0)
        self.assertNotEqual(res.out, "mine\n")


if __name__ == "__main__":
    import unittest
    unittest.main()
