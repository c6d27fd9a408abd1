"""gen --matrix over config paths and --matrix-file over override files:
variant names, layers, provenance (--why), the manifest, bad input."""
import json
import os
import subprocess
import sys
import unittest

import dsf
from dsf import run
from test_diff import leaves


class Sweep(dsf.TempDirTest):
    def gen(self, *args, code=0):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "-o", out, *args)
        self.assertExit(res, code)
        if code:
            self.assertFalse(os.path.exists(out))
            return res
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        docs = {}
        for v in manifest["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                docs[v["name"]] = json.load(f)
        return manifest, docs

    def test_a_config_path_sweep_differs_only_there(self):
        manifest, docs = self.gen("--tier", "medium", "--matrix",
                                  "zero_optimization.overlap_comm=true,false")
        self.assertEqual(list(docs), ["medium.overlap_comm-true",
                                      "medium.overlap_comm-false"])
        a = leaves(docs["medium.overlap_comm-true"])
        b = leaves(docs["medium.overlap_comm-false"])
        self.assertEqual([p for p in sorted(set(a) | set(b))
                          if a.get(p) != b.get(p)],
                         ["zero_optimization.overlap_comm"])
        self.assertIs(a["zero_optimization.overlap_comm"], True)
        self.assertIs(b["zero_optimization.overlap_comm"], False)
        self.assertEqual(manifest["matrix"],
                         {"zero_optimization.overlap_comm": ["true", "false"]})
        # The manifest knows the control (the first variant).
        self.assertEqual(manifest["control"], "medium.overlap_comm-true")
        self.assertEqual([v["differs_from_control"] for v in manifest["variants"]],
                         [[], ["zero_optimization.overlap_comm"]])
        # dsforge diff agrees, on the output directory itself.
        out = os.path.join(self.tmp, "out")
        res = run("diff", out + ":medium.overlap_comm-true",
                  out + ":medium.overlap_comm-false", "--format", "json")
        self.assertExit(res, 1)
        self.assertEqual([d["path"] for d in res.json()["differences"]],
                         ["zero_optimization.overlap_comm"])
        # The manifest's findings give the consequences of an output's
        # variants too.
        cons = res.json()["consequences"]
        self.assertEqual([f["rule"] for f in cons["findings_added"]],
                         ["overlap-comm-off"])
        self.assertEqual(cons["findings_removed"], [])

    def test_manifest_lists_what_differs_from_the_control(self):
        manifest, docs = self.gen()
        self.assertEqual(manifest["control"], "small")
        control = leaves(docs["small"])
        for v in manifest["variants"]:
            other = leaves(docs[v["name"]])
            want = sorted(p for p in set(control) | set(other)
                          if control.get(p) != other.get(p))
            self.assertEqual(sorted(v["differs_from_control"]), want, v["name"])
        self.assertEqual(manifest["variants"][2]["differs_from_control"],
                         ["gradient_accumulation_steps", "train_batch_size",
                          "train_micro_batch_size_per_gpu"])

    def test_path_and_param_axes_combine(self):
        _, docs = self.gen("--tier", "small", "--matrix", "micro_batch_size=1,2",
                           "--matrix", "optimizer.params.lr=1e-4,3e-4")
        self.assertEqual(sorted(docs), sorted([
            "small.micro_batch_size-1.lr-1e-4", "small.micro_batch_size-1.lr-3e-4",
            "small.micro_batch_size-2.lr-1e-4", "small.micro_batch_size-2.lr-3e-4"]))
        self.assertEqual(docs["small.micro_batch_size-2.lr-3e-4"]
                         ["train_micro_batch_size_per_gpu"], 2)
        self.assertEqual(docs["small.micro_batch_size-2.lr-3e-4"]
                         ["optimizer"]["params"]["lr"], 3e-4)

    def test_the_sweep_wins_over_edits_and_why_names_it(self):
        _, docs = self.gen("--tier", "small", "steps_per_print=7", "--matrix",
                           "steps_per_print=10,20")
        self.assertEqual([d["steps_per_print"] for d in docs.values()], [10, 20])
        res = run("gen", "8xa100", "--tier", "small", "--matrix",
                  "steps_per_print=10,20", "--why", "steps_per_print")
        self.assertExit(res, 0)
        self.assertIn("sweep    override  --matrix steps_per_print=20 "
                      "(argument #5) = 20", res.out)

    def test_same_last_key_on_two_axes_uses_the_whole_path(self):
        _, docs = self.gen("--tier", "small", "--matrix", "bf16.enabled=true",
                           "--matrix", "fp16.enabled=false")
        self.assertEqual(list(docs), ["small.bf16_enabled-true.fp16_enabled-false"])

    def test_override_files_sweep_named_by_stem(self):
        fast = self.write("conf/fast.json", '{"steps_per_print": 50}')
        slow = self.write("conf/slow.v2.json",
                          '{\n  "steps_per_print": 500,\n  "wall_clock_breakdown": true\n}')
        manifest, docs = self.gen("--tier", "small", "--matrix-file",
                                  "%s,%s" % (fast, slow))
        self.assertEqual(list(docs), ["small.fast", "small.slow_v2"])
        self.assertEqual(docs["small.fast"]["steps_per_print"], 50)
        self.assertEqual(docs["small.slow_v2"]["steps_per_print"], 500)
        self.assertIs(docs["small.slow_v2"]["wall_clock_breakdown"], True)
        mf, = manifest["matrix_files"]
        self.assertEqual([f["path"] for f in mf], [fast, slow])
        self.assertTrue(all(len(f["sha256"]) == 64 for f in mf))
        res = run("gen", "8xa100", "--tier", "small", "--matrix-file",
                  "%s,%s" % (fast, slow), "--why", "steps_per_print")
        self.assertExit(res, 0)
        self.assertIn("file     override  --matrix-file %s (%s:2:3) = 500"
                      % (slow, slow), res.out)

    def test_bad_sweeps(self):
        res = self.gen("--matrix", "micro_batch_sise=1,2", code=2)
        self.assertIn("unknown param 'micro_batch_sise'", res.err)
        res = self.gen("--matrix", "a..b=1,2", code=2)
        self.assertIn("argument #", res.err)
        res = self.gen("--matrix", "train_batch_size.x=1", code=2)
        self.assertIn("variant small", res.err)
        res = self.gen("--matrix-file", os.path.join(self.tmp, "none.json"),
                       code=3)
        self.assertIn("none.json", res.err)
        bad = self.write("bad.json", "[1]")
        res = self.gen("--matrix-file", bad, code=3)
        self.assertIn("must hold a JSON object", res.err)



# One dsforge run in a fresh interpreter, so earlier children's peak
# resident size does not count: prints "rc maxrss_kib".
PEAK = r"""
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
sys.stderr.buffer.write(p.stderr)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

AXES = ["--tier", "medium",
        "--matrix", "micro_batch_size=1,2,3,4,5,6,7,8,9,10",
        "--matrix", "gradient_accumulation=1,2,4,8,16,32,64,128,256,512"]


@unittest.skipIf("ASAN_OPTIONS" in os.environ,
                 "a sanitizer keeps freed memory in quarantine")
class FlatMemory(dsf.TempDirTest):
    """Each variant is written as it finishes and dropped: a sweep's peak
    memory does not grow with its number of variants (it held ~20 KiB a
    variant when every variant was kept until the end)."""

    def peak_kib(self, *extra):
        out = os.path.join(self.tmp, "out-%d" % len(extra))
        cmd = [sys.executable, "-c", PEAK, dsf.DSFORGE, "gen", "8xa100",
               *AXES, *extra, "-o", out]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        rc, kib = p.stdout.split()
        self.assertEqual(int(rc), 0, p.stderr[-2000:])
        return int(kib)

    def test_ten_times_the_variants_in_about_the_same_memory(self):
        small = self.peak_kib()  # 100 variants
        big = self.peak_kib("--matrix", "seq_len=512,768,1024,1536,2048,"
                                        "2560,3072,4096,6144,8192")
        # 900 more variants: names, summary cells and staged file names
        # remain (well under 4 KiB each), not their documents
        self.assertLess(big - small, 900 * 4, (small, big))


if __name__ == "__main__":
    unittest.main()
