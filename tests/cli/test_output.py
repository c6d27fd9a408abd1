"""gen -o DIR: one directory holding several profiles' outputs (a merged
manifest.json), and concurrent runs into one directory (a lock on DIR:
the directory always holds complete outputs matching the manifest)."""
import hashlib
import json
import os
import subprocess
import unittest

import dsf
from dsf import run


def manifest(out):
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


class OutputDir(dsf.TempDirTest):
    def assertConsistent(self, out):
        """Every variant of the manifest is on disk with its sha256."""
        m = manifest(out)
        for v in m["variants"]:
            with open(os.path.join(out, v["file"]), "rb") as f:
                self.assertEqual(v["sha256"],
                                 hashlib.sha256(f.read()).hexdigest(),
                                 v["file"])
            self.assertIn(v["profile"], m["profiles"])
        return m

    def test_two_profiles_share_one_directory(self):
        out = os.path.join(self.tmp, "d")
        self.assertExit(run("gen", "8xa100", "-o", out), 0)
        self.assertExit(run("gen", "base", "--tier", "small", "-o", out), 0)
        m = self.assertConsistent(out)
        self.assertEqual([(v["profile"], v["name"]) for v in m["variants"]],
                         [("8xa100", "small"), ("8xa100", "medium"),
                          ("8xa100", "large"), ("base", "small")])
        self.assertEqual(sorted(m["profiles"]), ["8xa100", "base"])
        self.assertEqual([c["name"] for c in
                          m["profiles"]["8xa100"]["chain"]],
                         ["base", "8xa100"])
        # the top-level fields describe the latest run
        self.assertEqual(m["profile"], "base")
        # a profile's new run replaces that profile's entries only
        self.assertExit(run("gen", "8xa100", "--tier", "large", "-o", out), 0)
        m = self.assertConsistent(out)
        self.assertEqual([(v["profile"], v["name"]) for v in m["variants"]],
                         [("8xa100", "large"), ("base", "small")])
        # the same inputs again: no byte changes
        before = self.listing(out)
        self.assertExit(run("gen", "8xa100", "--tier", "large", "-o", out), 0)
        self.assertEqual(self.listing(out), before)

    def test_a_foreign_manifest_is_left_alone(self):
        out = os.path.join(self.tmp, "d")
        path = self.write("d/manifest.json", '{"mine": true}\n')
        res = run("gen", "8xa100", "-o", out)
        self.assertExit(res, 3)
        self.assertIn("%s: error: not a dsforge manifest" % path, res.err)
        self.assertEqual(sorted(os.listdir(out)), ["manifest.json"])

    def test_concurrent_gens_into_one_directory(self):
        # Several gen processes with different inputs (and profiles) into
        # one directory, many times: every run succeeds and the directory
        # holds complete files matching manifest.json, with every profile's
        # latest run listed.
        out = os.path.join(self.tmp, "d")
        jobs = [("8xa100", "steps_per_print=%d"), ("8xa100",
                 "wall_clock_breakdown=true", ),
                ("base", "steps_per_print=%d"),
                ("high-performance", "steps_per_print=%d")]
        for rnd in range(12):
            procs = []
            for k, (prof, edit) in enumerate(jobs):
                e = edit % (100 + rnd * 10 + k) if "%d" in edit else edit
                procs.append(subprocess.Popen(
                    [dsf.DSFORGE, "gen", prof, e, "-o", out],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            for p in procs:
                _, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
            m = self.assertConsistent(out)
            self.assertEqual(sorted(m["profiles"]),
                             ["8xa100", "base", "high-performance"])
            self.assertEqual(len(m["variants"]), 9)
            tmp = [f for f in os.listdir(out) if not f.endswith(".json")]
            self.assertEqual(tmp, [], "temporary files left behind")


if __name__ == "__main__":
    unittest.main()
