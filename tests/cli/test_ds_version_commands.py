"""--ds-version on the plugin commands explain and schema (issue 10): the
core hands a command that declares the option its value, or
$DSFORGE_DS_VERSION, as ctx.ds_version (checked like check's); explain KEY
shows since/until/renamed-from and the default per covered release, a key
the chosen release does not read is an error naming the first (or last)
release that does; schema --ds-version V is that release's schema, valid
for python3-jsonschema and agreeing with DeepSpeed's strictness there."""
import json
import os
import re
import subprocess
import textwrap
import unittest

import dsf
from dsf import run

INDEX = os.path.join(dsf.SOURCE_DIR, "plugins", "deepspeed", "dsdata", "releases.lua")
SYSTEM_PYTHON = "/usr/bin/python3"


def covered():
    with open(INDEX, encoding="utf-8") as f:
        return re.findall(r'\{ version = "([0-9.]+)"', f.read())


def have_jsonschema():
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import jsonschema"],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# Checks each schema against the draft's metaschema, then validates the
# instances named after it: {"schema": [[path, message], ...]} per instance.
VALIDATOR = textwrap.dedent("""\
    import json, sys
    from jsonschema import Draft202012Validator
    out = {}
    args = sys.argv[1:]
    while args:
        schema_path, n = args[0], int(args[1])
        inst, args = args[2:2 + n], args[2 + n:]
        with open(schema_path) as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        v = Draft202012Validator(schema)
        for path in inst:
            with open(path) as f:
                doc = json.load(f)
            out[path] = [[[str(p) for p in e.absolute_path], e.message]
                         for e in v.iter_errors(doc)]
    print(json.dumps(out))
    """)


class ExplainKey(dsf.TempDirTest):
    def test_since_until_renamed_from_per_release(self):
        r = run("explain", "seq_parallel_communication_data_type")
        self.assertExit(r, 0)
        newest = covered()[-1]
        self.assertIn("(DeepSpeed %s)" % newest, r.out)
        self.assertIn("read since DeepSpeed 0.16.5", r.out)
        self.assertIn("renamed from seq_parallel_comm_data_type in 0.16.5", r.out)
        lines = {m.group(2): m.group(3) for m in
                 re.finditer(r"^    ([* ]) (\d+\.\d+\.\d+) +(.*)$", r.out, re.M)}
        self.assertEqual(sorted(lines), sorted(covered()))
        self.assertIn("not read (reads seq_parallel_comm_data_type)", lines["0.14.5"])
        self.assertIn('default "fp32"', lines["0.16.5"])
        self.assertRegex(r.out, r"(?m)^    \* %s .*<- the release explained$" % re.escape(newest))

    def test_until_for_a_key_no_longer_read(self):
        r = run("explain", "aio.thread_count", "--ds-version", "0.14.5")
        self.assertExit(r, 0)
        self.assertIn("read by DeepSpeed 0.14.5 to 0.15.4 only", r.out)

    def test_default_that_changed_between_releases(self):
        path = "zero_optimization.offload_param.pin_memory"
        old = run("explain", path, "--ds-version", "0.19.2")
        self.assertExit(old, 0)
        self.assertIn("default false", old.out.splitlines()[2])
        new = run("explain", path, "--ds-version", "0.19.5")
        self.assertIn("default true", new.out.splitlines()[2])

    def test_key_newer_than_the_release_names_the_first_release(self):
        r = run("explain", "zero_optimization.zenflow", "--ds-version", "0.16.9")
        self.assertExit(r, 2)
        self.assertIn("DeepSpeed 0.16.9 does not read zero_optimization.zenflow yet", r.err)
        self.assertIn("the first covered release that reads it is 0.17.6", r.err)
        self.assertEqual(r.out, "")
        # the environment variable, and the option winning over it
        r = run("explain", "zero_optimization.zenflow", env={"DSFORGE_DS_VERSION": "0.16.9"})
        self.assertExit(r, 2)
        self.assertIn("0.17.6", r.err)
        r = run("explain", "zero_optimization.zenflow", "--ds-version", "0.17.6",
                env={"DSFORGE_DS_VERSION": "0.16.9"})
        self.assertExit(r, 0)
        # a section's child is not read when the section is not
        r = run("explain", "compile.deepcompile", "--ds-version", "0.14.5")
        self.assertExit(r, 2)
        self.assertIn("0.16.9", r.err)

    def test_key_no_longer_read_names_the_last_release_and_the_new_name(self):
        r = run("explain", "seq_parallel_comm_data_type")
        self.assertExit(r, 2)
        self.assertIn("the last covered release that reads it is 0.15.4", r.err)
        self.assertIn("renamed it to seq_parallel_communication_data_type", r.err)

    def test_unknown_key_suggests(self):
        r = run("explain", "zero_optimization.stge")
        self.assertExit(r, 2)
        self.assertIn("not a DeepSpeed key", r.err)
        self.assertIn('did you mean "zero_optimization.stage"', r.err)
        self.assertExit(run("explain", "zero_optimization..stage"), 2)

    def test_in_between_release_uses_the_nearest_earlier_and_says_so(self):
        r = run("explain", "zero_optimization.stage", "--ds-version", "0.17.2")
        self.assertExit(r, 0)
        self.assertIn("(DeepSpeed 0.16.9)", r.out)
        self.assertIn("nearest earlier", r.err)

    def test_chinese(self):
        r = run("explain", "zero_optimization.stage3_prefetch_bucket_size", "--lang", "zh")
        self.assertExit(r, 0)
        self.assertIn("各已覆盖版本", r.out)
        self.assertIn("别名 stage3_prefetch_bucket_size", r.out)


class ExplainFileAtRelease(dsf.TempDirTest):
    def rows(self, cfg, *args):
        path = self.write("c.json", json.dumps(cfg))
        r = run("explain", path, *args)
        self.assertExit(r, 0)
        out = {}
        for line in r.out.splitlines():
            m = re.match(r"^(\S+) = (.*)  \[(.*)\]$", line)
            if m:
                out[m.group(1)] = m.group(3)
        return out

    def test_keys_the_release_does_not_read_are_marked(self):
        cfg = {"compile": {"deepcompile": True}, "bf16": {"enabled": True}}
        old = self.rows(cfg, "--ds-version", "0.14.5")
        self.assertEqual(old["compile"], "not read by this release")
        self.assertEqual(old["compile.deepcompile"], "not read by this release")
        self.assertNotEqual(old["bf16.enabled"], "not read by this release")
        new = self.rows(cfg, "--ds-version", "0.19.5")
        self.assertNotIn("not read", new["compile.deepcompile"])

    def test_a_key_only_an_older_release_reads(self):
        cfg = {"seq_parallel_comm_data_type": "fp16"}
        self.assertEqual(self.rows(cfg, "--ds-version", "0.14.5")["seq_parallel_comm_data_type"],
                         'changed; default "fp32"')
        self.assertEqual(self.rows(cfg)["seq_parallel_comm_data_type"], "not a DeepSpeed key")

    def test_defaults_are_the_releases(self):
        cfg = {"zero_optimization": {"offload_param": {"pin_memory": True}}}
        key = "zero_optimization.offload_param.pin_memory"
        self.assertEqual(self.rows(cfg, "--ds-version", "0.19.2")[key], "changed; default false")
        self.assertEqual(self.rows(cfg, "--ds-version", "0.19.5")[key], "same as default; default true")


class VersionOption(dsf.TempDirTest):
    def test_malformed_or_uncovered_version_is_a_usage_error(self):
        for cmd in (["explain", "zero_optimization.stage"], ["schema"]):
            for bad in ("0", "x.y", "0.16.9.1"):
                r = run(*cmd, "--ds-version", bad)
                self.assertExit(r, 2)
                self.assertIn("not a DeepSpeed version", r.err)
            r = run(*cmd, env={"DSFORGE_DS_VERSION": "latest"})
            self.assertExit(r, 2)
            self.assertIn("DSFORGE_DS_VERSION", r.err)
            r = run(*cmd, "--ds-version", "0.10.0")
            self.assertExit(r, 2)
            self.assertIn("older than the oldest covered release", r.err)

    def test_help_lists_the_option(self):
        for cmd in ("explain", "schema"):
            r = run(cmd, "--help")
            self.assertExit(r, 0)
            self.assertIn("--ds-version", r.out)

    def test_a_command_without_the_option_ignores_the_environment(self):
        # estimate declares no --ds-version: a bad DSFORGE_DS_VERSION is not its business
        r = run("estimate", "--params", "1B", env={"DSFORGE_DS_VERSION": "latest"})
        self.assertExit(r, 0)


@unittest.skipUnless(have_jsonschema(), "python3-jsonschema is not installed")
class SchemaAtRelease(dsf.TempDirTest):
    def schema(self, v):
        r = run("schema", "--ds-version", v)
        self.assertExit(r, 0)
        return r.out, json.loads(r.out)

    def test_every_release_schema_is_valid_and_accepts_its_profiles(self):
        args = []
        for v in covered():
            text, s = self.schema(v)
            self.assertEqual(s["title"], "DeepSpeed configuration (DeepSpeed %s)" % v)
            spath = self.write("schema-%s.json" % v, text)
            out = os.path.join(self.tmp, "gen-" + v)
            r = run("gen", "8xa100", "--ds-version", v, "-o", out)
            self.assertExit(r, 0)
            inst = sorted(os.path.join(out, f) for f in os.listdir(out)
                          if f != "manifest.json")
            args += [spath, str(len(inst))] + inst
        p = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATOR] + args,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        for path, errors in json.loads(p.stdout).items():
            self.assertEqual(errors, [], path)

    def test_keys_defaults_and_strictness_follow_the_release(self):
        _, old = self.schema("0.14.5")
        _, new = self.schema("0.19.5")
        po, pn = old["properties"], new["properties"]
        # keys: 0.14.5 reads the old name and no compile section
        self.assertIn("seq_parallel_comm_data_type", po)
        self.assertNotIn("seq_parallel_comm_data_type", pn)
        self.assertNotIn("compile", po)
        self.assertIn("compile", pn)
        # strictness: bf16 is a pydantic model (unknown keys rejected) from 0.17.1
        self.assertIs(po["bf16"]["additionalProperties"], True)
        self.assertIs(pn["bf16"]["additionalProperties"], False)
        # defaults: offload pin_memory became true in 0.19.5
        _, mid = self.schema("0.19.2")

        def pin(s):
            z = s["properties"]["zero_optimization"]["properties"]
            return z["offload_param"]["properties"]["pin_memory"]["default"]
        self.assertIs(pin(mid), False)
        self.assertIs(pin(new), True)
        # the validator agrees: an unknown bf16 key passes 0.14.5, fails 0.19.5
        cfg = self.write("c.json", json.dumps({"train_micro_batch_size_per_gpu": 1,
                                               "bf16": {"enabled": True, "bogus": 1}}))
        paths = [self.write("o.json", json.dumps(old)), "1", cfg,
                 self.write("n.json", json.dumps(new)), "1", cfg]
        p = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATOR] + paths[:3],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(json.loads(p.stdout)[cfg], [])
        p = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATOR] + paths[3:],
                           capture_output=True, text=True, timeout=120)
        self.assertTrue(json.loads(p.stdout)[cfg])

    def test_without_a_version_the_hand_written_schema(self):
        r = run("schema")
        self.assertExit(r, 0)
        self.assertNotIn("(DeepSpeed 0.14.5)", r.out)
        r2 = run("schema", env={"DSFORGE_DS_VERSION": "0.14.5"})
        self.assertIn("(DeepSpeed 0.14.5)", json.loads(r2.out)["title"])


if __name__ == "__main__":
    unittest.main()
