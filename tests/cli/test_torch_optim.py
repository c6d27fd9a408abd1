"""optimizer.params checked against the torch.optim class DeepSpeed builds
(issue 10 item 3): in check, and in gen naming the layer the key came from."""
import json
import unittest

import dsf
from dsf import run


class TorchOptim(dsf.TempDirTest):
    def test_check_reports_unknown_keyword_and_missing_required(self):
        path = self.write("c.json", json.dumps({
            "train_micro_batch_size_per_gpu": 1,
            "optimizer": {"type": "SGD", "params": {"momentun": 0.9}}}))
        r = run("check", "--format", "json", path)
        self.assertExit(r, 1)
        found = [f for f in r.json() if f.get("rule") == "constructor-args"]
        msgs = " | ".join(f["message"] for f in found)
        self.assertIn('no argument "momentun"', msgs)
        self.assertIn('did you mean "momentum"', msgs)
        self.assertIn("torch/optim/sgd.py:", msgs)

    def test_gen_names_the_layer(self):
        r = run("gen", "base", "--tier", "small", "optimizer.type=RMSprop",
                "~optimizer.params.betas", "optimizer.params.momentun=0.9", "--stdout")
        self.assertExit(r, 1)
        line = [l for l in r.err.splitlines() if '"momentun"' in l]
        self.assertEqual(len(line), 1, r.err)
        self.assertTrue(line[0].startswith("argument #7: error:"), line[0])
        self.assertIn('did you mean "momentum"', line[0])


if __name__ == "__main__":
    unittest.main()
