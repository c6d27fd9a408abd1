"""The cluster plugin's skypilot emitter: one SkyPilot task YAML per
variant (contrib/docs/cluster.md, "skypilot"). Its schema validation
against SkyPilot's own schemas is tests/cluster/sky_run.sh."""
import hashlib
import json
import os
import subprocess
import sys
import unittest

import dsf
from dsf import run

try:
    import yaml
except ImportError:  # python3-yaml
    yaml = None

# A torchrun that records its argv and what it saw of SkyPilot's variables.
FAKE_TORCHRUN = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_OUT"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:]}) + "\\n")
"""


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@unittest.skipIf(yaml is None, "PyYAML (python3-yaml) is not installed")
class SkyPilotTasks(dsf.TempDirTest):

    def gen(self, *args, profile="8xa100", out="out", cmd="train.py --x 1"):
        out = os.path.join(self.tmp, out)
        a = ["gen", profile, "-o", out, "--emit", "skypilot"]
        if cmd is not None:
            a += ["--train-cmd", cmd]
        return run(*a, *args), out

    def task(self, out, stem):
        with open(os.path.join(out, stem + ".sky.yaml"), encoding="utf-8") as f:
            return yaml.safe_load(f)

    def test_one_task_per_variant_with_the_manifests_sha256(self):
        res, out = self.gen()
        self.assertExit(res, 0)
        self.assertIn("3 variants, 3 files (skypilot)", res.out)
        manifest = dsf.json.load(open(os.path.join(out, "manifest.json")))
        for v in manifest["variants"]:
            stem = "8xa100-" + v["name"]
            t = self.task(out, stem)
            self.assertEqual(t["envs"]["DSF_CONFIG_SHA256"], v["sha256"])
            self.assertEqual(v["sha256"], sha256(os.path.join(out, stem + ".json")))
            self.assertEqual(t["envs"]["DSF_VARIANT"], v["name"])
            self.assertEqual(t["name"], stem)
            self.assertEqual(t["num_nodes"], 1)
            self.assertEqual(t["file_mounts"], {
                "/tmp/dsforge/%s.json" % stem: os.path.join(out, stem + ".json")})
            self.assertEqual(t["envs"]["DSF_CONFIG"], "/tmp/dsforge/%s.json" % stem)
            self.assertEqual(t["workdir"], ".")
            self.assertEqual([e["emitter"] for e in v["emitted"]], ["skypilot"])

    def test_accelerators_are_those_the_estimate_fits(self):
        res, out = self.gen(profile="long-sequence")
        self.assertExit(res, 0)
        manifest = dsf.json.load(open(os.path.join(out, "manifest.json")))
        for v in manifest["variants"]:
            need = v["summary"]["gpu_bytes"] / 2 ** 30 / 0.9
            acc = self.task(out, "long-sequence-" + v["name"])["resources"]["accelerators"]
            # long-sequence needs 52-60 GiB: the 80 GiB and larger only
            self.assertEqual(sorted(acc), ["A100-80GB", "B200", "H100", "H200"])
            self.assertTrue(all(n == 8 for n in acc.values()))
            self.assertGreater(need, 48)
        res, out = self.gen(profile="small-gpu-offload", out="sgo")
        self.assertExit(res, 0)
        acc = self.task(out, "small-gpu-offload-small")["resources"]["accelerators"]
        # 17 GiB with bf16: no T4/V100 (no bf16), every 24 GiB card and up
        self.assertEqual(list(acc), ["B200", "H200", "A100-80GB", "H100", "L40S",
                                     "A100", "A10", "A10G", "L4"])
        self.assertEqual(set(acc.values()), {1})

    def test_fp16_may_use_gpus_without_bf16(self):
        res, out = self.gen("--param", "precision=fp16", "--tier", "small",
                            profile="small-gpu-offload")
        self.assertExit(res, 0)
        acc = self.task(out, "small-gpu-offload-small")["resources"]["accelerators"]
        self.assertIn("V100-32GB", acc)
        self.assertNotIn("T4", acc)  # 16 GiB is too small

    def test_several_nodes(self):
        res, out = self.gen("--param", "nodes=2", "--tier", "small")
        self.assertExit(res, 0)
        t = self.task(out, "8xa100-small")
        self.assertEqual(t["num_nodes"], 2)
        self.assertTrue(all(n == 8 for n in t["resources"]["accelerators"].values()))

    def run_section(self, text, env):
        """sh -n, then the run section under sh with a stub torchrun."""
        script = os.path.join(self.tmp, "run.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(text)
        check = subprocess.run(["sh", "-n", script], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stderr)
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        with open(os.path.join(bindir, "torchrun"), "w") as f:
            f.write(FAKE_TORCHRUN.replace("python3", os.path.basename(sys.executable)))
        os.chmod(os.path.join(bindir, "torchrun"), 0o755)
        rec = os.path.join(self.tmp, "argv.jsonl")
        if os.path.exists(rec):
            os.unlink(rec)
        e = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
                 FAKE_OUT=rec, **env)
        work = os.path.join(self.tmp, "work")
        os.makedirs(work, exist_ok=True)
        p = subprocess.run(["sh", script], capture_output=True, text=True, env=e,
                           cwd=work, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.listdir(work), [], "a word was run by the shell")
        with open(rec, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
        self.assertEqual(len(calls), 1, calls)
        return calls[0]["argv"]

    PORT = ('return { name = "mp", extends = "8xa100", summary = "x", '
            'params = { master_port = { default = 29500 } } }\n')

    def test_the_run_section_starts_torchrun_on_each_node(self):
        d = self.profile("mp", self.PORT)
        res, out = self.gen("--param", "nodes=2", "--param", "master_port=29600",
                            "--tier", "small", "--profile-path", d, profile="mp")
        self.assertExit(res, 0)
        t = self.task(out, "mp-small")
        argv = self.run_section(t["run"], {
            "SKYPILOT_NODE_RANK": "1", "SKYPILOT_NODE_IPS": "10.0.0.5\n10.0.0.6",
            "SKYPILOT_NUM_NODES": "2", "SKYPILOT_NUM_GPUS_PER_NODE": "8"})
        self.assertEqual(argv[:12], [
            "--nnodes", "2", "--nproc_per_node", "8", "--node_rank", "1",
            "--master_addr", "10.0.0.5", "--master_port", "29600",
            "train.py", "--x"])
        i = argv.index("--deepspeed")
        self.assertEqual(argv[i + 1], "/tmp/dsforge/mp-small.json")
        self.assertIn("--per_device_train_batch_size", argv)

    def test_nasty_arguments_and_paths_stay_words(self):
        cmd = "train.py --name 'a b' --q \"it's\" --u 'ü\u00a0x' --nl 'a\nb' --d '$(touch x)'"
        res, out = self.gen("--tier", "small", out="o 'q' ü", cmd=cmd)
        self.assertExit(res, 0)
        t = self.task(out, "8xa100-small")
        argv = self.run_section(t["run"], {
            "SKYPILOT_NODE_RANK": "0", "SKYPILOT_NODE_IPS": "10.0.0.5",
            "SKYPILOT_NUM_NODES": "1", "SKYPILOT_NUM_GPUS_PER_NODE": "8"})
        self.assertEqual(argv[10:21], ["train.py", "--name", "a b", "--q", "it's",
                                       "--u", "ü\u00a0x", "--nl", "a\nb", "--d",
                                       "$(touch x)"])
        text = open(os.path.join(out, "8xa100-small.sky.yaml"), encoding="utf-8").read()
        self.assertIn('run: "set -eu\\n', text)  # not a literal block: a newline inside

    def test_the_training_command_is_required(self):
        res, out = self.gen(cmd=None)
        self.assertExit(res, 3)
        self.assertIn("needs the training command", res.err)
        self.assertIn("emitter skypilot (plugin cluster)", res.err)
        self.assertNotIn("a bug in the plugin", res.err)
        self.assertFalse(os.path.exists(out))
        for bad, why in [("train.py $HOME", "unquoted $"), ("", "is empty"),
                         ("train.py 'open", "unterminated '")]:
            with self.subTest(cmd=bad):
                res, out = self.gen(cmd=bad)
                self.assertExit(res, 3)
                self.assertIn(why, res.err)
                self.assertFalse(os.path.exists(out))

    def test_values_skypilot_cannot_take(self):
        # (base declares master_port's range: its own check, a usage error)
        for args, why, code in [
                (["--param", "master_port=0", "--profile-path",
                  self.profile("mp", self.PORT)], "param 'master_port' = 0", 2),
                (["--param", "nodes=2", "--param", "world_size=8"],
                 "param 'nodes' = 2, but world_size 8 over gpus_per_node 8 is 1 node(s)", 3),
                (["--param", "model=llama-2-70b", "--param", "micro_batch_size=64"],
                 "no accelerator SkyPilot knows holds this variant", 3),
        ]:
            with self.subTest(args=args):
                res, out = self.gen(*args, "--tier", "small",
                                    profile="mp" if "master_port=0" in args else "8xa100")
                self.assertExit(res, code)
                self.assertIn(why, res.err)
                self.assertNotIn("a bug in the plugin", res.err)
                self.assertFalse(os.path.exists(out))
        res, out = self.gen("--tier", "small", out="a$b")
        self.assertExit(res, 3)
        self.assertIn("holds a '$'", res.err)
        self.assertFalse(os.path.exists(out))

    def test_bytes_are_the_same_every_run(self):
        a, out_a = self.gen(out="a")
        b, out_b = self.gen(out="a2")
        self.assertExit(a, 0)
        self.assertExit(b, 0)
        for v in ("small", "medium", "large"):
            ta = open(os.path.join(out_a, "8xa100-%s.sky.yaml" % v)).read()
            tb = open(os.path.join(out_b, "8xa100-%s.sky.yaml" % v)).read()
            self.assertEqual(ta.replace(out_a, "D"), tb.replace(out_b, "D"))


if __name__ == "__main__":
    unittest.main()
