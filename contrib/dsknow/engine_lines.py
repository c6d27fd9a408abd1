#!/usr/bin/env python3
"""Carries tests/conformance/engine.json over to a newly covered release.

    contrib/dsknow/engine_lines.py DS_GIT X.Y.Z

engine.json (hand-written) lists the failures that happen only once
DeepSpeed's engine runs, each with the DeepSpeed file:line per release it
applies to ("source"). For release X.Y.Z (whose DeepSpeedConfig verdicts
record.py has recorded) an entry gets X.Y.Z's line when

  - DeepSpeedConfig accepts the file at X.Y.Z (a parser rejection already
    decides the verdict), and
  - the entry applies at the covered release just before X.Y.Z and, when
    there is one after it, at the covered release just after (an entry
    that stopped applying earlier is not carried; one added for a later
    release only is not carried back), and
  - the same statement is in the same file at X.Y.Z's tag (the cited line
    of the neighbour, found the same number of times; the first one of that
    text when it is there once).

Prints each entry carried and each one it could not carry, for review:
the scheduler constructors are checked again by coverage.py (it runs them),
the other entries (the first training step) are read, not run. Rewrites
engine.json in its own format (sorted keys, indent 1); running it twice
changes nothing.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CONF = os.path.join(ROOT, "tests", "conformance")


def vkey(v):
    return tuple(int(x) for x in v.split("."))


class Source:
    def __init__(self, git):
        self.git, self.cache = git, {}

    def lines(self, release, path):
        key = (release, path)
        if key not in self.cache:
            p = subprocess.run(["git", "--git-dir", self.git, "show",
                                "v%s:%s" % (release, path)], capture_output=True, text=True)
            self.cache[key] = p.stdout.splitlines() if p.returncode == 0 else []
        return self.cache[key]

    def same_line(self, ref, line, release, path):
        """The line at release holding the statement cited at ref:line, or None."""
        old = self.lines(ref, path)
        if not 0 < line <= len(old):
            return None
        text = old[line - 1].strip()
        at_ref = [i + 1 for i, ln in enumerate(old) if ln.strip() == text]
        now = [i + 1 for i, ln in enumerate(self.lines(release, path)) if ln.strip() == text]
        if len(now) != len(at_ref):
            return None
        return now[at_ref.index(line)]


def carry(entries, verdicts, release, src):
    """(carried [(file, source)], not carried [(file, why)]); entries changed in place."""
    carried, left = [], []
    for name, e in sorted(entries.items()):
        have = e["source"]
        if release in have or verdicts[name][release]["verdict"] != "accept":
            continue
        recorded = sorted(verdicts[name], key=vkey)
        earlier = [r for r in recorded if vkey(r) < vkey(release)]
        later = [r for r in recorded if vkey(r) > vkey(release)]
        ref = earlier[-1] if earlier else None
        if ref not in have:
            continue   # not at the covered release just before
        if later and later[0] not in have:
            continue   # nor at the one just after
        path, _, line = have[ref].rpartition(":")
        got = src.same_line(ref, int(line), release, path)
        if got is None:
            left.append((name, "%s at %s is not in %s at v%s" % (have[ref], ref, path, release)))
            continue
        have[release] = "%s:%d" % (path, got)
        carried.append((name, have[release]))
    return carried, left


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    git, release = argv
    path = os.path.join(CONF, "engine.json")
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    with open(os.path.join(CONF, "verdicts.json"), encoding="utf-8") as f:
        verdicts = json.load(f)["files"]
    carried, left = carry(entries, verdicts, release, Source(git))
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(entries, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    for name, where in carried:
        print("engine.json %s: %s carried to %s" % (release, name, where))
    for name, why in left:
        print("engine.json %s: %s NOT carried (%s): read DeepSpeed's engine and add it by hand"
              % (release, name, why))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
