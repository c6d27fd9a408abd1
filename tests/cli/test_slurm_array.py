"""The slurm-array emitter on a real Slurm (issue 31): Debian's slurm-wlm
and munge, started by contrib/slurm/cluster.sh as a one-node cluster in a
temporary directory (8 CPUs, 8 placeholder GPUs), run as root.

A sweep of 8 variants goes to the cluster as one submission (bash
DIR/slurm-array.submit.sh) with --canary and --max-parallel 2; the
training command is tests/slurm/fake_train.py under a fake torchrun
(tests/slurm/torchrun), which log what real ones print. The test waits
for the jobs with a bounded timeout and checks, against the manifest and
against Slurm's own job completion log:
- every variant ran exactly once, with its own file (sha256);
- the canary (the control variant) ended before any other started;
- at most 2 ran at once;
- each results/<variant>/dsf-run.json agrees with Slurm's record of its
  array task (job id, array job and task, state and exit code), the
  out-of-memory and failed variants included.

Skipped without root or Slurm, except under CI=true (.ci/run installs
both), where their absence is a failure."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import dsf
from dsf import run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(ROOT, "contrib", "slurm", "cluster.sh")
STUBS = os.path.join(ROOT, "tests", "slurm")
NEEDED = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def missing():
    if os.geteuid() != 0:
        return "the one-node Slurm cluster runs as root"
    gone = [b for b in NEEDED if not shutil.which(b, path=os.environ.get(
        "PATH", "") + ":/usr/sbin:/sbin")]
    return "not installed: " + ", ".join(gone) if gone else None


def setUpModule():
    why = missing()
    if why and os.environ.get("CI") == "true":
        raise AssertionError("CI must run the Slurm test: " + why)
    if why:
        raise unittest.SkipTest(why)


class SlurmArray(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dsforge-slurm-")
        cls.cluster = os.path.join(cls.tmp, "cluster")
        env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
        res = subprocess.run(["bash", CLUSTER, "start", cls.cluster], env=env,
                             capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            subprocess.run(["bash", CLUSTER, "stop", cls.cluster], env=env)
            raise AssertionError("the cluster did not start:\n" + res.stdout + res.stderr)
        cls.env = dict(env, SLURM_CONF=os.path.join(cls.cluster, "slurm.conf"),
                       PATH=STUBS + ":" + env["PATH"])

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["bash", CLUSTER, "stop", cls.cluster], env=cls.env,
                       capture_output=True, timeout=120)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def wait_for(self, ids, timeout=240):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = subprocess.run(["squeue", "-h", "-o", "%i", "-j", ",".join(ids)],
                                 env=self.env, capture_output=True, text=True)
            # (squeue fails for ids that have left the queue altogether)
            if res.returncode != 0 or not res.stdout.strip():
                return
            time.sleep(0.5)
        subprocess.run(["squeue"], env=self.env)
        self.fail("the jobs %s did not finish within %d s" % (ids, timeout))

    def jobcomp(self):
        """Slurm's job completion log: one dict per finished job."""
        path = os.path.join(self.cluster, "jobcomp.log")
        out = []
        for line in read(path).splitlines():
            out.append(dict(re.findall(r"(\w+)=(\S*)", line)))
        return out

    def test_a_sweep_as_one_submission(self):
        sweep = os.path.join(self.tmp, "ab")
        res = run("gen", "small-gpu-offload", "--tier", "medium",
                  "--matrix", "micro_batch_size=1,2,4,8",
                  "--matrix", "zero_stage=2,3", "--emit", "slurm-array",
                  "--train-cmd", os.path.join(STUBS, "fake_train.py") + " --run-name 'a b'",
                  "--canary", "--max-parallel", "2", "-o", sweep)
        self.assertEqual(res.rc, 0, repr(res))
        m = json.loads(read(os.path.join(sweep, "manifest.json")))
        files = {v["name"]: v for v in m["variants"]}
        self.assertEqual(len(files), 8)
        control = m["variants"][0]["name"]
        oom, failed = ("medium.micro_batch_size-8.zero_stage-2",
                       "medium.micro_batch_size-8.zero_stage-3")
        env = dict(self.env, DSF_FAKE_LOG=os.path.join(self.tmp, "runs.log"),
                   DSF_FAKE_SECONDS="1.5", DSF_FAKE_OOM=oom, DSF_FAKE_FAIL=failed)
        # submitted from elsewhere: the submit script finds its directory
        sub = subprocess.run(["bash", os.path.join(sweep, "slurm-array.submit.sh")],
                             cwd="/", env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(sub.returncode, 0, sub.stderr)
        ids = sub.stdout.split()
        self.assertEqual(len(ids), 2, sub.stdout)  # the canary, the rest
        self.wait_for(ids)

        # every variant ran exactly once, with its own file
        runs = [l.split() for l in read(env["DSF_FAKE_LOG"]).splitlines()]
        self.assertEqual(sorted(r[0] for r in runs), sorted(files))
        for name, sha, _, _ in runs:
            self.assertEqual(sha, files[name]["sha256"], name)
            data = read(os.path.join(sweep, files[name]["file"]), "rb")
            self.assertEqual(sha, hashlib.sha256(data).hexdigest())
        # the canary first, then at most 2 at once
        times = {r[0]: (float(r[2]), float(r[3])) for r in runs}
        for name, (start, _) in times.items():
            if name != control:
                self.assertGreaterEqual(start, times[control][1], name)
        events = sorted([(s, 1) for s, _ in times.values()] +
                        [(e, -1) for _, e in times.values()])
        now = peak = 0
        for _, step in events:
            now += step
            peak = max(peak, now)
        self.assertLessEqual(peak, 2)
        self.assertGreaterEqual(peak, 1)

        # results/<variant>/ against Slurm's own record
        comp = {j["JobId"]: j for j in self.jobcomp()
                if j.get("ArrayJobId") in ids}
        self.assertEqual(len(comp), 8, comp)
        for name, v in files.items():
            d = os.path.join(sweep, "results", "small-gpu-offload-" + name)
            rec = json.loads(read(os.path.join(d, "dsf-run.json")))
            self.assertEqual(rec["variant"], name)
            self.assertEqual(rec["profile"], "small-gpu-offload")
            self.assertEqual(rec["config_sha256"], v["sha256"])
            want = 1 if name == oom else 2 if name == failed else 0
            self.assertEqual(rec["exit_code"], want, name)
            job = comp[rec["job_id"]]
            self.assertEqual(job["ArrayJobId"], rec["array_job_id"])
            self.assertEqual(job["ArrayTaskId"], rec["array_task_id"])
            self.assertEqual(job["JobState"], "COMPLETED" if want == 0 else "FAILED")
            self.assertEqual(job["ExitCode"], "%d:0" % want)
            err = read(os.path.join(d, "stderr.log"))
            if name == oom:
                self.assertIn("CUDA out of memory", err)
            out = read(os.path.join(d, "stdout.log"))
            if want == 0:
                self.assertIn("[timer.py:264:stop] epoch=0/micro_step=", out)
                self.assertTrue(os.path.exists(os.path.join(d, "trainer_state.json")))
        jobs = [l.split("\t") for l in read(os.path.join(sweep, "results",
                                                        "slurm-jobs.tsv")).splitlines()]
        self.assertEqual([j[1] for j in jobs], ids)
        self.collect_and_report(sweep, files, oom, failed)

    def collect_and_report(self, sweep, files, oom, failed):
        """collect reads back what the real jobs wrote, and Slurm's job
        completion log beside it; report shows it."""
        shutil.copy(os.path.join(self.cluster, "jobcomp.log"),
                    os.path.join(sweep, "results", "slurm-jobcomp.log"))
        res = run("collect", sweep, "--best", "samples_per_sec")
        self.assertEqual(res.rc, 0, repr(res))
        recs = {r["variant"]: r for r in
                json.loads(read(os.path.join(sweep, "results.json")))["variants"]}
        self.assertEqual(sorted(recs), sorted(files))
        for name, v in files.items():
            want = "oom" if name == oom else "failed" if name == failed else "ok"
            self.assertEqual(recs[name]["status"], want, name)
            self.assertEqual(recs[name]["job"]["state"],
                             "COMPLETED" if want == "ok" else "FAILED", name)
            if want == "ok":
                micro = v["params"]["micro_batch_size"]
                # fake_train.py: RunningAvgSamplesPerSec of its last step
                self.assertEqual(recs[name]["values"]["samples_per_sec"],
                                 100.0 * micro + 10)
                self.assertEqual(recs[name]["values"]["steps"], 10)
        self.assertIn("CUDA out of memory", recs[oom]["error"])
        self.assertIn("failed on purpose", recs[failed]["error"])
        self.assertTrue(os.path.exists(os.path.join(sweep, "best.json")))
        res = run("report", sweep)
        self.assertEqual(res.rc, 0, repr(res))
        page = read(os.path.join(sweep, "report.html"))
        self.assertIn('<svg id="scatter"', page)
        self.assertEqual(page.count('<td class="ok">ok</td>'), 6)
        self.assertNotIn("<script", page)
        import test_report
        if test_report.CHROMIUM:  # the page as a browser draws it
            shot, console, err = test_report.render(self.tmp, os.path.join(
                sweep, "report.html"))
            self.assertTrue(shot, err)
            self.assertEqual(console, [])
            self.assertGreater(test_report.png_rows(shot)[0], 50)

    def test_an_array_submitted_by_hand_and_checked_by_sbatch(self):
        # The README's form: gen ... -o DIR && sbatch DIR/<array script>,
        # from the directory gen ran in; two shapes (1 and 2 GPUs).
        work = os.path.join(self.tmp, "hand")
        os.makedirs(work)
        res = run("gen", "small-gpu-offload", "--tier", "small",
                  "--matrix", "gpus_per_node=1,2", "--param", "slurm_time=5:00",
                  "--probe", "10",
                  "--emit", "slurm-array", "--train-cmd",
                  os.path.join(STUBS, "fake_train.py"), "-o", "sw", cwd=work)
        self.assertEqual(res.rc, 0, repr(res))
        scripts = sorted(f for f in os.listdir(os.path.join(work, "sw"))
                         if f.endswith(".sbatch"))
        self.assertEqual(scripts, ["slurm-array.1x1.t5.00.sbatch",
                                   "slurm-array.1x2.t5.00.sbatch"])
        env = dict(self.env, DSF_FAKE_LOG=os.path.join(self.tmp, "hand.log"),
                   DSF_FAKE_SECONDS="0.2")
        ids = []
        for s in scripts:
            # the real sbatch reads every #SBATCH line
            test = subprocess.run(["sbatch", "--test-only", "sw/" + s], cwd=work,
                                  env=env, capture_output=True, text=True)
            self.assertEqual(test.returncode, 0, test.stderr)
            sub = subprocess.run(["sbatch", "--parsable", "sw/" + s], cwd=work,
                                 env=env, capture_output=True, text=True)
            self.assertEqual(sub.returncode, 0, sub.stderr)
            ids.append(sub.stdout.strip().split(";")[0])
        self.wait_for(ids)
        runs = [l.split()[0] for l in read(env["DSF_FAKE_LOG"]).splitlines()]
        self.assertEqual(sorted(runs), ["small.gpus_per_node-1", "small.gpus_per_node-2"])
        for j in self.jobcomp():
            if j.get("ArrayJobId") in ids:
                self.assertEqual(j["JobState"], "COMPLETED")
                self.assertEqual(j["TimeLimit"], "5")
        # --probe: DeepSpeed's metric file, moved into each variant's results
        for name in runs:
            metric = os.path.join(work, "sw", "results", "small-gpu-offload-" + name,
                                  "autotuning_metric.json")
            self.assertIn("throughput", json.loads(read(metric)))
        self.assertFalse([f for f in os.listdir(work) if f.startswith("dsf-probe-")])

    def test_every_builtin_profile_and_tier_is_taken_by_sbatch(self):
        names = [l.split()[0] for l in run("list").out.splitlines()[1:]]
        self.assertIn("8xa100", names)
        for name in names:
            out = os.path.join(self.tmp, "every-" + name)
            res = run("gen", name, "--emit", "slurm-array", "--train-cmd",
                      "train.py --x 1", "--canary", "--max-parallel", "2", "-o", out)
            self.assertEqual(res.rc, 0, repr(res))
            scripts = [f for f in os.listdir(out) if f.endswith(".sbatch")]
            self.assertTrue(scripts, name)
            for s in scripts:
                test = subprocess.run(["sbatch", "--test-only", os.path.join(out, s)],
                                      cwd=self.tmp, env=self.env, capture_output=True,
                                      text=True)
                self.assertEqual(test.returncode, 0, "%s %s: %s" % (name, s, test.stderr))
                self.assertIn("to start at", test.stderr)


if __name__ == "__main__":
    unittest.main()
