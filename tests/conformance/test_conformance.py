"""Replays DeepSpeed's recorded verdicts against dsforge check (issue 10).

verdicts.json holds what DeepSpeed's own DeepSpeedConfig said about every
file in configs/ for each release (contrib/dsknow/record.py; world size
8); engine.json adds the failures that only happen when the engine starts,
each with its DeepSpeed source line. For each release this runs one
`dsforge check --format json --ds-version V --world-size 8` over the whole
corpus and requires: DeepSpeed rejects <=> dsforge reports >= 1 error.
A disagreement fails unless allow.json lists it (file, release, reason,
DeepSpeed source line; at most 5 entries). The releases are every one
contrib/dsknow/releases.txt lists (test_every_covered_release_is_recorded),
and DeepSpeed's master as "next" (next.json, contrib/dsknow/next.txt),
replayed at master's version.txt, past the newest tag: dsforge checks it
with the newest release's facts.
CI has no DeepSpeed: this only replays.
"""
import json
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "configs")
DSFORGE = os.environ.get("DSFORGE", "dsforge")
MAX_ALLOWED = 5
RELEASES_TXT = os.path.join(HERE, "..", "..", "contrib", "dsknow", "releases.txt")
NEXT_TXT = os.path.join(HERE, "..", "..", "contrib", "dsknow", "next.txt")


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


def expected():
    """{file: {release: recorded verdict}}, engine verdicts taking over."""
    files = load("verdicts.json")["files"]
    for name, eng in load("engine.json").items():
        for release in eng["source"]:
            files[name][release] = {"verdict": eng["verdict"],
                                    "exception": eng["exception"],
                                    "message": "engine: " + eng["message"]}
    return files


def expected_next():
    """(version, {file: verdict}) of next.json (DeepSpeed at next.txt's
    branch, master), or None: engine.json's entries of the newest covered
    release take over (the engine is read per release, not per commit)."""
    path = os.path.join(HERE, "next.json")
    if not os.path.exists(path):
        return None
    nxt = load("next.json")
    newest = load("verdicts.json")["releases"][-1]
    files = dict(nxt["files"])
    for name, eng in load("engine.json").items():
        if newest in eng["source"]:
            files[name] = {"verdict": eng["verdict"], "exception": eng["exception"],
                           "message": "engine: " + eng["message"]}
    return nxt["version"], files


def dsforge_errors(release, names):
    """{file: [error messages]} from one check run over names."""
    p = subprocess.run([DSFORGE, "check", "--format", "json", "--world-size",
                        "8", "--ds-version", release] + names, cwd=CONFIGS,
                       capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    if p.returncode not in (0, 1, 3):
        raise AssertionError("dsforge check exited %d:\n%s" % (p.returncode,
                                                              p.stderr))
    errors = {n: [] for n in names}
    for f in json.loads(p.stdout):
        if f["severity"] == "error":
            errors[f["file"]].append("%s [%s]" % (f["message"],
                                                  f.get("rule", "-")))
    return errors


class Conformance(unittest.TestCase):
    def test_corpus_is_recorded(self):
        names = sorted(n for n in os.listdir(CONFIGS) if n.endswith(".json"))
        files = load("verdicts.json")["files"]
        self.assertGreaterEqual(len(names), 300)
        self.assertEqual(names, sorted(files), "configs/ and verdicts.json "
                         "differ: re-run contrib/dsknow/record.py")
        for name, eng in load("engine.json").items():
            self.assertIn(name, files)
            self.assertTrue(eng["source"] and eng["code"], name)

    def test_every_covered_release_is_recorded(self):
        with open(RELEASES_TXT, encoding="utf-8") as f:
            listed = [m.group(1) for m in (re.match(r"^v(\d+\.\d+\.\d+)$", ln.strip())
                                           for ln in f) if m]
        for name in ("verdicts.json", os.path.join("todo", "verdicts.json")):
            recorded = load(name)
            self.assertEqual(recorded["releases"], listed, "%s: re-run "
                             "contrib/dsknow/record.py" % name)
            for fname, per in recorded["files"].items():
                self.assertEqual(sorted(per), sorted(listed), fname)

    def test_todo_is_listed_and_recorded(self):
        todo_dir = os.path.join(HERE, "todo")
        names = sorted(n for n in os.listdir(todo_dir) if n.endswith(".json")
                       and n not in ("todo.json", "verdicts.json"))
        with open(os.path.join(todo_dir, "todo.json"), encoding="utf-8") as f:
            todo = json.load(f)
        with open(os.path.join(todo_dir, "verdicts.json"), encoding="utf-8") as f:
            recorded = json.load(f)["files"]
        self.assertEqual(names, sorted(todo))
        self.assertEqual(names, sorted(recorded))
        self.assertFalse(set(names) & set(os.listdir(CONFIGS)))

    def test_docs_state_the_corpus_size(self):
        n = len(load("verdicts.json")["files"])
        root = os.path.normpath(os.path.join(HERE, "..", ".."))
        for doc, pattern in (("README.md", r"verdicts on (\d[\d,]*) configs"),
                             ("contrib/docs/conformance.md", r"holds (\d[\d,]*) configs")):
            with open(os.path.join(root, doc), encoding="utf-8") as f:
                m = re.search(pattern, f.read())
            self.assertIsNotNone(m, "%s no longer states %r" % (doc, pattern))
            self.assertEqual(int(m.group(1).replace(",", "")), n, doc)

    def test_allow_list_is_short_and_justified(self):
        allow = load("allow.json")
        self.assertLessEqual(len(allow), MAX_ALLOWED)
        for entry in allow:
            for field in ("file", "release", "reason", "source"):
                self.assertTrue(entry.get(field), (entry, field))

    def test_next_is_recorded(self):
        """DeepSpeed's master ("next", contrib/dsknow/next.txt) is recorded
        over the whole corpus, at a version past the newest tag."""
        with open(NEXT_TXT, encoding="utf-8") as f:
            rev = f.read().split()[0]
        nxt = load("next.json")
        self.assertEqual(nxt["rev"], rev)
        self.assertRegex(nxt["commit"], r"^[0-9a-f]{40}$")
        newest = load("verdicts.json")["releases"][-1]
        self.assertGreater(tuple(int(x) for x in nxt["version"].split(".")),
                           tuple(int(x) for x in newest.split(".")))
        self.assertEqual(sorted(nxt["files"]), sorted(load("verdicts.json")["files"]))

    def test_dsforge_agrees_with_deepspeed_next(self):
        """dsforge at master's version (the newest facts: no release has
        it yet) agrees with DeepSpeed's master on every file."""
        version, files = expected_next()
        names = sorted(files)
        errors = dsforge_errors(version, names)
        bad = ["%s @ next %s: DeepSpeed %s; dsforge %s" % (
            n, version, files[n]["verdict"], ("errors: " + " | ".join(errors[n][:2])) if errors[n]
            else "no error") for n in names if (files[n]["verdict"] == "reject") != bool(errors[n])]
        self.assertEqual(bad, [], "%d disagreements with DeepSpeed's master:\n%s" % (
            len(bad), "\n".join(bad)))

    def test_dsforge_agrees_with_deepspeed(self):
        files = expected()
        releases = load("verdicts.json")["releases"]
        allow = {(a["file"], a["release"]) for a in load("allow.json")}
        names = sorted(files)
        bad, used = [], set()
        agree = total = 0
        for release in releases:
            errors = dsforge_errors(release, names)
            for name in names:
                ds = files[name][release]
                ds_rejects = ds["verdict"] == "reject"
                total += 1
                if ds_rejects == bool(errors[name]):
                    agree += 1
                    continue
                if (name, release) in allow:
                    used.add((name, release))
                    continue
                bad.append("%s @ %s: DeepSpeed %s%s; dsforge %s" % (
                    name, release, ds["verdict"],
                    (" (%s: %s)" % (ds["exception"], ds["message"]))
                    if ds_rejects else "",
                    ("errors: " + " | ".join(errors[name][:2]))
                    if errors[name] else "no error"))
        sys.stderr.write("conformance: %d/%d verdicts agree (%.1f%%)\n" % (
            agree, total, 100.0 * agree / total))
        self.assertEqual(bad, [], "%d disagreements:\n%s" % (len(bad),
                                                              "\n".join(bad)))
        self.assertEqual(sorted(allow - used), [],
                         "allow.json lists agreements; remove them")


if __name__ == "__main__":
    unittest.main()
