"""The built-in profiles describe a machine the way people do (nodes x GPUs
per node), keep what the command line fixes, and say what would fit when
nothing does."""
import json
import os
import re
import shlex
import unittest

import dsf
from dsf import run


def zero(cfg):
    z = cfg["zero_optimization"]
    off = "none"
    if "offload_param" in z:
        off = "all"
    elif "offload_optimizer" in z:
        off = "optimizer"
    return z["stage"], off


class Machine(dsf.TempDirTest):
    def gen_json(self, *args):
        res = run("gen", *args, "--stdout")
        self.assertEqual(res.rc, 0, res)
        return json.loads(res.out)

    def test_gpus_per_node_alone_sets_the_world_size(self):
        cfg = self.gen_json("8xa100", "--tier", "small",
                            "--param", "gpus_per_node=4")
        # micro 1 x accumulation 8 x 4 GPUs
        self.assertEqual(cfg["train_batch_size"], 32)

    def test_nodes_multiply_the_world_size(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--param", "nodes=2")
        self.assertEqual(cfg["train_batch_size"], 1 * 8 * 16)

    def test_an_explicit_world_size_is_kept(self):
        cfg = self.gen_json("8xa100", "--tier", "small", "--param", "nodes=2",
                            "--param", "world_size=4")
        self.assertEqual(cfg["train_batch_size"], 32)

    def test_manifest_records_nodes_and_the_derived_world_size(self):
        out = os.path.join(self.tmp, "out")
        res = run("gen", "8xa100", "--param", "nodes=2", "-o", out)
        self.assertEqual(res.rc, 0, res)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        for v in m["variants"]:
            self.assertEqual(v["params"]["nodes"], 2)
            self.assertEqual(v["params"]["world_size"], 16)


class PlannerKeepsExplicitParams(dsf.TempDirTest):
    def variants(self, *args):
        out = os.path.join(self.tmp, "out")
        res = run("gen", *args, "-o", out)
        self.assertEqual(res.rc, 0, res)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        got = {}
        for v in m["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                got[v["name"]] = (v["params"], json.load(f))
        return got

    def test_matrix_zero_stage_gives_configs_with_that_stage(self):
        got = self.variants("small-gpu-offload", "--matrix", "zero_stage=2,3")
        self.assertEqual(len(got), 6)
        for name, (params, cfg) in got.items():
            stage = int(name.rsplit("-", 1)[1])
            self.assertEqual(zero(cfg)[0], stage, name)
            self.assertEqual(params["zero_stage"], stage, name)

    def test_matrix_offload_gives_configs_with_that_offload(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--matrix", "offload=optimizer,all")
        for name, (params, cfg) in got.items():
            off = name.rsplit("-", 1)[1]
            self.assertEqual(zero(cfg)[1], off, name)
        # parameter offload needs stage 3: the planner picked it
        self.assertEqual(zero(got["small.offload-all"][1])[0], 3)

    def test_explicit_micro_batch_is_kept_and_accumulation_follows(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--param", "micro_batch_size=2")
        params, cfg = got["small"]
        self.assertEqual(cfg["train_micro_batch_size_per_gpu"], 2)
        self.assertEqual(cfg["gradient_accumulation_steps"], 8)  # 16 / 2

    def test_explicit_accumulation_is_kept_and_micro_batch_follows(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--param", "gradient_accumulation=4")
        params, cfg = got["small"]
        self.assertEqual(cfg["gradient_accumulation_steps"], 4)
        self.assertEqual(cfg["train_micro_batch_size_per_gpu"], 4)  # 16 / 4

    def test_micro_batch_and_accumulation_given_set_the_global_batch(self):
        got = self.variants("small-gpu-offload", "--tier", "small",
                            "--param", "micro_batch_size=2",
                            "--param", "gradient_accumulation=3")
        params, cfg = got["small"]
        self.assertEqual(cfg["train_batch_size"], 6)
        self.assertEqual(params["global_batch"], 6)  # the manifest agrees

    def test_contradicting_params_are_an_error_naming_both(self):
        res = run("gen", "small-gpu-offload", "--param", "offload=all",
                  "--param", "zero_stage=2")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("offload=all", res.err)
        self.assertIn("zero_stage=2", res.err)
        res = run("gen", "small-gpu-offload", "--tier", "small",
                  "--param", "micro_batch_size=2",
                  "--param", "gradient_accumulation=2",
                  "--param", "global_batch=16")
        self.assertEqual(res.rc, 3, res)
        for word in ("micro_batch_size=2", "gradient_accumulation=2",
                     "global_batch=16"):
            self.assertIn(word, res.err)


class NothingFits(dsf.TempDirTest):
    ARGS = ["small-gpu-offload", "--tier", "small", "--param",
            "model=llama-2-13b", "--param", "cpu_mem_gb=64"]

    def test_a_table_of_what_was_tried_and_changes_that_fit(self):
        res = run("gen", *self.ARGS)
        self.assertEqual(res.rc, 3, res)
        lines = res.err.splitlines()
        # attributed to the profile, not to a plugin file
        self.assertRegex(lines[0], r"^\S*profiles/small-gpu-offload\.lua:\d+: "
                         r"error: ")
        self.assertNotIn("plugins/deepspeed", res.err)
        self.assertIn("nothing fits llama-2-13b on 1 GPU of 24 GiB", lines[0])
        self.assertLess(len(lines[0]), 160)
        tried = [l for l in lines if l.startswith("  ZeRO-")]
        # 8 CPU rows, then ZeRO-Infinity's two NVMe rows (nvme_path)
        self.assertEqual(len(tried), 10, res.err)
        self.assertTrue(all(len(l) < 100 for l in lines[1:10]), res.err)
        self.assertIn("changes that fit, cheapest first:", res.err)

    def test_every_suggested_change_really_fits(self):
        res = run("gen", *self.ARGS)
        fixes = re.findall(r"^    ((?:--param [^\s:]+ ?)+)", res.err, re.M)
        self.assertGreaterEqual(len(fixes), 2, res.err)
        for fix in fixes:
            ok = run("gen", *self.ARGS, *shlex.split(fix))
            self.assertEqual(ok.rc, 0, (fix, ok))

    def test_dropping_a_fixed_choice_is_suggested(self):
        res = run("gen", "small-gpu-offload", "--tier", "large",
                  "--param", "offload=none")
        self.assertEqual(res.rc, 3, res)
        self.assertIn("without --param offload=none", res.err)


CTX_PROFILE = """
local function helper(p)
  if p.n > 3 then
    dsforge.fail("n is too large", 2)
  end
  if p.m > 3 then
    dsforge.fail("m is too large for this machine", 0)
  end
end
return {
  params = { n = 1, m = 1 },
  prepare = function(p, ctx)
    helper(p)
    return nil
  end,
  build = function(p, ctx)
    return { train_micro_batch_size_per_gpu = 1, given = dsforge.sorted_keys(ctx.given) }
  end,
}
"""


class Context(dsf.TempDirTest):
    def test_ctx_given_names_what_the_command_line_set(self):
        d = self.profile("ctxp", CTX_PROFILE)
        res = run("gen", "ctxp", "--profile-path", d, "--param", "m=2",
                  "--matrix", "n=2", "--stdout")
        self.assertEqual(res.rc, 0, res)
        self.assertEqual(json.loads(res.out)["given"], ["m", "n"])
        res = run("gen", "ctxp", "--profile-path", d, "--stdout")
        self.assertEqual(json.loads(res.out)["given"], [])

    def test_fail_with_a_level_names_the_callers_line(self):
        d = self.profile("ctxp", CTX_PROFILE)
        res = run("gen", "ctxp", "--profile-path", d, "--param", "n=5")
        self.assertEqual(res.rc, 3, res)
        self.assertRegex(res.err, r"ctxp\.lua:13: error: n is too large")

    def test_fail_at_level_0_names_no_line(self):
        # a param given on the command line: no line of the profile holds
        # it, so the message stands alone and the hint says who judged it
        d = self.profile("ctxp", CTX_PROFILE)
        res = run("gen", "ctxp", "--profile-path", d, "--param", "m=5")
        self.assertEqual(res.rc, 3, res)
        self.assertRegex(res.err, r"^dsforge: error: m is too large for this machine\n")
        self.assertNotIn("ctxp.lua:", res.err)
        self.assertIn("hint: reported by", res.err)


# llama-3.2-1b's config.json, as on the Hugging Face Hub
LLAMA_32_1B = {
    "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072, "tie_word_embeddings": True,
}


class ModelParam(dsf.TempDirTest):
    def config(self, doc, name="config.json"):
        return self.write(os.path.join("m", name),
                          doc if isinstance(doc, str) else json.dumps(doc))

    def outputs(self, *args):
        out = os.path.join(self.tmp, "out%d" % len(os.listdir(self.tmp)))
        res = run("gen", *args, "-o", out)
        self.assertEqual(res.rc, 0, res)
        got = {}
        for f in sorted(os.listdir(out)):
            if f != "manifest.json":
                with open(os.path.join(out, f)) as fh:
                    got[f] = fh.read()
        return got

    def test_unknown_model_is_one_usage_error_with_did_you_mean(self):
        for prof in ("8xa100", "small-gpu-offload", "long-sequence"):
            res = run("gen", prof, "--param", "model=lama-2-7b")
            self.assertEqual(res.rc, 2, res)
            self.assertEqual(res.err.count("error:"), 1, res.err)
            self.assertIn("argument #3: error: --param model=lama-2-7b: "
                          "unknown model 'lama-2-7b'", res.err)
            self.assertIn("did you mean llama-2-7b", res.err)
            self.assertNotIn('"auto"', res.err)

    def test_unknown_model_in_a_matrix_names_its_argument(self):
        res = run("gen", "8xa100", "--tier", "small", "--matrix",
                  "model=llama-2-7b,gtp2")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("argument #5: error: --matrix model=gtp2: unknown "
                      "model 'gtp2'", res.err)
        self.assertIn("did you mean gpt2", res.err)

    def test_a_config_json_gives_the_configs_of_its_catalog_model(self):
        path = self.config(LLAMA_32_1B)
        for prof in ("8xa100", "small-gpu-offload"):
            by_name = self.outputs(prof, "--param", "model=llama-3.2-1b")
            by_file = self.outputs(prof, "--param", "model=" + path)
            self.assertEqual(by_name, by_file, prof)
        # the memory estimate (summary) uses it too
        res = run("gen", "8xa100", "--param", "model=" + path)
        ref = run("gen", "8xa100", "--param", "model=llama-3.2-1b")
        self.assertEqual(res.out, ref.out)

    def test_a_config_json_in_a_matrix(self):
        path = self.config(LLAMA_32_1B)
        got = self.outputs("small-gpu-offload", "--tier", "small", "--matrix",
                           "model=llama-3.2-1b," + path)
        self.assertEqual(len(got), 2)
        self.assertEqual(len(set(got.values())), 1)

    def test_the_manifest_pins_a_config_json_by_content(self):
        import hashlib
        path = self.config(LLAMA_32_1B)
        other = self.config(dict(LLAMA_32_1B, num_hidden_layers=8), "b.json")
        out = os.path.join(self.tmp, "o")
        res = run("gen", "small-gpu-offload", "--tier", "small", "--matrix",
                  "model=llama-3.2-1b,%s,%s" % (path, other), "-o", out)
        self.assertExit(res, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        want = {}
        for p in (path, other):
            with open(p, "rb") as f:
                want[p] = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(m["param_files"], {"model": want})
        self.assertEqual(m["profiles"]["small-gpu-offload"]["param_files"],
                         {"model": want})
        # a catalog name is no file
        res = run("gen", "8xa100", "--param", "model=llama-3.2-1b", "-o", out)
        with open(os.path.join(out, "manifest.json")) as f:
            self.assertNotIn("param_files", json.load(f))

    def test_a_bad_config_json_is_an_input_error_at_the_file(self):
        bad = self.config('{"model_type": "llama",\n', "bad.json")
        res = run("gen", "8xa100", "--param", "model=" + bad)
        self.assertEqual(res.rc, 3, res)
        self.assertIn(bad + ":2:1: error:", res.err)
        incomplete = self.config({"model_type": "llama"}, "incomplete.json")
        res = run("gen", "8xa100", "--param", "model=" + incomplete)
        self.assertEqual(res.rc, 3, res)
        self.assertIn(incomplete + ": error: config.json (llama) is missing "
                      "the required field 'hidden_size'", res.err)
        res = run("gen", "8xa100", "--param",
                  "model=" + os.path.join(self.tmp, "none.json"))
        self.assertEqual(res.rc, 3, res)
        self.assertIn("none.json", res.err)

    def test_an_unknown_model_in_a_profile_is_an_input_error_there(self):
        d = self.profile("mine", """
return { extends = "8xa100", params = { model = "llama-9" },
  build = function(p) return {} end }
""")
        res = run("gen", "mine", "--profile-path", d)
        self.assertEqual(res.rc, 3, res)
        self.assertIn("mine.lua: error: param 'model' = \"llama-9\": unknown "
                      "model 'llama-9'", res.err)

    def test_bad_check_and_file_declarations(self):
        for decl, msg in [
                ('{ default = "a", check = "nodot" }', "check must name"),
                ('{ default = "a", file = "yaml" }', 'file must be "json"'),
                ('{ default = 1, file = "json" }', "only a string param"),
        ]:
            d = self.profile("decl", "return { params = { x = %s }, "
                             "build = function(p) return {} end }" % decl)
            res = run("show", "decl", "--profile-path", d)
            self.assertEqual(res.rc, 3, res)
            self.assertIn(msg, res.err)


class Display(dsf.TempDirTest):
    def test_show_prints_ranges_as_people_write_them(self):
        res = run("show", "base")
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("e+308", res.out)
        self.assertNotIn("1e308", res.out)
        lines = res.out.splitlines()
        def after(name):
            i = [k for k, l in enumerate(lines)
                 if l.startswith("  %s " % name)][0]
            return lines[i + 1].strip()
        self.assertEqual(after("gpus_per_node"), "1 .. 64")
        self.assertEqual(after("cpu_mem_gb"), "1 .. 1048576")
        self.assertEqual(after("warmup_steps"), "\u2265 1")
        self.assertEqual(after("adam_epsilon"), "\u2265 0")

    def test_out_of_range_names_the_range_without_infinity(self):
        res = run("gen", "8xa100", "--param", "warmup_steps=0")
        self.assertEqual(res.rc, 2, res)
        self.assertIn("out of range (\u2265 1)", res.err)
        self.assertNotIn("inf", res.err)

    def test_no_internal_document_names_in_user_facing_text(self):
        internal = re.compile(r"(?i)\bseed[ -]?0\d\d|\bseed documents?\b")
        texts = {}
        for prof in dsf.BUILTIN_PROFILES:
            for args in (("show", prof), ("gen", prof)):
                res = run(*args)
                texts[" ".join(args)] = res.out + res.err
        for args in (("list",), ("plugins",), ("estimate", "--help"),
                     ("gen", "--help"), ("show", "--help")):
            res = run(*args)
            texts[" ".join(args)] = res.out + res.err
        docs = [os.path.join(dsf.SOURCE_DIR, "README.md")]
        docdir = os.path.join(dsf.SOURCE_DIR, "contrib", "docs")
        docs += [os.path.join(docdir, f) for f in sorted(os.listdir(docdir))]
        for path in docs:
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        for what, text in texts.items():
            m = internal.search(text)
            self.assertIsNone(m, "%s mentions %r" % (what, m and m.group(0)))

    def test_planner_messages_use_plurals(self):
        res = run("gen", "small-gpu-offload", "--tier", "small",
                  "--param", "model=llama-2-13b", "--param", "cpu_mem_gb=64")
        self.assertNotIn("(s)", res.err)
        self.assertIn("on 1 GPU of", res.err)


if __name__ == "__main__":
    unittest.main()


class ParamsOnlyChild(dsf.TempDirTest):
    """A child profile that only changes params needs no build of its own
    (issue 29); a root profile still does."""

    def test_child_without_build_uses_its_parents(self):
        d = self.profile("team-z2", 'return { name = "team-z2", extends = '
                         '"8xa100", summary = "ours: ZeRO-2", params = { '
                         'zero_stage = 2 } }\n')
        res = run("gen", "team-z2", "--tier", "medium", "--stdout",
                  "--profile-path", d)
        self.assertEqual(res.rc, 0, repr(res))
        cfg = res.json()
        self.assertEqual(cfg["zero_optimization"]["stage"], 2)
        parent = run("gen", "8xa100", "--tier", "medium", "--stdout",
                     "--param", "zero_stage=2").json()
        self.assertEqual(cfg, parent)

    def test_root_without_build_is_refused(self):
        d = self.profile("lonely", 'return { name = "lonely", summary = '
                         '"x" }\n')
        res = run("gen", "lonely", "--profile-path", d)
        self.assertEqual(res.rc, 3, repr(res))
        self.assertIn("a profile needs a 'build' function (got nil), "
                      "unless it extends another", res.err)
