#!/usr/bin/env python3
"""Reads every *.sky.yaml of gen -o DIRs with PyYAML (yaml.safe_load) and
prints them as one JSON list of {file, doc}, for sky_validate.js. Checks on
the way what a schema cannot say: DSF_CONFIG_SHA256 is the sha256 of the
variant's JSON file and manifest.json's sha256 for it, and the file mount
names that JSON.

usage: sky_yaml.py DIR...   (exit 1 with a message on the first mismatch)"""
import hashlib
import json
import os
import sys

import yaml


def main(dirs):
    out = []
    for d in dirs:
        with open(os.path.join(d, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        for v in manifest["variants"]:
            sky = [e["file"] for e in v["emitted"] if e["emitter"] == "skypilot"]
            if len(sky) != 1:
                sys.exit(f"{d}: variant {v['name']}: {len(sky)} skypilot files in the manifest")
            path = os.path.join(d, sky[0])
            with open(path, "rb") as f:
                raw = f.read()
            if hashlib.sha256(raw).hexdigest() != [e["sha256"] for e in v["emitted"]
                                                  if e["emitter"] == "skypilot"][0]:
                sys.exit(f"{path}: the manifest's sha256 is not the file's")
            doc = yaml.safe_load(raw.decode("utf-8"))
            with open(os.path.join(d, v["file"]), "rb") as f:
                want = hashlib.sha256(f.read()).hexdigest()
            env = doc.get("envs", {})
            if env.get("DSF_CONFIG_SHA256") != want or v["sha256"] != want:
                sys.exit(f"{path}: DSF_CONFIG_SHA256 {env.get('DSF_CONFIG_SHA256')} is not the"
                         f" sha256 of {v['file']} ({want}; manifest {v['sha256']})")
            if env.get("DSF_VARIANT") != v["name"]:
                sys.exit(f"{path}: DSF_VARIANT {env.get('DSF_VARIANT')!r} is not {v['name']!r}")
            mounts = doc.get("file_mounts", {})
            if mounts.get(env.get("DSF_CONFIG")) != os.path.join(d, v["file"]):
                sys.exit(f"{path}: file_mounts {mounts} does not put {v['file']} at DSF_CONFIG")
            out.append({"file": path, "doc": doc})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
