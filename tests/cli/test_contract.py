"""The core/plugin contract (contrib/docs/plugins.md): a plugin's
declared resolver, summarize hook, columns and rules work with no C change
(tests/plugins/testplug), and a hook that raises or breaks the contract is
that plugin's error."""
import json
import os
import re
import unittest

import dsf
from dsf import run

TESTPLUG = os.path.join(dsf.SOURCE_DIR, "tests", "plugins")


class TestPlugin(dsf.TempDirTest):
    def test_declared_columns_are_in_the_summary_table(self):
        res = run("gen", "8xa100", "--plugin-path", TESTPLUG)
        self.assertExit(res, 0)
        lines = res.out.splitlines()
        self.assertRegex(lines[0], r"^variant +steps tierlen +world ")
        self.assertEqual([l.split()[:3] for l in lines[1:4]],
                         [["small", "7", "5"], ["medium", "7", "6"],
                          ["large", "7", "5"]])
        # a declared note is printed under the table when the column shows
        self.assertIn("tierlen: length of the tier's name", lines)

    def test_a_varies_column_is_hidden_when_every_row_agrees(self):
        res = run("gen", "8xa100", "--tier", "small", "--tier", "large",
                  "--plugin-path", TESTPLUG)
        self.assertExit(res, 0)
        self.assertNotIn("tierlen", res.out)
        self.assertRegex(res.out, r"(?m)^variant +steps +world ")

    def test_resolver_rule_and_summary_run(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--plugin-path", TESTPLUG, "-o", out)
        self.assertExit(res, 0)
        self.assertEqual(res.err.count("[testplug-spp]"), 3)
        self.assertIn("warning: variant small: steps_per_print: prints "
                      "every 7 steps [testplug-spp]", res.err)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        for v in m["variants"]:
            # both plugins' summaries, merged
            self.assertEqual(v["summary"]["testplug_spp"], 7)
            self.assertEqual(v["summary"]["testplug_mode"], "gen")
            self.assertIn("gpu_bytes", v["summary"])
            with open(os.path.join(out, v["file"])) as f:
                self.assertEqual(json.load(f)["steps_per_print"], 7)
        res = run("gen", "8xa100", "--tier", "small", "--plugin-path",
                  TESTPLUG, "--why", "steps_per_print")
        self.assertExit(res, 0)
        self.assertIn("plugin testplug resolver pin-spp = 7", res.out)

    def test_strict_fit_promotes_rules_of_class_fit(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--plugin-path", TESTPLUG,
                  "--strict-fit", "-o", out)
        self.assertExit(res, 1)
        self.assertIn("error: variant small: steps_per_print: prints every "
                      "7 steps [testplug-spp]", res.err)
        self.assertFalse(os.path.exists(out))

    def test_plugins_lists_it(self):
        res = run("plugins", "--plugin-path", TESTPLUG)
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^testplug 1\.0\.0 ")
        self.assertIn("testplug-spp", res.out)
        self.assertIn("memory-fit", res.out)


def plugin(name, body):
    return ("return {\n  name = %r, version = \"1\", summary = \"s\",\n%s\n}\n"
            % (name, body)).replace("'", '"')


class Contract(dsf.TempDirTest):
    def gen(self, name, body, *args):
        root = os.path.join(self.tmp, "plugins")
        self.write(os.path.join("plugins", name, "init.lua"),
                   plugin(name, body))
        return run("gen", "8xa100", "--tier", "small", "--plugin-path", root,
                   *args), os.path.join(root, name, "init.lua")

    def test_a_newer_interface_is_refused(self):
        res, path = self.gen("px", "  interface = 2,")
        self.assertExit(res, 3)
        self.assertIn("plugin 'px' needs plugin interface 2, but this "
                      "dsforge provides interface 1", res.err)
        self.assertIn(path, res.err)
        for bad in ("0", "1.5", "'1'"):
            res, _ = self.gen("px", "  interface = %s," % bad)
            self.assertExit(res, 3)
            self.assertIn("'interface' must be a whole number", res.err)
        res, _ = self.gen("px", "  interface = 1,")
        self.assertExit(res, 0)

    def test_a_raising_summarize_is_the_plugins_error(self):
        res, path = self.gen("px", "  summarize = function(cfg, ctx)\n"
                             "    error('boom')\n  end,")
        self.assertExit(res, 5)
        self.assertIn("raised by plugin px summarize: a bug in the plugin",
                      res.err)
        self.assertIn("%s:4: error: boom" % path, res.err)
        self.assertIn("boom", res.err)
        self.assertEqual(res.out, "")

    def test_a_raising_column_is_the_plugins_error(self):
        res, path = self.gen("px", "  columns = {\n    { name = 'c', value = "
                             "function(v)\n      return v.nope.x end },\n  },")
        self.assertExit(res, 5)
        self.assertIn("raised by column c (plugin px)", res.err)
        self.assertIn("%s:5: error:" % path, res.err)

    def test_hooks_must_return_what_is_declared(self):
        res, _ = self.gen("px", "  columns = {{ name = 'c', value = "
                          "function(v) return 3 end }},")
        self.assertExit(res, 5)
        self.assertIn("column c (plugin px): value must return a string or "
                      "nil, not a number", res.err)
        res, _ = self.gen("px", "  summarize = function() return 3 end,")
        self.assertExit(res, 5)
        self.assertIn("plugin px summarize must return a table or nil",
                      res.err)

    def test_a_plugins_rules_get_the_tables_its_summarize_had(self):
        """On one variant a plugin's summarize, columns and rules share
        cfg, ctx.params and the returned summary (one conversion of the
        config per plugin), and its resolver's ctx.params is that table
        too; the next variant gets new tables."""
        body = """  resolvers = {{ name = 'px-look', run = function(cfg, ctx)
    seen.resolver_prev, seen.resolver_params = seen.resolver_params, ctx.params
  end }},
  rules = {{ id = 'px-same', severity = 'warning', summary = 's',
    check = function(cfg, ctx)
      local same = cfg == seen.cfg and ctx.params == seen.params
        and ctx.summary == seen.summary and seen.cfg ~= seen.prev
        and ctx.params == seen.resolver_params
        and seen.resolver_params ~= seen.resolver_prev
      ctx.report{ path = 'train_batch_size', message = 'same ' .. tostring(same)
        .. ' ' .. tostring(ctx.summary and ctx.summary.px_n) .. ' '
        .. cfg.train_batch_size }
    end }},
  summarize = function(cfg, ctx)
    seen.prev, seen.cfg, seen.params = seen.cfg, cfg, ctx.params
    seen.n = (seen.n or 0) + 1
    seen.summary = { px_n = seen.n }
    return seen.summary
  end,
  columns = {{ name = 'pxc', value = function(v)
    return tostring(v.config == seen.cfg and v.summary == seen.summary) end }},"""
        root = os.path.join(self.tmp, "plugins")
        self.write(os.path.join("plugins", "px", "init.lua"),
                   "local seen = {}\n" + plugin("px", body))
        res = run("gen", "8xa100", "--plugin-path", root, "-j", "1")
        self.assertExit(res, 0)
        self.assertEqual(re.findall(r"variant (\w+): train_batch_size: "
                                    r"same (\w+) (\d) (\d+)", res.err),
                         [("small", "true", "1", "64"),
                          ("medium", "true", "2", "128"),
                          ("large", "true", "3", "512")])
        self.assertEqual(re.findall(r"(?m)^(small|medium|large) +(\w+) ",
                                    res.out),
                         [("small", "true"), ("medium", "true"),
                          ("large", "true")])
        # check has no summarize: the rule gets its own tables, as ever
        cfg = self.write("c.json", json.dumps({"train_batch_size": 8}))
        res = run("check", "--plugin-path", root, cfg)
        self.assertExit(res, 0)
        self.assertIn("same false nil 8 [px-same]", res.err)

    def test_another_plugins_hooks_never_see_a_plugins_tables(self):
        """px's summarize changes its cfg; py's rule and the written file
        still see the config as resolved."""
        root = os.path.join(self.tmp, "plugins")
        self.write(os.path.join("plugins", "px", "init.lua"), plugin(
            "px", "  summarize = function(cfg, ctx)\n"
            "    cfg.train_batch_size = 1; cfg.px_was_here = true\n"
            "    ctx.params.world_size = 1\n  end,"))
        self.write(os.path.join("plugins", "py", "init.lua"), plugin(
            "py", "  rules = {{ id = 'py-look', severity = 'warning', summary = 's',\n"
            "    check = function(cfg, ctx)\n"
            "      ctx.report{ path = 'train_batch_size', message = 'py sees '"
            " .. cfg.train_batch_size .. ' ' .. tostring(cfg.px_was_here)"
            " .. ' ' .. ctx.params.world_size }\n    end }},"))
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--tier", "small", "--plugin-path", root,
                  "-o", out)
        self.assertExit(res, 0)
        self.assertIn("py sees 64 nil 8", res.err)
        with open(os.path.join(out, "8xa100-small.json")) as f:
            written = json.load(f)
        self.assertEqual(written["train_batch_size"], 64)
        self.assertNotIn("px_was_here", written)

    def test_two_plugins_giving_one_summary_field_is_an_error(self):
        res, _ = self.gen("px", "  summarize = function() return "
                          "{ fits = true } end,")
        self.assertExit(res, 5)
        self.assertRegex(res.err, r"field 'fits' is already given by plugin "
                         r"(px|deepspeed)")

    def test_bad_column_declarations(self):
        cases = {
            "  columns = 3,": "'columns' must be a list",
            "  columns = {{ value = function() end }},": "needs a 'name'",
            "  columns = {{ name = 'c' }},": "needs a 'value' function",
            "  columns = {{ name = 'c', align = 'middle', value = "
            "function() end }},": "'align' must be",
            "  columns = {{ name = 'c', show = 'never', value = "
            "function() end }},": "'show' must be",
            "  columns = {{ name = 'c', width = 100, value = "
            "function() end }},": "'width' must be",
            "  columns = {{ name = 'c', colour = 1, value = "
            "function() end }},": "unknown field",
            "  columns = {{ name = 'fits', value = function() end }},":
                "column 'fits' is already declared by plugin",
            "  summarize = 3,": "'summarize' must be a function",
        }
        for body, msg in cases.items():
            res, _ = self.gen("px", body)
            self.assertExit(res, 3)
            self.assertIn(msg, res.err, body)

    def test_bad_report_declarations(self):
        for body in ("  report = 'bars',", "  report = { print },",
                     "  report = { bars = { function() end } },"):
            res, _ = self.gen("px", body)
            self.assertExit(res, 3)
            self.assertIn("'report' must be a JSON-like table", res.err)

    def test_summary_declarations_are_read_by_the_commands_that_use_them(self):
        # columns and report are read when gen first needs them (and by
        # `plugins`, which checks every declaration); estimate, explain and
        # check never read them, so a bad one there does not stop them
        for body, msg in (("  columns = {{ name = 'c' }},",
                           "needs a 'value' function"),
                          ("  report = 'bars',",
                           "'report' must be a JSON-like table")):
            res, path = self.gen("px", body)
            self.assertExit(res, 3)
            self.assertIn(msg, res.err)
            self.assertIn(path, res.err)
            root = os.path.dirname(os.path.dirname(path))
            res = run("plugins", "--plugin-path", root)
            self.assertExit(res, 3)
            self.assertIn(msg, res.err)
            res = run("estimate", "--model", "llama-2-7b", "--plugin-path",
                      root)
            self.assertExit(res, 0)
            self.assertIn("6738M total params", res.out)
            cfg = os.path.join(self.tmp, "ds.json")
            with open(cfg, "w") as f:
                json.dump({"train_micro_batch_size_per_gpu": 1}, f)
            res = run("check", cfg, "--plugin-path", root)
            self.assertExit(res, 0)

    def test_columns_and_report_may_be_functions(self):
        out = os.path.join(self.tmp, "out")
        res, _ = self.gen("aaa", "  columns = function() return {{ name = 'c', "
                          "value = function(v) return 'cv' end }} end,\n"
                          "  report = function() return { bars = { { label = "
                          "'mine', parts = { { label = 'p', value = 'x' } } } "
                          "} } end,", "-o", out)
        self.assertExit(res, 0)
        self.assertRegex(res.out.splitlines()[1], r" cv ")
        with open(os.path.join(out, "manifest.json")) as f:
            self.assertEqual(json.load(f)["report_layout"]["bars"][0]["label"],
                             "mine")
        res, path = self.gen("px", "  columns = function() error('no columns') "
                             "end,")
        self.assertExit(res, 5)
        self.assertIn("%s:3: error: no columns" % path, res.err)
        res, _ = self.gen("px", "  report = function() return 'bars' end,")
        self.assertExit(res, 3)
        self.assertIn("'report' must be a JSON-like table", res.err)

    def test_the_first_declared_report_layout_draws_the_page(self):
        # A plugin earlier on the path declares its own layout: the
        # manifest records it, not the DeepSpeed plugin's.
        out = os.path.join(self.tmp, "out")
        res, _ = self.gen("aaa", "  report = { bars = { { label = 'mine', "
                          "parts = { { label = 'p', value = 'x' } } } } },",
                          "-o", out)
        self.assertExit(res, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            layout = json.load(f)["report_layout"]
        self.assertEqual(layout, {"bars": [{"label": "mine", "parts": [
            {"label": "p", "value": "x"}]}]})

    def test_no_summary_no_cells(self):
        # a column whose value is nil prints "-"
        res, _ = self.gen("px", "  columns = {{ name = 'c', header = 'hdr', "
                          "value = function() return nil end }},")
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^small +- +8 ")


if __name__ == "__main__":
    unittest.main()
