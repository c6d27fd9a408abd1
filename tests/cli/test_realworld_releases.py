"""Zero false errors on every real-world config (../shared/realworld-configs,
skipped when absent) at every covered DeepSpeed release and both targets
(issue 28).

The releases are every one contrib/dsknow/releases.txt lists, every one
the plugin itself uses (plugins/deepspeed/dsdata/releases.lua) and the one its
hand-written schema describes (schema.lua's deepspeed_version, DeepSpeed's
master, checked with the newest facts); the test fails when the first two
lists differ, so a release added to one is replayed here too.

--target hf: the Hugging Face Trainer fills "auto" on the keys it owns
before DeepSpeed reads the file, so every one of these configs (written for
the Trainer by LLaMA-Factory, axolotl and LLaVA) is accepted by DeepSpeed
after the fill at every release: any error is false.

--target deepspeed: the file goes to deepspeed.initialize as it is, with
the literal string "auto" in it. What plain DeepSpeed does with it is a
fact of DeepSpeed, recorded in tests/conformance (verdicts.json: its config
parser per release; engine.json: the engine's start-up and first step, with
the DeepSpeed source line). The decision: an error at --target deepspeed is
not false when DeepSpeed really fails on the same "auto" values, that is
when it is about an "auto" of the file (the finding's path holds "auto", or
for precision-conflict one of the two flags does) and the recorded corpus
has a config made only of this file's "auto" values (that path among them),
other values of this file and valid batch sizes, and that DeepSpeed rejects
at the recorded releases on both sides of the release checked (the nearest
recorded one at or before it and the nearest at or after it, or the newest
recorded one beyond it, so a check DeepSpeed added or dropped between them
grounds nothing). Any other error is false. So the batch keys' "auto"
(TypeError in DeepSpeed's batch assertion) is a true error at every release,
and fp16.enabled and bf16.enabled both "auto" are a true precision-conflict
up to 0.16.9 (both read with dict.get: the string is true, and DeepSpeed
asserts 'bfloat16 and fp16 modes cannot be simultaneously enabled') but
would be false from 0.17.6 on (the pydantic models drop "auto": false).
"""
import json
import os
import re
import subprocess
import unittest

import dsf
from dsf import shared

REALWORLD = shared("realworld-configs")
CONFORMANCE = os.path.join(dsf.SOURCE_DIR, "tests", "conformance")
RELEASES_TXT = os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow", "releases.txt")
INDEX = os.path.join(dsf.SOURCE_DIR, "plugins", "deepspeed", "dsdata", "releases.lua")
SCHEMA = os.path.join(dsf.SOURCE_DIR, "plugins", "deepspeed", "schema.lua")
VERSION = re.compile(r"^v?([0-9]+\.[0-9]+\.[0-9]+)$")


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def listed_releases():
    """The tagged releases of releases.txt (a branch name there is not one)."""
    with open(RELEASES_TXT, encoding="utf-8") as f:
        return [m.group(1) for m in (VERSION.match(ln.strip()) for ln in f) if m]


def plugin_releases():
    with open(INDEX, encoding="utf-8") as f:
        return re.findall(r'\{ version = "([0-9.]+)"', f.read())


def schema_release():
    with open(SCHEMA, encoding="utf-8") as f:
        return re.search(r'deepspeed_version = "([0-9.]+)"', f.read()).group(1)


def covered():
    return sorted(set(listed_releases()) | set(plugin_releases()) | {schema_release()},
                  key=vkey)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def auto_paths(doc, prefix=""):
    """The paths holding "auto", written as check's findings write them
    (keys joined by ".", list indices 0-based as "[i]")."""
    out = set()
    if doc == "auto":
        out.add(prefix)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            out |= auto_paths(v, prefix + "." + k if prefix else k)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out |= auto_paths(v, "%s[%d]" % (prefix, i))
    return out


def leaves(doc, prefix=""):
    """{path: value} of the scalars (and empty containers) below doc."""
    if isinstance(doc, dict) and doc:
        out = {}
        for k, v in doc.items():
            out.update(leaves(v, prefix + "." + k if prefix else k))
        return out
    if isinstance(doc, list) and doc:
        out = {}
        for i, v in enumerate(doc):
            out.update(leaves(v, "%s[%d]" % (prefix, i)))
        return out
    return {prefix: json.dumps(doc, sort_keys=True)}


# The batch sizes every corpus file carries so that DeepSpeed gets past its
# batch assertion (positive integers, checked at world size 8)
SCAFFOLD = ("train_batch_size", "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps")


def scaffold(path, value):
    v = json.loads(value)
    return path in SCAFFOLD and isinstance(v, int) and not isinstance(v, bool) and v > 0


def recorded_corpus():
    """[(auto paths, {path: value} of its other leaves, {release: verdict})]
    of the conformance corpus files that hold "auto", engine verdicts taking
    over as test_conformance does; and the recorded releases."""
    verdicts = load_json(os.path.join(CONFORMANCE, "verdicts.json"))
    files = verdicts["files"]
    for name, eng in load_json(os.path.join(CONFORMANCE, "engine.json")).items():
        for release in eng["source"]:
            files[name][release] = {"verdict": eng["verdict"]}
    corpus = []
    for name, per_release in sorted(files.items()):
        try:
            doc = load_json(os.path.join(CONFORMANCE, "configs", name))
        except ValueError:  # an hjson or broken file of the corpus: grounds nothing
            continue
        autos = auto_paths(doc)
        if autos:
            rest = {p: v for p, v in leaves(doc).items() if p not in autos}
            corpus.append((autos, rest, {r: v["verdict"] for r, v in per_release.items()}))
    return corpus, sorted(verdicts["releases"], key=vkey)


@unittest.skipUnless(REALWORLD, "../shared/realworld-configs absent")
class RealWorldEveryRelease(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.names = sorted(n for n in os.listdir(REALWORLD) if n.endswith(".json"))
        cls.docs = {n: load_json(os.path.join(REALWORLD, n)) for n in cls.names}

    def findings(self, release, target):
        p = subprocess.run([dsf.DSFORGE, "check", "--format", "json", "--target",
                            target, "--ds-version", release] + self.names,
                           cwd=REALWORLD, capture_output=True, text=True,
                           timeout=300, stdin=subprocess.DEVNULL)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return json.loads(p.stdout)

    def test_release_lists_agree(self):
        self.assertEqual(listed_releases(), plugin_releases())
        self.assertGreaterEqual(len(covered()), 9)

    def test_target_hf_no_error_at_any_release(self):
        self.assertTrue(self.names)
        for release in covered():
            errors = ["%s: %s [%s]" % (f["file"], f["message"], f.get("rule"))
                      for f in self.findings(release, "hf") if f["severity"] == "error"]
            with self.subTest(release=release):
                self.assertEqual(errors, [])

    def grounded(self, f, corpus, lo, hi):
        autos = auto_paths(self.docs[f["file"]])
        mine = leaves(self.docs[f["file"]])
        if f.get("rule") == "precision-conflict":
            # about the pair of flags: one of them has to be "auto"
            paths = autos & {"fp16.enabled", "bf16.enabled", "bfloat16.enabled"}
        else:
            paths = {f["path"]} & autos
        for p in paths:
            for c_autos, rest, verdicts in corpus:
                # the recorded config is made of this file's "auto" values,
                # other values of this file and the batch scaffold only
                if p in c_autos and c_autos <= autos \
                        and all(mine.get(k) == v or scaffold(k, v) for k, v in rest.items()) \
                        and verdicts.get(lo) == "reject" and verdicts.get(hi) == "reject":
                    return True
        return False

    def test_target_deepspeed_only_errors_deepspeed_raises_too(self):
        corpus, recorded = recorded_corpus()
        grounded_seen = 0
        for release in covered():
            lo = max((r for r in recorded if vkey(r) <= vkey(release)), key=vkey, default=None)
            hi = min((r for r in recorded if vkey(r) >= vkey(release)), key=vkey,
                     default=recorded[-1])
            false = []
            for f in self.findings(release, "deepspeed"):
                if f["severity"] != "error":
                    continue
                if lo and hi and self.grounded(f, corpus, lo, hi):
                    grounded_seen += 1
                else:
                    false.append("%s: %s [%s]" % (f["file"], f["message"], f.get("rule")))
            with self.subTest(release=release):
                self.assertEqual(false, [])
        # the literal "auto" batch sizes of these files are true errors
        self.assertGreater(grounded_seen, 0)


class TrainerFillPerReleaseAndTarget(dsf.TempDirTest):
    """The Trainer's "auto" fill of the precision flags, without the shared
    configs: the same file at every release, both targets."""

    def conflicts(self, cfg, release, target):
        path = self.write("c.json", json.dumps(cfg))
        r = dsf.run("check", "--format", "json", "--target", target,
                    "--ds-version", release, path)
        self.assertIn(r.rc, (0, 1), r)
        return [f for f in r.json() if f.get("rule") == "precision-conflict"]

    def test_both_auto(self):
        cfg = {"train_micro_batch_size_per_gpu": 1,
               "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}
        for release in covered():
            with self.subTest(release=release):
                # the Trainer fills both, never both true
                self.assertEqual(self.conflicts(cfg, release, "hf"), [])
                # plain DeepSpeed: true strings up to 0.16.9 (dict.get),
                # dropped by the pydantic models from 0.17.6
                found = self.conflicts(cfg, release, "deepspeed")
                self.assertEqual(len(found), 1 if vkey(release) <= (0, 16, 9) else 0, found)

    def test_an_auto_the_trainer_does_not_fill_stays_a_string(self):
        # the Trainer fills bf16.enabled, not the old name bfloat16.enabled
        cfg = {"train_micro_batch_size_per_gpu": 1,
               "fp16": {"enabled": True}, "bfloat16": {"enabled": "auto"}}
        self.assertEqual(len(self.conflicts(cfg, "0.16.9", "hf")), 1)
        self.assertEqual(self.conflicts(cfg, "0.17.6", "hf"), [])


if __name__ == "__main__":
    unittest.main()
