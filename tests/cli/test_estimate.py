"""dsforge estimate: DeepSpeed's documented memory tables, reproduced to
the printed precision with the current formulas; --json; one row;
activations; parameter counts from config.json files; bad input.

The tables are those of DeepSpeed's docs/code-docs/source/memory.rst
(estimate_zero2/zero3_model_states_mem_needs_all_cold/_all_live for t5-3b
on 1 node x 8 GPUs, and the t5-large GPU cases on 4 GPUs). The formulas
are runtime/zero/stage_1_and_2.py and stage3.py as summarised in
../shared/reference/deepspeed.md section 5.
"""
import json
import os
import re
import unittest

import dsf
from dsf import run

GIB = 2 ** 30
F = 1.5  # additional_buffer_factor

# memory.rst, ZeRO-2, cold: total_params=2851e6, 8 GPUs, 1 node.
# (per CPU, per GPU) by offload_optimizer. The docs print 15.93GB for
# "none": that is the pre-v0.14.3 formula 4P + 16P/N. DeepSpeed's current
# formula 2P + 18P/N (PR #5099) gives 11.28GB, which is what we assert.
DOC_ZERO2_COLD = {"cpu": ("127.45", "5.31"), "none": ("127.45", "11.28")}
DOC_ZERO2_COLD_STALE_GPU = "15.93"
# the same for the live t5-3b model (2851598336 params): docs 15.93 (stale)
DOC_ZERO2_LIVE = {"cpu": ("127.48", "5.31"), "none": ("127.48", "11.29")}

# memory.rst, ZeRO-3: (offload_param, offload_optimizer, zero_init) ->
# (per CPU, per GPU), cold (2851e6 params, 32e6 largest layer) and live
# t5-3b, 1 node x 8 GPUs.
DOC_ZERO3_COLD = {
    ("cpu", "cpu", 1): ("71.69", "0.12"),
    ("cpu", "cpu", 0): ("127.45", "0.12"),
    ("none", "cpu", 1): ("63.72", "0.78"),
    ("none", "cpu", 0): ("127.45", "0.78"),
    ("none", "none", 1): ("1.43", "6.09"),
    ("none", "none", 0): ("127.45", "6.09"),
}
DOC_ZERO3_LIVE = {
    ("cpu", "cpu", 1): ("71.71", "0.12"),
    ("cpu", "cpu", 0): ("127.48", "0.12"),
    ("none", "cpu", 1): ("63.74", "0.79"),
    ("none", "cpu", 0): ("127.48", "0.79"),
    ("none", "none", 1): ("1.47", "6.10"),
    ("none", "none", 0): ("127.48", "6.10"),
}
# memory.rst, t5-large on 4 GPUs: "total params: 737.67M, largest layer
# params: 32.90M, largest layer memory: 125MB, case1 gpu memory: 3291MB,
# case2: 125MB, case3: 477MB" (MB = bytes >> 20).
DOC_T5_LARGE = {"params": "737.67", "largest": "32.90", "llm": 125,
                ("none", "none"): 3291, ("cpu", "cpu"): 125,
                ("none", "cpu"): 477}

ROW_RE = re.compile(
    r"^ +(?P<cpu>\d+\.\d\d)GB \| +(?P<gpu>\d+\.\d\d)GB \| ZeRO-(?P<stage>\d) "
    r"offload_optimizer=(?P<opt>\w+) offload_param=(?P<param>\w+)"
    r"(?: zero_init=(?P<zi>[01]))?$")


def zero2(P, n, nodes, cpu_offload):
    """estimate_zero2_model_states_mem_needs (current): (cpu, gpu) bytes."""
    N = n * nodes
    if cpu_offload:
        return int(P * max(4 * N, 16) * F), int(2 * P)
    return int(P * 4 * n * F), int(2 * P + int(18 * P / N))


def zero3(P, L, n, nodes, cpu_offload, cpu_offload_params, zero_init):
    """estimate_zero3_model_states_mem_needs: (cpu, gpu) bytes."""
    N, gf, llm = n * nodes, 1 / nodes, 4 * L
    if cpu_offload and cpu_offload_params:
        gpu = llm
        cpu = P * 18 * gf * F if zero_init else P * max(4 * n, 18 * gf) * F
    elif cpu_offload:
        gpu = llm + int(2 * P / N)
        cpu = P * 16 * gf * F if zero_init else P * max(4 * n, 16 * gf) * F
    else:
        gpu = llm + int(18 * P / N)
        cpu = L * 4 * n * F if zero_init else P * 4 * n * F
    return int(cpu), int(gpu)


def table(out):
    """{(stage, offload_optimizer, offload_param, zero_init or None):
    (cpu text, gpu text)} from the printed table."""
    rows = {}
    for line in out.splitlines():
        m = ROW_RE.match(line)
        if m:
            zi = int(m["zi"]) if m["zi"] is not None else None
            rows[(int(m["stage"]), m["opt"], m["param"], zi)] = (m["cpu"],
                                                                 m["gpu"])
    return rows


def json_rows(res):
    return {(r["stage"], r["offload_optimizer"], r["offload_param"],
             (1 if r["zero_init"] else 0) if "zero_init" in r else None): r
            for r in res["rows"]}


class Documented(dsf.TempDirTest):
    def estimate(self, *args):
        res = run("estimate", *args)
        self.assertExit(res, 0)
        return res

    def check_tables(self, out, z2, z3):
        rows = table(out)
        for opt, (cpu, gpu) in z2.items():
            with self.subTest(stage=2, offload_optimizer=opt):
                self.assertEqual(rows[(2, opt, "none", None)], (cpu, gpu))
        for (param, opt, zi), (cpu, gpu) in z3.items():
            with self.subTest(stage=3, offload_param=param,
                              offload_optimizer=opt, zero_init=zi):
                self.assertEqual(rows[(3, opt, param, zi)], (cpu, gpu))

    def test_t5_3b_cold_tables(self):
        # estimate_*_all_cold(total_params=2851e6, largest_layer_params=32e6,
        # num_gpus_per_node=8, num_nodes=1)
        res = self.estimate("--params", "2851000000", "--largest-layer",
                            "32000000", "--gpus", "8", "--nodes", "1")
        self.assertIn("HW: Setup with 1 node, 8 GPUs per node.", res.out)
        self.assertIn("SW: Model with 2851M total params, 32M largest layer "
                      "params.", res.out)
        self.assertIn("  per CPU  |  per GPU |   Options", res.out)
        self.check_tables(res.out, DOC_ZERO2_COLD, DOC_ZERO3_COLD)
        # the stale docs figure is not what the current formula gives
        self.assertNotEqual(table(res.out)[(2, "none", "none", None)][1],
                            DOC_ZERO2_COLD_STALE_GPU)

    def test_t5_3b_live_tables(self):
        # estimate_*_all_live(AutoModel.from_pretrained("t5-3b"), 8, 1)
        res = self.estimate("--model", "t5-3b", "--gpus", "8")
        self.assertIn("SW: Model with 2851M total params, 32M largest layer "
                      "params.", res.out)
        self.check_tables(res.out, DOC_ZERO2_LIVE, DOC_ZERO3_LIVE)

    def test_t5_large_gpu_cases(self):
        res = json.loads(self.estimate("--model", "t5-large", "--gpus", "4",
                                       "--json").out)
        P, L = res["inputs"]["params"], res["inputs"]["largest_layer"]
        self.assertEqual("%.2f" % (P / 1e6), DOC_T5_LARGE["params"])
        self.assertEqual("%.2f" % (L / 1e6), DOC_T5_LARGE["largest"])
        self.assertEqual((4 * L) >> 20, DOC_T5_LARGE["llm"])
        rows = json_rows(res)
        for (param, opt) in (("none", "none"), ("cpu", "cpu"),
                             ("none", "cpu")):
            for zi in (0, 1):
                with self.subTest(offload_param=param, offload_optimizer=opt,
                                  zero_init=zi):
                    gpu = rows[(3, opt, param, zi)]["gpu_bytes"]
                    self.assertEqual(gpu >> 20, DOC_T5_LARGE[(param, opt)])

    def test_every_figure_matches_the_formulas(self):
        # bytes, for several shapes, including several nodes (the ZeRO-2
        # offload CPU term uses all GPUs, the ZeRO-3 ones 1/nodes)
        for P, L, n, nodes in ((2851000000, 32000000, 8, 1),
                               (737668096, 32899072, 4, 1),
                               (6738415616, 131072000, 8, 2),
                               (70553706496, 1050673152, 8, 4),
                               (124439808, 38597376, 1, 1),
                               (2851000000, 32000000, 1, 2),
                               (1000000000, 5000000, 2, 4)):
            res = json.loads(self.estimate(
                "--params", P, "--largest-layer", L, "--gpus", n,
                "--nodes", nodes, "--json").out)
            rows = json_rows(res)
            want = {(2, "cpu", "none", None): zero2(P, n, nodes, True),
                    (2, "none", "none", None): zero2(P, n, nodes, False)}
            for param, opt in (("cpu", "cpu"), ("none", "cpu"),
                               ("none", "none")):
                for zi in (1, 0):
                    want[(3, opt, param, zi)] = zero3(
                        P, L, n, nodes, opt == "cpu", param == "cpu", zi)
            for key, (cpu, gpu) in want.items():
                with self.subTest(P=P, n=n, nodes=nodes, row=key):
                    r = rows[key]
                    self.assertEqual((r["cpu_bytes"], r["gpu_bytes"]),
                                     (cpu, gpu))
                    self.assertEqual(r["cpu_text"], "%.2fGB" % (cpu / GIB))
                    self.assertEqual(r["gpu_text"], "%.2fGB" % (gpu / GIB))


class Output(dsf.TempDirTest):
    def test_json_has_bytes_and_echoes_inputs(self):
        res = run("estimate", "--model", "llama-2-7b", "--gpus", "4",
                  "--nodes", "2", "--json")
        self.assertExit(res, 0)
        d = json.loads(res.out)
        self.assertEqual(d["inputs"], {
            "model": "llama-2-7b", "params": 6738415616,
            "largest_layer": 131072000, "gpus_per_node": 4, "nodes": 2})
        self.assertTrue(d["rows"])
        for r in d["rows"]:
            self.assertIsInstance(r["cpu_bytes"], int)
            self.assertIsInstance(r["gpu_bytes"], int)
            self.assertIn(r["stage"], (0, 1, 2, 3))
            self.assertIn(r["offload_optimizer"], ("none", "cpu"))
            self.assertIn(r["offload_param"], ("none", "cpu"))
        # the text table prints the same rows
        text = run("estimate", "--model", "llama-2-7b", "--gpus", "4",
                   "--nodes", "2")
        self.assertIn("HW: Setup with 2 nodes, 4 GPUs per node.", text.out)
        rows = table(text.out)
        self.assertEqual(len(rows), len(d["rows"]))
        for key, r in json_rows(d).items():
            self.assertEqual(rows[key], ("%.2f" % (r["cpu_bytes"] / GIB),
                                         "%.2f" % (r["gpu_bytes"] / GIB)))

    def test_params_input_is_echoed(self):
        d = json.loads(run("estimate", "--params", "1000000", "--json").out)
        self.assertEqual(d["inputs"]["params"], 1000000)
        self.assertEqual(d["inputs"]["largest_layer"], 0)
        self.assertEqual(d["inputs"]["gpus_per_node"], 1)
        self.assertEqual(d["inputs"]["nodes"], 1)

    def test_one_row_with_stage_and_offload(self):
        P, L = 2851000000, 32000000
        base = ["--params", P, "--largest-layer", L, "--gpus", 8]
        cases = [
            (["--stage", 3, "--offload-optimizer", "cpu", "--offload-param",
              "cpu"], (3, "cpu", "cpu", 1),
             zero3(P, L, 8, 1, True, True, True)),
            (["--stage", 3, "--offload-optimizer", "cpu", "--offload-param",
              "cpu", "--zero-init", 0], (3, "cpu", "cpu", 0),
             zero3(P, L, 8, 1, True, True, False)),
            (["--stage", 3], (3, "none", "none", 1),
             zero3(P, L, 8, 1, False, False, True)),
            (["--stage", 2, "--offload-optimizer", "cpu"],
             (2, "cpu", "none", None), zero2(P, 8, 1, True)),
            (["--stage", 2], (2, "none", "none", None), zero2(P, 8, 1, False)),
        ]
        for extra, key, (cpu, gpu) in cases:
            with self.subTest(args=extra):
                res = run("estimate", *(base + extra + ["--json"]))
                self.assertExit(res, 0)
                rows = json_rows(json.loads(res.out))
                self.assertEqual(list(rows), [key])
                self.assertEqual((rows[key]["cpu_bytes"],
                                  rows[key]["gpu_bytes"]), (cpu, gpu))
                text = run("estimate", *(base + extra))
                self.assertEqual(table(text.out), {key: (
                    "%.2f" % (cpu / GIB), "%.2f" % (gpu / GIB))})

    def test_offload_that_deepspeed_ignores_is_refused(self):
        base = ["estimate", "--params", "1000000000"]
        for extra in (["--stage", 2, "--offload-param", "cpu"],
                      ["--stage", 0, "--offload-optimizer", "cpu"]):
            with self.subTest(args=extra):
                res = run(*(base + extra))
                self.assertExit(res, 2)
                self.assertIn("offload", res.err)

    def test_activations(self):
        def est(*extra):
            res = run("estimate", "--model", "llama-2-7b", "--gpus", "8",
                      "--stage", "3", "--json", *extra)
            self.assertExit(res, 0)
            return json.loads(res.out)

        plain = est()
        self.assertNotIn("activation_bytes", plain)
        eager = ("--flash-attention", "0")
        a1 = est("--seq-len", "4096", "--micro-batch", "1", *eager)
        a2 = est("--seq-len", "4096", "--micro-batch", "2", *eager)
        a_long = est("--seq-len", "8192", "--micro-batch", "1", *eager)
        self.assertEqual(a1["inputs"]["seq_len"], 4096)
        self.assertEqual(a1["inputs"]["micro_batch"], 1)
        act, ckpt = a1["activation_bytes"], a1["activation_bytes_checkpointed"]
        self.assertGreater(ckpt, 0)
        self.assertLess(ckpt * 5, act)
        # Korthikanti et al. 2022, no recomputation: s*b*h*(34 + 5*a*s/h)
        # bytes per layer; llama-2-7b: h 4096, a 32, 32 layers
        s, b, h, a, layers = 4096, 1, 4096, 32, 32
        korthikanti = layers * s * b * h * (34 + 5 * a * s / h)
        self.assertGreater(act, 0.9 * korthikanti)
        self.assertLess(act, 1.1 * korthikanti)
        # linear in the micro batch, more than linear in the sequence
        self.assertEqual(a2["activation_bytes"], 2 * act)
        self.assertEqual(a2["activation_bytes_checkpointed"], 2 * ckpt)
        self.assertGreater(a_long["activation_bytes"], 2 * act)
        # they add to the per-GPU model states, which stay the same
        for r, r0 in zip(a1["rows"], plain["rows"]):
            self.assertEqual(r["gpu_bytes"], r0["gpu_bytes"])
            self.assertEqual(r["gpu_total_bytes"], r["gpu_bytes"] + act)
            self.assertEqual(r["gpu_total_checkpointed_bytes"],
                             r["gpu_bytes"] + ckpt)
        # --micro-batch defaults to 1
        self.assertEqual(est("--seq-len", "4096", *eager)["activation_bytes"],
                         act)
        # FlashAttention (the default) drops the 5*a*s^2*b term: 34*s*b*h
        # per layer, plus the same fp32 logits (4*s*b*v, v = 32000)
        flash = est("--seq-len", "4096")["activation_bytes"]
        logits = 4 * s * b * 32000
        self.assertEqual(flash, layers * 34 * s * b * h + logits)
        self.assertEqual(act, layers * s * b * h * (34 + 5 * a * s / h) +
                         logits)
        text = run("estimate", "--model", "llama-2-7b", "--gpus", "8",
                   "--stage", "3", "--seq-len", "4096", *eager)
        self.assertIn("Activations per GPU: %.2fGB (with activation "
                      "checkpointing: %.2fGB)" % (act / GIB, ckpt / GIB),
                      text.out)


# Hugging Face config.json files (as published on the Hub) and the catalog
# entry of the same model, with the parameter count transformers reports
# (model.num_parameters(): every parameter once, tied embeddings once).
LLAMA_2_7B = {
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 11008,
    "max_position_embeddings": 4096, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.31.0.dev0",
    "use_cache": True, "vocab_size": 32000}
QWEN25_05B = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
    "hidden_size": 896, "initializer_range": 0.02,
    "intermediate_size": 4864, "max_position_embeddings": 32768,
    "max_window_layers": 24, "model_type": "qwen2",
    "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
    "use_cache": True, "use_mrope": False, "use_sliding_window": False,
    "vocab_size": 151936}
GPT2 = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1,
    "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
    "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
    "resid_pdrop": 0.1, "summary_activation": None,
    "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
    "summary_type": "cls_index", "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True,
                                                 "max_length": 50}},
    "vocab_size": 50257}
T5_LARGE = {
    "architectures": ["T5WithLMHeadModel"], "d_ff": 4096, "d_kv": 64,
    "d_model": 1024, "decoder_start_token_id": 0, "dropout_rate": 0.1,
    "eos_token_id": 1, "initializer_factor": 1.0, "is_encoder_decoder": True,
    "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
    "num_heads": 16, "num_layers": 24, "output_past": True,
    "pad_token_id": 0, "relative_attention_num_buckets": 32,
    "vocab_size": 32128}

HF_CONFIGS = [
    # (name, config.json, catalog model, params, largest layer)
    ("llama", LLAMA_2_7B, "llama-2-7b", 6738415616, 32000 * 4096),
    ("qwen2", QWEN25_05B, "qwen2.5-0.5b", 494032768, 151936 * 896),
    ("gpt2", GPT2, "gpt2", 124439808, 50257 * 768),
    ("t5", T5_LARGE, "t5-large", 737668096, 32128 * 1024),
]


class ConfigJson(dsf.TempDirTest):
    def inputs(self, model):
        res = run("estimate", "--model", model, "--json")
        self.assertExit(res, 0)
        return json.loads(res.out)["inputs"]

    def test_config_json_counts_equal_the_catalog(self):
        for name, cfg, catalog, params, largest in HF_CONFIGS:
            with self.subTest(arch=name):
                path = self.write(os.path.join(name, "config.json"),
                                  json.dumps(cfg, indent=2))
                got = self.inputs(path)
                want = self.inputs(catalog)
                self.assertEqual(got["params"], want["params"])
                self.assertEqual(got["largest_layer"], want["largest_layer"])
                # and both equal the published count
                self.assertEqual(got["params"], params)
                self.assertEqual(got["largest_layer"], largest)

    def test_same_tables_from_config_json_and_catalog(self):
        path = self.write("llama/config.json", json.dumps(LLAMA_2_7B))
        a = run("estimate", "--model", path, "--gpus", "8", "--json")
        b = run("estimate", "--model", "llama-2-7b", "--gpus", "8", "--json")
        self.assertEqual(json.loads(a.out)["rows"], json.loads(b.out)["rows"])

    def test_biases_and_tying_are_counted(self):
        h, I, layers, V = 4096, 11008, 32, 32000
        base = self.inputs(self.write("l/config.json", json.dumps(LLAMA_2_7B)))
        # LlamaAttention: q, k, v, o biases with attention_bias
        cfg = dict(LLAMA_2_7B, attention_bias=True)
        got = self.inputs(self.write("ab/config.json", json.dumps(cfg)))
        self.assertEqual(got["params"] - base["params"], layers * 4 * h)
        # LlamaMLP: gate, up (I each) and down (h) biases with mlp_bias
        cfg = dict(LLAMA_2_7B, mlp_bias=True)
        got = self.inputs(self.write("mb/config.json", json.dumps(cfg)))
        self.assertEqual(got["params"] - base["params"],
                         layers * (2 * I + h))
        # a tied lm_head is the embedding: counted once
        cfg = dict(LLAMA_2_7B, tie_word_embeddings=True)
        got = self.inputs(self.write("tie/config.json", json.dumps(cfg)))
        self.assertEqual(base["params"] - got["params"], V * h)
        # qwen2 always has q/k/v biases: a*d + 2*kv*d per layer
        cfg = dict(QWEN25_05B, model_type="llama", architectures=[
            "LlamaForCausalLM"])
        got = self.inputs(self.write("q/config.json", json.dumps(cfg)))
        qwen = self.inputs(self.write("q2/config.json",
                                      json.dumps(QWEN25_05B)))
        self.assertEqual(qwen["params"] - got["params"],
                         24 * (14 * 64 + 2 * 2 * 64))

    def test_hub_id_is_a_catalog_name(self):
        got = self.inputs("meta-llama/Llama-2-7b-hf")
        self.assertEqual(got["params"], 6738415616)


class BadInput(dsf.TempDirTest):
    def test_unknown_model_suggests_names(self):
        res = run("estimate", "--model", "llama-2-7x")
        self.assertExit(res, 2)
        self.assertIn("llama-2-7x", res.err)
        self.assertIn("llama-2-7b", res.err)
        res = run("estimate", "--model", "qwen2.5-7")
        self.assertExit(res, 2)
        self.assertIn("qwen2.5-7b", res.err)
        res = run("estimate", "--model", "zzzzzzzzzzzz")
        self.assertExit(res, 2)
        # no near name: where the whole list is (issue 33: 30 names were
        # too many for a hint)
        self.assertIn("dsforge models", res.err)

    def test_unreadable_config_json_exits_3(self):
        missing = os.path.join(self.tmp, "absent", "config.json")
        res = run("estimate", "--model", missing)
        self.assertExit(res, 3)
        self.assertIn(missing, res.err)
        folder = os.path.join(self.tmp, "dir.json")
        os.makedirs(folder)
        res = run("estimate", "--model", folder)
        self.assertExit(res, 3)
        self.assertIn(folder, res.err)
        broken = self.write("broken/config.json", '{"model_type": "llama",')
        res = run("estimate", "--model", broken)
        self.assertExit(res, 3)
        self.assertIn(broken + ":1:", res.err)

    def test_incomplete_config_json_exits_3(self):
        cases = {
            "no-layers": ({k: v for k, v in LLAMA_2_7B.items()
                           if k != "num_hidden_layers"}, "num_hidden_layers"),
            "no-type": ({"hidden_size": 4096}, "model_type"),
            "bert": (dict(LLAMA_2_7B, model_type="bert",
                          architectures=["BertModel"]), "bert"),
            "zero-heads": (dict(GPT2, n_head=0), "n_head"),
            "float-size": (dict(T5_LARGE, d_model=1024.5), "d_model"),
        }
        for name, (cfg, word) in cases.items():
            with self.subTest(case=name):
                path = self.write(os.path.join(name, "config.json"),
                                  json.dumps(cfg))
                res = run("estimate", "--model", path)
                self.assertExit(res, 3)
                self.assertIn(word, res.err)
                self.assertIn(path, res.err)
                self.assertEqual(res.out, "")

    def test_bad_numbers_exit_2(self):
        for args in (["--params", "1000", "--gpus", "0"],
                     ["--params", "1000", "--nodes", "0"],
                     ["--params", "1000", "--gpus", "-8"],
                     ["--params", "-1000"],
                     ["--params", "0"],
                     ["--params", "1000", "--largest-layer", "-1"],
                     ["--params", "1000", "--largest-layer", "2000"],
                     ["--params", "1000", "--stage", "4"],
                     ["--params", "1000", "--offload-optimizer", "nvme"],
                     ["--params", "1000", "--zero-init", "2"],
                     ["--params", "ten"],
                     ["--params", "1000", "--micro-batch", "2"],
                     ["--params", "1000", "--seq-len", "4096"],
                     ["--model", "gpt2", "--seq-len", "0"],
                     ["--gpus", "8"],
                     []):
            with self.subTest(args=args):
                res = run("estimate", *args)
                self.assertExit(res, 2)
                self.assertIn("error", res.err)
                self.assertEqual(res.out, "")


if __name__ == "__main__":
    unittest.main()


class Models(dsf.TempDirTest):
    """`dsforge models` lists the catalog that estimate, the planner and
    the model param read (issue 33: it was listed nowhere)."""

    def test_every_listed_model_is_usable_by_name(self):
        res = run("models", "--json")
        self.assertEqual(res.rc, 0, repr(res))
        rows = res.json()
        self.assertGreaterEqual(len(rows), 20)
        names = [r["name"] for r in rows]
        self.assertEqual(names, sorted(names))
        table = run("models")
        self.assertEqual(table.rc, 0, repr(table))
        for r in rows:
            self.assertRegex(table.out, r"(?m)^%s\s" % re.escape(r["name"]))
            for k in ("params", "hidden", "layers", "heads", "kv_heads",
                      "vocab"):
                self.assertIsInstance(r[k], int, (r["name"], k))
            est = run("estimate", "--model", r["name"], "--json")
            self.assertEqual(est.rc, 0, repr(est))
            self.assertEqual(est.json()["inputs"]["params"],
                             r["params_computed"], r["name"])
        self.assertIn("%d models" % len(rows), table.out)

    def test_the_hint_of_an_unknown_model_names_the_command(self):
        res = run("gen", "8xa100", "--param", "model=no-such-model")
        self.assertEqual(res.rc, 2, repr(res))
        self.assertIn("dsforge models", res.err)

    def test_arguments_are_refused(self):
        res = run("models", "extra")
        self.assertEqual(res.rc, 2, repr(res))
        self.assertIn("takes no arguments", res.err)
