"""optimizer.params checked against the torch.optim class DeepSpeed builds
(issue 10 item 3): in check, and in gen naming the layer the key came from.
The signatures are merged over the covered torch releases (1.13.1 to 2.x):
a keyword only some take is a note, an argument is required only when
every release requires it."""
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

    def check(self, optimizer, scheduler=None):
        cfg = {"train_micro_batch_size_per_gpu": 1, "optimizer": optimizer}
        if scheduler:
            cfg["scheduler"] = scheduler
        path = self.write("c.json", json.dumps(cfg))
        r = run("check", "--format", "json", path)
        return r, [f for f in r.json() if f.get("rule") == "constructor-args"]

    def test_adamw_fused_passes_with_a_note(self):
        r, found = self.check({"type": "AdamW", "params": {
            "lr": 1e-4, "torch_adam": True, "fused": True}})
        self.assertExit(r, 0)
        self.assertEqual([f["severity"] for f in found], ["note"], found)
        self.assertIn('only torch >= 2.', found[0]["message"])
        self.assertIn('takes "fused"', found[0]["message"])

    def test_sgd_without_lr_passes(self):
        r, found = self.check({"type": "SGD", "params": {"momentum": 0.9}})
        self.assertExit(r, 0)
        self.assertEqual(found, [])

    def test_typo_is_still_an_error_with_did_you_mean(self):
        r, found = self.check({"type": "AdamW", "params": {
            "lr": 1e-4, "torch_adam": True, "weight_decy": 0.1}})
        self.assertExit(r, 1)
        self.assertEqual([f["severity"] for f in found], ["error"], found)
        self.assertIn('no argument "weight_decy"', found[0]["message"])
        self.assertIn('did you mean "weight_decay"', found[0]["message"])
        self.assertIn("torch 1.13.1, ", found[0]["message"])

    def test_newer_torch_keyword_is_not_an_error(self):
        # SGD fused: not in torch 1.13.1
        r, found = self.check({"type": "SGD", "params": {"lr": 0.1, "fused": False}})
        self.assertExit(r, 0)
        self.assertEqual([f["severity"] for f in found], ["note"], found)
        # a keyword newer torch dropped: StepLR verbose
        r, found = self.check({"type": "SGD", "params": {"lr": 0.1}},
                              {"type": "StepLR", "params": {"step_size": 5, "verbose": True}})
        self.assertExit(r, 0)
        self.assertEqual([f["severity"] for f in found], ["note"], found)
        self.assertIn("only torch <= ", found[0]["message"])

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
