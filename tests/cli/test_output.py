"""gen -o DIR: one directory holding several profiles' outputs (a merged
manifest.json), and concurrent runs into one directory (a lock on DIR:
the directory always holds complete outputs matching the manifest)."""
import hashlib
import json
import os
import signal
import subprocess
import time
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


    def test_a_new_directory_made_by_another_run_meanwhile(self):
        # A new directory is written as a staging directory beside it and
        # renamed into place at the end. When another run makes the
        # directory meanwhile, this run moves its files in one by one
        # under the directory's lock and merges the manifests, as if it
        # had started after the other. The slow run is stopped (SIGSTOP)
        # while its staging directory exists, so the other one finishes
        # first whatever the machine's load.
        out = os.path.join(self.tmp, "d")
        slow = subprocess.Popen(
            [dsf.DSFORGE, "gen", "8xa100", "--tier", "medium", "-j", "1",
             "--matrix", "micro_batch_size=1,2,3,4,5,6,7,8,9,10",
             "--matrix", "gradient_accumulation=1,2,4,8,16,32,64,128",
             "--matrix", "steps_per_print=" + ",".join(map(str, range(1, 26))),
             "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        staging = ".d.tmp-%d" % slow.pid
        try:
            for _ in range(6000):  # until the slow run has started writing
                if staging in os.listdir(self.tmp) or slow.poll() is not None:
                    break
                time.sleep(0.005)
            os.kill(slow.pid, signal.SIGSTOP)
            self.assertIn(staging, os.listdir(self.tmp),
                          "the slow run ended before it could be stopped")
            self.assertExit(run("gen", "base", "--tier", "small", "-o", out),
                            0)
            self.assertEqual(sorted(manifest(out)["profiles"]), ["base"])
        finally:
            os.kill(slow.pid, signal.SIGCONT)
            _, err = slow.communicate(timeout=600)
        self.assertEqual(slow.returncode, 0, err)
        m = self.assertConsistent(out)
        self.assertEqual(sorted(m["profiles"]), ["8xa100", "base"])
        self.assertEqual(len(m["variants"]), 2000 + 1)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["d"])
        names = [f for f in os.listdir(out) if ".tmp-" in f]
        self.assertEqual(names, [], "temporary files left behind")


class SummaryTable(dsf.TempDirTest):
    def table(self, *args):
        res = run("gen", *args)
        self.assertExit(res, 0)
        return res.out.splitlines()

    def test_columns_stay_aligned_with_long_variant_names(self):
        lines = self.table("8xa100", "--tier", "small", "--matrix",
                           "micro_batch_size=1,2", "--matrix",
                           "precision=bf16,fp16", "--matrix",
                           "zero_stage=2,3")
        rows = lines[:9]
        self.assertGreater(max(len(r.split()[0]) for r in rows), 28)
        # every right-aligned column ends where its header ends
        for col in ("world", "global", "gpu_gib", "cpu_gib"):
            end = rows[0].index(col) + len(col)
            for r in rows[1:]:
                self.assertEqual(r[end], " ", (col, r))
                self.assertNotEqual(r[end - 1], " ", (col, r))
        # the left-aligned ones start where their header starts
        for col in ("offload", "prec", "fits"):
            start = rows[0].index(col)
            for r in rows[1:]:
                self.assertEqual(r[start - 1], " ", (col, r))
                self.assertNotEqual(r[start], " ", (col, r))

    def test_columns_for_what_varies(self):
        head = self.table("long-sequence")[0].split()
        self.assertIn("seq", head)
        self.assertNotIn("model", head)
        head = self.table("8xa100")[0].split()
        for col in ("seq", "model", "ckpt", "gpu_gb"):
            self.assertNotIn(col, head)
        lines = self.table("small-gpu-offload")
        self.assertIn("model", lines[0].split())
        self.assertEqual([l.split()[8] for l in lines[1:4]],
                         ["llama-3.2-1b", "llama-3.2-3b", "llama-2-7b"])
        lines = self.table("8xa100", "--tier", "small", "--matrix",
                           "activation_checkpointing=true,false")
        self.assertIn("ckpt", lines[0].split())
        self.assertEqual([l.split()[8] for l in lines[1:3]], ["yes", "no"])

    def test_fits_keeps_the_planners_margin_and_says_so(self):
        # 18.65 GiB on 20 GB: under the budget but over its 90%
        res = run("gen", "8xa100", "--tier", "large", "--param",
                  "gpu_mem_gb=20")
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^large .* NO$")
        self.assertIn("fits: estimated GPU memory within 90% of gpu_mem_gb "
                      "and host memory within 90% of cpu_mem_gb "
                      "(the 10% margin the planner keeps)", res.out)
        self.assertIn("but gpu_mem_gb is 20: 18.0 GiB usable with the 10% "
                      "margin the planner keeps [memory-fit]", res.err)
        res = run("gen", "8xa100", "--tier", "large", "--param",
                  "gpu_mem_gb=21")
        self.assertRegex(res.out, r"(?m)^large .* yes$")

    def test_fits_counts_host_memory(self):
        # llama-2-13b, ZeRO-3 with optimizer and parameter offload: 1.97 GiB
        # per GPU, 327.29 GiB of host memory per node; the planner's limit
        # on 128 GiB is floor(128 GiB * 0.9)
        args = ("gen", "8xa100", "--tier", "small", "--param", "offload=all",
                "--param", "model=llama-2-13b")
        res = run(*args, "--param", "cpu_mem_gb=128")
        self.assertExit(res, 0)
        self.assertRegex(res.out, r"(?m)^small .* 1\.97 +327\.29 NO$")
        self.assertIn("needs about 327.3 GiB of host memory per node "
                      "(offloaded model states) but cpu_mem_gb is 128: "
                      "115.2 GiB usable with the 10% margin the planner "
                      "keeps [memory-fit]", res.err)
        self.assertIn("raise cpu_mem_gb", res.err)
        res = run(*args, "--param", "cpu_mem_gb=128", "--strict-fit")
        self.assertExit(res, 1)
        # 327.29 GiB within 90% of 364 GiB (327.6), not of 363 (326.7)
        res = run(*args, "--param", "cpu_mem_gb=364")
        self.assertRegex(res.out, r"(?m)^small .* yes$")
        self.assertNotIn("[memory-fit]", res.err)
        res = run(*args, "--param", "cpu_mem_gb=363")
        self.assertRegex(res.out, r"(?m)^small .* NO$")

    def test_footers(self):
        lines = self.table("8xa100", "--tier", "small")
        self.assertEqual(lines[-1], "1 variant checked; nothing written "
                         "(use -o DIR)")
        self.assertEqual(self.table("8xa100")[-1],
                         "3 variants checked; nothing written (use -o DIR)")
        out = os.path.join(self.tmp, "o")
        lines = self.table("8xa100", "--tier", "small", "-o", out)
        self.assertEqual(lines[-1], "1 variant and manifest.json in " + out)


if __name__ == "__main__":
    unittest.main()
