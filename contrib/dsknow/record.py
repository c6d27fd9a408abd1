#!/usr/bin/env python3
"""Records DeepSpeed's own verdicts on the conformance corpus.

    contrib/dsknow/record.py DS_GIT HJSON_GIT

For each release of contrib/dsknow/releases.txt it prepares DeepSpeed's config code with
../shared/tools/dsclient/setup.sh, runs dscheck (DeepSpeedConfig, world
size 8) over every *.json in tests/conformance/configs and
tests/conformance/todo, and writes configs' verdicts to
tests/conformance/verdicts.json and todo's to tests/conformance/todo/
verdicts.json: per file, per release, "accept" or "reject" with the
exception class and the first line of its message (at most 160
characters). With contrib/dsknow/next.txt (a branch: master), DeepSpeed
at that branch's commit is recorded too, as "next", over configs/ into
tests/conformance/next.json (its commit and version.txt beside). Sorted keys, so re-running on the same corpus and releases
gives the same bytes.
"""
import json
import os
import re
import subprocess
import sys

WORLD = 8
HERE = os.path.dirname(os.path.abspath(__file__))


def listed_releases():
    """The tagged releases of releases.txt, oldest first, as "X.Y.Z"."""
    with open(os.path.join(HERE, "releases.txt"), encoding="utf-8") as f:
        tags = [ln.strip() for ln in f if ln.strip()]
    out = [t[1:] for t in tags if re.match(r"^v[0-9]+\.[0-9]+\.[0-9]+$", t)]
    return tuple(sorted(out, key=lambda v: tuple(int(x) for x in v.split("."))))


RELEASES = listed_releases()
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TOOLS = os.path.normpath(os.path.join(
    os.environ.get("DSF_SHARED_DIR", os.path.join(ROOT, "..", "shared")),
    "tools", "dsclient"))
if not os.path.isdir(TOOLS):
    TOOLS = "/work/shared/tools/dsclient"


def next_rev():
    """The branch next.txt names (DeepSpeed's master: the release after
    the newest tag, "next"), or None."""
    path = os.path.join(HERE, "next.txt")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        words = f.read().split()
    return words[0] if words else None


def next_commit(ds_git):
    """(commit, version.txt) of next.txt's branch in ds_git."""
    rev = next_rev()
    commit = subprocess.run(["git", "--git-dir", ds_git, "rev-parse", rev + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    version = subprocess.run(["git", "--git-dir", ds_git, "show", commit + ":version.txt"],
                             check=True, capture_output=True, text=True).stdout.strip()
    return commit, version


def release_env(ds_git, hj_git, release, rev=None):
    """The dsclient environment of a release ("X.Y.Z": tag vX.Y.Z) or of a
    commit (rev; its cache is ~/.cache/dsclient/COMMIT)."""
    out = subprocess.run(["sh", os.path.join(TOOLS, "setup.sh"), ds_git, hj_git,
                          rev or ("v" + release)], check=True, capture_output=True,
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


def record(ds_git, hj_git, base, subdirs, release, rev=None):
    """{subdir: {file: verdict}} for one release, one dscheck run."""
    env = release_env(ds_git, hj_git, release, rev)
    names = sorted(os.path.join(d, n) for d in subdirs
                   for n in os.listdir(os.path.join(base, d))
                   if n.endswith(".json") and n != "todo.json"
                   and n != "verdicts.json")
    p = subprocess.run([os.path.join(TOOLS, "dscheck"), "-w", str(WORLD)]
                       + names, cwd=base, env=env, capture_output=True,
                       text=True)
    got = {}
    # One line per file: PATH<TAB>WORLD<TAB>VERDICT (a message may go on
    # over more lines; those are continuation lines without the file name).
    for line in p.stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[0] in names and parts[0] not in got:
            got[parts[0]] = parts[2]
    missing = [n for n in names if n not in got]
    if missing:
        sys.exit("record.py: dscheck %s gave no verdict for %s\n%s" %
                 (release, ", ".join(missing[:5]), p.stderr[-2000:]))
    out = {d: {} for d in subdirs}
    for path, v in got.items():
        d, n = os.path.split(path)
        out[d][n] = verdict(v)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ds_git, hj_git = sys.argv[1], sys.argv[2]
    base = os.path.join(ROOT, "tests", "conformance")
    outs = {"configs": os.path.join(base, "verdicts.json"),
            "todo": os.path.join(base, "todo", "verdicts.json")}
    per = {r: record(ds_git, hj_git, base, sorted(outs), r) for r in RELEASES}
    for d, out in sorted(outs.items()):
        result = {"world_size": WORLD, "releases": list(RELEASES), "files": {}}
        for name in sorted(per[RELEASES[0]][d]):
            result["files"][name] = {r: per[r][d][name] for r in RELEASES}
        with open(out, "w", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=1, sort_keys=True) + "\n")
        for r in RELEASES:
            rej = sum(1 for v in per[r][d].values() if v["verdict"] == "reject")
            print("%s %s: %d files, %d rejected" % (d, r, len(per[r][d]), rej))
    # "next": next.txt's branch (master) at its commit, over configs/
    if next_rev():
        commit, version = next_commit(ds_git)
        got = record(ds_git, hj_git, base, ["configs"], "next", rev=commit)["configs"]
        result = {"world_size": WORLD, "rev": next_rev(), "commit": commit, "version": version,
                  "files": got}
        with open(os.path.join(base, "next.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=1, sort_keys=True) + "\n")
        rej = sum(1 for v in got.values() if v["verdict"] == "reject")
        print("configs next (%s %s, %s): %d files, %d rejected" % (next_rev(), commit[:12], version,
                                                                   len(got), rej))


if __name__ == "__main__":
    main()
