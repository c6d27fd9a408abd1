#!/usr/bin/env python3
"""Records DeepSpeed's own verdicts on the conformance corpus.

    contrib/dsknow/record.py DS_GIT HJSON_GIT [CORPUS_DIR [OUT]]

For each release in RELEASES it prepares DeepSpeed's config code with
../shared/tools/dsclient/setup.sh, runs dscheck (DeepSpeedConfig, world
size 8) over every *.json in CORPUS_DIR (default tests/conformance/configs)
and writes OUT (default tests/conformance/verdicts.json): per file, per
release, "accept" or "reject" with the exception class and the first line
of its message (at most 160 characters). Sorted keys, so re-running on the
same corpus and releases gives the same bytes.
"""
import json
import os
import subprocess
import sys

RELEASES = ("0.14.5", "0.16.9", "0.19.5")
WORLD = 8
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TOOLS = os.path.normpath(os.path.join(
    os.environ.get("DSF_SHARED_DIR", os.path.join(ROOT, "..", "shared")),
    "tools", "dsclient"))
if not os.path.isdir(TOOLS):
    TOOLS = "/work/shared/tools/dsclient"


def release_env(ds_git, hj_git, release):
    out = subprocess.run(["sh", os.path.join(TOOLS, "setup.sh"), ds_git, hj_git,
                          "v" + release], check=True, capture_output=True,
                         text=True).stdout
    env = dict(os.environ)
    for line in out.splitlines():
        if line.startswith("export "):
            for assign in line[len("export "):].split():
                k, _, v = assign.partition("=")
                env[k] = v
    return env


def verdict(text):
    if text.startswith("OK"):
        return {"verdict": "accept", "detail": text[3:].strip()}
    assert text.startswith("REJECT "), text
    rest = text[len("REJECT "):]
    exc, _, msg = rest.partition(": ")
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    return {"verdict": "reject", "exception": exc, "message": msg[:160]}


def record(ds_git, hj_git, corpus, release):
    env = release_env(ds_git, hj_git, release)
    names = sorted(n for n in os.listdir(corpus) if n.endswith(".json"))
    p = subprocess.run([os.path.join(TOOLS, "dscheck"), "-w", str(WORLD)]
                       + names, cwd=corpus, env=env, capture_output=True,
                       text=True)
    got = {}
    # One line per file: NAME<TAB>WORLD<TAB>VERDICT (a message may go on
    # over more lines; those are continuation lines without the file name).
    current = None
    for line in p.stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[0] in names and parts[0] not in got:
            current = parts[0]
            got[current] = parts[2]
    missing = [n for n in names if n not in got]
    if missing:
        sys.exit("record.py: dscheck %s gave no verdict for %s\n%s" %
                 (release, ", ".join(missing[:5]), p.stderr[-2000:]))
    return {n: verdict(v) for n, v in got.items()}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ds_git, hj_git = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        ROOT, "tests", "conformance", "configs")
    out = sys.argv[4] if len(sys.argv) > 4 else os.path.join(
        ROOT, "tests", "conformance", "verdicts.json")
    per = {r: record(ds_git, hj_git, corpus, r) for r in RELEASES}
    result = {"world_size": WORLD, "releases": list(RELEASES), "files": {}}
    for name in sorted(per[RELEASES[0]]):
        result["files"][name] = {r: per[r][name] for r in RELEASES}
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(result, indent=1, sort_keys=True) + "\n")
    for r in RELEASES:
        rej = sum(1 for v in per[r].values() if v["verdict"] == "reject")
        print("%s: %d files, %d rejected" % (r, len(per[r]), rej))


if __name__ == "__main__":
    main()
