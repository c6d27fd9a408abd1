"""contrib/dsknow/add-release.sh, the one command that covers a DeepSpeed
release (issue 28, documented in contrib/dsknow/README.md), and
engine_lines.py, which carries tests/conformance/engine.json over to it.

CI has no DeepSpeed: these run what needs none (the argument checks, and
engine_lines' decisions on a stand-in for DeepSpeed's source). Run on a
covered release with DeepSpeed present, add-release.sh reproduces the
committed files (contrib/dsknow/README.md)."""
import importlib.util
import os
import shutil
import subprocess
import tempfile
import unittest

import dsf

HERE = os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow")


def load_engine_lines():
    spec = importlib.util.spec_from_file_location(
        "engine_lines", os.path.join(HERE, "engine_lines.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FakeSource:
    """DeepSpeed's files per release, as lists of lines."""

    def __init__(self, files):
        self.files = files

    def lines(self, release, path):
        return self.files.get((release, path), [])

    same_line = load_engine_lines().Source.same_line


def entry(source):
    return {"code": "raise X", "exception": "X", "message": "m", "verdict": "reject",
            "source": dict(source)}


def accept(*releases):
    return {r: {"verdict": "accept"} for r in releases}


class EngineLines(unittest.TestCase):
    REL = ("0.1.0", "0.2.0", "0.3.0")

    def setUp(self):
        self.mod = load_engine_lines()
        self.src = FakeSource({
            ("0.1.0", "e.py"): ["a", "raise X", "b"],
            ("0.2.0", "e.py"): ["a", "c", "raise X", "b"],
            ("0.3.0", "e.py"): ["raise X"],
        })

    def test_between_two_releases_the_line_is_found(self):
        entries = {"f.json": entry({"0.1.0": "e.py:2", "0.3.0": "e.py:1"})}
        carried, left = self.mod.carry(entries, {"f.json": accept(*self.REL)}, "0.2.0", self.src)
        self.assertEqual(carried, [("f.json", "e.py:3")])
        self.assertEqual(entries["f.json"]["source"]["0.2.0"], "e.py:3")
        self.assertEqual(left, [])

    def test_the_newest_release_follows_the_one_before(self):
        entries = {"f.json": entry({"0.1.0": "e.py:2", "0.2.0": "e.py:3"})}
        carried, _ = self.mod.carry(entries, {"f.json": accept(*self.REL)}, "0.3.0", self.src)
        self.assertEqual(carried, [("f.json", "e.py:1")])

    def test_not_into_a_gap_not_back_not_over_a_parser_rejection(self):
        gap = entry({"0.1.0": "e.py:2"})             # stops applying after 0.1.0
        later = entry({"0.3.0": "e.py:1"})           # added for 0.3.0 only
        parsed = entry({"0.1.0": "e.py:2", "0.3.0": "e.py:1"})
        entries = {"gap.json": gap, "later.json": later, "parsed.json": parsed}
        verdicts = {"gap.json": accept(*self.REL), "later.json": accept(*self.REL),
                    "parsed.json": dict(accept(*self.REL), **{"0.2.0": {"verdict": "reject"}})}
        carried, left = self.mod.carry(entries, verdicts, "0.2.0", self.src)
        self.assertEqual((carried, left), ([], []))
        for e in entries.values():
            self.assertNotIn("0.2.0", e["source"])

    def test_not_to_the_newest_after_it_stopped_applying(self):
        # applies at 0.1.0, not at 0.2.0 (recorded): 0.3.0 does not get it
        entries = {"f.json": entry({"0.1.0": "e.py:2"})}
        carried, left = self.mod.carry(entries, {"f.json": accept(*self.REL)}, "0.3.0", self.src)
        self.assertEqual((carried, left), ([], []))

    def test_a_statement_not_found_is_left_to_the_maintainer(self):
        src = FakeSource({("0.1.0", "e.py"): ["raise X"], ("0.2.0", "e.py"): ["raise Y"]})
        entries = {"f.json": entry({"0.1.0": "e.py:1"})}
        carried, left = self.mod.carry(entries, {"f.json": accept("0.1.0", "0.2.0")}, "0.2.0", src)
        self.assertEqual(carried, [])
        self.assertEqual(len(left), 1)
        self.assertIn("is not in e.py at v0.2.0", left[0][1])


class AddRelease(unittest.TestCase):
    def run_script(self, *args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run(["sh", os.path.join(HERE, "add-release.sh")] + list(args),
                              capture_output=True, text=True, env=e, timeout=60)

    def test_needs_a_release_tag_and_the_git_directories(self):
        p = self.run_script()
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("usage: add-release.sh vX.Y.Z", p.stderr)
        p = self.run_script("v0.19.5", env={"DS_GIT": "", "HJSON_GIT": ""})
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("DS_GIT", p.stderr)

    def test_refuses_a_branch_name_and_an_unknown_tag(self):
        empty = tempfile.mkdtemp(prefix="dsknow-git-")
        self.addCleanup(shutil.rmtree, empty)
        subprocess.run(["git", "init", "-q", "--bare", empty], check=True)
        env = {"DS_GIT": empty, "HJSON_GIT": empty}
        p = self.run_script("master", env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is not a release tag vX.Y.Z", p.stderr)
        with open(os.path.join(HERE, "releases.txt"), encoding="utf-8") as f:
            before = f.read()
        p = self.run_script("v0.99.0", env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("has no tag v0.99.0", p.stderr)
        with open(os.path.join(HERE, "releases.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), before)   # nothing written before the checks


if __name__ == "__main__":
    unittest.main()
