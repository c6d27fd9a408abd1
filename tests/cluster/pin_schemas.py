#!/usr/bin/env python3
"""Writes tests/cluster/schemas/trainjob-v1alpha1.json: the
openAPIV3Schema of TrainJob v1alpha1 from a git directory of
kubeflow/trainer at a tag, unchanged but for a "$comment" naming its
source (the repository, path and commit).

    tests/cluster/pin_schemas.py TRAINER_GIT_DIR [TAG]   (default v2.3.0)
"""
import json
import os
import subprocess
import sys

import yaml

PATH = "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"


def main():
    git, tag = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "v2.3.0"
    commit = subprocess.run(["git", "--git-dir", git, "rev-parse", tag + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    text = subprocess.run(["git", "--git-dir", git, "show", commit + ":" + PATH],
                          check=True, capture_output=True, text=True).stdout
    crd = yaml.safe_load(text)
    version = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"][0]
    out = {"$comment": "The openAPIV3Schema of TrainJob v1alpha1 from kubeflow/trainer %s"
           " (commit %s), %s, unchanged (made by tests/cluster/pin_schemas.py). Its"
           " x-kubernetes-validations (CEL) rules are not JSON Schema:"
           " tests/cluster/test_schemas.py checks the ones on metadata.name itself."
           % (tag, commit, PATH)}
    out.update(version["schema"]["openAPIV3Schema"])
    dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas",
                        "trainjob-v1alpha1.json")
    with open(dest, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print("wrote", dest)


if __name__ == "__main__":
    main()
