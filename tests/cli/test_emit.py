"""Emitters (issue 12): the plugin contract's `emitters` field, `gen
--emit` (and a profile's `emit` default) writing their files in the same
all-or-nothing transaction as the JSON, listed with sha256 in
manifest.json; and the launch plugin's hf-args, accelerate and launch
emitters through the real CLI: the Trainer's own "auto" fill reproduced
for every built-in profile and tier, the scripts run by bash with fake
launchers, the YAML read by PyYAML."""
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import unittest

import dsf
from dsf import run
from test_launch_render import FAKE, NASTY

try:
    import yaml
except ImportError:  # python3-yaml (contrib/install-deps.sh)
    yaml = None

PROFILE = """return { name = "p", params = { n = 1 },
  tiers = { a = {}, b = { n = 2 } },
  build = function(p) return { train_micro_batch_size_per_gpu = p.n } end }"""


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f) if path.endswith(".json") else f.read()


def plugin(name, emitters, extra=""):
    return ('return { name = "%s", version = "1.0", summary = "s", %s\n'
            '  emitters = %s }\n' % (name, extra, emitters))


# An emitter that shows what it was given (v and ctx), and one that
# checks ctx.cache is shared by a plugin's emitters for one variant only.
SHOW = plugin("show", """{
  { name = "show", summary = "what an emitter sees",
    file = "{profile}-{variant}.show.json",
    emit = function(v, ctx)
      ctx.cache.n = (ctx.cache.n or 0) + 1
      return ctx.json({ profile = v.profile, name = v.name, tier = v.tier,
        file = v.file, dir = v.dir or dsforge.null, config = v.config,
        params = v.params, summary = v.summary or dsforge.null,
        target = ctx.target, train_cmd = ctx.train_cmd or dsforge.null,
        same_params = ctx.params == v.params, cache = ctx.cache.n })
    end },
  { name = "two", summary = "two files",
    files = { "{profile}-{variant}.one.txt", "{profile}-{variant}.two.txt" },
    emit = function(v, ctx)
      ctx.cache.n = (ctx.cache.n or 0) + 1
      return { v.name .. " one\\n", v.name .. " two " .. ctx.cache.n .. "\\n" }
    end },
}""")


class EmitterContract(dsf.TempDirTest):

    def gen(self, *args, plugins=("show",), texts=None):
        texts = texts or {"show": SHOW}
        for name in plugins:
            self.write(os.path.join("plugins", name, "init.lua"), texts[name])
        prof = self.profile("p", PROFILE)
        return run("gen", "p", "--profile-path", prof, "--plugin-path",
                   os.path.join(self.tmp, "plugins"), *args)

    def test_files_manifest_and_footer(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "two,show", "-o", out)
        self.assertExit(res, 0)
        self.assertIn("2 variants, 6 files (show, two) and manifest.json in",
                      res.out)
        m = load(os.path.join(out, "manifest.json"))
        for v in m["variants"]:
            # declaration order, whatever order --emit names them in
            self.assertEqual([e["emitter"] for e in v["emitted"]],
                             ["show", "two", "two"])
            self.assertEqual([e["file"] for e in v["emitted"]], [
                "p-%s.show.json" % v["name"], "p-%s.one.txt" % v["name"],
                "p-%s.two.txt" % v["name"]])
            for e in v["emitted"]:
                with open(os.path.join(out, e["file"]), "rb") as f:
                    self.assertEqual(hashlib.sha256(f.read()).hexdigest(),
                                     e["sha256"])
        # v and ctx: what the contract says
        seen = load(os.path.join(out, "p-b.show.json"))
        self.assertEqual(seen["profile"], "p")
        self.assertEqual(seen["name"], "b")
        self.assertEqual(seen["tier"], "b")
        self.assertEqual(seen["file"], "p-b.json")
        self.assertEqual(seen["dir"], out)
        self.assertEqual(seen["config"], {"train_micro_batch_size_per_gpu": 2})
        self.assertEqual(seen["params"]["n"], 2)
        self.assertEqual(seen["target"], "deepspeed")
        self.assertIsNone(seen["train_cmd"])
        self.assertTrue(seen["same_params"])
        # ctx.cache: fresh per variant, shared by the plugin's emitters
        self.assertEqual(seen["cache"], 1)
        self.assertEqual(load(os.path.join(out, "p-b.two.txt")),
                         "b two 2\n")
        # a second run changes nothing
        before = self.listing(out)
        self.assertExit(self.gen("--emit", "show,two", "-o", out), 0)
        self.assertEqual(self.listing(out), before)

    def test_dry_run_footer_and_train_cmd(self):
        res = self.gen("--emit", "show", "--tier", "a", "--train-cmd", "t.py")
        self.assertExit(res, 0)
        self.assertIn("1 variant and 1 file (show) checked; nothing written",
                      res.out)
        out = os.path.join(self.tmp, "o")
        self.assertExit(self.gen("--emit", "show", "--tier", "a",
                                 "--train-cmd", "t.py 'a b'", "-o", out), 0)
        seen = load(os.path.join(out, "p-a.show.json"))
        self.assertEqual(seen["train_cmd"], "t.py 'a b'")

    def test_without_emit_nothing_changes(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("-o", out)
        self.assertExit(res, 0)
        self.assertIn("2 variants and manifest.json in", res.out)
        self.assertEqual(sorted(os.listdir(out)),
                         ["manifest.json", "p-a.json", "p-b.json"])
        m = load(os.path.join(out, "manifest.json"))
        self.assertNotIn("emitted", m["variants"][0])

    def test_unknown_emitter_is_a_usage_error_with_a_suggestion(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "shwo", "-o", out)
        self.assertExit(res, 2)
        self.assertIn("unknown emitter 'shwo'", res.err)
        self.assertIn("did you mean 'show'?", res.err)
        self.assertFalse(os.path.exists(out))

    def test_emit_with_stdout_or_why_is_a_usage_error(self):
        res = self.gen("--emit", "show", "--tier", "a", "--stdout")
        self.assertExit(res, 2)
        self.assertIn("--emit writes files", res.err)
        res = self.gen("--emit", "show", "--why", "x")
        self.assertExit(res, 2)
        res = self.gen("--emit", "none,show")
        self.assertExit(res, 2)
        self.assertIn("--emit none cannot be combined", res.err)

    def profile_with_default(self, emit):
        self.write(os.path.join("plugins", "show", "init.lua"), SHOW)
        return self.profile("q", 'return { name = "q", extends = "p", emit = %s,'
                            ' build = function(p) return {} end }' % emit)

    def test_profile_default_and_none(self):
        prof = self.profile_with_default('{ "two" }')
        self.profile("p", PROFILE)
        plug = os.path.join(self.tmp, "plugins")
        out = os.path.join(self.tmp, "out")
        res = run("gen", "q", "--profile-path", prof, "--plugin-path", plug,
                  "-o", out)
        self.assertExit(res, 0)
        self.assertIn("4 files (two)", res.out)
        self.assertTrue(os.path.exists(os.path.join(out, "q-a.two.txt")))
        # --emit replaces the default; --emit none turns it off
        out2 = os.path.join(self.tmp, "out2")
        res = run("gen", "q", "--profile-path", prof, "--plugin-path", plug,
                  "--emit", "none", "-o", out2)
        self.assertExit(res, 0)
        self.assertEqual(sorted(os.listdir(out2)),
                         ["manifest.json", "q-a.json", "q-b.json"])
        res = run("gen", "q", "--profile-path", prof, "--plugin-path", plug,
                  "--emit", "show", "--tier", "a")
        self.assertIn("1 file (show)", res.out)
        # --stdout prints the JSON only: the default does not apply
        res = run("gen", "q", "--profile-path", prof, "--plugin-path", plug,
                  "--tier", "a", "--stdout")
        self.assertExit(res, 0)
        self.assertEqual(json.loads(res.out),
                         {"train_micro_batch_size_per_gpu": 1})

    def test_profile_default_is_not_applied_where_nothing_is_written(self):
        # launch without a training command fails: where the default
        # applies, that shows
        prof = self.profile("q", 'return { name = "q", extends = "p",'
                            ' emit = { "launch" },'
                            ' build = function(p) return {} end }')
        self.profile("p", PROFILE)
        res = run("gen", "q", "--profile-path", prof)
        self.assertExit(res, 3)
        self.assertIn("needs the training command", res.err)
        res = run("gen", "q", "--profile-path", prof, "--tier", "a",
                  "--stdout")
        self.assertExit(res, 0)
        res = run("gen", "q", "--profile-path", prof, "--why",
                  "train_micro_batch_size_per_gpu")
        self.assertExit(res, 0)
        res = run("diff", "q:a", "q:b", "--profile-path", prof)
        self.assertExit(res, 1)
        self.assertIn("train_micro_batch_size_per_gpu", res.out)

    def test_profile_default_unknown_is_an_input_error(self):
        prof = self.profile_with_default('{ "tow" }')
        self.profile("p", PROFILE)
        res = run("gen", "q", "--profile-path", prof, "--plugin-path",
                  os.path.join(self.tmp, "plugins"))
        self.assertExit(res, 3)
        self.assertIn("q.lua", res.err)
        self.assertIn("unknown emitter 'tow'", res.err)
        self.assertIn("did you mean 'two'?", res.err)
        prof = self.profile_with_default('"two"')
        res = run("gen", "q", "--profile-path", prof, "--plugin-path",
                  os.path.join(self.tmp, "plugins"))
        self.assertExit(res, 3)
        self.assertIn("profile field 'emit' must be a table", res.err)

    def failing(self, body, code, *expect):
        text = plugin("bad", """{ { name = "boom", summary = "s",
            files = { "{profile}-{variant}.a", "{profile}-{variant}.b" },
            emit = function(v, ctx) %s end } }""" % body)
        out = os.path.join(self.tmp, "out")
        # a first good run, to see that a failing one leaves it alone
        self.assertExit(self.gen("-o", out), 0)
        before = self.listing(out)
        res = self.gen("--emit", "two,boom", "-o", out,
                       plugins=("show", "bad"),
                       texts={"show": SHOW, "bad": text})
        self.assertExit(res, code)
        for e in expect:
            self.assertIn(e, res.err)
        self.assertEqual(self.listing(out), before)
        # ... and creates no directory
        res = self.gen("--emit", "boom", "-o", out + "2",
                       plugins=("show", "bad"),
                       texts={"show": SHOW, "bad": text})
        self.assertExit(res, code)
        self.assertFalse(os.path.exists(out + "2"))

    def test_an_emitter_that_raises_is_the_plugins_error(self):
        self.failing('if v.name == "b" then error("kaput") end'
                     ' return { "1", "2" }', 5, "kaput", "bad/init.lua",
                     "emitter boom (plugin bad)", "variant b")

    def test_wrong_results_are_the_plugins_error(self):
        self.failing("return 42", 5, "emitter boom (plugin bad) must return"
                     " a list of strings")
        self.failing('return { "only one" }', 5,
                     "returned 1 texts for 2 declared files")
        self.failing('return { "x", 2 }', 5, "text #2 must be a string")

    def test_v_sha256_is_the_json_files_sha256_with_or_without_o(self):
        # an emitter that writes v.sha256, and one that reports it by
        # failing: a dry run keeps no text, so its message shows the value
        text = plugin("sha", """{ { name = "sha", summary = "s",
            file = "{profile}-{variant}.sha.txt",
            emit = function(v) return v.sha256 end },
          { name = "shafail", summary = "s", file = "{profile}-{variant}.x.txt",
            emit = function(v) dsforge.fail("SHA " .. v.name .. " " .. v.sha256) end } }""")
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "sha", "-o", out, plugins=("sha",),
                       texts={"sha": text})
        self.assertExit(res, 0)
        m = load(os.path.join(out, "manifest.json"))
        for v in m["variants"]:
            with open(os.path.join(out, v["file"]), "rb") as f:
                want = hashlib.sha256(f.read()).hexdigest()
            self.assertEqual(v["sha256"], want)
            self.assertEqual(load(os.path.join(out, "p-%s.sha.txt" % v["name"])), want)
        first = m["variants"][0]
        res = self.gen("--emit", "shafail", plugins=("sha",), texts={"sha": text})
        self.assertExit(res, 3)
        self.assertIn("SHA %s %s" % (first["name"], first["sha256"]), res.err)

    def test_v_text_is_the_json_files_bytes_with_or_without_o(self):
        # an emitter that copies v.text, and one that reports its hash by
        # failing (a dry run renders the same bytes, then drops them)
        text = plugin("txt", """{ { name = "txt", summary = "s",
            file = "{profile}-{variant}.copy.json",
            emit = function(v) return v.text end },
          { name = "txtfail", summary = "s", file = "{profile}-{variant}.x.txt",
            emit = function(v) dsforge.fail("LEN " .. v.name .. " " .. #v.text) end } }""")
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "txt", "-o", out, plugins=("txt",),
                       texts={"txt": text})
        self.assertExit(res, 0)
        m = load(os.path.join(out, "manifest.json"))
        for v in m["variants"]:
            with open(os.path.join(out, v["file"]), "rb") as f:
                want = f.read()
            with open(os.path.join(out, "p-%s.copy.json" % v["name"]), "rb") as f:
                self.assertEqual(f.read(), want)
        first = m["variants"][0]
        with open(os.path.join(out, first["file"]), "rb") as f:
            size = len(f.read())
        res = self.gen("--emit", "txtfail", plugins=("txt",), texts={"txt": text})
        self.assertExit(res, 3)
        self.assertIn("LEN %s %d" % (first["name"], size), res.err)

    def test_fail_is_an_input_error(self):
        self.failing('dsforge.fail("no such cluster")', 3, "no such cluster",
                     "emitter boom (plugin bad)")

    def test_two_files_with_one_name(self):
        # profile "p" with tier "p": the pattern {variant}-{profile}.json
        # gives p-p.json, the tier's own JSON file
        text = plugin("clash", """{ { name = "clash", summary = "s",
            file = "{variant}-{profile}.json",
            emit = function() return "" end } }""")
        self.write(os.path.join("plugins", "clash", "init.lua"), text)
        prof = self.profile("p", 'return { name = "p", tiers = { p = {} },'
                            ' build = function() return'
                            ' { train_micro_batch_size_per_gpu = 1 } end }')
        out = os.path.join(self.tmp, "out")
        res = run("gen", "p", "--profile-path", prof, "--plugin-path",
                  os.path.join(self.tmp, "plugins"), "--emit", "clash",
                  "-o", out)
        self.assertExit(res, 2)
        self.assertIn("two files of this run are named 'p-p.json'", res.err)
        self.assertFalse(os.path.exists(out))

    def test_bad_declarations_exit_3(self):
        cases = [
            ('"x"', "'emitters' must be a list"),
            ('{ 1 }', "emitter #1: must be a table"),
            ('{ { summary = "s", file = "{profile}-{variant}.x",'
             ' emit = print } }', "needs a 'name'"),
            ('{ { name = "Big", summary = "s", file = "{profile}-{variant}",'
             ' emit = print } }', "needs a 'name'"),
            ('{ { name = "none", summary = "s", file = "{profile}-{variant}",'
             ' emit = print } }', "not \"none\""),
            ('{ { name = "e", file = "{profile}-{variant}.x", emit = print'
             ' } }', "emitter 'e': needs a one-line 'summary'"),
            ('{ { name = "e", summary = "s", emit = print } }',
             "needs either 'file'"),
            ('{ { name = "e", summary = "s", file = "{profile}-{variant}.x",'
             ' files = { "{profile}-{variant}.y" }, emit = print } }',
             "needs either 'file'"),
            ('{ { name = "e", summary = "s", files = {}, emit = print } }',
             "'files' must list 1 to 32 patterns"),
            ('{ { name = "e", summary = "s", file = "{variant}.x",'
             ' emit = print } }', "needs both {profile} and {variant}"),
            ('{ { name = "e", summary = "s", file = "../{profile}-{variant}",'
             ' emit = print } }', "must not be empty or start with '.'"),
            ('{ { name = "e", summary = "s", file = "d/{profile}-{variant}",'
             ' emit = print } }', "may hold only letters"),
            ('{ { name = "e", summary = "s", file = "{profile}-{tier}-{variant}",'
             ' emit = print } }', "knows only the placeholders"),
            ('{ { name = "e", summary = "s", file = "{profile}-{variant}.json",'
             ' emit = print } }', "is the name of the variant's JSON file"),
            ('{ { name = "e", summary = "s", files = { "{profile}-{variant}.x",'
             ' "{profile}-{variant}.x" }, emit = print } }',
             "lists a file name pattern twice"),
            ('{ { name = "e", summary = "s", file = "{profile}-{variant}.x" } }',
             "needs an 'emit' function"),
            ('{ { name = "e", summary = "s", file = "{profile}-{variant}.x",'
             ' emit = print, typo = 1 } }', "unknown field"),
            ('{ { name = "show", summary = "s", file = "{profile}-{variant}.x",'
             ' emit = print } }',
             "emitter 'show' is already declared by plugin 'show'"),
            ('{ { name = "e", summary = "s", file = "{profile}-{variant}.one.txt",'
             ' emit = print } }', "is already used by emitter 'two'"),
        ]
        for emitters, message in cases:
            with self.subTest(message=message):
                res = self.gen(plugins=("show", "zz"), texts={
                    "show": SHOW, "zz": plugin("zz", emitters)})
                self.assertExit(res, 3)
                self.assertIn("zz/init.lua", res.err)
                self.assertIn("plugin 'zz'", res.err)
                self.assertIn(message, res.err)

    def test_interface_1_plugins_may_declare_emitters(self):
        text = plugin("v1", """{ { name = "v1", summary = "s",
            file = "{profile}-{variant}.v1", emit = function() return "ok" end } }""",
                      extra="interface = 1,")
        res = self.gen("--emit", "v1", "--tier", "a", plugins=("v1",),
                       texts={"v1": text})
        self.assertExit(res, 0)

    def test_plugins_lists_emitters(self):
        self.write(os.path.join("plugins", "show", "init.lua"), SHOW)
        res = run("plugins", "--json", "--plugin-path",
                  os.path.join(self.tmp, "plugins"))
        self.assertExit(res, 0)
        by = {p["name"]: p for p in res.json()}
        self.assertEqual([e["name"] for e in by["show"]["emitters"]],
                         ["show", "two"])
        self.assertEqual(by["show"]["emitters"][1]["files"], [
            "{profile}-{variant}.one.txt", "{profile}-{variant}.two.txt"])
        self.assertEqual([e["name"] for e in by["launch"]["emitters"]],
                         ["hf-args", "accelerate", "launch"])
        res = run("plugins")
        self.assertIn("emitter hf-args", res.out)


class WritePath(dsf.TempDirTest):
    """What one written file costs (issues 12 and 15): a new directory is
    written as a staging directory beside it, each file once under its
    own name, and renamed into place at the end (one rename, not one per
    file; nothing compared with an earlier file); in an existing directory
    each file is compared, written as a temporary file if it changed, and
    renamed, and the process id of the temporary names is asked once."""

    def syscalls(self, out):
        if shutil.which("strace") is None:
            self.skipTest("strace is not installed")
        log = os.path.join(self.tmp, "strace.log")
        # LeakSanitizer cannot run under ptrace (the sanitizer build)
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                               ":detect_leaks=0").lstrip(":")
        res = subprocess.run(
            ["strace", "-f", "-o", log, "-e",
             "trace=stat,lstat,newfstatat,statx,getpid,openat,rename,"
             "mkdir",
             dsf.DSFORGE, "gen", "8xa100", "--emit", "hf-args,launch",
             "--train-cmd", "train.py", "-o", out],
            capture_output=True, text=True, cwd=self.tmp, env=env,
            timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(log, encoding="utf-8") as f:
            return f.read()

    def test_a_new_directory_is_written_without_comparisons(self):
        out = os.path.join(self.tmp, "new")
        log = self.syscalls(out)
        names = [n for n in os.listdir(out) if n != "manifest.json"]
        self.assertEqual(len(names), 3 * 4)  # 3 tiers: JSON + 3 files
        stage = [ln for ln in log.splitlines() if "mkdir(" in ln]
        self.assertEqual(len(stage), 1, stage)
        m = re.search(r'mkdir\("(%s/\.new\.tmp-\d+)"' % re.escape(self.tmp),
                      stage[0])
        self.assertIsNotNone(m, stage[0])
        staging = m.group(1)
        for n in names + ["manifest.json"]:
            with self.subTest(file=n):
                # created once under its own name, in the staging directory
                # (the manifest is then appended to as the run goes)
                made = [ln for ln in log.splitlines()
                        if '"%s/%s"' % (staging, n) in ln]
                self.assertEqual(len(made), 2 if n == "manifest.json" else 1,
                                 made)
                self.assertIn("O_EXCL", made[0])
                # never named under the final directory
                self.assertNotIn('"%s/%s"' % (out, n), log)
        # one rename: the staging directory into place
        renames = [ln for ln in log.splitlines() if "rename(" in ln]
        self.assertEqual(len(renames), 1, renames)
        self.assertIn('rename("%s", "%s")' % (staging, out), renames[0])
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         sorted(["new", "strace.log"]))
        # again, into the now existing directory: compared, unchanged
        before = self.listing(out)
        log = self.syscalls(out)
        self.assertEqual(self.listing(out), before)
        # no temporary file but the manifest's (written as the run goes)
        self.assertEqual([ln for ln in log.splitlines() if ".tmp-" in ln
                          and "/manifest.json.tmp-" not in ln], [])
        # not once per file (a sanitizer's runtime may ask once itself)
        self.assertLess(log.count("getpid("), len(names))


# TrainingArguments' order, as launch.render writes the words.
HF_ARG_ORDER = ["deepspeed", "per_device_train_batch_size",
                "gradient_accumulation_steps", "learning_rate", "weight_decay",
                "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
                "max_steps", "lr_scheduler_type", "warmup_ratio",
                "warmup_steps", "bf16", "fp16", "gradient_checkpointing"]

# transformers training_args.py defaults (v4)
DEFAULTS = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
            "learning_rate": 5e-5, "weight_decay": 0.0, "adam_beta1": 0.9,
            "adam_beta2": 0.999, "adam_epsilon": 1e-8, "max_grad_norm": 1.0,
            "max_steps": -1, "warmup_steps": 0, "warmup_ratio": 0.0,
            "bf16": False, "fp16": False}


def hf_words(args):
    words = []
    for k in HF_ARG_ORDER:
        v = args.get(k)
        if v is True:
            words.append("--" + k)
        elif v is not None and v is not False:
            words += ["--" + k, repr(v) if isinstance(v, float) else str(v)]
    return words


def trainer_fill(cfg, given, world_size):
    """HfTrainerDeepSpeedConfig.trainer_config_process and the scheduler
    part of trainer_config_finalize (transformers integrations/
    deepspeed.py), in Python: returns the filled config and the
    mismatches the Trainer raises for."""
    a = dict(DEFAULTS)
    a.update(given)
    cfg = json.loads(json.dumps(cfg))
    mismatches = []

    def fill_match(path, hf_val, must_match=True):
        node, keys = cfg, path.split(".")
        for k in keys[:-1]:
            if not isinstance(node, dict) or k not in node:
                return
            node = node[k]
        if not isinstance(node, dict) or keys[-1] not in node:
            return
        ds_val = node[keys[-1]]
        if ds_val == "auto":
            node[keys[-1]] = hf_val
        elif must_match and ds_val is not None and ds_val != hf_val:
            mismatches.append("- ds %s=%s vs hf %s" % (path, ds_val, hf_val))

    mb, gas = a["per_device_train_batch_size"], a["gradient_accumulation_steps"]
    fill_match("train_micro_batch_size_per_gpu", mb)
    fill_match("gradient_accumulation_steps", gas)
    fill_match("train_batch_size", world_size * mb * gas)
    fill_match("gradient_clipping", a["max_grad_norm"])
    fill_match("optimizer.params.lr", a["learning_rate"])
    fill_match("optimizer.params.betas", [a["adam_beta1"], a["adam_beta2"]])
    fill_match("optimizer.params.eps", a["adam_epsilon"])
    fill_match("optimizer.params.weight_decay", a["weight_decay"])
    fill_match("scheduler.params.warmup_min_lr", 0, must_match=False)
    fill_match("scheduler.params.warmup_max_lr", a["learning_rate"])
    fill_match("fp16.enabled", a["fp16"])
    fill_match("bf16.enabled", a["bf16"])
    steps = a["max_steps"]
    if steps > 0:
        fill_match("scheduler.params.total_num_steps", steps)
        warm = a["warmup_steps"] if a["warmup_steps"] > 0 else \
            -(-steps * a["warmup_ratio"] // 1)
        fill_match("scheduler.params.warmup_num_steps", int(warm))
    return cfg, mismatches


class LaunchEmittersThroughTheCli(dsf.TempDirTest):

    def test_hf_args_reproduce_every_builtin_profile_and_tier(self):
        """--target hf JSON + --emit hf-args, through the Trainer's fill,
        give the profile's learning rate, betas, epsilon, weight decay,
        warmup, steps, batch and precision, and equal the --target
        deepspeed JSON of the same variant."""
        seen = 0
        for prof in dsf.BUILTIN_PROFILES:
            hf_dir = os.path.join(self.tmp, "hf", prof)
            ds_dir = os.path.join(self.tmp, "ds", prof)
            self.assertExit(run("gen", prof, "--target", "hf", "--emit",
                                "hf-args", "-o", hf_dir, cwd=self.tmp), 0)
            self.assertExit(run("gen", prof, "-o", ds_dir, cwd=self.tmp), 0)
            m = load(os.path.join(hf_dir, "manifest.json"))
            for v in m["variants"]:
                with self.subTest(profile=prof, variant=v["name"]):
                    seen += 1
                    p = v["params"]
                    hf = load(os.path.join(hf_dir, v["file"]))
                    ds = load(os.path.join(ds_dir, v["file"]))
                    args = load(os.path.join(
                        hf_dir, "%s-%s.hf-args.json" % (prof, v["name"])))
                    self.assertEqual(args["deepspeed"],
                                     os.path.join(hf_dir, v["file"]))
                    filled, mism = trainer_fill(hf, args, p["world_size"])
                    self.assertEqual(mism, [])
                    # the model-size keys need the model: as DeepSpeed's
                    zo, dzo = filled.get("zero_optimization", {}), \
                        ds.get("zero_optimization", {})
                    for k in ["reduce_bucket_size", "stage3_prefetch_bucket_size",
                              "stage3_param_persistence_threshold"]:
                        if zo.get(k) == "auto":
                            zo[k] = dzo[k]
                    self.assertNotIn('"auto"', json.dumps(filled))
                    self.assertEqual(filled, ds)
                    # ... and exactly the profile's values
                    opt = filled["optimizer"]["params"]
                    self.assertEqual(opt["lr"], p["learning_rate"])
                    self.assertEqual(opt["betas"],
                                     [p["adam_beta1"], p["adam_beta2"]])
                    self.assertEqual(opt["eps"], p["adam_epsilon"])
                    self.assertEqual(opt["weight_decay"], p["weight_decay"])
                    sch = filled["scheduler"]["params"]
                    self.assertEqual(sch["warmup_num_steps"], p["warmup_steps"])
                    self.assertEqual(sch["total_num_steps"],
                                     p["num_training_steps"])
                    self.assertEqual(sch["warmup_max_lr"], p["learning_rate"])
                    mb, gas = p["micro_batch_size"], p["gradient_accumulation"]
                    self.assertEqual(filled["train_micro_batch_size_per_gpu"], mb)
                    self.assertEqual(filled["gradient_accumulation_steps"], gas)
                    self.assertEqual(filled["train_batch_size"],
                                     mb * gas * p["world_size"])
                    self.assertEqual(filled["gradient_clipping"],
                                     p["max_grad_norm"])
                    self.assertEqual(filled["bf16"]["enabled"],
                                     p["precision"] == "bf16")
                    self.assertEqual(filled["fp16"]["enabled"],
                                     p["precision"] == "fp16")
                    # the bash array holds the same words
                    sh = os.path.join(hf_dir, "%s-%s.hf-args.sh"
                                      % (prof, v["name"]))
                    out = subprocess.run(
                        ["bash", "-c", 'source "$1"; printf "%s\\0" '
                         '"${hf_args[@]}"', "x", sh], capture_output=True)
                    self.assertEqual(out.returncode, 0, out.stderr)
                    self.assertEqual(out.stdout.decode().split("\0")[:-1],
                                     hf_words(args))
        self.assertGreaterEqual(seen, 15)

    def bin(self):
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        for prog in ["deepspeed", "torchrun", "accelerate", "srun"]:
            self.write(os.path.join("bin", prog), FAKE)
            os.chmod(os.path.join(bindir, prog), 0o755)
        self.write("bin/scontrol", "#!/bin/sh\nprintf 'node-a\\nnode-b\\n'\n")
        os.chmod(os.path.join(bindir, "scontrol"), 0o755)
        return bindir

    def run_script(self, path, env=None, args=()):
        check = subprocess.run(["bash", "-n", path], capture_output=True,
                               text=True)
        self.assertEqual(check.returncode, 0, check.stderr)
        rec = os.path.join(self.tmp, "argv.jsonl")
        if os.path.exists(rec):
            os.unlink(rec)
        # not inside a Slurm job unless env says so
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("SLURM_")}
        e.update(env or {})
        e["PATH"] = self.bin() + os.pathsep + e["PATH"]
        e["FAKE_OUT"] = rec
        work = os.path.join(self.tmp, "work")
        os.makedirs(work, exist_ok=True)
        p = subprocess.run(["bash", path, *args], capture_output=True,
                           text=True, env=e, cwd=work, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.listdir(work), [], "a word was run by the shell")
        with open(rec, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
        self.assertEqual(len(calls), 1, calls)
        return calls[0]

    def test_scripts_and_yaml_with_nasty_paths_and_arguments(self):
        # NASTY: spaces, quotes, $(...), backticks, newlines, non-ASCII...
        cmd = ["train dir/tráin.py"] + NASTY + ["$(touch PWNED)"]
        out = os.path.join(self.tmp, "out dir", "it's $(x) \"é\" 日本")
        res = run("gen", "8xa100", "--tier", "medium", "--emit",
                  "hf-args,accelerate,launch", "--train-cmd",
                  " ".join(shlex.quote(w) for w in cmd), "-o", out,
                  cwd=self.tmp)
        self.assertExit(res, 0)
        stem = os.path.join(out, "8xa100-medium")
        args = load(stem + ".hf-args.json")
        self.assertEqual(args["deepspeed"], stem + ".json")
        words = cmd + hf_words(args)
        head = ["--num_nodes", "1", "--num_gpus", "8", "--master_port",
                "29500"]
        # one launch script: the launcher is its argument
        script = stem + ".launch.sh"
        call = self.run_script(script, args=["deepspeed"])
        self.assertEqual((call["prog"], call["argv"]),
                         ("deepspeed", head + words))
        call = self.run_script(script, args=["torchrun"])
        self.assertEqual((call["prog"], call["argv"]), ("torchrun", [
            "--standalone", "--nnodes", "1", "--nproc_per_node", "8"]
            + words))
        call = self.run_script(script, args=["accelerate"])
        self.assertEqual((call["prog"], call["argv"]), ("accelerate", [
            "launch", "--config_file", stem + ".accelerate.yaml"] + words))
        # as sbatch runs it: no argument, in a job
        slurm = ("srun", [
            "torchrun", "--nnodes", "1", "--nproc_per_node", "8",
            "--rdzv_id", "77", "--rdzv_backend", "c10d", "--rdzv_endpoint",
            "node-a:29500"] + words)
        job = {"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "node-[a-b]"}
        call = self.run_script(script, job)
        self.assertEqual((call["prog"], call["argv"]), slurm)
        call = self.run_script(script, job, args=["slurm"])
        self.assertEqual((call["prog"], call["argv"]), slurm)
        # a named launcher wins inside a job too
        call = self.run_script(script, job, args=["torchrun"])
        self.assertEqual(call["prog"], "torchrun")
        # sbatch reads #SBATCH lines up to the first command
        text = load(script)
        head_lines = text.split("\nset -euo pipefail\n")[0].splitlines()
        self.assertTrue(all(line.startswith("#") for line in head_lines))
        self.assertIn("#SBATCH --nodes=1", head_lines)
        self.assertIn("#SBATCH --gpus-per-node=8", head_lines)
        # no launcher named outside a job: usage, exit 2, nothing run
        e = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
        e["PATH"] = self.bin() + os.pathsep + e["PATH"]
        for bad in ([], ["mpirun"]):
            p = subprocess.run(["bash", script, *bad], capture_output=True,
                               text=True, env=e, cwd=self.tmp, timeout=60)
            self.assertEqual(p.returncode, 2)
            self.assertIn("usage: bash THIS_FILE deepspeed|torchrun|"
                          "accelerate", p.stderr)
        self.assertEqual(sorted(f for f in os.listdir(out)
                                if f.startswith("8xa100-medium")), [
            "8xa100-medium.accelerate.yaml", "8xa100-medium.hf-args.json",
            "8xa100-medium.hf-args.sh", "8xa100-medium.json",
            "8xa100-medium.launch.sh"])
        if yaml is None:
            self.skipTest("PyYAML (python3-yaml) is not installed")
        data = yaml.safe_load(load(stem + ".accelerate.yaml"))
        self.assertEqual(data["deepspeed_config"], {
            "deepspeed_config_file": stem + ".json", "zero3_init_flag": True})
        self.assertEqual((data["distributed_type"], data["num_processes"],
                          data["num_machines"]), ("DEEPSPEED", 8, 1))

    def test_several_nodes(self):
        prof = self.profile("two-node", """return { name = "two-node",
          extends = "8xa100",
          params = { nodes = 2, master_addr = "10.1.2.3",
                     train_cmd = "train.py --run 'two nodes'" },
          build = function(p) return {} end }""")
        out = os.path.join(self.tmp, "out")
        res = run("gen", "two-node", "--profile-path", prof, "--tier",
                  "small", "--emit", "accelerate,launch", "-o", out)
        self.assertExit(res, 0)
        stem = os.path.join(out, "two-node-small")
        text = load(stem + ".launch.sh")
        self.assertIn("#SBATCH --nodes=2\n", text)
        call = self.run_script(stem + ".launch.sh", args=["deepspeed"])
        self.assertEqual(call["argv"][:8], [
            "--num_nodes", "2", "--num_gpus", "8", "--hostfile",
            "/job/hostfile", "--master_addr", "10.1.2.3"])
        self.assertIn("two nodes", call["argv"])
        # each node's rank for accelerate; the rendezvous for torchrun
        call = self.run_script(stem + ".launch.sh", {"MACHINE_RANK": "1"},
                               args=["accelerate"])
        self.assertEqual(call["argv"][:5], [
            "launch", "--config_file", stem + ".accelerate.yaml",
            "--machine_rank", "1"])
        call = self.run_script(stem + ".launch.sh", args=["torchrun"])
        self.assertEqual(call["argv"][:8], [
            "--nnodes", "2", "--nproc_per_node", "8", "--rdzv_backend",
            "c10d", "--rdzv_endpoint", "10.1.2.3:29500"])
        if yaml is not None:
            data = yaml.safe_load(load(stem + ".accelerate.yaml"))
            self.assertEqual((data["num_machines"], data["num_processes"],
                              data["main_process_ip"]), (2, 16, "10.1.2.3"))
        # without the first node's address, no accelerate config
        res = run("gen", "8xa100", "--param", "nodes=2", "--tier", "small",
                  "--emit", "accelerate", "-o", out + "2")
        self.assertExit(res, 3)
        self.assertIn("needs the first node's address", res.err)
        self.assertFalse(os.path.exists(out + "2"))

    def test_the_training_command_is_required_and_never_expanded(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--emit", "launch", "-o", out)
        self.assertExit(res, 3)
        self.assertIn("needs the training command", res.err)
        self.assertIn("emitter launch (plugin launch)", res.err)
        self.assertFalse(os.path.exists(out))
        for bad, why in [("train.py $HOME", "unquoted $"),
                         ("train.py > log", "unquoted >"),
                         ("train.py 'open", "unterminated '"),
                         ('train.py "$(x)"', "unescaped $")]:
            with self.subTest(cmd=bad):
                res = run("gen", "8xa100", "--emit", "launch", "--train-cmd",
                          bad, "-o", out)
                self.assertExit(res, 3)
                self.assertIn(why, res.err)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()


class LaunchParamsCheckedWhereTheyEnter(dsf.TempDirTest):
    """Every param the launch plugin reads is checked before it renders
    anything (issue 30): a value a launcher or Slurm cannot take is an
    input error naming the param (exit 3), never "a bug in the plugin",
    and nothing is written."""

    PROFILE = ('return { name = "mn", extends = "8xa100", summary = "x", '
               'params = { master_addr = { default = "10.0.0.1" }, '
               'master_port = { default = 29500 }, slurm_time = { default = '
               '"01:00:00" }, slurm_partition = { default = "gpu" }, '
               'slurm_account = { default = "acct" }, hostfile = { default = '
               '"hosts" }, cpus_per_task = { default = 8 } } }\n')

    def gen(self, *params):
        d = self.profile("mn", self.PROFILE)
        args = ["gen", "mn", "--tier", "small", "--profile-path", d,
                "--param", "nodes=2", "--emit", "launch,accelerate",
                "--train-cmd", "train.py", "-o", os.path.join(self.tmp, "o")]
        for p in params:
            args += ["--param", p]
        return run(*args)

    def test_bad_values_name_the_param(self):
        # (base declares master_port's range: its own check, a usage error)
        for p, name, rc in (("master_port=-1", "master_port", 2),
                            ("master_port=99999999999", "master_port", 2),
                            ("master_port=0", "master_port", 2),
                            ("slurm_time=-5", "slurm_time", 3),
                            ("slurm_time=1:2:3:4", "slurm_time", 3),
                            ("slurm_partition=a b", "slurm_partition", 3),
                            ("slurm_account=x\ny", "slurm_account", 3),
                            ("cpus_per_task=0", "cpus_per_task", 3),
                            ("master_addr=a;rm -rf /", "master_addr", 3),
                            ("hostfile=a\nb", "hostfile", 3)):
            with self.subTest(param=p):
                res = self.gen(p)
                self.assertEqual(res.rc, rc, repr(res))
                self.assertIn("param '%s' = " % name, res.err)
                self.assertNotIn("a bug in the plugin", res.err)
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "o")))

    def test_good_values_pass(self):
        for p in ("slurm_time=2-12:00:00", "slurm_time=90",
                  "slurm_time=UNLIMITED", "master_port=65535",
                  "master_addr=fe80::1"):
            with self.subTest(param=p):
                res = self.gen(p)
                self.assertEqual(res.rc, 0, repr(res))

    def test_an_o_path_that_is_not_utf8(self):
        # bytes in argv: the shell script takes them, YAML and JSON cannot
        out = os.path.join(self.tmp.encode(), b"bad\xffdir")
        for emit, code in (("launch", 0), ("accelerate", 3), ("hf-args", 3)):
            with self.subTest(emit=emit):
                p = subprocess.run(
                    [dsf.DSFORGE.encode(), b"gen", b"8xa100", b"--emit",
                     emit.encode(), b"--train-cmd", b"train.py", b"-o", out],
                    capture_output=True, stdin=subprocess.DEVNULL)
                self.assertEqual(p.returncode, code, p.stderr)
                if code:
                    self.assertIn(b"not valid UTF-8", p.stderr)
                    self.assertNotIn(b"a bug in the plugin", p.stderr)
                    self.assertFalse(os.path.exists(out))
                shutil.rmtree(out, ignore_errors=True)
