"""Mixture-of-experts models (issue 33): the catalog's MoE entries by name
in estimate and gen, Hugging Face config.json files with experts given as
a path (written here as they are on the Hub), and the listing.

The published totals the counts must match within 1 %: Mixtral-8x7B
46.7B (Mistral AI; Hub 46,702,792,704), DeepSeek-MoE-16B 16.4B
(arXiv:2401.06066; Hub 16,375,728,128), Qwen1.5-MoE-A2.7B 14.3B (model
card), Qwen3-30B-A3B 30.5B (model card).
"""
import json
import unittest

import dsf
from dsf import run

# config.json of mistralai/Mixtral-8x7B-v0.1 (Hub), as published.
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0,
    "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 32768,
    "model_type": "mixtral", "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "num_local_experts": 8,
    "output_router_logits": False, "rms_norm_eps": 1e-05,
    "rope_theta": 1e6, "router_aux_loss_coef": 0.02, "sliding_window": None,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.36.0.dev0", "use_cache": True,
    "vocab_size": 32000,
}

# config.json of deepseek-ai/deepseek-moe-16b-base (Hub).
DEEPSEEK_MOE_16B = {
    "architectures": ["DeepseekForCausalLM"], "attention_bias": False,
    "attention_dropout": 0.0,
    "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekConfig",
                 "AutoModel": "modeling_deepseek.DeepseekModel",
                 "AutoModelForCausalLM":
                     "modeling_deepseek.DeepseekForCausalLM"},
    "aux_loss_alpha": 0.001, "bos_token_id": 100000, "eos_token_id": 100001,
    "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 10944,
    "max_position_embeddings": 4096, "model_type": "deepseek",
    "moe_intermediate_size": 1408, "moe_layer_freq": 1,
    "n_routed_experts": 64, "n_shared_experts": 2, "norm_topk_prob": False,
    "num_attention_heads": 16, "num_experts_per_tok": 6,
    "num_hidden_layers": 28, "num_key_value_heads": 16,
    "pretraining_tp": 1, "rms_norm_eps": 1e-06, "rope_scaling": None,
    "rope_theta": 10000, "scoring_func": "softmax", "seq_aux": True,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.36.0", "use_cache": True, "vocab_size": 102400,
}

# config.json of Qwen/Qwen1.5-MoE-A2.7B (Hub).
QWEN15_MOE = {
    "architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
    "hidden_size": 2048, "initializer_range": 0.02,
    "intermediate_size": 5632, "max_position_embeddings": 8192,
    "max_window_layers": 21, "model_type": "qwen2_moe",
    "num_attention_heads": 16, "num_hidden_layers": 24,
    "num_key_value_heads": 16, "rms_norm_eps": 1e-06, "rope_theta": 1e6,
    "sliding_window": 32768, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.39.0.dev0",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
    "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4,
    "num_experts": 60, "norm_topk_prob": False,
    "output_router_logits": False, "router_aux_loss_coef": 0.001,
}

# config.json of Qwen/Qwen3-30B-A3B (Hub).
QWEN3_30B_A3B = {
    "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": False,
    "attention_dropout": 0.0, "bos_token_id": 151643, "decoder_sparse_step": 1,
    "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 2048, "initializer_range": 0.02,
    "intermediate_size": 6144, "max_position_embeddings": 40960,
    "max_window_layers": 48, "mlp_only_layers": [], "model_type": "qwen3_moe",
    "moe_intermediate_size": 768, "norm_topk_prob": True,
    "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 48, "num_key_value_heads": 4,
    "output_router_logits": False, "rms_norm_eps": 1e-06,
    "rope_scaling": None, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
    "sliding_window": None, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
}

# (config, published total, catalog name)
CONFIGS = {
    "mixtral-8x7b": (MIXTRAL_8X7B, 46.7e9),
    "deepseek-moe-16b": (DEEPSEEK_MOE_16B, 16.4e9),
    "qwen1.5-moe-a2.7b": (QWEN15_MOE, 14.3e9),
    "qwen3-30b-a3b": (QWEN3_30B_A3B, 30.5e9),
}


class MoEConfigFiles(dsf.TempDirTest):
    def test_a_config_json_with_experts_matches_the_published_total(self):
        for name, (cfg, published) in CONFIGS.items():
            with self.subTest(model=name):
                path = self.write(name + "/config.json", json.dumps(cfg))
                res = run("estimate", "--model", path, "--stage", "2",
                          "--gpus", "8", "--json")
                self.assertEqual(res.rc, 0, repr(res))
                params = res.json()["inputs"]["params"]
                self.assertLess(abs(params - published) / published, 0.01,
                                (name, params))
                # the file and the catalog entry agree to the parameter
                by_name = run("estimate", "--model", name, "--stage", "2",
                              "--gpus", "8", "--json")
                self.assertEqual(by_name.json(), res.json() | {
                    "inputs": res.json()["inputs"] | {"model": name}})

    def test_gen_reads_a_config_json_with_experts(self):
        path = self.write("mixtral/config.json", json.dumps(MIXTRAL_8X7B))
        res = run("gen", "8xa100", "--param", "model=" + path,
                  "--param", "gpu_mem_gb=80", "-o", self.tmp + "/out")
        self.assertEqual(res.rc, 0, repr(res))
        by_name = run("gen", "8xa100", "--param", "model=mixtral-8x7b")
        self.assertEqual(by_name.rc, 0, repr(by_name))
        # same memory columns whether named or given as a file
        self.assertEqual(res.out.splitlines()[1:4],
                         by_name.out.splitlines()[1:4])

    def test_a_config_json_missing_an_expert_field_is_an_input_error(self):
        cfg = dict(MIXTRAL_8X7B)
        del cfg["num_local_experts"]
        path = self.write("bad/config.json", json.dumps(cfg))
        res = run("estimate", "--model", path)
        self.assertEqual(res.rc, 3, repr(res))
        self.assertIn("missing the required field 'num_local_experts'",
                      res.err)
        self.assertIn(path, res.err)


class MoEByName(unittest.TestCase):
    def test_mixtral_by_name_in_estimate_and_gen(self):
        res = run("estimate", "--model", "mixtral-8x7b", "--gpus", "8",
                  "--json")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertEqual(res.json()["inputs"]["params"], 46702792704)
        gen = run("gen", "8xa100", "--param", "model=mixtral-8x7b")
        self.assertEqual(gen.rc, 0, repr(gen))
        self.assertNotIn("unknown model", gen.err)

    def test_models_lists_experts_and_active_parameters(self):
        res = run("models")
        self.assertEqual(res.rc, 0, repr(res))
        head = res.out.splitlines()[0].split()
        self.assertEqual(head[:4], ["MODEL", "PARAMS", "ACTIVE", "EXPERTS"])
        rows = {line.split()[0]: line.split()
                for line in res.out.splitlines()[1:-1]}
        self.assertEqual(rows["mixtral-8x7b"][1:4], ["46.70B", "12.88B", "8/2"])
        self.assertEqual(rows["deepseek-moe-16b"][3], "64/6+2")
        self.assertEqual(rows["qwen1.5-moe-a2.7b"][3], "60/4+1")
        self.assertEqual(rows["llama-2-7b"][1:4], ["6.74B", "6.74B", "-"])
        js = {r["name"]: r for r in run("models", "--json").json()}
        self.assertEqual(js["mixtral-8x7b"]["experts"], 8)
        self.assertEqual(js["mixtral-8x7b"]["experts_per_token"], 2)
        self.assertEqual(js["deepseek-moe-16b"]["shared_experts"], 2)
        self.assertEqual(js["llama-2-7b"]["experts"], 0)
        self.assertEqual(js["llama-2-7b"]["active_params"], 6738415616)

    def test_estimate_help_and_show_point_to_the_models_command(self):
        res = run("estimate", "--help")
        self.assertEqual(res.rc, 0, repr(res))
        self.assertIn("dsforge models", res.out)
        show = run("show", "base")
        self.assertRegex(show.out, r"(?m)^  model .*\(dsforge models\)")
        # an unknown name: the nearest names, then where the list is
        for name, near in (("mixtrl-8x7b", "did you mean: mixtral-8x7b"),
                           ("zzzzzzzzzzzzz", None)):
            bad = run("estimate", "--model", name)
            self.assertEqual(bad.rc, 2, repr(bad))
            self.assertIn("dsforge models lists the catalog", bad.err)
            if near:
                self.assertIn(near, bad.err)


class ExpertParallel(unittest.TestCase):
    """--ep-size / expert_parallel_size (deepspeed.moe's header has the
    formulas; tests/lua/test_moe.lua checks them by hand)."""

    def test_estimate_ep_size_divides_the_replicated_expert_bytes(self):
        one = run("estimate", "--model", "mixtral-8x7b", "--gpus", "8",
                  "--stage", "2", "--json")
        eight = run("estimate", "--model", "mixtral-8x7b", "--gpus", "8",
                    "--stage", "2", "--ep-size", "8", "--json")
        self.assertEqual(eight.rc, 0, repr(eight))
        pe = eight.json()["inputs"]["expert_params"]
        self.assertEqual(pe, 32 * 8 * 3 * 4096 * 14336)
        # ZeRO-2 keeps 2 bytes of fp16 parameters per parameter on every
        # GPU: with ep 8 only 1/8 of the experts' are there
        self.assertEqual(one.json()["rows"][0]["gpu_bytes"]
                         - eight.json()["rows"][0]["gpu_bytes"],
                         2 * (pe - pe // 8))
        self.assertEqual(eight.json()["inputs"]["ep_size"], 8)
        text = run("estimate", "--model", "mixtral-8x7b", "--gpus", "8",
                   "--stage", "2", "--ep-size", "8")
        self.assertIn("MoE: 8 experts per layer, 2 per token; 12879M active "
                      "params, 45097M in experts; expert parallel size 8.",
                      text.out)
        dense = run("estimate", "--model", "llama-2-7b", "--stage", "2")
        self.assertNotIn("MoE", dense.out)

    def test_estimate_refuses_what_deepspeed_refuses(self):
        for args, text in (
                (["--model", "mixtral-8x7b", "--ep-size", "3", "--gpus", "6"],
                 "does not divide the 8 experts"),
                (["--model", "mixtral-8x7b", "--ep-size", "8", "--gpus", "4"],
                 "does not divide the 4 data-parallel GPUs"),
                (["--model", "mixtral-8x7b", "--ep-size", "8", "--gpus", "8",
                  "--stage", "3"], "Native DeepSpeed MoE is not supported"),
                (["--model", "llama-2-7b", "--ep-size", "2", "--gpus", "8"],
                 "needs a model with experts"),
                (["--model", "mixtral-8x7b", "--ep-size", "0"],
                 "--ep-size: '0' is not a whole number between 1 and 65536")):
            with self.subTest(args=args):
                res = run("estimate", *args)
                self.assertEqual(res.rc, 2, repr(res))
                self.assertIn(text, res.err)
                self.assertEqual(res.out, "")

    def test_gen_expert_parallel_size(self):
        base = ("gen", "8xa100", "--param", "model=mixtral-8x7b",
                "--param", "zero_stage=2")
        one = run(*base)
        eight = run(*base, "--param", "expert_parallel_size=8")
        self.assertEqual(eight.rc, 0, repr(eight))
        gpu = lambda r: [float(line.split()[9]) for line in r.out.splitlines()[1:4]]
        self.assertLess(gpu(eight)[0], gpu(one)[0] - 70)
        bad = run("gen", "8xa100", "--param", "model=mixtral-8x7b",
                  "--param", "expert_parallel_size=8")
        self.assertEqual(bad.rc, 3, repr(bad))
        self.assertIn("needs ZeRO stage 0, 1 or 2", bad.err)
        rng = run(*base, "--param", "expert_parallel_size=0")
        self.assertEqual(rng.rc, 2, repr(rng))
        self.assertIn("out of range (1 .. 65536)", rng.err)

    def test_the_planner_leaves_out_zero3_with_expert_parallelism(self):
        res = run("gen", "small-gpu-offload", "--param", "model=mixtral-8x7b",
                  "--param", "expert_parallel_size=8",
                  "--param", "gpus_per_node=8", "--param", "cpu_mem_gb=2048")
        self.assertEqual(res.rc, 0, repr(res))
        for line in res.out.splitlines()[1:4]:
            self.assertEqual(line.split()[5], "2", line)


class NotModelledTogether(unittest.TestCase):
    """The MoE terms (deepspeed.moe) and the LoRA, AutoTP and NVMe terms
    (deepspeed.memory_terms) are not combined: asked for both, estimate
    and the planner say so instead of leaving one of them out."""

    def test_estimate_refuses_lora_tp_or_nvme_with_experts(self):
        for extra in (("--finetune", "lora"), ("--tp", "2"),
                      ("--stage", "3", "--offload-optimizer", "nvme")):
            with self.subTest(extra=extra):
                res = run("estimate", "--model", "mixtral-8x7b", "--gpus", "8",
                          *extra)
                self.assertEqual(res.rc, 2, repr(res))
                self.assertIn("not modelled for a mixture-of-experts", res.err)
        plain = run("estimate", "--model", "llama-3-8b", "--gpus", "8",
                    "--finetune", "lora")
        self.assertEqual(plain.rc, 0, repr(plain))

    def test_the_planner_says_nvme_is_not_modelled_with_experts(self):
        res = run("gen", "small-gpu-offload", "--param", "model=mixtral-8x7b",
                  "--param", "offload=nvme", "--param", "zero_stage=3",
                  "--param", "gpus_per_node=8")
        self.assertEqual(res.rc, 3, repr(res))
        self.assertIn("LoRA and NVMe offload are not modelled for a "
                      "mixture-of-experts model", res.err)
        # (LoRA's adapter count is refused for it before: not llama-style)
        lora = run("gen", "small-gpu-offload", "--param", "model=mixtral-8x7b",
                   "--param", "finetune=lora", "--param", "gpus_per_node=8")
        self.assertEqual(lora.rc, 3, repr(lora))


if __name__ == "__main__":
    unittest.main()
