"""dsforge schema: a valid draft 2020-12 JSON Schema that an independent
validator (Debian's python3-jsonschema under /usr/bin/python3) agrees with:
it accepts the real-world configs and the built-in profiles' outputs and
rejects the mistakes DeepSpeed rejects."""
import json
import os
import subprocess
import textwrap
import unittest

import dsf
from dsf import run, shared

SYSTEM_PYTHON = "/usr/bin/python3"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# Runs in the system interpreter: checks the schema against the draft's
# metaschema, then validates each instance file. Prints a JSON object
# {"instances": {path: [[json path, message], ...]}}.
VALIDATOR = textwrap.dedent("""\
    import json, sys
    from jsonschema import Draft202012Validator
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    v = Draft202012Validator(schema)
    out = {}
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        out[path] = [[[str(p) for p in e.absolute_path], e.message]
                     for e in v.iter_errors(doc)]
    print(json.dumps({"instances": out}))
    """)


def system_jsonschema():
    """True when /usr/bin/python3 can import jsonschema."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return False
    try:
        p = subprocess.run([SYSTEM_PYTHON, "-c", "import jsonschema"],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0


HAVE_JSONSCHEMA = system_jsonschema()
REALWORLD = shared("realworld-configs")


class SchemaOutput(dsf.TempDirTest):
    def schema(self):
        res = run("schema")
        self.assertExit(res, 0)
        return res.out, json.loads(res.out)

    def test_is_a_draft_2020_12_schema_of_the_config(self):
        _, s = self.schema()
        self.assertEqual(s["$schema"], DRAFT)
        self.assertEqual(s["type"], "object")
        props = s["properties"]
        for key in ("train_batch_size", "train_micro_batch_size_per_gpu",
                    "gradient_accumulation_steps", "zero_optimization",
                    "fp16", "bf16", "optimizer", "scheduler"):
            self.assertIn(key, props)
        zero = props["zero_optimization"]
        # a pydantic section: unknown keys are rejected
        self.assertIs(zero["additionalProperties"], False)
        for key in ("stage", "offload_param", "offload_optimizer",
                    "stage3_prefetch_bucket_size", "prefetch_bucket_size"):
            self.assertIn(key, zero["properties"])
        # DeepSpeed's code default, not the docs' 5e8
        self.assertEqual(
            zero["properties"]["stage3_prefetch_bucket_size"]["default"],
            50000000)

    def test_is_deterministic(self):
        first, _ = self.schema()
        second, _ = self.schema()
        self.assertEqual(first, second)

    def test_takes_no_arguments(self):
        self.assertExit(run("schema", "extra"), 2)
        res = run("schema", "--help")
        self.assertExit(res, 0)
        self.assertIn("2020-12", res.out)


@unittest.skipUnless(HAVE_JSONSCHEMA,
                     "python3-jsonschema is not importable by /usr/bin/python3")
class IndependentValidator(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        res = run("schema")
        self.assertExit(res, 0)
        self.schema_path = self.write("schema.json", res.out)
        self.script = self.write("validate.py", VALIDATOR)

    def validate(self, paths):
        """{path: [errors]} from the system jsonschema."""
        p = subprocess.run([SYSTEM_PYTHON, self.script, self.schema_path] +
                           list(paths), capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)["instances"]

    def validate_docs(self, docs):
        """Validates {name: JSON text}; returns {name: [errors]}."""
        paths = {self.write(os.path.join("docs", n + ".json"), t): n
                 for n, t in docs.items()}
        return {paths[p]: e for p, e in self.validate(paths).items()}

    @unittest.skipUnless(REALWORLD, "../shared/realworld-configs absent")
    def test_accepts_every_realworld_config(self):
        paths = sorted(os.path.join(REALWORLD, n)
                       for n in os.listdir(REALWORLD) if n.endswith(".json"))
        self.assertTrue(paths)
        for path, errors in self.validate(paths).items():
            with self.subTest(config=os.path.basename(path)):
                self.assertEqual(errors, [])

    def test_accepts_builtin_profile_outputs(self):
        files = []
        for target in ("hf", "deepspeed"):
            for prof in dsf.BUILTIN_PROFILES:
                out = os.path.join(self.tmp, target, prof)
                res = run("gen", prof, "--target", target, "-o", out)
                self.assertExit(res, 0)
                with open(os.path.join(out, "manifest.json")) as f:
                    manifest = json.load(f)
                files += [os.path.join(out, v["file"])
                          for v in manifest["variants"]]
        self.assertEqual(len(files), 2 * len(dsf.BUILTIN_PROFILES) *
                         len(dsf.TIERS))
        for path, errors in self.validate(files).items():
            with self.subTest(output=os.path.relpath(path, self.tmp)):
                self.assertEqual(errors, [])

    def test_rejects_what_deepspeed_rejects(self):
        bad = {
            "zero-typo": '{"zero_optimization": {"stage": 2, '
                         '"overlap_com": true}}',
            "stage-auto": '{"zero_optimization": {"stage": "auto"}}',
            "float-prefetch": '{"zero_optimization": {"stage": 3, '
                              '"stage3_prefetch_bucket_size": 15099494.4}}',
            "upper-cpu": '{"zero_optimization": {"stage": 3, '
                         '"offload_param": {"device": "CPU"}}}',
            "string-5e8": '{"zero_optimization": {"reduce_bucket_size": '
                          '"5e8"}}',
            "stage-4": '{"zero_optimization": {"stage": 4}}',
            "fp16-typo": '{"fp16": {"enabled": true, "loss_scal": 0}}',
            "alias-and-field": '{"zero_optimization": {"stage": 3, '
                               '"stage3_prefetch_bucket_size": 1, '
                               '"prefetch_bucket_size": 2}}',
        }
        where = {
            "zero-typo": ["zero_optimization"],
            "stage-auto": ["zero_optimization", "stage"],
            "float-prefetch": ["zero_optimization",
                               "stage3_prefetch_bucket_size"],
            "upper-cpu": ["zero_optimization", "offload_param", "device"],
            "string-5e8": ["zero_optimization", "reduce_bucket_size"],
            "stage-4": ["zero_optimization", "stage"],
            "fp16-typo": ["fp16"],
            "alias-and-field": ["zero_optimization"],
        }
        for name, errors in self.validate_docs(bad).items():
            with self.subTest(case=name):
                self.assertTrue(errors, "%s was accepted" % name)
                self.assertIn(where[name], [e[0] for e in errors])
        # the typo is named in the message
        errs = self.validate_docs({"t": bad["zero-typo"]})["t"]
        self.assertIn("overlap_com", " ".join(e[1] for e in errs))

    def test_accepts_what_deepspeed_accepts(self):
        good = {
            "5e8": '{"zero_optimization": {"stage": 2, '
                   '"reduce_bucket_size": 5e8, "allgather_bucket_size": 2e8}}',
            "lower-cpu": '{"zero_optimization": {"stage": 3, '
                         '"offload_param": {"device": "cpu"}, '
                         '"offload_optimizer": {"device": "nvme"}}}',
            "integral-prefetch": '{"zero_optimization": {"stage": 3, '
                                 '"stage3_prefetch_bucket_size": 15099494}}',
            "hf-auto": '{"train_batch_size": "auto", '
                       '"train_micro_batch_size_per_gpu": "auto", '
                       '"gradient_accumulation_steps": "auto", '
                       '"gradient_clipping": "auto", '
                       '"zero_optimization": {"stage": 3, '
                       '"reduce_bucket_size": "auto", '
                       '"stage3_prefetch_bucket_size": "auto"}}',
            # DeepSpeed ignores unknown top-level keys
            "top-level-extra": '{"train_batch_size": 8, "min_lr": 5e-7}',
        }
        for name, errors in self.validate_docs(good).items():
            with self.subTest(case=name):
                self.assertEqual(errors, [])

    def test_auto_only_where_hugging_face_fills_it(self):
        errors = self.validate_docs(
            {"spp": '{"steps_per_print": "auto"}'})["spp"]
        self.assertIn(["steps_per_print"], [e[0] for e in errors])


if __name__ == "__main__":
    unittest.main()
