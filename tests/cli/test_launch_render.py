"""The launch plugin's renderers (plugins/launch/render.lua) run inside the
real sandbox (test_lua_suites on a generated suite), and every file they
emit is checked from outside: bash -n and a run with fake deepspeed /
torchrun / accelerate / srun / scontrol on PATH that record their argv,
which must equal the intended words exactly; every YAML file is parsed by
PyYAML and compared with the intended mapping."""
import json
import os
import subprocess
import sys
import unittest

import dsf

try:
    import yaml
except ImportError:  # python3-yaml (contrib/install-deps.sh)
    yaml = None

SUITES = os.path.join(os.path.dirname(os.path.abspath(dsf.DSFORGE)), "tests",
                      "test_lua_suites")
PLUGINS = os.path.join(dsf.SOURCE_DIR, "plugins")

# Words a training command or a path may hold; none may be interpreted.
NASTY = ["with space", "it's", 'dq"x', "$(touch PWNED)", "`touch PWNED`",
         "line1\nline2", "données/日本", "--glob=*", "", "back\\slash",
         "$HOME", "a;b|c&d", "tab\there", "~", "#hash", "-"]
FILE = "out dir/it's $(x)/cfg \"é\".json"

CONFIG = {
    "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
    "train_batch_size": 128, "gradient_clipping": 1.0,
    "bf16": {"enabled": True}, "fp16": {"enabled": False},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto",
                                              "eps": "auto",
                                              "weight_decay": "auto"}},
    "scheduler": {"type": "WarmupDecayLR",
                  "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                             "warmup_num_steps": "auto",
                             "total_num_steps": "auto"}},
    "zero_optimization": {"stage": 3},
}
PARAMS = {"world_size": 16, "gpus_per_node": 8, "micro_batch_size": 2,
          "gradient_accumulation": 4, "learning_rate": 2e-5,
          "adam_beta1": 0.9, "adam_beta2": 0.95, "adam_epsilon": 1e-8,
          "weight_decay": 0.1, "warmup_steps": 30, "num_training_steps": 500,
          "precision": "bf16", "activation_checkpointing": False}
# What the TrainingArguments words must be for CONFIG/PARAMS, written out.
HF_WORDS = ["--deepspeed", FILE, "--per_device_train_batch_size", "2",
            "--gradient_accumulation_steps", "4", "--learning_rate", "2e-05",
            "--weight_decay", "0.1", "--adam_beta1", "0.9", "--adam_beta2",
            "0.95", "--adam_epsilon", "1e-08", "--max_grad_norm", "1.0",
            "--max_steps", "500", "--warmup_steps", "30", "--bf16"]

FAKE = """#!%s
import json, os, sys
with open(os.environ["FAKE_OUT"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"prog": os.path.basename(sys.argv[0]),
                        "argv": sys.argv[1:]}) + "\\n")
""" % sys.executable


def lua(v):
    """A Python value as a Lua literal (strings as decimal escapes)."""
    if v is None:
        return "nil"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join("\\%d" % b for b in v.encode("utf-8")) + '"'
    if isinstance(v, list):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    return "{" + ", ".join("[%s] = %s" % (lua(k), lua(v[k]))
                           for k in sorted(v)) + "}"


class LaunchRenderTest(dsf.TempDirTest):

    def render(self, calls):
        """Runs render.<fn>(variant, opts) in the sandbox for each
        (name, fn, opts); returns {name: text}."""
        body = ["local r = require('launch.render')",
                "local v = { config = %s, params = %s, file = %s,"
                " name = 'base-big' }" % (lua(CONFIG), lua(PARAMS), lua(FILE)),
                "return { emit = function()"]
        for name, fn, opts in calls:
            body.append("  local t = r.%s(v, %s)" % (fn, lua(opts)))
            body.append("  print('LAUNCH-OUT %s ' .. t:gsub('.', function(c)"
                        " return string.format('%%02x', c:byte()) end))"
                        % name)
        body.append("end }")
        suite = self.write("render_suite.lua", "\n".join(body) + "\n")
        p = subprocess.run([SUITES, suite, PLUGINS], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        out = {}
        for line in p.stderr.splitlines():
            if line.startswith("LAUNCH-OUT "):
                _, name, hx = line.split(" ", 2)
                out[name] = bytes.fromhex(hx).decode("utf-8")
        self.assertEqual(sorted(out), sorted(c[0] for c in calls), p.stderr)
        return out

    def run_script(self, text, env, args=()):
        path = self.write("script.sh", text)
        check = subprocess.run(["bash", "-n", path], capture_output=True,
                               text=True)
        self.assertEqual(check.returncode, 0, check.stderr + text)
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        for prog in ["deepspeed", "torchrun", "accelerate", "srun"]:
            self.write(os.path.join("bin", prog), FAKE)
            os.chmod(os.path.join(bindir, prog), 0o755)
        self.write("bin/scontrol", "#!/bin/sh\nprintf 'node-a\\nnode-b\\n'\n")
        os.chmod(os.path.join(bindir, "scontrol"), 0o755)
        rec = os.path.join(self.tmp, "argv.jsonl")
        if os.path.exists(rec):
            os.unlink(rec)
        e = dict(os.environ)
        e.update(env)
        e["PATH"] = bindir + os.pathsep + e["PATH"]
        e["FAKE_OUT"] = rec
        p = subprocess.run(["bash", path, *args], capture_output=True,
                           text=True, env=e, cwd=self.tmp, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr + text)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "PWNED")),
                         "a word was run by the shell")
        with open(rec, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
        self.assertEqual(len(calls), 1, calls)
        return calls[0]

    def test_deepspeed_launcher_gets_the_exact_words(self):
        cmd = ["train.py"] + NASTY
        out = self.render([
            ("ds", "deepspeed_sh", {"train_cmd": cmd, "hostfile": "/h f/it's",
                                    "master_addr": "10.0.0.1"})])
        call = self.run_script(out["ds"], {})
        self.assertEqual(call["prog"], "deepspeed")
        self.assertEqual(call["argv"], [
            "--num_nodes", "2", "--num_gpus", "8", "--hostfile", "/h f/it's",
            "--master_addr", "10.0.0.1", "--master_port", "29500"]
            + cmd + HF_WORDS)

    def test_torchrun_single_and_multi_node(self):
        cmd = ["train.py"] + NASTY
        out = self.render([
            ("one", "torchrun_sh", {"train_cmd": cmd, "num_nodes": 1,
                                    "gpus_per_node": 16, "hf_args": False}),
            ("two", "torchrun_sh", {"train_cmd": cmd})])
        call = self.run_script(out["one"], {})
        self.assertEqual(call["argv"], ["--standalone", "--nnodes", "1",
                                        "--nproc_per_node", "16"] + cmd)
        call = self.run_script(out["two"], {"MASTER_ADDR": "head $(x)"})
        self.assertEqual(call["prog"], "torchrun")
        self.assertEqual(call["argv"], [
            "--nnodes", "2", "--nproc_per_node", "8", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", "head $(x):29500", "--rdzv_id",
            "dsforge-base-big"] + cmd + HF_WORDS)

    def test_torchrun_multi_node_without_master_addr_stops(self):
        out = self.render([("two", "torchrun_sh", {"train_cmd": ["t.py"]})])
        path = self.write("s.sh", out["two"])
        e = dict(os.environ)
        e.pop("MASTER_ADDR", None)
        p = subprocess.run(["bash", path], capture_output=True, text=True,
                           env=e)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("set MASTER_ADDR", p.stderr)

    def test_accelerate_launch_and_its_yaml(self):
        cmd = ["train.py"] + NASTY
        acc = "conf dir/acc'el \"x\".yaml"
        out = self.render([
            ("sh", "accelerate_sh", {"train_cmd": cmd,
                                     "accelerate_config": acc}),
            ("yaml", "accelerate_yaml", {"master_addr": "node-a",
                                         "hostfile": "/h f/it's\n$(x)"})])
        call = self.run_script(out["sh"], {"MACHINE_RANK": "1"})
        self.assertEqual(call["prog"], "accelerate")
        self.assertEqual(call["argv"], ["launch", "--config_file", acc,
                                        "--machine_rank", "1"]
                         + cmd + HF_WORDS)
        if yaml is None:
            self.skipTest("PyYAML (python3-yaml) is not installed")
        data = yaml.safe_load(out["yaml"])
        self.assertEqual(data, {
            "compute_environment": "LOCAL_MACHINE", "debug": False,
            "deepspeed_config": {"deepspeed_config_file": FILE,
                                 "zero3_init_flag": True,
                                 "deepspeed_multinode_launcher": "standard",
                                 "deepspeed_hostfile": "/h f/it's\n$(x)"},
            "distributed_type": "DEEPSPEED", "machine_rank": 0,
            "main_process_ip": "node-a", "main_process_port": 29500,
            "main_training_function": "main", "num_machines": 2,
            "num_processes": 16, "rdzv_backend": "static",
            "same_network": True, "use_cpu": False})
        # Every key is a field of accelerate's ClusterConfig
        # (commands/config/config_args.py), which rejects unknown keys.
        cluster_fields = {
            "compute_environment", "distributed_type", "mixed_precision",
            "use_cpu", "debug", "num_processes", "machine_rank",
            "num_machines", "gpu_ids", "main_process_ip",
            "main_process_port", "rdzv_backend", "same_network",
            "main_training_function", "enable_cpu_affinity",
            "deepspeed_config", "downcast_bf16"}
        self.assertLessEqual(set(data), cluster_fields)

    def test_yaml_quoting_round_trips(self):
        if yaml is None:
            self.skipTest("PyYAML (python3-yaml) is not installed")
        values = NASTY + ["\x01\x7f", "\u0085\u2028\ufeff", "null", "true",
                          "0x1f", "- a", "a: b", "{x}", "[y]", "'", "\"",
                          "%TAG", "&anchor", "*alias", "!tag", "\\n", ""]
        body = ["local q = require('launch.quote')", "return { emit = function()"]
        for i, v in enumerate(values):
            body.append("  print('LAUNCH-OUT q%d ' .. ('k: ' .. q.yaml(%s))"
                        ":gsub('.', function(c) return string.format('%%02x',"
                        " c:byte()) end))" % (i, lua(v)))
        body.append("end }")
        suite = self.write("quote_suite.lua", "\n".join(body) + "\n")
        p = subprocess.run([SUITES, suite, PLUGINS], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = {}
        for line in p.stderr.splitlines():
            if line.startswith("LAUNCH-OUT "):
                _, name, hx = line.split(" ", 2)
                got[name] = bytes.fromhex(hx).decode("utf-8")
        self.assertEqual(len(got), len(values))
        for i, v in enumerate(values):
            self.assertEqual(yaml.safe_load(got["q%d" % i]), {"k": v},
                             got["q%d" % i])

    def test_slurm_script(self):
        cmd = ["train.py"] + NASTY
        out = self.render([("sb", "slurm_sh", {"train_cmd": cmd,
                                               "partition": "gpu",
                                               "time": "02:00:00",
                                               "cpus_per_task": 32})])
        text = out["sb"]
        self.assertIn("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                      "#SBATCH --gpus-per-node=8\n", text)
        # sbatch stops reading directives at the first command line
        head = text.split("set -euo pipefail")[0]
        self.assertIn("#SBATCH --partition=gpu", head)
        call = self.run_script(text, {"SLURM_JOB_ID": "4242",
                                      "SLURM_JOB_NODELIST": "node-[a-b]"})
        self.assertEqual(call["prog"], "srun")
        self.assertEqual(call["argv"], [
            "torchrun", "--nnodes", "2", "--nproc_per_node", "8", "--rdzv_id",
            "4242", "--rdzv_backend", "c10d", "--rdzv_endpoint",
            "node-a:29500"] + cmd + HF_WORDS)

    def test_launch_script_runs_each_launcher(self):
        """launch_sh: one script, the four launchers, the training command
        written once; the words reach each launcher exactly."""
        cmd = ["train.py"] + NASTY
        acc = "conf dir/acc'el \"x\".yaml"
        out = self.render([("all", "launch_sh", {
            "train_cmd": cmd, "hostfile": "/h f/it's",
            "master_addr": "10.0.0.1", "accelerate_config": acc,
            "partition": "gpu"})])
        text = out["all"]
        # sbatch reads the #SBATCH lines before the first command
        head = text.split("\nset -euo pipefail\n")[0].splitlines()
        self.assertTrue(all(line.startswith("#") for line in head), head)
        self.assertIn("#SBATCH --nodes=2", head)
        self.assertIn("#SBATCH --partition=gpu", head)
        self.assertEqual(text.count("PWNED"), 2)  # once each, in cmd=(...)
        no_slurm = {"SLURM_JOB_ID": ""}
        call = self.run_script(text, no_slurm, ["deepspeed"])
        self.assertEqual((call["prog"], call["argv"]), ("deepspeed", [
            "--num_nodes", "2", "--num_gpus", "8", "--hostfile", "/h f/it's",
            "--master_addr", "10.0.0.1", "--master_port", "29500"]
            + cmd + HF_WORDS))
        call = self.run_script(text, no_slurm, ["torchrun"])
        self.assertEqual((call["prog"], call["argv"]), ("torchrun", [
            "--nnodes", "2", "--nproc_per_node", "8", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", "10.0.0.1:29500", "--rdzv_id",
            "dsforge-base-big"] + cmd + HF_WORDS))
        call = self.run_script(text, {"MACHINE_RANK": "1", **no_slurm},
                               ["accelerate"])
        self.assertEqual((call["prog"], call["argv"]), ("accelerate", [
            "launch", "--config_file", acc, "--machine_rank", "1"]
            + cmd + HF_WORDS))
        slurm = ("srun", [
            "torchrun", "--nnodes", "2", "--nproc_per_node", "8", "--rdzv_id",
            "4242", "--rdzv_backend", "c10d", "--rdzv_endpoint",
            "node-a:29500"] + cmd + HF_WORDS)
        job = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "node-[a-b]"}
        call = self.run_script(text, job)
        self.assertEqual((call["prog"], call["argv"]), slurm)
        call = self.run_script(text, job, ["slurm"])
        self.assertEqual((call["prog"], call["argv"]), slurm)
        # the accelerate launcher needs this node's rank
        path = self.write("s.sh", text)
        e = dict(os.environ)
        e.pop("MACHINE_RANK", None)
        e.pop("SLURM_JOB_ID", None)
        p = subprocess.run(["bash", path, "accelerate"], capture_output=True,
                           text=True, env=e)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("set MACHINE_RANK", p.stderr)
        p = subprocess.run(["bash", path], capture_output=True, text=True,
                           env=e)
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: bash THIS_FILE", p.stderr)

    def test_hf_args_cli_fragment_is_the_words(self):
        out = self.render([("cli", "hf_args_cli", {}),
                           ("json", "hf_args_json", {})])
        p = subprocess.run(["bash", "-c", "printf '%s\\0' " + out["cli"]],
                           capture_output=True)
        self.assertEqual(p.stdout.decode("utf-8").split("\0")[:-1], HF_WORDS)
        self.assertEqual(json.loads(out["json"]), {
            "deepspeed": FILE, "per_device_train_batch_size": 2,
            "gradient_accumulation_steps": 4, "learning_rate": 2e-5,
            "weight_decay": 0.1, "adam_beta1": 0.9, "adam_beta2": 0.95,
            "adam_epsilon": 1e-8, "max_grad_norm": 1.0, "max_steps": 500,
            "warmup_steps": 30, "bf16": True, "fp16": False,
            "gradient_checkpointing": False})


if __name__ == "__main__":
    unittest.main()
