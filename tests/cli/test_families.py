"""Config families (contrib/docs/plugins.md, Targets): a plugin owns the
targets of its configs; only the plugins serving a config's target judge
it. tests/plugins/fsdp/ is a plugin of another family (FSDP settings),
written from plugins.md alone, loaded beside the built-in DeepSpeed plugin
(untouched: it stays on the plugin path)."""
import json
import os
import shutil
import unittest

import dsf
from dsf import run

FSDP_SRC = os.path.join(dsf.SOURCE_DIR, "tests", "plugins", "fsdp")
FSDP_PROFILES = os.path.join(FSDP_SRC, "profiles")

# An FSDP settings file the plugin's rule rejects (no such strategy).
BAD_FSDP = '{"sharding_strategy": "HALF_SHARD", "cpu_offload": false}\n'
GOOD_FSDP = ('{"$schema": "https://example.invalid/fsdp-settings.schema.json",'
             ' "sharding_strategy": "FULL_SHARD", "cpu_offload": false}\n')
# A DeepSpeed config the DeepSpeed rules reject (batch identity).
BAD_DS = ('{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, '
          '"gradient_accumulation_steps": 8}\n')


class FamilyTest(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.plugins = os.path.join(self.tmp, "plugins")
        shutil.copytree(FSDP_SRC, os.path.join(self.plugins, "fsdp"))
        self.opts = ["--plugin-path", self.plugins,
                     "--profile-path", FSDP_PROFILES]

    def rules_of(self, r):
        return sorted({f["rule"] for f in json.loads(r.out)})


class GenOfAnotherFamily(FamilyTest):
    def test_gen_fsdp_profile_passes_beside_the_deepspeed_plugin(self):
        out = os.path.join(self.tmp, "out")
        r = run("gen", "fsdp-tiny", "-o", out, *self.opts)
        self.assertExit(r, 0)
        self.assertEqual(r.err, "")
        with open(os.path.join(out, "fsdp-tiny-grad.json")) as f:
            self.assertEqual(json.load(f)["sharding_strategy"],
                             "SHARD_GRAD_OP")
        # the profile's default emitter, at the profile's target
        with open(os.path.join(out, "fsdp-tiny-full.fsdp.env")) as f:
            self.assertEqual(f.read(), "FSDP_SHARDING_STRATEGY=FULL_SHARD\n"
                                       "FSDP_TARGET=fsdp\n")
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual(m["target"], "fsdp")
        # no DeepSpeed summary (its summarize does not run on FSDP files)
        for v in m["variants"]:
            self.assertNotIn("gpu_bytes", v.get("summary") or {})

    def test_gen_fsdp_rule_fires_on_a_bad_param(self):
        r = run("gen", "fsdp-tiny", "--tier", "full", "--param",
                "sharding=HALF_SHARD", *self.opts)
        self.assertExit(r, 1)
        self.assertIn("[fsdp-sharding-strategy]", r.err)
        self.assertNotIn("[batch-missing]", r.err)
        self.assertNotIn("[unknown-key]", r.err)

    def test_a_deepspeed_profile_is_not_judged_by_the_fsdp_plugin(self):
        with_fsdp = run("gen", "8xa100", *self.opts)
        self.assertExit(with_fsdp, 0)
        self.assertNotIn("fsdp", with_fsdp.err)
        self.assertEqual(with_fsdp.out, run("gen", "8xa100").out)

    def test_target_of_another_family_than_the_profile_is_refused(self):
        r = run("gen", "8xa100", "--target", "fsdp", *self.opts)
        self.assertExit(r, 2)
        self.assertIn("profile '8xa100' is for target 'deepspeed'", r.err)
        r = run("gen", "fsdp-tiny", "--target", "hf", *self.opts)
        self.assertExit(r, 2)

    def test_an_emitter_of_another_family_is_refused(self):
        r = run("gen", "fsdp-tiny", "--emit", "hf-args", *self.opts)
        self.assertExit(r, 2)
        self.assertIn("emitter 'hf-args' (plugin launch) does not serve "
                      "target 'fsdp'", r.err)

    def test_diff_of_fsdp_variants_and_its_target_check(self):
        r = run("diff", "fsdp-tiny:full", "fsdp-tiny:grad", "--format", "json",
                *self.opts)
        self.assertExit(r, 1)  # they differ; no DeepSpeed finding stops it
        self.assertIn("sharding_strategy", r.out)
        a = self.write("a.json", GOOD_FSDP)
        r = run("diff", a, a, "--target", "nope", *self.opts)
        self.assertExit(r, 2)
        self.assertIn("--target must be 'fsdp', 'deepspeed' or 'hf'", r.err)
        self.assertExit(run("diff", a, a, "--target", "fsdp", *self.opts), 0)

    def test_the_targets_the_plugins_own_are_targets_values(self):
        r = run("gen", "8xa100", "--target", "nope", *self.opts)
        self.assertExit(r, 2)
        self.assertIn("--target must be 'fsdp', 'deepspeed' or 'hf'", r.err)
        # the built-in plugins alone: as before
        r = run("gen", "8xa100", "--target", "nope")
        self.assertExit(r, 2)
        self.assertIn("--target must be 'deepspeed' or 'hf'", r.err)


class DetectOfAnotherFamily(FamilyTest):
    def test_only_the_targets_plugins_derive_machine_params(self):
        # one adds to fsdp, one to deepspeed (and would fail if asked)
        for name, target, body in (
                ("fsdpmachine", "fsdp", "return { offload = true }"),
                ("dsonly", "deepspeed", 'error("kaput")')):
            self.write("plugins/%s/init.lua" % name,
                       'return { name = "%s", version = "1", targets = { '
                       'adds = { "%s" } }, machine_params = function() '
                       '%s end }\n' % (name, target, body))
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        smi = os.path.join(bindir, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\nprintf '%s\\n' "
                    "'NVIDIA A100-SXM4-80GB, 81920, 8.0'\n")
        os.chmod(smi, 0o700)
        out = os.path.join(self.tmp, "out")
        r = run("gen", "fsdp-tiny", "--detect", "-o", out, *self.opts,
                env={"PATH": bindir})
        self.assertExit(r, 0)
        with open(os.path.join(out, "fsdp-tiny-full.json")) as f:
            self.assertIs(json.load(f)["cpu_offload"], True)


class CheckOfAnotherFamily(FamilyTest):
    def test_fsdp_file_is_recognised_and_judged_by_its_rule_only(self):
        bad = self.write("bad.json", BAD_FSDP)
        r = run("check", bad, "--format", "json", *self.opts)
        self.assertExit(r, 1)
        self.assertEqual(self.rules_of(r), ["fsdp-sharding-strategy"])
        good = self.write("good.json", GOOD_FSDP)
        r = run("check", good, *self.opts)
        self.assertExit(r, 0)
        self.assertEqual(r.err, "")

    def test_without_the_plugin_the_deepspeed_plugin_judges_it(self):
        # what the FSDP plugin saves its files from
        bad = self.write("bad.json", BAD_FSDP)
        r = run("check", bad, "--format", "json")
        self.assertExit(r, 1)
        self.assertIn("batch-missing", self.rules_of(r))

    def test_gen_output_of_the_fsdp_profile_checks_clean(self):
        out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "fsdp-tiny", "-o", out, *self.opts), 0)
        r = run("check", os.path.join(out, "fsdp-tiny-full.json"),
                os.path.join(out, "fsdp-tiny-grad.json"), *self.opts)
        self.assertExit(r, 0)

    def test_deepspeed_file_is_not_judged_by_the_fsdp_plugin(self):
        ds = self.write("ds.json", BAD_DS)
        r = run("check", ds, "--format", "json", *self.opts)
        self.assertExit(r, 1)
        rules = self.rules_of(r)
        self.assertIn("batch-identity", rules)
        self.assertNotIn("fsdp-sharding-strategy", rules)
        self.assertEqual(r.out, run("check", ds, "--format", "json").out)

    def test_target_given_overrides_the_recogniser(self):
        ds = self.write("ds.json", BAD_DS)
        r = run("check", ds, "--target", "fsdp", "--format", "json",
                *self.opts)
        self.assertExit(r, 1)
        self.assertEqual(self.rules_of(r), ["fsdp-sharding-strategy"])

    def test_files_of_both_families_in_one_run(self):
        ds = self.write("ds.json", BAD_DS)
        bad = self.write("bad.json", BAD_FSDP)
        for jobs in ("1", "2"):
            r = run("check", ds, bad, "-j", jobs, "--format", "json",
                    *self.opts)
            self.assertExit(r, 1)
            by_file = {}
            for f in json.loads(r.out):
                by_file.setdefault(os.path.basename(f["file"]),
                                   set()).add(f["rule"])
            self.assertEqual(by_file["bad.json"], {"fsdp-sharding-strategy"})
            self.assertIn("batch-identity", by_file["ds.json"])
            self.assertNotIn("fsdp-sharding-strategy", by_file["ds.json"])


class LspOfAnotherFamily(FamilyTest):
    def test_the_server_judges_each_file_by_its_family(self):
        from test_lsp import Server
        s = Server(env={"DSFORGE_PLUGIN_PATH": self.plugins})
        try:
            rules = lambda ds: sorted({d.get("code") for d in ds})
            self.assertEqual(rules(s.diagnostics("file:///x/bad.json",
                                                 BAD_FSDP)),
                             ["fsdp-sharding-strategy"])
            ds = rules(s.diagnostics("file:///x/ds.json", BAD_DS))
            self.assertIn("batch-identity", ds)
            self.assertNotIn("fsdp-sharding-strategy", ds)
            # a target set in the settings is the target of every file
            s.send({"method": "workspace/didChangeConfiguration",
                    "params": {"settings": {"dsforge": {"target": "fsdp"}}}})
            self.assertEqual(rules(s.diagnostics("file:///x/ds2.json",
                                                 BAD_DS)),
                             ["fsdp-sharding-strategy"])
        finally:
            s.close()


class TargetDeclarations(dsf.TempDirTest):
    def plugin(self, name, body):
        self.write("plugins/%s/init.lua" % name,
                   'return { name = "%s", version = "1", %s }\n'
                   % (name, body))
        return os.path.join(self.tmp, "plugins")

    def test_two_owners_of_a_target_is_an_input_error(self):
        path = self.plugin("mine", 'targets = { owns = { "hf" } }')
        r = run("check", "--plugin-path", path,
                self.write("c.json", "{}"))
        self.assertExit(r, 3)
        self.assertIn("owns target 'hf', which plugin", r.err)

    def test_bad_declarations_are_input_errors(self):
        for body in ('targets = 3', 'targets = { own = { "x" } }',
                     'targets = { owns = { "X Y" } }',
                     'targets = { owns = { "x" }, default = "y" }',
                     'targets = { owns = { "x" }, recognise = 1 }'):
            path = self.plugin("mine", body)
            r = run("check", "--plugin-path", path,
                    self.write("c.json", "{}"))
            self.assertExit(r, 3)
            self.assertIn("plugin 'mine'", r.err)

    def test_a_recogniser_naming_no_owned_target_is_a_script_error(self):
        path = self.plugin("mine", 'targets = { owns = { "mine" }, '
                           'recognise = function() return "nobody" end }')
        r = run("check", "--plugin-path", path, self.write("c.json", "{}"))
        self.assertExit(r, 5)
        self.assertIn("returned target 'nobody'", r.err)

    def test_a_profile_naming_an_unknown_target_is_an_input_error(self):
        self.write("profiles/odd.lua",
                   'return { name = "odd", target = "nope", '
                   'build = function() return {} end }\n')
        r = run("gen", "odd", "--profile-path",
                os.path.join(self.tmp, "profiles"))
        self.assertExit(r, 3)
        self.assertIn("the profile's 'target' must be 'deepspeed' or 'hf'",
                      r.err)
        self.assertIn("odd.lua", r.err)


class TextOfTheFile(dsf.TempDirTest):
    """ctx.json_extension and ctx.report's `at`, the hooks the DeepSpeed
    plugin's hf-json-load rule (moved out of C) is written with."""

    def plugin(self, check):
        self.write("plugins/txt/init.lua",
                   'return { name = "txt", version = "1", targets = { '
                   'owns = { "txt" } }, rules = { { id = "txt-plain", '
                   'severity = "warning", summary = "s", fix = "f", '
                   'check = function(cfg, ctx) %s end } } }\n' % check)
        return ["--plugin-path", os.path.join(self.tmp, "plugins"),
                "--target", "txt"]

    def test_a_rule_reports_at_the_place_in_the_text(self):
        opts = self.plugin(
            'local what, l, c = ctx.json_extension() '
            'if what then ctx.report{ at = { l, c }, message = what } end')
        cfg = self.write("c.json", '{\n  "a": 1, // why\n  "b": [2,]\n}\n')
        r = run("check", cfg, "--format", "json", *opts)
        self.assertExit(r, 0)
        [f] = json.loads(r.out)
        self.assertEqual((f["line"], f["col"], f["rule"]), (2, 11,
                                                             "txt-plain"))
        self.assertNotIn("path", f)
        self.assertIn("comment", f["message"])
        plain = self.write("p.json", '{"a": 1}\n')
        r = run("check", plain, "--format", "json", *opts)
        self.assertEqual(json.loads(r.out), [])

    def test_gen_has_no_text(self):
        opts = self.plugin('if ctx.json_extension then '
                           'ctx.report{ message = "has text" } end')
        self.write("profiles/t.lua", 'return { name = "t", target = "txt", '
                   'build = function() return { a = 1 } end }\n')
        r = run("gen", "t", "--profile-path",
                os.path.join(self.tmp, "profiles"), *opts[:2])
        self.assertExit(r, 0)
        self.assertNotIn("has text", r.err)

    def test_a_bad_at_is_the_rules_error(self):
        for at in ('{ 0, 1 }', '{ "x", 2 }', '"2:3"'):
            opts = self.plugin('ctx.report{ at = %s, message = "m" }' % at)
            r = run("check", self.write("c.json", "{}"), *opts)
            self.assertExit(r, 5)
            self.assertIn("'at' must be {line, col}", r.err)


class NoRulesIsAnError(dsf.TempDirTest):
    """A target whose plugins declare no rule: check says so rather than
    passing anything (formerly shown by shadowing the built-in plugin)."""

    def test_check_with_no_rule_of_the_target_fails(self):
        self.write("plugins/empty/init.lua",
                   'return { name = "empty", version = "0", summary = '
                   '"no rules", targets = { owns = { "empty" } } }\n')
        cfg = self.write("c.json", BAD_DS)
        r = run("check", cfg, "--target", "empty", "--plugin-path",
                os.path.join(self.tmp, "plugins"))
        self.assertExit(r, 3)
        self.assertIn("no validation rules are loaded for target 'empty'",
                      r.err)


if __name__ == "__main__":
    unittest.main()
