"""Helpers for the command-line tests: run the dsforge binary, make
temporary profiles and plugins, find the shared reference material.

Environment (set by tests/CMakeLists.txt): DSFORGE (the binary),
DSF_SOURCE_DIR (the repository), DSF_SHARED_DIR (../shared, may be absent),
HOME/XDG_* pointing into the build tree so no user file leaks in.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

DSFORGE = os.environ.get("DSFORGE", "dsforge")
SOURCE_DIR = os.environ.get(
    "DSF_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SHARED_DIR = os.environ.get("DSF_SHARED_DIR",
                            os.path.join(SOURCE_DIR, "..", "shared"))
GOLDEN_DIR = os.path.join(SOURCE_DIR, "tests", "golden")
BUILTIN_PROFILES = ["base", "8xa100", "small-gpu-offload", "long-sequence",
                    "high-performance"]
TIERS = ["small", "medium", "large"]


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return "rc=%d\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.out,
                                                    self.err)


def run(*args, cwd=None, env=None, timeout=60, stdin=None):
    """Runs dsforge with args; returns a Result (text stdout/stderr)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([DSFORGE] + [str(a) for a in args], cwd=cwd, env=e,
                       capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL if stdin is None else stdin)
    return Result(p.returncode, p.stdout, p.stderr)


def had_child(args, cwd=None, timeout=120):
    """Runs dsforge with args (output discarded) and watches /proc while
    it runs: returns (whether it had a child process at some point, its
    exit code). Not a timing: it tells whether worker processes ran."""
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:  # LeakSanitizer's tracer is a child too
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    p = subprocess.Popen([DSFORGE] + [str(a) for a in args], cwd=cwd,
                         env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = False
    while p.poll() is None and not seen:
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if pid.isdigit() and fields[1] == str(p.pid):
                seen = True
        time.sleep(0.005)
    p.wait(timeout=timeout)
    return seen, p.returncode


def shared(*parts):
    """A path under the shared reference folder, or None when absent."""
    path = os.path.join(SHARED_DIR, *parts)
    return path if os.path.exists(path) else None


def git_dir(name):
    """A mirror's git directory ("deepspeedai+DeepSpeed" or
    "hjson+hjson-py"): DS_GIT/HJSON_GIT from the environment, else the
    machine's mirror beside the checkout; None when there is none."""
    env = {"deepspeedai+DeepSpeed": "DS_GIT", "hjson+hjson-py": "HJSON_GIT"}[name]
    cands = [os.environ.get(env, "")]
    for up in ("..", os.path.join("..", "..")):
        cands.append(os.path.join(SOURCE_DIR, up, ".mirror", name, "repo"))
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "HEAD")):
            return os.path.abspath(c)
    return None


def dsclient_dir():
    """../shared/tools/dsclient (DeepSpeed's config code without torch),
    the folder holding its setup.sh, or None."""
    for up in ("..", os.path.join("..", "..")):
        p = os.path.join(SOURCE_DIR, up, "shared", "tools", "dsclient")
        if os.path.isfile(os.path.join(p, "setup.sh")):
            return os.path.abspath(p)
    return None


def dsclient_setup():
    """dsclient's setup.sh (what contrib/dsknow's scripts run), or None."""
    d = dsclient_dir()
    return d and os.path.join(d, "setup.sh")


def check_config(test, cfg, *args, text=None):
    """Writes cfg (or text) to test.tmp/c.json and runs check --format
    json on it: (exit code, findings); an exit other than 0 or 1 fails."""
    path = os.path.join(test.tmp, "c.json")
    with open(path, "w") as f:
        f.write(text if text is not None else json.dumps(cfg))
    r = run("check", "--format", "json", *args, path)
    test.assertIn(r.rc, (0, 1), r)
    return r.rc, r.json()


class TempDirTest(unittest.TestCase):
    """A test case with self.tmp, a fresh directory removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dsforge-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, rel, text):
        path = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def profile(self, name, body, dirname="profiles"):
        """Writes <tmp>/<dirname>/<name>.lua and returns its directory."""
        self.write(os.path.join(dirname, name + ".lua"), body)
        return os.path.join(self.tmp, dirname)

    def listing(self, path):
        """Every file below path with its bytes, to compare snapshots."""
        snap = {}
        for root, _, files in os.walk(path):
            for f in files:
                full = os.path.join(root, f)
                with open(full, "rb") as fh:
                    snap[os.path.relpath(full, path)] = fh.read()
        return snap

    def assertExit(self, res, code):
        self.assertEqual(res.rc, code, repr(res))
