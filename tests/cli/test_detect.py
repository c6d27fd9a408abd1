"""`dsforge detect`: GPUs from a fake nvidia-smi (or rocm-smi) placed
alone on PATH, host memory from /proc/meminfo, CPU cores. Covers normal
output, no device, no tool, mixed GPUs, garbage, a failing tool, too much
output and a tool that hangs (killed at --timeout)."""
import os
import stat
import time
import unittest

import dsf
from dsf import run

A100 = "NVIDIA A100-SXM4-80GB, 81920, 8.0"
V100 = "Tesla V100-SXM2-16GB, 16384, 7.0"


class Detect(dsf.TempDirTest):
    def tool(self, name, script):
        """Puts an executable `name` running the sh script alone on PATH."""
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        path = os.path.join(bindir, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(path, stat.S_IRWXU)
        return bindir

    def detect(self, *args, script=None, name="nvidia-smi", timeout=30):
        bindir = (self.tool(name, script) if script is not None
                  else os.path.join(self.tmp, "empty"))
        os.makedirs(bindir, exist_ok=True)
        return run("detect", *args, env={"PATH": bindir}, timeout=timeout)

    def prints(self, lines, exit_code=0):
        body = "".join("printf '%%s\\n' '%s'\n" % l for l in lines)
        return body + "exit %d\n" % exit_code

    def test_eight_a100(self):
        res = self.detect("--json", script=self.prints([A100] * 8))
        self.assertExit(res, 0)
        m = res.json()
        self.assertEqual(m["gpu_count"], 8)
        self.assertEqual(m["source"], "nvidia-smi")
        self.assertEqual(m["vendor"], "nvidia")
        self.assertEqual(m["gpu_memory_mib_min"], 81920)
        self.assertEqual(m["gpus"][3], {"index": 3,
                                        "name": "NVIDIA A100-SXM4-80GB",
                                        "memory_mib": 81920,
                                        "compute_capability": "8.0"})
        self.assertEqual(res.err, "")
        text = self.detect(script=self.prints([A100] * 8))
        self.assertExit(text, 0)
        self.assertIn("GPUs: 8 (nvidia-smi)", text.out)
        self.assertIn("NVIDIA A100-SXM4-80GB", text.out)

    def test_host_memory_and_cores(self):
        m = self.detect("--json", script=self.prints([A100])).json()
        with open("/proc/meminfo") as f:
            kib = next(int(l.split()[1]) for l in f
                       if l.startswith("MemTotal:"))
        self.assertEqual(m["host_memory_bytes"], kib * 1024)
        self.assertEqual(m["cpu_cores"], os.cpu_count())

    def test_a_name_with_a_comma(self):
        m = self.detect("--json", script=self.prints(
            ["Acme, Inc. GPU, 40960, 9.0"])).json()
        self.assertEqual(m["gpus"][0]["name"], "Acme, Inc. GPU")

    def test_no_device(self):
        res = self.detect("--json", script=self.prints(
            ["No devices were found"], exit_code=6))
        self.assertExit(res, 0)
        self.assertEqual(res.json()["gpu_count"], 0)
        self.assertEqual(res.json()["source"], "nvidia-smi")

    def test_no_tool(self):
        res = self.detect()
        self.assertExit(res, 0)
        self.assertIn("none found", res.out)
        self.assertIn("neither nvidia-smi nor rocm-smi", res.out)

    def test_mixed_gpus_warn_and_plan_for_the_smallest(self):
        res = self.detect("--json", script=self.prints([A100, V100, A100]))
        self.assertExit(res, 0)
        self.assertEqual(res.json()["gpu_memory_mib_min"], 16384)
        self.assertIn("warning: the GPUs differ", res.err)
        self.assertIn("Tesla V100-SXM2-16GB with 16384 MiB", res.err)

    def test_garbage(self):
        res = self.detect(script=self.prints([A100, "lots of garbage"]))
        self.assertExit(res, 3)
        self.assertIn("nvidia-smi:2:", res.err)
        self.assertIn("lots of garbage", res.err)
        self.assertEqual(res.out, "")

    def test_memory_not_a_number(self):
        res = self.detect(script=self.prints(["GPU, [N/A], 8.0"]))
        self.assertExit(res, 3)
        self.assertIn("not a whole number of MiB", res.err)

    def test_tool_fails(self):
        res = self.detect(script=self.prints(
            ['Field "compute_cap" is not a valid field to query.'],
            exit_code=2))
        self.assertExit(res, 3)
        self.assertIn("nvidia-smi failed (exit status 2)", res.err)
        self.assertIn("compute_cap", res.err)

    def test_hang_is_killed_at_the_timeout(self):
        start = time.monotonic()
        res = self.detect("--timeout", "500",
                          script="printf 'x'\nexec /bin/sleep 30\n",
                          timeout=20)
        self.assertLess(time.monotonic() - start, 10)
        self.assertExit(res, 3)
        self.assertIn("nvidia-smi did not finish within 500 ms", res.err)

    def test_too_much_output(self):
        res = self.detect(script="while :; do printf '%0100d\\n' 0; done\n")
        self.assertExit(res, 3)
        self.assertIn("wrote more than", res.err)

    def test_amd(self):
        csv = [
            "============ ROCm System Management Interface ============",
            "device,Card series,Card model,Card vendor,Card SKU,"
            "VRAM Total Memory (B),VRAM Total Used Memory (B)",
            "card0,Instinct MI210,0x740f,AMD,D67301,68702699520,10960896",
            "card1,Instinct MI210,0x740f,AMD,D67301,68702699520,10960896",
        ]
        res = self.detect("--json", script=self.prints(csv), name="rocm-smi")
        self.assertExit(res, 0)
        m = res.json()
        self.assertEqual(m["vendor"], "amd")
        self.assertEqual(m["gpu_count"], 2)
        self.assertEqual(m["gpus"][1]["name"], "Instinct MI210")
        self.assertEqual(m["gpus"][1]["memory_mib"], 65520)
        self.assertIsNone(m["gpus"][1]["compute_capability"])

    def test_usage(self):
        self.assertExit(self.detect("extra"), 2)
        self.assertExit(self.detect("--timeout", "0"), 2)


if __name__ == "__main__":
    unittest.main()

    def test_terminal_escapes_in_a_gpu_name_are_cleaned_where_they_enter(self):
        # ESC [2J (clear), an OSC 52 clipboard write, a bell, a C1 CSI
        evil = "A100\x1b[2J\x1b]52;c;ZXZpbA==\x07\xc2\x9b31m"
        script = "printf '%s, 81920, 8.0\\n'\n" % evil.replace("\\", "\\\\")
        for args in ((), ("--json",)):
            res = self.detect(*args, script=script)
            self.assertExit(res, 0)
            for ch in ("\x1b", "\x07", "\x9b"):
                self.assertNotIn(ch, res.out + res.err, repr(res))
        self.assertIn("A100^[[2J", self.detect(script=script).out)

    def test_implausible_memory_is_an_input_error(self):
        res = self.detect(script=self.prints(["NVIDIA X, 2147483648, 9.0"]))
        self.assertExit(res, 3)
        self.assertIn("more than 1 PiB", res.err)
        res = run("gen", "8xa100", "--param", "gpu_mem_gb=8388609")
        self.assertExit(res, 2)
        self.assertIn("gpu_mem_gb", res.err)
        self.assertNotIn("plugin", res.err)
