"""The cluster emitters' files against the validators of the systems that
read them (issue 31), for every built-in profile and tier:

- k8s.yaml, parsed by PyYAML: every TrainJob validates with ajv (npm)
  against the TrainJob v1alpha1 CRD's OpenAPI schema of Kubeflow Trainer
  v2.3.0 (tests/cluster/schemas/trainjob-v1alpha1.json, a pinned copy
  with its commit), and meets the CRD's own CEL rules on its name; every
  ConfigMap validates against the shape in schemas/configmap-v1.json and
  stays under Kubernetes' 1 MiB, and holds each variant's JSON byte for
  byte (the sha256 the manifest lists).

(The SkyPilot tasks: tests/cluster/sky_run.sh, ctest
cluster_skypilot_schema.) Run by tests/cluster/run.sh (ctest
cluster_schemas), which installs ajv
into the build tree; DSFORGE, NODE_PATH and CLUSTER_WORK come from it."""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "schemas")
DSFORGE = os.environ.get("DSFORGE", "dsforge")
IMAGE = "ghcr.io/example/train:1"


def run(*args, cwd=None):
    return subprocess.run([DSFORGE] + list(args), capture_output=True, text=True, cwd=cwd)


def builtin_profiles():
    out = run("list").stdout.splitlines()[1:]
    return [(l.split()[0], l.split()[1].split(",")) for l in out if l.strip()]


def ajv(schema, docs):
    """(valid, output) of validate.js over docs [(name, doc)]."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     dir=os.environ.get("CLUSTER_WORK")) as f:
        json.dump([{"name": n, "doc": d} for n, d in docs], f)
    try:
        res = subprocess.run(["node", os.path.join(HERE, "validate.js"),
                              os.path.join(SCHEMAS, schema), f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return res.returncode == 0, res.stdout + res.stderr


RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def jobset_names(job):
    """The names JobSet's webhook checks for the TrainJob's JobSet (named
    as the TrainJob): per replicated job of the runtime (one job each),
    "<name>-<rjob>-0" and the longest pod name "<name>-<rjob>-0-<last pod
    index>-abcde" (sigs.k8s.io/jobset pkg/webhooks/jobset_webhook.go,
    ValidateCreate; the runtimes of kubeflow/trainer v2.3.0
    manifests/base/runtimes/: torch-distributed's "node" has numNodes
    pods; deepspeed-distributed's "launcher" one and "node" numNodes - 1,
    at least 1, as pkg/runtime/framework/plugins/mpi/mpi.go sets)."""
    name = job["metadata"]["name"]
    n = job["spec"]["trainer"]["numNodes"]
    if job["spec"]["runtimeRef"]["name"] == "deepspeed-distributed":
        pods = {"launcher": 1, "node": max(n - 1, 1)}
    else:
        pods = {"node": n}
    out = []
    for rjob, count in pods.items():
        out.append("%s-%s-0" % (name, rjob))
        out.append("%s-%s-0-%d-abcde" % (name, rjob, count - 1))
    return out


class K8s(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dsforge-k8s-")

    def gen(self, profile, *args):
        out = os.path.join(self.tmp, profile + "-" + str(len(os.listdir(self.tmp))))
        res = run("gen", profile, "--emit", "k8s", "--train-cmd", "train.py --run 'a b'",
                  "--emit-opt", "image=" + IMAGE, *args, "-o", out)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        with open(os.path.join(out, "k8s.yaml"), encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        return out, m, docs

    def check_run(self, out, m, docs, runtime="torch-distributed"):
        jobs = [d for d in docs if d["kind"] == "TrainJob"]
        maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
        self.assertEqual(len(jobs), len(m["variants"]))
        ok, text = ajv("trainjob-v1alpha1.json",
                       [(j["metadata"]["name"], j) for j in jobs])
        self.assertTrue(ok, text)
        ok, text = ajv("configmap-v1.json", [(n, c) for n, c in maps.items()])
        self.assertTrue(ok, text)
        for c in maps.values():
            size = sum(len(k) + len(v.encode()) for k, v in c["data"].items())
            self.assertLess(size, 1 << 20)
        names = set()
        for j, v in zip(jobs, m["variants"]):
            name = j["metadata"]["name"]
            # the CRD's x-kubernetes-validations on metadata.name
            self.assertRegex(name, RFC1035)
            self.assertLessEqual(len(name), 63)
            # and JobSet's on the job and pod names made from it
            for made in jobset_names(j):
                self.assertRegex(made, RFC1035)
                self.assertLessEqual(len(made), 63, made)
            names.add(name)
            self.assertEqual(j["metadata"]["annotations"]["dsforge.io/config-sha256"], v["sha256"])
            env = {e["name"]: e["value"] for e in j["spec"]["trainer"]["env"]}
            self.assertEqual(env, {"DSF_VARIANT": v["name"], "DSF_CONFIG_SHA256": v["sha256"]})
            tr = j["spec"]["trainer"]
            self.assertEqual(tr["numNodes"], v["params"]["nodes"])
            self.assertEqual(tr["resourcesPerNode"]["limits"]["nvidia.com/gpu"],
                             min(v["params"]["gpus_per_node"], v["params"]["world_size"]))
            self.assertEqual(j["spec"]["runtimeRef"]["name"], runtime)
            i = tr["args"].index("--deepspeed")
            self.assertEqual(tr["args"][i + 1], "/etc/dsforge/" + v["file"])
            self.assertEqual(tr["command"][-3:], ["train.py", "--run", "a b"])
            patch = j["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
            cm = patch["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"][0]
            held = maps[cm["configMap"]["name"]]["data"][v["file"]]
            with open(os.path.join(out, v["file"]), "rb") as f:
                data = f.read()
            self.assertEqual(held.encode(), data)
            self.assertEqual(hashlib.sha256(held.encode()).hexdigest(), v["sha256"])
        self.assertEqual(len(names), len(jobs))

    def test_the_validator_rejects_what_the_crd_does(self):
        _, _, docs = self.gen("8xa100", "--tier", "small")
        job = next(d for d in docs if d["kind"] == "TrainJob")
        bad = json.loads(json.dumps(job))
        bad["spec"]["trainer"]["numNodes"] = "two"
        worse = json.loads(json.dumps(job))
        worse["spec"]["trainer"]["gpus"] = 8        # not a TrainJob field
        none = json.loads(json.dumps(job))
        del none["spec"]["runtimeRef"]              # required
        ok, text = ajv("trainjob-v1alpha1.json", [("good", job), ("bad", bad),
                                                  ("worse", worse), ("none", none)])
        self.assertFalse(ok)
        self.assertIn("1 of 4 valid", text)
        for name in ("bad:", "worse:", "none:"):
            self.assertIn(name, text)

    def test_the_longest_image_and_command_are_the_crds(self):
        # what the emitter takes at its limits validates; one more
        # character or word, which it refuses, the CRD refuses too
        out = os.path.join(self.tmp, "longest")
        image = "r/" + "i" * 498
        res = run("gen", "8xa100", "--tier", "small", "--emit", "k8s", "--emit-opt",
                  "image=" + image, "--train-cmd", "t.py" + " x" * 126, "-o", out)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(out, "k8s.yaml"), encoding="utf-8") as f:
            job = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "TrainJob")
        self.assertEqual(len(job["spec"]["trainer"]["command"]), 128)
        longer = json.loads(json.dumps(job))
        longer["spec"]["trainer"]["image"] += "i"
        more = json.loads(json.dumps(job))
        more["spec"]["trainer"]["command"].append("x")
        ok, text = ajv("trainjob-v1alpha1.json", [("job", job), ("longer", longer),
                                                  ("more", more)])
        self.assertIn("1 of 3 valid", text)
        self.assertIn("longer:", text)
        self.assertIn("more:", text)

    def test_every_builtin_profile_and_tier(self):
        profiles = builtin_profiles()
        self.assertIn("8xa100", [p for p, _ in profiles])
        for profile, tiers in profiles:
            with self.subTest(profile=profile):
                out, m, docs = self.gen(profile)
                self.assertEqual(sorted(v["tier"] for v in m["variants"]), sorted(tiers))
                self.check_run(out, m, docs)

    def test_several_nodes_the_mpi_runtime_a_queue_and_a_namespace(self):
        out, m, docs = self.gen("8xa100", "--matrix", "nodes=1,4", "--matrix", "zero_stage=2,3",
                                "--emit-opt", "runtime=deepspeed-distributed",
                                "--emit-opt", "queue=team-a", "--emit-opt", "namespace=ml")
        self.check_run(out, m, docs, runtime="deepspeed-distributed")
        for d in docs:
            self.assertEqual(d["metadata"]["namespace"], "ml")
        jobs = [d for d in docs if d["kind"] == "TrainJob"]
        self.assertEqual({j["spec"]["trainer"]["numNodes"] for j in jobs}, {1, 4})
        for j in jobs:
            self.assertEqual(j["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a")
            cmd = j["spec"]["trainer"]["command"]
            self.assertEqual(cmd[:2], ["mpirun", "-np"])
            self.assertEqual(int(cmd[2]), j["spec"]["trainer"]["numNodes"] * 8)
            # the trainer's env reaches the ranks on the other nodes
            self.assertEqual(cmd[3:7], ["-x", "DSF_VARIANT", "-x", "DSF_CONFIG_SHA256"])
            # the hostfile the MPI runtime mounts (kubeflow/trainer v2.3.0
            # pkg/constants/constants.go: MPIHostfileDir, MPIHostfileName)
            self.assertEqual(cmd[7:10], ["--hostfile", "/etc/mpi/hostfile", "python3"])
            rjs = j["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
            self.assertEqual([r["name"] for r in rjs["replicatedJobs"]], ["launcher", "node"])

    def test_a_large_sweep_spreads_its_configs_over_configmaps(self):
        lrs = ",".join("%de-5" % i for i in range(1, 41))
        out, m, docs = self.gen("8xa100", "--matrix", "micro_batch_size=1,2,4,8,16",
                                "--matrix", "learning_rate=" + lrs, "--matrix", "zero_stage=2,3")
        self.assertEqual(len(m["variants"]), 1200)
        maps = [d for d in docs if d["kind"] == "ConfigMap"]
        self.assertGreater(len(maps), 1)
        self.check_run(out, m, docs)


if __name__ == "__main__":
    unittest.main()
