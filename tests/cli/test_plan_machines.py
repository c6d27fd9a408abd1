"""The planner for the machines people have (issue 33): small-gpu-offload
reaches NVMe when host RAM cannot hold CPU-offloaded states, long-sequence
splits sequences over GPUs (Ulysses) from 32k tokens. Each written config
is run through DeepSpeed's own config code (DeepSpeedConfig, via the
dsclient tool in ../shared/tools/dsclient and the machine's DeepSpeed and
hjson-py git directories; skipped where they are absent), and must fit GPU
and host memory by the estimate gen records in the manifest."""
import json
import os
import pwd
import subprocess
import unittest

import dsf
from dsf import run

TAG = "v0.19.5"

DS_GIT, HJSON_GIT = dsf.git_dir("deepspeedai+DeepSpeed"), dsf.git_dir("hjson+hjson-py")
DSCLIENT = dsf.dsclient_dir()
READY = bool(DS_GIT and HJSON_GIT and DSCLIENT)

# Loads DeepSpeed's config code through dscheck.py and, for each FILE WORLD
# SP, parses FILE twice: with dscheck's mpu reporting the data-parallel size
# WORLD / SP, and with no mpu on a world of WORLD ranks, where DeepSpeed
# itself divides by sequence_parallel_size (runtime/config.py:710).
DRIVER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("dscheck", sys.argv[1])
d = importlib.util.module_from_spec(spec); spec.loader.exec_module(d)
out = []
args = sys.argv[2:]
for i in range(0, len(args), 3):
    path, world, sp = args[i], int(args[i + 1]), int(args[i + 2])
    # a dict, as deepspeed.initialize passes it (it loads a path first)
    with open(path) as f:
        cfg = json.load(f)
    ok, verdict, _ = d.check(path, world // sp)
    d.ds_comm.cdb = d.FakeBackend(world)
    try:
        c = d.ds_config.DeepSpeedConfig(cfg, mpu=None)
        plain = {"world_size": c.world_size, "train_batch_size": c.train_batch_size}
    except Exception as e:
        plain = {"error": "%s: %s" % (type(e).__name__, e)}
    finally:
        d.ds_comm.cdb = None
    out.append({"ok": ok, "verdict": verdict, "plain": plain})
print(json.dumps(out))
"""


def deepspeed_parses(test, files):
    """files: [(path, world, sp)] -> DeepSpeed's verdicts."""
    home = os.environ.get("DSCLIENT_HOME") or os.path.join(
        pwd.getpwuid(os.getuid()).pw_dir, ".cache", "dsclient", TAG)
    env = dict(os.environ, DSCLIENT_HOME=home)
    p = subprocess.run(["sh", os.path.join(DSCLIENT, "setup.sh"), DS_GIT, HJSON_GIT, TAG],
                       env=env, capture_output=True, text=True, timeout=300)
    test.assertEqual(p.returncode, 0, p.stderr)
    for word in p.stdout.split():
        if word.startswith("DSCHECK_"):
            k, v = word.split("=", 1)
            env[k] = v
    args = []
    for path, world, sp in files:
        args += [path, str(world), str(sp)]
    p = subprocess.run(["python3", "-c", DRIVER, os.path.join(DSCLIENT, "dscheck.py"), *args],
                       env=env, capture_output=True, text=True, timeout=300)
    test.assertEqual(p.returncode, 0, p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


class Machines(dsf.TempDirTest):
    def gen(self, *args):
        out = os.path.join(self.tmp, "out")
        res = run("gen", *args, "--strict-fit", "-o", out)
        self.assertEqual(res.rc, 0, res)
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        return out, manifest

    def variants(self, out, manifest):
        for v in manifest["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                yield v, json.load(f)

    def test_small_gpu_offload_reaches_nvme(self):
        out, manifest = self.gen(
            "small-gpu-offload", "--param", "model=llama-3-8b", "--param", "gpu_mem_gb=24",
            "--param", "gpus_per_node=4", "--param", "cpu_mem_gb=128", "--param", "seq_len=4096")
        files = []
        for v, cfg in self.variants(out, manifest):
            z = cfg["zero_optimization"]
            self.assertEqual(z["stage"], 3)
            self.assertEqual(z["offload_optimizer"]["device"], "nvme")
            self.assertEqual(z["offload_optimizer"]["nvme_path"], "/local_nvme")
            self.assertEqual(z["sub_group_size"], 100000000)
            self.assertEqual(cfg["aio"]["block_size"], 1048576)
            s = v["summary"]
            self.assertTrue(s["gpu_fits"] and s["cpu_fits"], s)
            self.assertLessEqual(s["cpu_bytes"], 128 * 2**30 * 0.9)
            self.assertGreater(s["nvme_bytes"], 0)
            files.append((os.path.join(out, v["file"]), 4, 1))
        # CPU offload alone cannot: the same machine without NVMe
        res = run("gen", "small-gpu-offload", "--param", "model=llama-3-8b",
                  "--param", "gpu_mem_gb=24", "--param", "gpus_per_node=4",
                  "--param", "cpu_mem_gb=128", "--param", "seq_len=4096",
                  "--param", "offload=optimizer")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("without --param offload=optimizer", res.err)
        if READY:
            for r in deepspeed_parses(self, files):
                self.assertTrue(r["ok"], r["verdict"])

    def test_offload_nvme_is_a_param(self):
        cfg = json.loads(run("gen", "small-gpu-offload", "--tier", "small", "--param",
                             "offload=nvme-all", "--stdout").out)
        z = cfg["zero_optimization"]
        self.assertEqual(z["offload_param"]["device"], "nvme")
        self.assertGreaterEqual(z["offload_param"]["buffer_size"], 100000000)
        res = run("gen", "8xa100", "--tier", "small", "--param", "offload=nvme",
                  "--param", "zero_stage=2")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("needs zero_stage=3", res.err)
        res = run("gen", "small-gpu-offload", "--tier", "small", "--param", "offload=nvme",
                  "--param", "nvme_path=")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("needs nvme_path to be an absolute directory", res.err)
        cfg = json.loads(run("gen", "small-gpu-offload", "--tier", "small", "--param",
                             "offload=nvme", "--param", "nvme_path=/scratch/nvme0",
                             "--stdout").out)
        self.assertEqual(cfg["zero_optimization"]["offload_optimizer"]["nvme_path"],
                         "/scratch/nvme0")
        res = run("gen", "small-gpu-offload", "--param", "offload=disk")
        self.assertNotEqual(res.rc, 0, res)

    def test_long_sequence_uses_sequence_parallelism(self):
        out, manifest = self.gen("long-sequence", "--param", "seq_len=131072",
                                 "--param", "world_size=8")
        files = []
        for v, cfg in self.variants(out, manifest):
            sp = cfg["sequence_parallel_size"]
            self.assertGreater(sp, 1)
            # the batch identity at the data-parallel size world / sp
            self.assertEqual(cfg["train_batch_size"],
                             cfg["train_micro_batch_size_per_gpu"]
                             * cfg["gradient_accumulation_steps"] * (8 // sp))
            self.assertEqual(v["summary"]["batch"]["world"], 8 // sp)
            self.assertTrue(v["summary"]["fits"], v["summary"])
            files.append((os.path.join(out, v["file"]), 8, sp))
        if READY:
            for (path, world, sp), r in zip(files, deepspeed_parses(self, files)):
                self.assertTrue(r["ok"], r["verdict"])
                self.assertEqual(r["plain"].get("world_size"), world / sp, r["plain"])

    def test_below_32k_tokens_no_sequence_parallelism(self):
        res = run("gen", "long-sequence", "--tier", "large", "--stdout")
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("sequence_parallel_size", json.loads(res.out))

    def test_lora_is_planned_without_offload(self):
        def plan(ft):
            out, manifest = self.gen("small-gpu-offload", "--tier", "small", "--param",
                                     "model=llama-3-8b", "--param", "finetune=" + ft)
            v, cfg = next(self.variants(out, manifest))
            return cfg["zero_optimization"], v["summary"]
        z, s = plan("full")
        self.assertEqual(z["offload_optimizer"]["device"], "cpu")
        # LoRA: 16 GB of frozen bf16 weights + the adapters' states fit one 24 GB GPU
        z, s = plan("lora")
        self.assertNotIn("offload_optimizer", z)
        self.assertLess(s["cpu_bytes"], 32 * 2**30)
        self.assertTrue(s["fits"], s)
        # QLoRA: the 4-bit base takes a quarter of that
        zq, sq = plan("qlora")
        self.assertLess(sq["model_states_gpu_bytes"], s["model_states_gpu_bytes"] / 2)
        res = run("gen", "small-gpu-offload", "--tier", "small", "--param", "model=gpt2",
                  "--param", "finetune=lora")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("finetune=lora: LoRA's adapter count is modelled for llama-style", res.err)

    def test_high_performance_uses_autotp_when_zero2_does_not_fit(self):
        out, manifest = self.gen("high-performance", "--tier", "large", "--param",
                                 "model=llama-2-13b", "--param", "cpu_mem_gb=1024")
        v, cfg = next(self.variants(out, manifest))
        # ZeRO-2 alone: 73.2 GiB of 72 usable; AutoTP 2 halves each GPU's shard
        self.assertEqual(cfg["tensor_parallel"], {"autotp_size": 2})
        self.assertEqual(cfg["zero_optimization"]["stage"], 2)
        # left to DeepSpeed: micro x accumulation x the world it sees
        self.assertNotIn("train_batch_size", cfg)
        self.assertTrue(v["summary"]["fits"], v["summary"])
        # a model that fits ZeRO-2 keeps the seed's config
        res = run("gen", "high-performance", "--tier", "large", "--stdout")
        self.assertNotIn("tensor_parallel", json.loads(res.out))
        res = run("gen", "high-performance", "--param", "autotp_size=3")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("autotp_size 3 does not divide gpus_per_node 8", res.err)
        if READY:
            path = os.path.join(out, v["file"])
            # without an mpu DeepSpeed sees 8 ranks, with AutoTP's mpu 4
            for r in deepspeed_parses(self, [(path, 8, 1), (path, 4, 1)]):
                self.assertTrue(r["ok"], r["verdict"])


class Estimate(unittest.TestCase):
    def test_qlora_shows_trainable_params_and_a_hand_computed_row(self):
        res = run("estimate", "--model", "llama-3-8b", "--gpus", "4", "--finetune", "qlora",
                  "--stage", "3", "--json")
        self.assertEqual(res.rc, 0, res)
        out = json.loads(res.out)
        # r=16 on q,k,v,o,gate,up,down: 81,920 x 16 x 32 = 41,943,040
        self.assertEqual(out["inputs"]["trainable_params"], 41943040)
        # int(18 T / 4) = 188,743,680 (the adapters' states)
        # + (8,030,261,248 - T) x 4 bits / 8 / 4 GPUs = 998,539,776 (base, partitioned)
        # + 525,336,576 x 4 / 8 = 262,668,288 (the gathered embedding)
        self.assertEqual(out["rows"][0]["gpu_bytes"], 1449951744)
        text = run("estimate", "--model", "llama-3-8b", "--gpus", "4", "--finetune", "lora").out
        self.assertIn("LoRA r=16: 41M trainable params, base weights in 16 bits.", text)

    def test_nvme_row_and_its_limits(self):
        res = run("estimate", "--model", "llama-3-8b", "--gpus", "4", "--stage", "3",
                  "--offload-optimizer", "nvme", "--json")
        self.assertEqual(res.rc, 0, res)
        row = json.loads(res.out)["rows"][0]
        # 16 bytes x ceil(P / 4) x 4 GPUs of swap files
        self.assertEqual(row["nvme_bytes"], 16 * 2007565312 * 4)
        res = run("estimate", "--model", "llama-3-8b", "--stage", "2",
                  "--offload-optimizer", "nvme")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("NVMe offload needs --stage 3", res.err)
        res = run("estimate", "--model", "llama-3-8b", "--gpus", "3", "--tp", "2")
        self.assertEqual(res.rc, 2, res)


if __name__ == "__main__":
    unittest.main()
