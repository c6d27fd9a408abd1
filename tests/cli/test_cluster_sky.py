"""The skypilot emitter's refusals and choices (issue 31); its files
against SkyPilot's schemas with ajv and its run section under bash:
tests/cluster/test_schemas.py."""
import os

import dsf
from dsf import run


class SkyEmitter(dsf.TempDirTest):

    def gen(self, *args, profile="8xa100"):
        self.out = os.path.join(self.tmp, "s")
        return run("gen", profile, "--tier", "small", "--emit", "skypilot", "-o", self.out, *args)

    def task(self):
        with open(os.path.join(self.out, "8xa100-small.sky.yaml")) as f:
            return f.read()

    def test_refusals_write_nothing(self):
        cases = [
            ((), "needs the training command", (2, 3)),
            (("--train-cmd", "t.py", "--emit-opt", "mount=x"), "mount must be an absolute path", (2, 3)),
            (("--train-cmd", "t.py", "--emit-opt", "accelerators=H100;rm"),
             "accelerators must be GPU names", (2, 3)),
            # 7B at ZeRO-0 on 8 GPUs: about 112 GiB per GPU, more than any GPU holds
            (("--train-cmd", "t.py", "--param", "zero_stage=0", "--param", "gpu_mem_gb=2048",
              "--param", "micro_batch_size=64"), "more than any GPU SkyPilot offers holds", (3,)),
        ]
        for args, msg, codes in cases:
            with self.subTest(args=args):
                res = self.gen(*args)
                self.assertIn(res.rc, codes, repr(res))
                self.assertIn(msg, res.err)
                self.assertFalse(os.path.exists(self.out))

    def test_the_estimate_chooses_the_gpus_and_an_option_names_them(self):
        self.assertEqual(self.gen("--train-cmd", "t.py").rc, 0)
        text = self.task()
        self.assertIn('"A100-80GB:8": null', text)
        self.assertIn('"A10G:8": null', text)       # 15.6 GiB fits 24 GiB with the margin
        self.assertNotIn('"T4:8"', text)            # 16 GiB * 0.9 does not hold it
        self.assertEqual(self.gen("--train-cmd", "t.py", "--emit-opt",
                                  "accelerators=H100,H200").rc, 0)
        text = self.task()
        self.assertIn('"H100:8": null', text)
        self.assertNotIn("A100", text)


if __name__ == "__main__":
    import unittest
    unittest.main()
