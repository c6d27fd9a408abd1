"""dsforge schema --draft 07: the schema editors read (issue 34), with
VS Code's annotations, per release; the SchemaStore files in
contrib/schemastore/ are what the command prints; check accepts a
top-level "$schema". (tests/editor/ runs it in VS Code's own JSON language
service.)"""
import json
import os
import subprocess
import textwrap
import unittest

import dsf
from dsf import run, shared
from test_schema import HAVE_JSONSCHEMA, SYSTEM_PYTHON

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
SCHEMASTORE = os.path.join(dsf.SOURCE_DIR, "contrib", "schemastore")
COVERED = ["0.14.5", "0.15.4", "0.16.5", "0.16.9", "0.17.6", "0.18.9",
           "0.19.2", "0.19.5"]

# Runs in the system interpreter: checks the schema against the draft-07
# metaschema, then validates each instance ({name: document}) given as
# JSON on stdin. Prints {name: [messages]}.
VALIDATOR = textwrap.dedent("""\
    import json, sys
    from jsonschema import Draft7Validator
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    Draft7Validator.check_schema(schema)
    v = Draft7Validator(schema)
    docs = json.load(sys.stdin)
    print(json.dumps({n: [e.message for e in v.iter_errors(d)]
                      for n, d in docs.items()}))
    """)


def schema07(*args):
    res = run("schema", "--draft", "07", *args)
    if res.rc != 0:
        raise AssertionError(repr(res))
    return res.out, json.loads(res.out)


def nodes(s):
    """Every dict in the schema document."""
    if isinstance(s, dict):
        yield s
        for v in s.values():
            yield from nodes(v)
    elif isinstance(s, list):
        for v in s:
            yield from nodes(v)


class Draft07Output(unittest.TestCase):
    def test_header_and_no_later_keywords(self):
        _, s = schema07()
        self.assertEqual(s["$schema"], DRAFT_07)
        self.assertEqual(s["$id"], "https://json.schemastore.org/deepspeed.json")
        # "deprecated" is a 2019-09 keyword: draft 07 says deprecationMessage
        self.assertFalse([n for n in nodes(s) if "deprecated" in n])
        # the 2020-12 default is as it was
        self.assertEqual(json.loads(run("schema").out)["$schema"],
                         "https://json-schema.org/draft/2020-12/schema")

    def test_vscode_annotations(self):
        _, s = schema07()
        zero = s["properties"]["zero_optimization"]
        stage = zero["properties"]["stage"]
        self.assertEqual(stage["enum"], [0, 1, 2, 3])
        self.assertEqual(len(stage["enumDescriptions"]), 4)
        self.assertIn("parameters", stage["enumDescriptions"][3])
        self.assertIn("Default: `0`", stage["markdownDescription"])
        dev = zero["properties"]["offload_param"]["properties"]["device"]
        self.assertEqual(dict(zip(dev["enum"], dev["enumDescriptions"]))["nvme"],
                         "Parameters on NVMe (ZeRO stage 3; needs nvme_path).")
        for key, repl in (("cpu_offload", "offload_optimizer"),
                          ("stage3_gather_fp16_weights_on_model_save",
                           "gather_16bit_weights_on_model_save")):
            msg = zero["properties"][key]["deprecationMessage"]
            self.assertTrue(msg.startswith("Deprecated: use " + repl), msg)
        self.assertIn("deprecationMessage", s["properties"]["bfloat16"])
        # an enumDescriptions entry for every enum value
        for n in nodes(s):
            if "enumDescriptions" in n:
                self.assertEqual(len(n["enumDescriptions"]), len(n["enum"]), n)
        # markdown keeps the text literal
        self.assertIn("offload\\_optimizer",
                      zero["properties"]["cpu_offload"]["markdownDescription"])
        # "$schema" is a known top-level key
        self.assertEqual(s["properties"]["$schema"]["type"], "string")

    def test_snippets_for_the_common_blocks(self):
        _, s = schema07()
        labels = {k: [sn["label"] for sn in p.get("defaultSnippets", [])]
                  for k, p in s["properties"].items()}
        self.assertEqual(labels["zero_optimization"],
                         ["ZeRO stage 2", "ZeRO stage 3",
                          "ZeRO stage 3, CPU offload"])
        self.assertEqual(labels["bf16"], ["bf16 enabled"])
        self.assertEqual(labels["optimizer"], ["AdamW"])
        self.assertEqual(labels["scheduler"], ["WarmupDecayLR"])
        self.assertEqual(
            s["properties"]["zero_optimization"]["defaultSnippets"][0]["body"]["stage"], 2)

    def test_is_deterministic_and_options_checked(self):
        self.assertEqual(schema07()[0], schema07()[0])
        res = run("schema", "--draft", "04")
        self.assertEqual(res.rc, 2, repr(res))
        self.assertIn("--draft must be '2020-12' or '07'", res.err)
        self.assertEqual(run("schema", "--draft", "2020-12").out, run("schema").out)
        res = run("schema", "--help")
        self.assertEqual(res.rc, 0)
        self.assertIn("--draft", res.out)

    def test_the_checked_in_schemastore_file_is_the_output(self):
        out, s = schema07()
        with open(os.path.join(SCHEMASTORE, "deepspeed.json"), encoding="utf-8") as f:
            self.assertEqual(
                f.read(), out,
                "contrib/schemastore/deepspeed.json is stale: regenerate it with "
                "`dsforge schema --draft 07 > contrib/schemastore/deepspeed.json`")
        with open(os.path.join(SCHEMASTORE, "catalog-entry.json"), encoding="utf-8") as f:
            entry = json.load(f)
        self.assertEqual(entry["url"], s["$id"])
        self.assertEqual(entry["fileMatch"], ["ds_config*.json", "ds_z*_config.json",
                                              "deepspeed_config*.json"])


@unittest.skipUnless(HAVE_JSONSCHEMA,
                     "python3-jsonschema is not importable by /usr/bin/python3")
class Draft07Validator(dsf.TempDirTest):
    def validate(self, schema_text, docs):
        path = self.write("schema.json", schema_text)
        script = self.write("validate.py", VALIDATOR)
        p = subprocess.run([SYSTEM_PYTHON, script, path], input=json.dumps(docs),
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_every_release_a_valid_draft_07_schema_its_snippets_fit(self):
        for version in [None] + COVERED:
            with self.subTest(release=version):
                out, s = schema07(*(["--ds-version", version] if version else []))
                docs = {}
                for key, p in s["properties"].items():
                    for sn in p.get("defaultSnippets", []):
                        docs[sn["label"]] = {key: sn["body"]}
                self.assertEqual(len(docs), 6)
                docs["wrong-type"] = {"zero_optimization": {"stage": "two"}}
                docs["with-$schema"] = {"$schema": s["$id"], "train_batch_size": 8}
                errors = self.validate(out, docs)
                self.assertTrue(errors.pop("wrong-type"))
                self.assertEqual(errors, {k: [] for k in errors})

    @unittest.skipUnless(shared("realworld-configs"),
                         "../shared/realworld-configs absent")
    def test_accepts_every_realworld_config(self):
        d = shared("realworld-configs")
        docs = {}
        for n in sorted(os.listdir(d)):
            if n.endswith(".json"):
                with open(os.path.join(d, n), encoding="utf-8") as f:
                    docs[n] = json.load(f)
        self.assertTrue(docs)
        errors = self.validate(schema07()[0], docs)
        self.assertEqual(errors, {k: [] for k in docs})


class CheckAcceptsSchemaKey(dsf.TempDirTest):
    """DeepSpeed reads the top level with dict.get, so "$schema" is ignored
    (../shared/reference/deepspeed.md section 1): no finding from check."""

    BODY = ('"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, '
            '"gradient_clipping": 1.0, "bf16": {"enabled": true}')

    def check(self, name, text, *args):
        path = self.write(name, text)
        res = run("check", "--format", "json", *args, path)
        return res, [{k: v for k, v in f.items() if k not in ("file", "line", "col")}
                     for f in json.loads(res.out)]

    def test_no_finding_for_schema_key(self):
        plain, found = self.check("plain.json", "{" + self.BODY + "}")
        with_key, found_key = self.check(
            "ds_config.json",
            '{"$schema": "https://json.schemastore.org/deepspeed.json", ' + self.BODY + "}")
        self.assertEqual(found_key, found)
        self.assertEqual(with_key.rc, plain.rc)
        self.assertNotIn("unknown-key", [f["rule"] for f in found_key])

    def test_strict_does_not_fail_on_it(self):
        plain, _ = self.check("plain.json", "{" + self.BODY + "}", "--strict")
        res, found = self.check(
            "ds_config.json", '{"$schema": "x", ' + self.BODY + "}", "--strict")
        self.assertEqual(res.rc, plain.rc, repr(res))
        self.assertEqual(res.rc, 0, found)

    def test_only_at_the_top_level_and_only_that_name(self):
        _, found = self.check(
            "bad.json", '{"$schemas": "x", "zero_optimization": {"$schema": "x"}, '
            + self.BODY + "}")
        self.assertEqual(sorted((f["rule"], f["path"]) for f in found
                                if f["rule"] == "unknown-key"),
                         [("unknown-key", "$schemas"),
                          ("unknown-key", "zero_optimization.$schema")])

    def test_explain_names_it(self):
        path = self.write("ds_config.json", '{"$schema": "x", "zero_optimization": '
                          '{"$schema": 1}, ' + self.BODY + "}")
        res = run("explain", path)
        self.assertEqual(res.rc, 0, repr(res))
        lines = res.out.splitlines()
        i = lines.index('$schema = "x"  [no default]')
        self.assertIn("DeepSpeed ignores it", lines[i + 1])
        # only at the top level
        self.assertIn('zero_optimization.$schema = 1  [not a DeepSpeed key]', lines)


if __name__ == "__main__":
    unittest.main()
