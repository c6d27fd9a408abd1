#!/usr/bin/env python3
"""Coverage of DeepSpeed's own config checks by the conformance corpus (issue 28).

    contrib/dsknow/coverage.py DS_GIT HJSON_GIT [--dsforge PATH]
    contrib/dsknow/coverage.py --check [--dsforge PATH]

The first form traces DeepSpeed (trace.py, under dsclient's setup.sh) for
each release record.py records (every release of releases.txt), over every file of tests/conformance/
configs, and writes contrib/dsknow/coverage/vX_Y_Z.json and vX_Y_Z.md.
The second needs no DeepSpeed: it renders the reports again from the
committed trace part (which checks exist, which files trigger and pass
them) with the recorded DeepSpeed verdicts (tests/conformance/
verdicts.json, engine.json) and dsforge's verdicts now, and exits 1 when
a committed file differs, the corpus changed since the trace
(corpus_sha256), or a check disagrees without an allow.json entry.

With tests/conformance/next.json (DeepSpeed's master, next.txt; record.py)
a report "next" (coverage/next.json, next.md) is traced at its commit and
checked with dsforge at master's version.txt (the newest facts).

DSKNOW_COVERAGE_DIR replaces contrib/dsknow/coverage (the reports and
allow.json); DSCLIENT_CACHE=DIR makes dsclient's setup use DIR/vX.Y.Z per
release (default ~/.cache/dsclient/vX.Y.Z).

A check's status: "outside" (dataflow.py: no config value decides it;
listed apart, not counted as reachable; a file triggering one fails
--check, as the analysis would be wrong), "preempted" (preempt.py: a
config value decides it, but something DeepSpeed runs first fails on
every value that would fail it; listed apart with the proof, not counted
as reachable, and a file triggering one fails --check as well),
"unreached" (no file reaches it), "untriggered" (files
pass it, none triggers it), "disagreed" (a file triggering it, or one of
the passing examples, gets another verdict from dsforge than from
DeepSpeed: DeepSpeed rejects <=> dsforge reports an error, as in
tests/conformance/test_conformance.py), "agreed" otherwise. allow.json
marks a known unreached, untriggered or disagreeing check "allowed": each
entry is one reason at one release (release, checks: the DeepSpeed
file:line of each check it covers, reason, source: DeepSpeed's lines and
function), at most 10 checks per release. --check fails on a check that
is neither agreed nor allowed, so every reachable check of every release
is triggered and agreed on, or has its reason.
"""
import hashlib
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CONF = os.path.join(ROOT, "tests", "conformance")
CONFIGS = os.path.join(CONF, "configs")
OUT = os.environ.get("DSKNOW_COVERAGE_DIR") or os.path.join(HERE, "coverage")
MAX_ALLOWED = 10
PASS_EXAMPLES = 2


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


record = load_module("dsknow_record", os.path.join(HERE, "record.py"))
replay = load_module("dsknow_replay", os.path.join(CONF, "test_conformance.py"))
RELEASES = record.RELEASES


def corpus_files():
    return sorted(n for n in os.listdir(CONFIGS) if n.endswith(".json"))


def corpus_sha256(release=None):
    """Over the corpus and the recorded verdicts the report builds on (for
    "next", next.json too)."""
    h = hashlib.sha256()
    paths = [os.path.join(CONFIGS, n) for n in corpus_files()]
    paths += [os.path.join(CONF, "verdicts.json"), os.path.join(CONF, "engine.json")]
    if release == NEXT:
        paths.append(os.path.join(CONF, "next.json"))
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        h.update(os.path.relpath(p, CONF).encode() + b"\0" + data + b"\0")
    return h.hexdigest()


NEXT = "next"   # DeepSpeed's master (next.txt), recorded in tests/conformance/next.json


def stem(release):
    return NEXT if release == NEXT else "v" + release.replace(".", "_")


def next_info():
    """next.json's (commit, version, {file: verdict}), or None."""
    if not os.path.exists(os.path.join(CONF, "next.json")):
        return None
    version, files = replay.expected_next()
    return replay.load("next.json")["commit"], version, files


def ds_version(release):
    """What dsforge is asked for: the release, or master's version.txt."""
    return next_info()[1] if release == NEXT else release


def ds_verdict(v):
    if v["verdict"] == "accept":
        return "accept"
    return "reject %s: %s" % (v["exception"], v["message"][:100])


def trace(ds_git, hj_git, release, files, rev=None):
    """trace.py's output for one release (or commit rev), in its environment."""
    saved = os.environ.get("DSCLIENT_HOME")
    if os.environ.get("DSCLIENT_CACHE"):
        os.environ["DSCLIENT_HOME"] = os.path.join(os.environ["DSCLIENT_CACHE"], rev or "v" + release)
    try:
        env = record.release_env(ds_git, hj_git, release, rev)
    finally:
        if saved is None:
            os.environ.pop("DSCLIENT_HOME", None)
        else:
            os.environ["DSCLIENT_HOME"] = saved
    env["DSCLIENT_DIR"] = record.TOOLS
    p = subprocess.run([sys.executable, os.path.join(HERE, "trace.py"),
                        "--world-size", str(record.WORLD)] + files,
                       cwd=CONFIGS, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("coverage.py: trace.py %s failed:\n%s" % (release, p.stderr[-3000:]))
    return json.loads(p.stdout)


def trace_part(traced, expected, release):
    """The checks as traced, with the passing examples chosen (files
    DeepSpeed accepts first, then by name)."""
    checks = []
    for c in traced["checks"]:
        passing = sorted(c["pass"], key=lambda n: (
            expected[n][release]["verdict"] != "accept", n))
        checks.append({"check": c["check"], "kind": c["kind"],
                       "function": c["function"], "called": c["called"],
                       "code": c["code"], "decided": c["decided"], "why": c["why"],
                       "trigger": sorted(c["trigger"]),
                       "pass_count": len(c["pass"]),
                       "pass": sorted(passing[:PASS_EXAMPLES])})
    return checks


def allowed_checks(allow, release):
    """{check: allow.json entry} at release."""
    return {c: a for a in allow if a["release"] == release for c in entry_checks(a)}


def entry_checks(a):
    return a.get("checks") or ([a["check"]] if a.get("check") else [])


def render(release, checks, sha, expected, errors, allow):
    """(JSON text, markdown text) of one release's report."""
    allowed = allowed_checks(allow, release)
    summary = dict.fromkeys(("reachable", "reached", "triggered", "agreed",
                             "disagreed", "allowed", "outside", "preempted"), 0)
    out = []
    for c in checks:
        c = {k: c[k] for k in ("check", "kind", "function", "called", "code", "decided",
                               "why", "trigger", "pass_count", "pass")}
        verdicts, bad = {}, []
        for name in c["trigger"] + c["pass"]:
            ds = expected[name][release]
            mine = errors[name]
            verdicts[name] = {"deepspeed": ds_verdict(ds),
                              "dsforge": ("error: " + mine[0][:120]) if mine else "no error"}
            if (ds["verdict"] == "reject") != bool(mine):
                bad.append(name)
        if c["decided"] != "config" and not c["trigger"]:
            # no config value decides it (dataflow.py), or none can fail it
            # (preempt.py): listed apart (a triggered one is the analysis'
            # error)
            status = "preempted" if c["decided"] == "preempted" else "outside"
            summary[status] += 1
            c["status"] = status
            c["disagree"], c["verdicts"] = [], {}
            out.append(c)
            continue
        if c["trigger"] or c["pass"]:
            summary["reached"] += 1
        if c["trigger"]:
            summary["triggered"] += 1
        if not (c["trigger"] or c["pass"]):
            status = "unreached"
        elif bad:
            status = "disagreed"
        elif not c["trigger"]:
            status = "untriggered"
        else:
            status = "agreed"
        summary["reachable"] += 1
        summary["agreed"] += status == "agreed"
        summary["disagreed"] += status == "disagreed"
        if c["check"] in allowed and status != "agreed":
            summary["allowed"] += 1
            c["allowed"] = allowed[c["check"]]["reason"]
        c["status"] = status
        c["disagree"] = bad
        c["verdicts"] = verdicts
        out.append(c)
    report = {"deepspeed": release, "world_size": record.WORLD,
              "corpus_sha256": sha, "summary": summary, "checks": out}
    if release == NEXT:
        report["commit"], report["version"] = next_info()[:2]
    return json.dumps(report, indent=1, sort_keys=True) + "\n", markdown(release, summary, out)


def markdown(release, s, checks):
    title = release if release != NEXT else "next (%s at %s, version %s)" % (
        record.next_rev(), next_info()[0][:12], next_info()[1])
    lines = ["# DeepSpeed %s: config checks the conformance corpus reaches" % title, "",
             "Generated by `contrib/dsknow/coverage.py` (contrib/dsknow/README.md); "
             "the details are in `%s.json`." % stem(release), "",
             "| reachable | reached | triggered | agreed | disagreed | allowed | pre-empted "
             "| not the config's |",
             "|---|---|---|---|---|---|---|---|",
             "| %d | %d | %d | %d | %d | %d | %d | %d |" % (
                 s["reachable"], s["reached"], s["triggered"], s["agreed"], s["disagreed"],
                 s["allowed"], s["preempted"], s["outside"]),
             "",
             "reachable: a `raise` or `assert` in a DeepSpeed function the parses call, or "
             "one those call with a config value, that a config value decides (data flow, "
             "`dataflow.py`); reached: some file triggers or passes it; "
             "agreed: some file triggers it and dsforge's verdict is DeepSpeed's on every "
             "file triggering it and on the passing examples; pre-empted: a check a config "
             "value decides that no config can fail, because something DeepSpeed runs first "
             "fails on every value that would fail it (`preempt.py`; listed with the earlier "
             "test); not the config's: a `raise` or "
             "`assert` of those functions that no config value decides (listed last, with "
             "the test that decides it).", ""]
    for status, title in (("disagreed", "Disagreeing"), ("unreached", "Unreached"),
                          ("untriggered", "Reached, never triggered"),
                          ("preempted", "Pre-empted: no config can fail it"),
                          ("outside", "Not decided by a config value")):
        rows = [c for c in checks if c["status"] == status]
        if not rows:
            continue
        lines += ["## %s (%d)" % (title, len(rows)), ""]
        for c in rows:
            note = " (allowed: %s)" % c["allowed"] if "allowed" in c else ""
            if status == "outside":
                note = " (%s: %s)" % ("gated" if c["decided"] == "gate" else "decided elsewhere",
                                      c["why"])
            elif status == "preempted":
                note = " (%s)" % c["why"]
            lines.append("- `%s` %s: `%s`%s" % (c["check"], c["function"],
                                              c["code"].replace("`", "'"), note))
            for name in c["disagree"]:
                v = c["verdicts"][name]
                lines.append("  - %s: DeepSpeed %s; dsforge %s" % (name, v["deepspeed"], v["dsforge"]))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def dsforge_errors(dsforge, release, names):
    replay.DSFORGE = dsforge
    return replay.dsforge_errors(ds_version(release), names)


def load_allow():
    with open(os.path.join(OUT, "allow.json"), encoding="utf-8") as f:
        return json.load(f)


def build(release, checks, sha, dsforge, expected, allow):
    names = sorted({n for c in checks for n in c["trigger"] + c["pass"]})
    errors = dsforge_errors(dsforge, release, names) if names else {}
    return render(release, checks, sha, expected, errors, allow)


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def problems(allow, reports):
    """What --check fails on besides stale files."""
    out = []
    for release in sorted({a.get("release") for a in allow}, key=str):
        n = sum(len(entry_checks(a)) for a in allow if a.get("release") == release)
        if n > MAX_ALLOWED:
            out.append("allow.json has %d checks for %s (at most %d)" % (n, release, MAX_ALLOWED))
    for a in allow:
        for field in ("release", "reason", "source"):
            if not a.get(field):
                out.append("allow.json entry %r lacks %s" % (a, field))
        if not entry_checks(a):
            out.append("allow.json entry %r lacks checks" % (a,))
    for release, rep in reports.items():
        by = {c["check"]: c for c in rep["checks"]}
        for c in rep["checks"]:
            if c["decided"] == "preempted" and c["trigger"]:
                out.append("%s %s is triggered by %s, but preempt.py proves no config can fail "
                           "it (%s): the walk is wrong" % (
                               release, c["check"], c["trigger"][0], c["why"]))
            elif c["decided"] != "config" and c["trigger"]:
                out.append("%s %s is triggered by %s, but dataflow.py finds no config value "
                           "deciding it (%s): the analysis is wrong" % (
                               release, c["check"], c["trigger"][0], c["why"]))
            if c["status"] in ("outside", "preempted"):
                continue
            if c["status"] == "disagreed" and "allowed" not in c:
                out.append("%s %s disagrees: %s" % (release, c["check"], ", ".join(c["disagree"][:3])))
            elif c["status"] != "agreed" and "allowed" not in c:
                out.append("%s %s is %s: add a corpus file that triggers it (and a rule where dsforge "
                           "disagrees), or an allow.json entry with its reason" % (release, c["check"], c["status"]))
        for a in allow:
            for chk in entry_checks(a):
                if a["release"] == release and (chk not in by or by[chk]["status"] in (
                        "agreed", "outside", "preempted")):
                    out.append("allow.json: %s %s is not an exception (remove it)" % (release, chk))
    return out


def main(argv):
    dsforge = os.path.join(ROOT, "build", "dsforge")
    if "--dsforge" in argv:
        i = argv.index("--dsforge")
        dsforge = os.path.abspath(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    check = argv == ["--check"]
    if not check and len(argv) != 2:
        sys.exit(__doc__)
    expected = replay.expected()
    allow = load_allow()
    stale, reports = [], {}
    nxt = next_info()
    targets = list(RELEASES)
    if nxt:
        targets.append(NEXT)
        for name, v in nxt[2].items():
            expected[name][NEXT] = v
    recorded = replay.load("verdicts.json")["files"]
    for release in targets:
        sha = corpus_sha256(release)
        path = os.path.join(OUT, stem(release))
        if check:
            if not os.path.exists(path + ".json"):
                stale.append("%s.json is missing: every release of releases.txt has a "
                             "report (contrib/dsknow/coverage.py DS_GIT HJSON_GIT)" % stem(release))
                continue
            with open(path + ".json", encoding="utf-8") as f:
                committed = json.load(f)
            if committed["corpus_sha256"] != sha:
                stale.append("%s.json was traced on another corpus: re-run "
                             "contrib/dsknow/coverage.py DS_GIT HJSON_GIT" % stem(release))
            checks = committed["checks"]
        else:
            traced = trace(argv[0], argv[1], release, corpus_files(),
                           rev=nxt[0] if release == NEXT else None)
            for name, v in traced["files"].items():
                live = "accept" if v.startswith("OK") else "reject"
                said = (replay.load("next.json")["files"] if release == NEXT else
                        {n: r[release] for n, r in recorded.items()})[name]["verdict"]
                if live != said:
                    sys.exit("coverage.py: %s %s: DeepSpeed says %s now; re-run "
                             "contrib/dsknow/record.py" % (release, name, v))
            # the engine's scheduler constructor: engine.json must list what it
            # rejects (it may also list a failure at a later step)
            for name, v in sorted(traced["engine"].items()):
                if v.startswith("REJECT") and expected[name][release]["verdict"] != "reject":
                    sys.exit("coverage.py: %s %s: DeepSpeed's engine says %s; "
                             "tests/conformance/engine.json says %s" % (
                                 release, name, v, expected[name][release]["verdict"]))
            checks = trace_part(traced, expected, release)
        js, md = build(release, checks, sha, dsforge, expected, allow)
        reports[release] = json.loads(js)
        for ext, text in ((".json", js), (".md", md)):
            if check:
                with open(path + ext, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append("%s%s is not what the corpus and dsforge give now" % (stem(release), ext))
            else:
                write(path + ext, text)
        s = reports[release]["summary"]
        print("%s: %d reachable, %d reached, %d triggered, %d agreed, %d disagreed, %d allowed,"
              " %d pre-empted, %d not the config's" % (
                  release, s["reachable"], s["reached"], s["triggered"], s["agreed"],
                  s["disagreed"], s["allowed"], s["preempted"], s["outside"]))
    bad = stale + problems(allow, reports)
    for b in bad:
        print("coverage.py: " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
