"""`gen --detect` (issue 12 item 3): a fake nvidia-smi alone on PATH; the
launch plugin's machine_params maps the machine to gpus_per_node,
world_size (one node), gpu_mem_gb (the smallest GPU), cpu_mem_gb and
precision (bf16 from compute capability 8.0) for every param the command
line does not set; the summary says what was detected. No GPU, garbage
and a hang are input errors (exit 3) that write nothing."""
import json
import os
import stat
import time

import dsf
from dsf import run

A100 = "NVIDIA A100-SXM4-80GB, 81920, 8.0"
H100 = "NVIDIA H100 80GB HBM3, 81559, 9.0"
V100 = "Tesla V100-SXM2-16GB, 16384, 7.0"


def host_gib():
    with open("/proc/meminfo") as f:
        kib = next(int(l.split()[1]) for l in f if l.startswith("MemTotal:"))
    v = int(kib * 1024 / 2 ** 30 * 100) / 100
    return int(v) if v == int(v) else v


class GenDetect(dsf.TempDirTest):
    def gen(self, *args, lines=None, script=None, timeout=60):
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        if lines is not None or script is not None:
            body = script if script is not None else "".join(
                "printf '%%s\\n' '%s'\n" % l for l in lines)
            path = os.path.join(bindir, "nvidia-smi")
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, stat.S_IRWXU)
        return run("gen", *args, env={"PATH": bindir}, timeout=timeout)

    def tool_dir(self, lines):
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        path = os.path.join(bindir, "nvidia-smi")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + "".join("printf '%%s\\n' '%s'\n" % l
                                            for l in lines))
        os.chmod(path, stat.S_IRWXU)
        return bindir

    def manifest_params(self, out):
        with open(os.path.join(out, "manifest.json")) as f:
            return {v["name"]: v["params"] for v in json.load(f)["variants"]}

    def test_eight_a100(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("base", "--detect", "-o", out, lines=[A100] * 8)
        self.assertExit(res, 0)
        gib = host_gib()
        self.assertIn("detected (nvidia-smi, 8 GPUs): cpu_mem_gb=%s "
                      "gpu_mem_gb=80 gpus_per_node=8 precision=bf16 "
                      "world_size=8\n" % gib, res.out)
        for name, p in self.manifest_params(out).items():
            with self.subTest(variant=name):
                self.assertEqual((p["gpus_per_node"], p["world_size"],
                                  p["gpu_mem_gb"], p["cpu_mem_gb"],
                                  p["precision"]), (8, 8, 80, gib, "bf16"))
        with open(os.path.join(out, "base-medium.json")) as f:
            cfg = json.load(f)
        self.assertEqual(cfg["train_batch_size"], 2 * 8 * 8)
        self.assertTrue(cfg["bf16"]["enabled"])

    def test_detected_values_beat_the_profiles_and_tiers(self):
        # small-gpu-offload says 1 GPU of 24 GiB; the tiers of
        # high-performance set gpu_mem_gb themselves
        res = self.gen("small-gpu-offload", "--detect", "--tier", "small",
                       "--stdout", lines=[H100] * 2)
        self.assertExit(res, 0)
        cfg = json.loads(res.out)
        self.assertTrue(cfg["bf16"]["enabled"])
        self.assertEqual(cfg["train_batch_size"] %
                         (cfg["train_micro_batch_size_per_gpu"] *
                          cfg["gradient_accumulation_steps"]), 0)
        self.assertEqual(cfg["train_batch_size"] //
                         (cfg["train_micro_batch_size_per_gpu"] *
                          cfg["gradient_accumulation_steps"]), 2)
        out = os.path.join(self.tmp, "hp")
        self.assertExit(self.gen("high-performance", "--detect", "-o", out,
                                 lines=[V100]), 0)
        self.assertEqual({p["gpu_mem_gb"] for p in
                          self.manifest_params(out).values()}, {16})

    def test_the_command_line_wins(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("base", "--detect", "--tier", "small", "--param",
                       "gpu_mem_gb=40", "--matrix", "precision=fp16,bf16",
                       "-o", out, lines=[A100] * 4)
        self.assertExit(res, 0)
        self.assertIn("gpus_per_node=4 world_size=4; kept from the command "
                      "line: gpu_mem_gb, precision\n", res.out)
        ps = self.manifest_params(out)
        self.assertEqual({(p["gpu_mem_gb"], p["precision"], p["world_size"])
                          for p in ps.values()},
                         {(40, "fp16", 4), (40, "bf16", 4)})
        # nodes given: the profile derives world_size = nodes x gpus_per_node
        res = self.gen("base", "--detect", "--tier", "small", "--param",
                       "nodes=2", "--stdout", lines=[A100] * 4)
        self.assertExit(res, 0)
        cfg = json.loads(res.out)
        self.assertEqual(cfg["train_batch_size"],
                         cfg["train_micro_batch_size_per_gpu"] *
                         cfg["gradient_accumulation_steps"] * 8)

    def test_mixed_gpus_use_the_smallest_and_warn(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("base", "--detect", "-o", out,
                       lines=[A100, V100, A100])
        self.assertExit(res, 0)
        self.assertIn("warning: the GPUs differ", res.err)
        self.assertIn("gpu_mem_gb=16 gpus_per_node=3 precision=fp16 "
                      "world_size=3", res.out)
        self.assertEqual({p["gpu_mem_gb"] for p in
                          self.manifest_params(out).values()}, {16})

    def test_no_gpu_is_an_input_error(self):
        out = os.path.join(self.tmp, "out")
        for lines, source in ((["No devices were found"], "nvidia-smi"),
                              (None, "neither nvidia-smi nor rocm-smi")):
            with self.subTest(source=source):
                if lines is None:
                    os.remove(os.path.join(self.tmp, "bin", "nvidia-smi"))
                    res = self.gen("base", "--detect", "-o", out)
                else:
                    res = self.gen("base", "--detect", "-o", out,
                                   script="printf 'No devices were found\\n'"
                                          "\nexit 6\n")
                self.assertExit(res, 3)
                self.assertIn("error: gen --detect: no GPU found (%s"
                              % source, res.err)
                self.assertFalse(os.path.exists(out))
                self.assertEqual(res.out, "")

    def test_garbage_is_an_input_error(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("base", "--detect", "-o", out,
                       lines=[A100, "lots of garbage"])
        self.assertExit(res, 3)
        self.assertIn("nvidia-smi:2:", res.err)
        self.assertFalse(os.path.exists(out))

    def test_a_hang_times_out(self):
        out = os.path.join(self.tmp, "out")
        start = time.monotonic()
        res = self.gen("base", "--detect", "--detect-timeout", "500", "-o",
                       out, script="exec /bin/sleep 30\n", timeout=20)
        self.assertLess(time.monotonic() - start, 10)
        self.assertExit(res, 3)
        self.assertIn("nvidia-smi did not finish within 500 ms", res.err)
        self.assertFalse(os.path.exists(out))
        self.assertExit(self.gen("base", "--detect-timeout", "0"), 2)

    def test_a_value_the_profile_refuses(self):
        res = self.gen("base", "--detect", lines=[A100] * 65)
        self.assertExit(res, 3)
        self.assertIn("gen --detect: param 'gpus_per_node' = 65 (from this "
                      "machine)", res.err)

    def test_a_profile_without_such_params(self):
        pdir = self.profile("bare", 'return { name = "bare", build = '
                            'function() return { train_batch_size = 8, '
                            'train_micro_batch_size_per_gpu = 8 } end }')
        res = self.gen("bare", "--detect", "--profile-path", pdir,
                       lines=[A100])
        self.assertExit(res, 3)
        self.assertIn("no loaded plugin derives a param of profile bare",
                      res.err)

    def test_plugins_that_disagree(self):
        self.write("plugins/other/init.lua", 'return { name = "other", '
                   'version = "1", machine_params = function(m, ctx) '
                   'return { gpus_per_node = m.gpu_count + 1, '
                   'not_a_param = 1 } end }')
        res = run("gen", "base", "--detect", env={
            "PATH": self.tool_dir([A100] * 2),
            "DSFORGE_PLUGIN_PATH": os.path.join(self.tmp, "plugins")})
        self.assertExit(res, 3)
        self.assertIn("derive different values of param 'gpus_per_node'",
                      res.err)
        self.write("plugins/other/init.lua", 'return { name = "other", '
                   'version = "1", machine_params = function() '
                   'error("kaput") end }')
        res = run("gen", "base", "--detect", env={
            "PATH": self.tool_dir([A100] * 2),
            "DSFORGE_PLUGIN_PATH": os.path.join(self.tmp, "plugins")})
        self.assertExit(res, 5)
        self.assertIn("raised by plugin other machine_params", res.err)

    def test_without_detect_nothing_runs(self):
        res = self.gen("base", "--tier", "small",
                       script="echo called >&2; exit 1\n")
        self.assertExit(res, 0)
        self.assertNotIn("detected", res.out)

    def test_help(self):
        res = run("gen", "--help")
        self.assertIn("--detect", res.out)
        self.assertIn("--detect-timeout MS", res.out)


if __name__ == "__main__":
    import unittest
    unittest.main()
