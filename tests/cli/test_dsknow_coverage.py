"""The committed coverage reports of DeepSpeed's own config checks
(contrib/dsknow/coverage/, issue 28; contrib/dsknow/coverage.py,
documented in contrib/dsknow/README.md) are current.

Without DeepSpeed (always, CI included): `coverage.py --check` renders
every release's report again from its committed trace part, the recorded
DeepSpeed verdicts and this dsforge's verdicts, and must find the same
bytes, the same corpus (corpus_sha256) and no disagreeing check that
allow.json does not list; a report edited by hand, or a dsforge that
stops reporting DeepSpeed's errors, makes it fail.

With DeepSpeed (dsclient in ../shared, git directories of DeepSpeed and
hjson-py as for test_dsknow_reproduce, and dsclient's unpacked cache per
release, so no network is used): tracing DeepSpeed again over the corpus
reproduces the committed reports byte for byte. Skipped where any of those
is absent; under CI=true an absent dsclient fails the test when the shared
directory itself is there (it should then hold the tool)."""
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import dsf

HERE = os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow")
COVERAGE = os.path.join(HERE, "coverage.py")
REPORTS = os.path.join(HERE, "coverage")
dsclient_setup, git_dir = dsf.dsclient_setup, dsf.git_dir


def releases():
    return sorted(n[:-5] for n in os.listdir(REPORTS)
                  if n.startswith("v") and n.endswith(".json"))


def reports():
    """The releases' report stems and "next" (DeepSpeed's master)."""
    return releases() + (["next"] if os.path.exists(os.path.join(REPORTS, "next.json")) else [])


def release_of(stem):
    return "next" if stem == "next" else stem[1:].replace("_", ".")


def run_coverage(args, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, COVERAGE] + args, env=e,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def copy_reports():
    tmp = tempfile.mkdtemp(prefix="dsknow-coverage-")
    for n in os.listdir(REPORTS):
        shutil.copy(os.path.join(REPORTS, n), tmp)
    return tmp


class Committed(unittest.TestCase):
    def test_reports_are_current(self):
        p = run_coverage(["--check", "--dsforge", dsf.DSFORGE])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), len(reports()))
        for line in p.stdout.splitlines():
            self.assertRegex(line, r"^(\d+\.\d+\.\d+|next): \d+ reachable, \d+ reached, "
                             r"\d+ triggered, \d+ agreed, 0 disagreed")

    def test_every_covered_release_has_a_report(self):
        with open(os.path.join(HERE, "releases.txt"), encoding="utf-8") as f:
            tags = [ln.strip() for ln in f if re.match(r"^v\d+\.\d+\.\d+$", ln.strip())]
        self.assertEqual(releases(), sorted(t.replace(".", "_") for t in tags))

    def test_a_missing_report_is_stale(self):
        tmp = copy_reports()
        self.addCleanup(shutil.rmtree, tmp)
        stem = releases()[0]
        os.remove(os.path.join(tmp, stem + ".json"))
        p = run_coverage(["--check", "--dsforge", dsf.DSFORGE],
                         env={"DSKNOW_COVERAGE_DIR": tmp})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("%s.json is missing" % stem, p.stderr)

    def test_next_is_master_at_its_recorded_commit(self):
        with open(os.path.join(dsf.SOURCE_DIR, "tests", "conformance", "next.json"), encoding="utf-8") as f:
            nxt = json.load(f)
        with open(os.path.join(REPORTS, "next.json"), encoding="utf-8") as f:
            rep = json.load(f)
        self.assertEqual((rep["deepspeed"], rep["commit"], rep["version"]),
                         ("next", nxt["commit"], nxt["version"]))
        with open(os.path.join(REPORTS, "next.md"), encoding="utf-8") as f:
            self.assertIn("# DeepSpeed next (master at %s" % nxt["commit"][:12], f.read())

    def test_summary_counts_the_checks(self):
        for stem in reports():
            with open(os.path.join(REPORTS, stem + ".json"), encoding="utf-8") as f:
                rep = json.load(f)
            s, checks = rep["summary"], rep["checks"]
            # (a raise or assert no config value decides is listed apart,
            # with the test that decides it; none is triggered by a file)
            # (and so is one no config can fail, with the earlier test)
            outside = [c for c in checks if c["status"] == "outside"]
            preempted = [c for c in checks if c["status"] == "preempted"]
            self.assertEqual(s["outside"], len(outside))
            self.assertEqual(s["preempted"], len(preempted))
            self.assertEqual(s["reachable"], len(checks) - len(outside) - len(preempted))
            for c in outside + preempted:
                self.assertIn(c["decided"], ("other", "gate") if c in outside else ("preempted",), c)
                self.assertTrue(c["why"], c)
                self.assertEqual(c["trigger"], [], c)
                self.assertNotIn("allowed", c)
            self.assertEqual(s["reached"], sum(1 for c in checks if (c["trigger"] or c["pass"])
                                               and c["status"] not in ("outside", "preempted")))
            self.assertEqual(s["agreed"], sum(1 for c in checks if c["status"] == "agreed"))
            for c in checks:
                self.assertRegex(c["check"], r"^[\w/.]+\.py:\d+$")
            with open(os.path.join(REPORTS, stem + ".md"), encoding="utf-8") as f:
                self.assertIn("| %d | %d |" % (s["reachable"], s["reached"]), f.read())

    def test_allow_list_is_short_and_justified(self):
        with open(os.path.join(REPORTS, "allow.json"), encoding="utf-8") as f:
            allow = json.load(f)
        for stem in reports():
            release = release_of(stem)
            # (at most 10 checks, however many entries they share)
            self.assertLessEqual(sum(len(a["checks"]) for a in allow if a["release"] == release),
                                 10, release)
        for a in allow:
            for field in ("release", "checks", "reason", "source"):
                self.assertTrue(a.get(field), (a, field))
            for chk in a["checks"]:   # each check's DeepSpeed line is in the source
                self.assertIn(chk, a["source"])

    def test_every_check_is_agreed_or_allowed(self):
        for stem in reports():
            with open(os.path.join(REPORTS, stem + ".json"), encoding="utf-8") as f:
                rep = json.load(f)
            gaps = [c["check"] for c in rep["checks"]
                    if c["status"] not in ("agreed", "outside", "preempted") and "allowed" not in c]
            self.assertEqual(gaps, [], stem)

    def check_allow_edited(self, edit):
        """coverage.py --check on a copy of the reports whose allow.json
        edit(entries) changed: its result."""
        tmp = copy_reports()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "allow.json")
        with open(path, encoding="utf-8") as f:
            allow = json.load(f)
        edit(allow)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(allow, indent=1, sort_keys=True) + "\n")
        p = run_coverage(["--check", "--dsforge", dsf.DSFORGE],
                         env={"DSKNOW_COVERAGE_DIR": tmp})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        return p

    def test_a_gap_allow_json_does_not_list_fails(self):
        dropped = {}
        p = self.check_allow_edited(lambda allow: dropped.update(allow.pop()))
        self.assertIn("%s %s is " % (dropped["release"], dropped["checks"][0]), p.stderr)
        self.assertIn("add a corpus file that triggers it", p.stderr)

    def test_more_than_ten_allowed_checks_fail(self):
        # The limit counts checks, not entries: one entry of eleven is too many.
        counted = {}

        def pad(allow):
            release = allow[-1]["release"]
            allow.append({"release": release, "reason": "padding", "source": "none",
                          "checks": ["deepspeed/none.py:%d" % i for i in range(1, 12)]})
            counted.update(release=release, n=sum(len(e["checks"]) for e in allow
                                                  if e["release"] == release))
        p = self.check_allow_edited(pad)
        self.assertIn("allow.json has %(n)d checks for %(release)s (at most 10)" % counted,
                      p.stderr)

    def check_edited(self, edit):
        """coverage.py --check on a copy of the reports whose newest
        release's report edit(report) changed: (stem, its result)."""
        tmp = copy_reports()
        self.addCleanup(shutil.rmtree, tmp)
        stem = releases()[-1]
        path = os.path.join(tmp, stem + ".json")
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
        edit(rep)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(rep, indent=1, sort_keys=True) + "\n")
        p = run_coverage(["--check", "--dsforge", dsf.DSFORGE],
                         env={"DSKNOW_COVERAGE_DIR": tmp})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        return stem, p

    def test_a_report_edited_by_hand_is_stale(self):
        def untrigger(rep):   # as if no file triggered an agreed check
            next(c for c in rep["checks"] if c["status"] == "agreed")["trigger"] = []
        stem, p = self.check_edited(untrigger)
        self.assertIn("%s.json is not what the corpus and dsforge give now" % stem, p.stderr)
        self.assertIn("%s.md is not what" % stem, p.stderr)

    def trigger_listed_apart(self, status):
        """--check on the reports with a file of an agreed check made to
        trigger the first check of status: (release, check, file, stderr)."""
        edited = {}

        def trigger(rep):
            apart = [c for c in rep["checks"] if c["status"] == status]
            self.assertTrue(apart)
            agreed = next(c for c in rep["checks"] if c["status"] == "agreed")
            apart[0]["trigger"] = agreed["trigger"][:1]
            edited.update(check=apart[0]["check"], file=agreed["trigger"][0])
        stem, p = self.check_edited(trigger)
        return release_of(stem), edited["check"], edited["file"], p.stderr

    def test_a_triggered_check_the_analysis_calls_not_the_configs_fails(self):
        # dataflow.py is checked against the corpus: a check no config value
        # decides cannot be triggered by a config file.
        release, check, name, err = self.trigger_listed_apart("outside")
        self.assertIn("%s %s is triggered by %s, but dataflow.py finds no config value" % (
            release, check, name), err)
        self.assertIn("the analysis is wrong", err)

    def test_a_triggered_check_the_walk_calls_preempted_fails(self):
        # preempt.py is checked against the corpus the same way: a check no
        # config can fail is triggered by no config file.
        release, check, name, err = self.trigger_listed_apart("preempted")
        self.assertIn("%s %s is triggered by %s, but preempt.py proves no config can fail it" % (
            release, check, name), err)
        self.assertIn("the walk is wrong", err)

    def test_a_dsforge_without_errors_disagrees(self):
        tmp = copy_reports()
        self.addCleanup(shutil.rmtree, tmp)
        silent = os.path.join(tmp, "silent-dsforge")
        with open(silent, "w") as f:   # reports nothing on any file
            f.write("#!/bin/sh\necho '[]'\n")
        os.chmod(silent, 0o755)
        p = run_coverage(["--check", "--dsforge", silent],
                         env={"DSKNOW_COVERAGE_DIR": tmp})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("deepspeed/runtime/config.py:", p.stderr)
        self.assertIn(" disagrees: ", p.stderr)


def dsclient_cache():
    """The user's dsclient cache (ctest points HOME at the build tree)."""
    return os.environ.get("DSCLIENT_CACHE") or os.path.join(
        pwd.getpwuid(os.getuid()).pw_dir, ".cache", "dsclient")


def live_missing():
    if not dsclient_setup():
        return "no ../shared/tools/dsclient"
    if not (git_dir("deepspeedai+DeepSpeed") and git_dir("hjson+hjson-py")):
        return "no git directory of DeepSpeed or hjson-py"
    tags = ["v" + release_of(stem) for stem in releases()]
    nxt = os.path.join(dsf.SOURCE_DIR, "tests", "conformance", "next.json")
    if os.path.exists(nxt):
        with open(nxt, encoding="utf-8") as f:
            tags.append(json.load(f)["commit"])   # master's cache is named by its commit
    for tag in tags:
        base = os.path.join(dsclient_cache(), tag)
        if not (os.path.isfile(os.path.join(base, "ds", "deepspeed", "runtime", "config.py"))
                and os.path.isdir(os.path.join(base, "debroot"))):
            return "no dsclient cache for %s (made by its setup.sh, which downloads)" % tag
    return None


class Traced(unittest.TestCase):
    def setUp(self):
        why = live_missing()
        if (why and why.startswith("no ../shared") and os.environ.get("CI") == "true"
                and os.path.isdir(dsf.SHARED_DIR)):
            self.fail("CI=true with %s present but without dsclient" % dsf.SHARED_DIR)
        if why:
            self.skipTest(why)

    def test_tracing_deepspeed_again_reproduces_the_reports(self):
        tmp = tempfile.mkdtemp(prefix="dsknow-coverage-")
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copy(os.path.join(REPORTS, "allow.json"), tmp)
        p = run_coverage([git_dir("deepspeedai+DeepSpeed"), git_dir("hjson+hjson-py"),
                          "--dsforge", dsf.DSFORGE],
                         env={"DSKNOW_COVERAGE_DIR": tmp, "DSCLIENT_CACHE": dsclient_cache()})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for n in sorted(os.listdir(REPORTS)):
            with open(os.path.join(REPORTS, n), "rb") as a, open(os.path.join(tmp, n), "rb") as b:
                self.assertEqual(a.read(), b.read(), "%s differs: re-run contrib/dsknow/coverage.py" % n)


if __name__ == "__main__":
    unittest.main()
