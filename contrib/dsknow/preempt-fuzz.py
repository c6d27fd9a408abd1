#!/usr/bin/env python3
"""Try to trigger the checks preempt.py calls pre-empted (issue 28).

    contrib/dsknow/preempt-fuzz.py DS_GIT HJSON_GIT [N] [RELEASE...]

Writes N (default 600) random configs aimed at what the pre-empted checks
test (batch sizes, the elasticity section, the ZeRO stage, quantize
training, a file that is no JSON object), mostly valid with a wrong value
here and there, and traces
DeepSpeed over them at each release (default: every release of
releases.txt) as coverage.py does. Prints, per release, how many checks
are pre-empted and how many files DeepSpeed accepts, and exits 1 if any
file triggers a pre-empted check: the proof would be wrong. The configs
come from a fixed seed, so a run is repeatable; the corpus is not touched.
"""
import glob
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = [-1, 0, "2", None, True, False, 1.5]


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def configs(n, seed=11):
    rnd = random.Random(seed)

    def pick(good, p=0.15):
        return rnd.choice(BAD) if rnd.random() < p else rnd.choice(good)
    out = []
    for _ in range(n):
        c = {}
        mode = rnd.random()
        if mode < 0.5:
            for k, good in (("train_batch_size", [8, 16, 32, 64]),
                            ("train_micro_batch_size_per_gpu", [1, 2, 4]),
                            ("gradient_accumulation_steps", [1, 2, 4])):
                if rnd.random() < 0.7:
                    c[k] = pick(good)
        if mode >= 0.4:
            e = {"enabled": pick([True], 0.1), "max_train_batch_size": pick([64, 100, 2000], 0.1),
                 "micro_batch_sizes": pick([[1, 2], [2, 4, 6], [3], [1, 2, 4]], 0.1)}
            for k, good in (("min_gpus", [1, 2]), ("max_gpus", [8, 16, 10000]),
                            ("model_parallel_size", [1, 2]), ("num_gpus_per_node", [1, 8]),
                            ("version", [0.1, 0.2]), ("ignore_non_elastic_batch_info", [True, False])):
                if rnd.random() < 0.6:
                    e[k] = pick(good, 0.2)
            if rnd.random() < 0.1:
                del e["enabled"]
            c["elasticity"] = e
        if rnd.random() < 0.3:
            c["zero_optimization"] = {"stage": pick([0, 1, 2, 3], 0.2) if rnd.random() < 0.8
                                      else rnd.choice([4, 5, -1, "3", 3.0])}
        if rnd.random() < 0.15:
            c["quantize_training"] = {"enabled": rnd.choice([True, False]),
                                      "eigenvalue": {"enabled": rnd.choice([True, False])}}
        if rnd.random() < 0.03:   # a file that is JSON but no object
            c = rnd.choice([["elasticity"], "elasticity", [{"elasticity": {"enabled": True}}]])
        out.append(c)
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    ds_git, hj_git = argv[:2]
    n = int(argv[2]) if len(argv) > 2 else 600
    record = load("dsknow_record", os.path.join(HERE, "record.py"))
    releases = argv[3:] or list(record.RELEASES)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="dsknow-preempt-fuzz-") as tmp:
        for i, c in enumerate(configs(n)):
            with open(os.path.join(tmp, "f%04d.json" % i), "w", encoding="utf-8") as f:
                json.dump(c, f)
        files = sorted(glob.glob(os.path.join(tmp, "*.json")))
        for release in releases:
            env = record.release_env(ds_git, hj_git, release, None)
            env["DSCLIENT_DIR"] = record.TOOLS
            p = subprocess.run([sys.executable, os.path.join(HERE, "trace.py"),
                                "--world-size", str(record.WORLD)] + files,
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("preempt-fuzz.py: trace.py %s failed:\n%s" % (release, p.stderr[-3000:]))
            out = json.loads(p.stdout)
            pre = [c for c in out["checks"] if c["decided"] == "preempted"]
            accepted = sum(1 for v in out["files"].values() if str(v).startswith("OK"))
            print("%s: %d pre-empted checks, %d of %d files accepted" % (
                release, len(pre), accepted, len(files)))
            for c in pre:
                if c["trigger"]:
                    bad += 1
                    print("preempt-fuzz.py: %s %s is triggered by %s: the proof is wrong (%s)" % (
                        release, c["check"], os.path.basename(c["trigger"][0]), c["why"]),
                        file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
