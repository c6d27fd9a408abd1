"""The k8s emitter's refusals and determinism (issue 31); its files
against the TrainJob CRD's schema with ajv: tests/cluster/test_schemas.py.
A value Kubernetes or the Trainer cannot take is refused with a message
naming it (exit 2 or 3), and nothing is written."""
import os

import dsf
from dsf import run


class K8sEmitter(dsf.TempDirTest):

    def gen(self, *args):
        self.out = os.path.join(self.tmp, "k")
        return run("gen", "8xa100", "--emit", "k8s", "-o", self.out, *args)

    def test_what_kubernetes_cannot_take(self):
        image = ("--emit-opt", "image=ghcr.io/x/y:1")
        cases = [
            (("--train-cmd", "t.py"), "needs the container image"),
            (image, "needs the training command"),
            (image + ("--train-cmd", "t.py", "--emit-opt", "runtime=jax"),
             "runtime must be torch-distributed or deepspeed-distributed"),
            (image + ("--train-cmd", "t.py", "--emit-opt", "namespace=ML"),
             "namespace must be a DNS-1123 label"),
            (image + ("--train-cmd", "t.py", "--emit-opt", "queue=-q"),
             "queue must be a Kueue LocalQueue name"),
            (("--emit-opt", "image=a b", "--train-cmd", "t.py"), "image must be an image reference"),
            (image + ("--train-cmd", "t.py", "--emit-opt", "mount=relative"),
             "mount must be an absolute path"),
            (image + ("--train-cmd", "t.py", "--emit-opt", "gpu_resource=gpu"),
             "gpu_resource must be an extended resource name"),
            (image + ("--train-cmd", "t.py $(x)"), "--train-cmd"),
            # the CRD's maxLength of image and maxItems of command
            (("--emit-opt", "image=r/" + "i" * 499, "--train-cmd", "t.py"),
             "image must be an image reference"),
            (image + ("--train-cmd", "t.py" + " x" * 127),
             "a TrainJob's command holds at most 128"),
        ]
        for args, msg in cases:
            with self.subTest(args=args):
                res = self.gen(*args)
                self.assertIn(res.rc, (2, 3), repr(res))
                self.assertIn(msg, res.err)
                self.assertNotIn("a bug in the plugin", res.err)
                # the command line is at fault, not a line of the plugin:
                # the message alone, the hint naming the emitter
                self.assertRegex(res.err, r"^dsforge: error: ", repr(res))
                self.assertNotIn(".lua:", res.err)
                self.assertIn("reported by emitter k8s (plugin cluster)", res.err)
                self.assertFalse(os.path.exists(self.out))

    def test_same_inputs_same_bytes_and_a_changed_config_renames_the_job(self):
        args = ("--tier", "small", "--train-cmd", "t.py", "--emit-opt", "image=r/i:1")
        self.assertEqual(self.gen(*args).rc, 0)
        with open(os.path.join(self.out, "k8s.yaml")) as f:
            first = f.read()
        self.assertEqual(self.gen(*args).rc, 0)
        with open(os.path.join(self.out, "k8s.yaml")) as f:
            self.assertEqual(f.read(), first)
        self.assertIn("Kubeflow Trainer v2.3.0", first)
        self.assertEqual(self.gen(*args, "--param", "learning_rate=0.5").rc, 0)
        with open(os.path.join(self.out, "k8s.yaml")) as f:
            changed = f.read()
        name = [l for l in first.splitlines() if l.startswith('  name: "dsf-8xa100-small')]
        self.assertTrue(name)
        self.assertNotIn(name[0], changed)

    def test_words_reach_the_process_as_written(self):
        # Kubernetes expands $(VAR) in command, args and env values, and
        # $$ to $: the emitter doubles every $, so after the expansion
        # the process sees the words of --train-cmd.
        import yaml
        words = ["t.py", "--tag=$(HOSTNAME)", "a$$b", "$x", "$(", "end$"]
        cmd = "t.py '--tag=$(HOSTNAME)' 'a$$b' '$x' '$(' 'end$'"
        for runtime in ("torch-distributed", "deepspeed-distributed"):
            with self.subTest(runtime=runtime):
                res = self.gen("--tier", "small", "--train-cmd", cmd, "--emit-opt", "image=r/i:1",
                               "--emit-opt", "runtime=" + runtime)
                self.assertEqual(res.rc, 0, res.err)
                with open(os.path.join(self.out, "k8s.yaml")) as f:
                    job = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "TrainJob"][0]
                tr = job["spec"]["trainer"]
                env = {"HOSTNAME": "pod-0", "x": "X"}
                env.update({e["name"]: expand(e["value"], env) for e in tr["env"]})
                self.assertEqual(env["DSF_VARIANT"], "small")
                argv = [expand(w, env) for w in tr["command"] + tr["args"]]
                i = argv.index("t.py")
                self.assertEqual(argv[i:i + len(words)], words)


def expand(s, env):
    """Kubernetes' expansion of $(VAR) in a container's command, args and
    env values (k8s.io/kubernetes third_party/forked/golang/expansion/
    expand.go, Expand and tryReadVariableName), transcribed: $$ is $,
    $(NAME) is NAME's value when the container defines it and stays as
    written otherwise, any other $ stays."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "$" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                j = s.find(")", i + 2)
                if j >= 0:
                    name = s[i + 2:j]
                    out.append(env.get(name, "$(" + name + ")"))
                    i = j + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


if __name__ == "__main__":
    import unittest
    unittest.main()
