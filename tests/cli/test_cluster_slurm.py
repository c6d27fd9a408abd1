"""The slurm-array emitter's files without a cluster (issue 31): shapes
(one array per nodes x GPUs x time limit), the list and array ranges,
what the submit script passes to sbatch (run by bash with a fake sbatch
that records its arguments), the scripts parsed by bash, and every value
a scheduler cannot take refused with nothing written. On a real Slurm:
test_slurm_array.py."""
import json
import os
import stat
import subprocess

import dsf
from dsf import run

FAKE_SBATCH = r"""#!/usr/bin/env bash
# records each call's arguments (one per line, a blank line after) and
# prints a job id as sbatch --parsable does
n=$(( $(grep -c '^--end--$' "$SBATCH_LOG" 2>/dev/null || true) + 100 ))
{ printf '%s\n' "$@"; echo --end--; } >>"$SBATCH_LOG"
echo "$n;cluster"
"""


class SlurmArrayFiles(dsf.TempDirTest):

    def gen(self, *args, profile="8xa100"):
        self.out = os.path.join(self.tmp, "ab")
        return run("gen", profile, "--emit", "slurm-array", "-o", self.out, *args)

    def text(self, name):
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            return f.read()

    def sbatch_lines(self, name):
        return [l[len("#SBATCH "):] for l in self.text(name).splitlines()
                if l.startswith("#SBATCH ")]

    def submit(self):
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        fake = os.path.join(bindir, "sbatch")
        with open(fake, "w") as f:
            f.write(FAKE_SBATCH)
        os.chmod(fake, stat.S_IRWXU)
        log = os.path.join(self.tmp, "sbatch.log")
        env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], SBATCH_LOG=log)
        res = subprocess.run(["bash", os.path.join(self.out, "slurm-array.submit.sh"),
                              "--qos=high"], env=env, capture_output=True, text=True,
                             cwd=self.tmp)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(log) as f:
            calls = [c.strip("\n").split("\n") for c in f.read().split("--end--\n") if c]
        return res, calls

    def test_shapes_lists_and_the_canary(self):
        res = self.gen("--tier", "small", "--matrix", "nodes=1,2",
                       "--matrix", "micro_batch_size=1,2", "--train-cmd",
                       "train.py --name 'my run'", "--canary", "--max-parallel", "3")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertIn("4 variants, 5 files (slurm-array)", res.out)
        m = json.loads(self.text("manifest.json"))
        self.assertEqual(sorted(e["file"] for e in m["emitted"]), [
            "slurm-array.1x8.list", "slurm-array.1x8.sbatch",
            "slurm-array.2x8.list", "slurm-array.2x8.sbatch", "slurm-array.submit.sh"])
        one = self.sbatch_lines("slurm-array.1x8.sbatch")
        self.assertIn("--array=0-1%3", one)
        self.assertIn("--nodes=1", one)
        self.assertIn("--gpus-per-node=8", one)
        self.assertIn("--nodes=2", self.sbatch_lines("slurm-array.2x8.sbatch"))
        # task i is line i+1: name, file, sha256, Trainer words
        by_name = {v["name"]: v for v in m["variants"]}
        for shape, names in (("1x8", ["small.nodes-1.micro_batch_size-1",
                                      "small.nodes-1.micro_batch_size-2"]),
                             ("2x8", ["small.nodes-2.micro_batch_size-1",
                                      "small.nodes-2.micro_batch_size-2"])):
            rows = [l.split("\t") for l in self.text("slurm-array.%s.list" % shape).splitlines()]
            self.assertEqual([r[0] for r in rows], names)
            for r in rows:
                v = by_name[r[0]]
                self.assertEqual(r[1], "8xa100-%s.json" % r[0])
                self.assertEqual(r[2], v["sha256"])
                i = r.index("--per_device_train_batch_size")
                self.assertEqual(r[i + 1], r[0][-1])
                self.assertNotIn("--deepspeed", r)
        for name in ("slurm-array.1x8.sbatch", "slurm-array.2x8.sbatch", "slurm-array.submit.sh"):
            check = subprocess.run(["bash", "-n", os.path.join(self.out, name)],
                                   capture_output=True, text=True)
            self.assertEqual(check.returncode, 0, check.stderr)
        self.assertIn("'my run'", self.text("slurm-array.1x8.sbatch"))
        res, calls = self.submit()
        self.assertEqual(res.stdout.split(), ["100", "101", "102"])
        # the control alone first, then the rest after it, each with the
        # caller's own options and the sweep's directory
        self.assertIn("--array=0", calls[0])
        self.assertFalse([a for a in calls[0] if a.startswith("--dependency")])
        self.assertIn("--array=1%3", calls[1])
        self.assertIn("--array=0-1%3", calls[2])
        for c in calls[1:]:
            self.assertIn("--dependency=afterok:100", c)
        for c, shape in zip(calls, ("1x8", "1x8", "2x8")):
            self.assertEqual(c[-1], os.path.join(self.out, "slurm-array.%s.sbatch" % shape))
            self.assertIn("--qos=high", c)
            self.assertIn("--export=ALL,DSF_SWEEP_DIR=" + self.out, c)
        with open(os.path.join(self.out, "results", "slurm-jobs.tsv")) as f:
            self.assertEqual(f.read(), "1x8\t100\t0\n1x8\t101\t1%3\n2x8\t102\t0-1%3\n")

    def test_without_the_canary_every_array_at_once(self):
        res = self.gen("--train-cmd", "t.py", "--emit-opt", "partition=gpu",
                       "--emit-opt", "sbatch=--exclusive --mail-type=END",
                       "--param", "slurm_time=2:00:00")
        self.assertEqual(res.rc, 0, repr(res))
        lines = self.sbatch_lines("slurm-array.1x8.t2.00.00.sbatch")
        for want in ("--array=0-2", "--time=2:00:00", "--partition=gpu", "--exclusive",
                     "--mail-type=END"):
            self.assertIn(want, lines)
        _, calls = self.submit()
        self.assertEqual(len(calls), 1)
        self.assertIn("--array=0-2", calls[0])

    def test_same_inputs_same_bytes(self):
        args = ("--matrix", "zero_stage=2,3", "--train-cmd", "t.py", "--canary")
        self.assertEqual(self.gen(*args).rc, 0)
        first = {n: self.text(n) for n in os.listdir(self.out)}
        self.assertEqual(self.gen(*args).rc, 0)
        self.assertEqual(first, {n: self.text(n) for n in os.listdir(self.out)})

    def test_what_a_scheduler_cannot_take(self):
        cases = [
            ((), "needs the training command"),
            (("--emit-opt", "max_parallel=x"), "max_parallel must be an integer"),
            (("--emit-opt", "canary=maybe"), "canary must be true or false"),
            (("--emit-opt", "time=-5"), "time must be a Slurm time limit"),
            (("--emit-opt", "partition=a b"), "partition must be made of"),
            (("--emit-opt", "account=x\ny"), "account must be made of"),
            (("--emit-opt", "sbatch=rm -rf /"), "sbatch options are long options"),
            (("--emit-opt", "launcher=deepspeed"), "launcher must be torchrun"),
            (("--emit-opt", "job_name=a;b"), "job_name must be made of"),
            (("--param", "slurm_time=-1"), "param 'slurm_time' = "),
            (("--param", "slurm_partition=a b"), "param 'slurm_partition' = "),
        ]
        for args, msg in cases:
            with self.subTest(args=args):
                train = () if msg.startswith("needs") else ("--train-cmd", "t.py")
                res = self.gen(*(train + args))
                self.assertIn(res.rc, (2, 3), repr(res))
                self.assertIn(msg, res.err)
                self.assertNotIn("a bug in the plugin", res.err)
                self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    import unittest
    unittest.main()
