#!/usr/bin/env python3
"""End-to-end tests of dsforge's remote repositories against server.py.

Usage: test_repo.py DSFORGE_BINARY TEST_NAME   (or "all")

Each test gets fresh temporary directories (served repository, project,
XDG cache and config) and its own server on 127.0.0.1, and removes them
all afterwards. Every dsforge run has a time limit.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = ('return { name = "%s", version = "%s", summary = "x", '
        'params = { world_size = 1 }, build = function(p) return { '
        'train_batch_size = 8, train_micro_batch_size_per_gpu = 8, '
        'gradient_accumulation_steps = 1 } end }\n')

# A repository plugin: it must load like a local one and its rule run.
LINT_PLUGIN = """return {
  name = "lint", version = "1.0.0", summary = "the team's lint rules",
  rules = { {
    id = "team-steps-per-print", severity = "warning",
    summary = "the team wants steps_per_print set",
    check = function(cfg, ctx)
      if cfg.steps_per_print == nil then
        ctx.report{ path = "steps_per_print",
                    message = "set steps_per_print (team rule)" }
      end
    end,
  } },
}
"""


class Fail(Exception):
    pass


def check(cond, msg, *ctx):
    if not cond:
        raise Fail(msg + "".join("\n--- " + str(c) for c in ctx))


class Env:
    def __init__(self, dsforge):
        self.dsforge = dsforge
        self.tmp = tempfile.mkdtemp(prefix="dsf-http-")
        self.repo = os.path.join(self.tmp, "serve", "repo")
        self.proj = os.path.join(self.tmp, "proj")
        self.log = os.path.join(self.tmp, "requests.log")
        os.makedirs(os.path.join(self.repo, "profiles"))
        os.makedirs(os.path.join(self.repo, "plugins", "lint"))
        os.makedirs(self.proj)
        # proj is a project (found by its repository list); the user's
        # repositories it uses are pinned in its lock
        with open(os.path.join(self.proj, "dsforge.repos.json"), "w") as f:
            f.write('{"repositories": {}}\n')
        self.env = dict(os.environ)
        for k in list(self.env):
            if k.startswith("DSFORGE_") or k.endswith("_proxy") or \
                    k.endswith("_PROXY") or k in ("CURL_CA_BUNDLE",
                                                  "SSL_CERT_FILE",
                                                  "SSL_CERT_DIR", "CI"):
                del self.env[k]
        self.env["HOME"] = os.path.join(self.tmp, "home")
        self.env["XDG_STATE_HOME"] = os.path.join(self.tmp, "state")
        self.env["XDG_CACHE_HOME"] = os.path.join(self.tmp, "cache")
        self.env["XDG_CONFIG_HOME"] = os.path.join(self.tmp, "config")
        self.env["NO_COLOR"] = "1"
        self.servers = []
        self.port = None

    def write_repo(self, n=2, version="1.0.0"):
        for i in range(n):
            name = "tiny" if i == 0 else "p%03d" % i
            with open(os.path.join(self.repo, "profiles", name + ".lua"),
                      "w") as f:
                f.write(TINY % (name, version))
        with open(os.path.join(self.repo, "plugins", "lint", "init.lua"),
                  "w") as f:
            f.write(LINT_PLUGIN)
        r = self.run("repo", "index", self.repo, "--name", "team")
        check(r.returncode == 0, "repo index failed", r.stderr)

    def start(self, *extra):
        open(self.log, "w").close()
        p = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"),
                              os.path.join(self.tmp, "serve"), self.log]
                             + list(extra), stdout=subprocess.PIPE,
                             text=True)
        self.servers.append(p)
        line = p.stdout.readline()
        check(line.startswith("PORT "), "server did not start")
        self.port = int(line.split()[1])
        return self.port

    def url(self, prefix="", scheme="http"):
        return "%s://127.0.0.1:%d/%srepo" % (scheme, self.port, prefix)

    def run(self, *args, env=None, timeout=60, cwd=None):
        e = dict(self.env)
        e.update(env or {})
        return subprocess.run([self.dsforge] + list(args),
                              cwd=cwd or self.proj, env=e,
                              capture_output=True, text=True,
                              timeout=timeout)

    def requests(self):
        with open(self.log) as f:
            return [json.loads(l) for l in f if l.strip()]

    def clear_log(self):
        open(self.log, "w").close()

    def lock(self):
        with open(os.path.join(self.proj, "dsforge.lock")) as f:
            return json.load(f)

    def cache_files(self):
        out = {}
        root = self.env["XDG_CACHE_HOME"]
        for d, _, files in os.walk(root):
            for n in files:
                p = os.path.join(d, n)
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = f.read()
        return out

    def close(self):
        for p in self.servers:
            p.kill()
            p.wait()
        for d, dirs, _ in os.walk(self.tmp):
            for x in dirs:
                os.chmod(os.path.join(d, x), 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)


def added(e, **kw):
    e.write_repo(**kw)
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "repo add failed", r.stdout, r.stderr)
    return r


def assert_fails(r, code, *needles):
    check(r.returncode == code, "expected exit %d, got %d" %
          (code, r.returncode), r.stdout, r.stderr)
    for n in needles:
        check(n in r.stderr, "stderr lacks %r" % n, r.stderr)


# ---- tests ---------------------------------------------------------------

def test_happy(e):
    r = added(e)
    check("pinned" in r.stdout, "add does not report the pin", r.stdout)
    lock = e.lock()["repositories"]["team"]
    with open(os.path.join(e.repo, "index.json"), "rb") as f:
        check(lock["index_sha256"] == hashlib.sha256(f.read()).hexdigest(),
              "lock does not pin the index digest", lock)
    with open(os.path.join(e.repo, "profiles", "tiny.lua"), "rb") as f:
        check(lock["files"]["profiles/tiny.lua"] ==
              hashlib.sha256(f.read()).hexdigest(), "file pin wrong", lock)
    check(lock["versions"]["profile tiny"] == "1.0.0", "version pin", lock)
    r = e.run("repo", "list")
    check(r.returncode == 0 and "team" in r.stdout and "locked" in r.stdout,
          "repo list", r.stdout, r.stderr)
    r = e.run("repo", "path", "team/tiny@1.0.0")
    check(r.returncode == 0, "repo path", r.stderr)
    d = r.stdout.strip()
    check(os.path.isfile(os.path.join(d, "profiles", "tiny.lua")) and
          os.path.isfile(os.path.join(d, "plugins", "lint", "init.lua")),
          "materialized tree lacks files", d)
    r = e.run("list", "--json")
    check(r.returncode == 0, "list", r.stderr)
    remote = [p for p in json.loads(r.stdout) if p["name"] == "team/tiny"]
    check(len(remote) == 1 and remote[0]["origin"] == "repo team",
          "list does not show team/tiny", r.stdout)
    r = e.run("show", "team/tiny@1.0.0")
    check(r.returncode == 0 and "repo team" in r.stdout, "show team/tiny",
          r.stdout, r.stderr)
    r = e.run("gen", "team/tiny@1.0.0", "--stdout")
    check(r.returncode == 0, "gen team/tiny@1.0.0", r.stderr)
    assert_fails(e.run("gen", "team/tiny@9.9.9", "--stdout"), 4,
                 "offers version 1.0.0")
    assert_fails(e.run("repo", "path", "team/tiny@9.9.9"), 4,
                 "offers version 1.0.0")
    assert_fails(e.run("repo", "path", "team/nope"), 3, "no profile 'nope'")
    assert_fails(e.run("repo", "path", "other/tiny"), 3,
                 "unknown repository 'other'")


CHILD = """return {
  name = "child", version = "2.0.0", summary = "extends its sibling",
  extends = "tiny",
  tiers = { one = { world_size = 1 }, two = { world_size = 2 } },
  build = function(p)
    return { train_batch_size = 8 * p.world_size, gradient_clipping = 0.5 }
  end,
}
"""


def test_gen_remote(e):
    """gen NAME/PROFILE: the profile loader reads the locked repository."""
    e.write_repo()
    with open(os.path.join(e.repo, "profiles", "child.lua"), "w") as f:
        f.write(CHILD)
    r = e.run("repo", "index", e.repo, "--name", "team")
    check(r.returncode == 0, "repo index failed", r.stderr)
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "repo add failed", r.stdout, r.stderr)
    # A repository profile extends a sibling of the same repository.
    out = os.path.join(e.tmp, "out")
    r = e.run("gen", "team/child", "-o", out)
    check(r.returncode == 0, "gen team/child failed", r.stderr)
    with open(os.path.join(out, "child-two.json")) as f:
        doc = json.load(f)
    check(doc["train_batch_size"] == 16 and doc["gradient_clipping"] == 0.5
          and doc["train_micro_batch_size_per_gpu"] == 8,
          "child did not merge over tiny", doc)
    with open(os.path.join(out, "manifest.json")) as f:
        chain = json.load(f)["chain"]
    check([c["name"] for c in chain] == ["tiny", "child"] and
          all(c["origin"] == "repo team" for c in chain), "chain", chain)
    os.remove(os.path.join(e.proj, "dsforge.lock"))
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "gen from a remote profile failed", r.stderr)
    doc = json.loads(r.stdout)
    check(doc.get("train_batch_size") == 8, "wrong config", r.stdout)
    check("[team-steps-per-print]" in r.stderr,
          "the repository's plugin rule did not run", r.stderr)
    check(os.path.isfile(os.path.join(e.proj, "dsforge.lock")),
          "gen did not write the lock file")


def test_display_names(e):
    """show and --why name a repository's profile as repo NAME@VERSION:path,
    never by its cache path (64 hex digits deep)."""
    e.write_repo()
    with open(os.path.join(e.repo, "profiles", "child.lua"), "w") as f:
        f.write(CHILD)
    r = e.run("repo", "index", e.repo, "--name", "team")
    check(r.returncode == 0, "repo index failed", r.stderr)
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "repo add failed", r.stdout, r.stderr)
    hexpath = re.compile(r"[0-9a-f]{40}")
    r = e.run("show", "team/child")
    check(r.returncode == 0, "show team/child", r.stderr)
    check("repo team@1.0.0:profiles/tiny.lua" in r.stdout and
          "repo team@2.0.0:profiles/child.lua" in r.stdout,
          "show does not name the repository files", r.stdout)
    check(not hexpath.search(r.stdout), "show prints a cache path", r.stdout)
    r = e.run("gen", "team/child", "--tier", "two", "--why",
              "gradient_clipping")
    check(r.returncode == 0, "gen --why", r.stderr)
    check("repo team@2.0.0:profiles/child.lua" in r.stdout,
          "--why does not name the repository file", r.stdout)
    check(not hexpath.search(r.stdout + r.stderr), "--why prints a cache path",
          r.stdout, r.stderr)


def test_revalidate(e):
    added(e, n=20)
    e.clear_log()
    # a warm run from a locked repository asks nothing
    r = e.run("repo", "path", "team/tiny")
    check(r.returncode == 0, "warm run failed", r.stderr)
    check(e.requests() == [], "warm run made requests", e.requests())
    out = os.path.join(e.tmp, "out")
    r = e.run("gen", "team/tiny", "-o", out)
    check(r.returncode == 0, "warm gen failed", r.stderr)
    check(e.requests() == [], "warm gen made requests", e.requests())
    # the update check, when due, is one conditional request
    r = e.run("repo", "path", "team/tiny",
              env={"DSFORGE_REPO_CHECK_INTERVAL": "0"})
    check(r.returncode == 0, "warm run failed", r.stderr)
    check("updates" not in r.stderr, "a notice without updates", r.stderr)
    reqs = e.requests()
    check(len(reqs) == 1, "warm run made %d requests" % len(reqs), reqs)
    check(reqs[0]["path"] == "/repo/index.json" and
          reqs[0]["status"] == 304 and reqs[0]["if_none_match"],
          "not a conditional request answered 304", reqs)
    # a second update also revalidates only
    e.clear_log()
    r = e.run("repo", "update")
    check(r.returncode == 0 and "up to date" in r.stdout, "update",
          r.stdout, r.stderr)
    check(len(e.requests()) == 1, "update re-downloaded", e.requests())


def test_status_404_500(e):
    e.write_repo()
    e.start()
    assert_fails(e.run("repo", "add", "team", e.url("_status/404/")), 4,
                 "HTTP status 404")
    assert_fails(e.run("repo", "add", "team", e.url("_status/500/")), 4,
                 "HTTP status 500")
    check(not os.path.exists(os.path.join(e.proj, "dsforge.lock")),
          "lock written after a failure")
    # with a locked cached copy, a server error falls back with a warning
    added(e)
    cfg = os.path.join(e.env["XDG_CONFIG_HOME"], "dsforge", "repos.json")
    with open(cfg, "w") as f:
        json.dump({"repositories": {"team": {"url": e.url()}}}, f)
    lockp = os.path.join(e.proj, "dsforge.lock")
    with open(lockp) as f:
        lock = json.load(f)
    # point config and lock at the failing URL: the content is the same
    bad = e.url("_status/500/")
    lock["repositories"]["team"]["url"] = bad
    with open(lockp, "w") as f:
        json.dump(lock, f)
    with open(cfg, "w") as f:
        json.dump({"repositories": {"team": {"url": bad}}}, f)
    r = e.run("repo", "path", "team/tiny")
    check(r.returncode == 0 and not r.stderr, "the pin did not keep "
          "working", r.stderr)
    # --locked, as cargo's, uses the locked cached copy without asking
    e.clear_log()
    r = e.run("repo", "path", "team/tiny", "--locked")
    check(r.returncode == 0 and not r.stderr, "--locked with the locked "
          "copy in the cache", r.stderr)
    # a fresh machine (no cache): the content must come from the server
    shutil.rmtree(e.env["XDG_CACHE_HOME"])
    assert_fails(e.run("repo", "path", "team/tiny", "--locked"), 4,
                 "HTTP status 500", "not in the cache")


def test_stall(e):
    e.write_repo()
    e.start()
    t = time.time()
    r = e.run("repo", "add", "team", e.url("_stall/"),
              env={"DSFORGE_FETCH_TIMEOUT": "2"})
    assert_fails(r, 4, "cannot fetch")
    check(time.time() - t < 15, "timeout not enforced")


def test_truncated(e):
    e.write_repo()
    e.start()
    assert_fails(e.run("repo", "add", "team", e.url("_truncate/")), 4,
                 "cannot fetch")


def test_oversized(e):
    e.write_repo()
    e.start()
    # no Content-Length: only the count in the write callback stops it
    assert_fails(e.run("repo", "add", "team", e.url("_big/"),
                       env={"DSFORGE_FETCH_MAX_BYTES": "100000"}), 4,
                 "larger than the limit of 100000 bytes")
    # a Content-Length over the cap
    assert_fails(e.run("repo", "add", "team", e.url(),
                       env={"DSFORGE_FETCH_MAX_BYTES": "100"}), 4,
                 "larger than the limit of 100 bytes")


def test_redirects(e):
    e.write_repo()
    e.start()
    assert_fails(e.run("repo", "add", "team", e.url("_loop/")), 4,
                 "too many redirects")
    for scheme in ("file", "ftp", "gopher"):
        assert_fails(e.run("repo", "add", "team",
                           e.url("_to/%s/" % scheme)), 4,
                     "forbidden scheme")
    # plain http to a non-loopback host needs --allow-http (no request)
    assert_fails(e.run("repo", "add", "x", "http://example.invalid/r"), 2,
                 "not allowed")
    assert_fails(e.run("repo", "add", "x", "ftp://127.0.0.1/r"), 2,
                 "not allowed")


def test_tampered(e):
    e.write_repo()
    with open(os.path.join(e.repo, "profiles", "tiny.lua"), "a") as f:
        f.write("-- edited after indexing\n")
    e.start()
    before = e.cache_files()
    r = e.run("repo", "add", "team", e.url())
    assert_fails(r, 4, "integrity check failed", "profiles/tiny.lua")
    check(e.cache_files() == before, "cache changed by a tampered fetch",
          sorted(set(e.cache_files()) - set(before)))
    check(not os.path.exists(os.path.join(e.proj, "dsforge.lock")),
          "lock written")
    check(not os.path.exists(os.path.join(e.env["XDG_CONFIG_HOME"],
                                          "dsforge", "repos.json")),
          "config written")


def test_stale_pin(e):
    added(e)
    lock_before = e.lock()
    e.write_repo(version="1.1.0")   # the team publishes a change
    # --locked (and CI=true), like cargo's: the lock still resolves, so
    # the pinned copy is used; on a fresh machine (no cache) the changed
    # file cannot be had any more: exit 4, naming it
    cache = e.env["XDG_CACHE_HOME"]
    shutil.copytree(cache, cache + ".kept")
    for env, args in (({}, ["--locked"]), ({"CI": "true"}, [])):
        r = e.run("repo", "path", "team/tiny", *args, env=env)
        check(r.returncode == 0, "--locked with the pin cached", r.stderr)
        shutil.rmtree(cache)
        r = e.run("repo", "path", "team/tiny", *args, env=env)
        assert_fails(r, 4, "no longer serves it", "profile tiny: version "
                     "1.0.0 -> 1.1.0", "profiles/tiny.lua: content changed",
                     "dsforge repo update team")
        shutil.rmtree(cache)
        shutil.copytree(cache + ".kept", cache)
    check(e.lock() == lock_before, "lock changed by a failing run")
    # without it the pin keeps working: one note once the check is due
    e.clear_log()
    r = e.run("gen", "team/tiny", "--stdout",
              env={"DSFORGE_REPO_CHECK_INTERVAL": "0"})
    check(r.returncode == 0, "pinned gen failed after a publish", r.stderr)
    check(json.loads(r.stdout)["train_batch_size"] == 8, "pinned content")
    check(r.stderr.count("has updates upstream") == 1 and
          "4 changes" in r.stderr and "repo update team" in r.stderr,
          "not exactly one notice", r.stderr)
    check(len(e.requests()) == 1, "the check is one request", e.requests())
    # the next run, check not due, repeats the note without a request
    e.clear_log()
    r = e.run("repo", "path", "team/tiny@1.0.0")
    check(r.returncode == 0 and "has updates upstream" in r.stderr,
          "note from the last check", r.stderr)
    check(e.requests() == [], "a request before the check is due")
    check(e.lock() == lock_before, "lock changed by a pinned run")
    r = e.run("repo", "outdated")     # exit 1: something to update
    check(r.returncode == 1 and "team: outdated" in r.stdout and
          "profile tiny: version 1.0.0 -> 1.1.0" in r.stdout,
          "repo outdated", r.stdout, r.stderr)
    check(e.lock() == lock_before, "lock changed by repo outdated")
    r = e.run("repo", "update", "team")
    check(r.returncode == 0 and "updated" in r.stdout, "update", r.stdout,
          r.stderr)
    check(e.lock()["repositories"]["team"]["versions"]["profile tiny"] ==
          "1.1.0", "lock not re-pinned")
    r = e.run("repo", "path", "team/tiny@1.1.0")
    check(r.returncode == 0, "after update", r.stderr)
    r = e.run("repo", "outdated", "team")
    check(r.returncode == 0 and "team: up to date" in r.stdout,
          "outdated after update", r.stdout, r.stderr)


def test_pins_keep_working(e):
    """Unrelated commands never touch a repository; pinned content that
    is neither cached nor served is exit 4 saying so."""
    added(e)
    e.write_repo(version="1.1.0")
    cfg = os.path.join(e.tmp, "ds.json")
    with open(cfg, "w") as f:
        json.dump({"train_batch_size": 8,
                   "train_micro_batch_size_per_gpu": 8}, f)
    out = os.path.join(e.tmp, "out")
    for args in (["gen", "8xa100", "-o", out], ["check", cfg],
                 ["estimate", "--model", "gpt2"], ["schema"], ["list"]):
        for env in ({"DSFORGE_REPO_CHECK_INTERVAL": "0"}, {}):
            r = e.run(*args, env=env)
            check(r.returncode == 0, "%s after a publish" % args[0],
                  r.stderr)
    # pinned content neither cached nor served any more: exit 4 saying so
    cache = e.env["XDG_CACHE_HOME"]
    shutil.move(cache, cache + ".saved")
    r = e.run("repo", "path", "team/tiny")
    assert_fails(r, 4, "pinned content of repository 'team'",
                 "not in the cache", "no longer serves it",
                 "profile tiny: version 1.0.0 -> 1.1.0",
                 "dsforge repo update team")
    shutil.rmtree(cache)
    shutil.move(cache + ".saved", cache)
    # with the server gone, everything pinned and cached still works
    for p in e.servers:
        p.kill()
        p.wait()
    for args in (["gen", "8xa100", "-o", out], ["list"],
                 ["gen", "team/tiny", "--stdout"]):
        r = e.run(*args, env={"DSFORGE_REPO_CHECK_INTERVAL": "0"})
        check(r.returncode == 0, "%s without the server" % args[0],
              r.stderr)


def test_project_discovery(e):
    """The project is found from a subdirectory; outside a project
    nothing is written into the current directory."""
    added(e)
    sub = os.path.join(e.proj, "a", "b")
    os.makedirs(sub)
    r = e.run("repo", "path", "team/tiny", cwd=sub)
    check(r.returncode == 0, "subdirectory does not find the project",
          r.stderr)
    r = e.run("repo", "list", cwd=sub)
    check("project: " + e.proj in r.stdout and
          "lock:    " + os.path.join(e.proj, "dsforge.lock") in r.stdout,
          "repo list does not say the project and lock", r.stdout)
    check(os.listdir(sub) == [], "files written in the subdirectory")
    out = os.path.join(e.tmp, "nowhere")
    os.makedirs(out)
    for args in (["repo", "path", "team/tiny"], ["list"],
                 ["estimate", "--model", "gpt2"],
                 ["gen", "team/tiny", "--stdout"], ["repo", "update"],
                 ["repo", "list"]):
        r = e.run(*args, cwd=out)
        check(r.returncode == 0, "%s outside a project" % args, r.stderr)
        check(os.listdir(out) == [], "%s wrote into the cwd" % args,
              os.listdir(out))
    state = os.path.join(e.env["XDG_STATE_HOME"], "dsforge",
                         "dsforge.lock")
    with open(state) as f:
        check("team" in json.load(f)["repositories"], "user lock")
    r = e.run("repo", "list", cwd=out)
    check("project: (none" in r.stdout and state in r.stdout,
          "repo list outside a project", r.stdout)
    # $HOME is a ceiling: a lock there does not make a project of it
    home = e.env["HOME"]
    os.makedirs(os.path.join(home, "w"))
    with open(os.path.join(home, "dsforge.lock"), "w") as f:
        f.write('{"lock_format": 1, "repositories": {}}\n')
    r = e.run("repo", "list", cwd=os.path.join(home, "w"))
    check("project: (none" in r.stdout, "home taken as a project",
          r.stdout)


def test_cache_integrity(e):
    """A file edited in the cache is never used (#11.7)."""
    added(e)
    r = e.run("repo", "path", "team")
    tree = r.stdout.strip()
    f = os.path.join(tree, "profiles", "tiny.lua")
    with open(f) as x:
        good = x.read()

    def tamper(path):
        os.chmod(path, 0o644)
        with open(path, "a") as x:
            x.write("\nerror('tampered')\n")
    for args in ([], ["--offline"]):
        tamper(f)
        r = e.run("gen", "team/tiny", "--stdout", *args)
        check(r.returncode == 0, "gen with a tampered tree", r.stderr)
        check("profiles/tiny.lua does not match the lock" in r.stderr,
              "no warning", r.stderr)
        with open(f) as x:
            check(x.read() == good, "tree not restored")
        # an extra file in the tree is not used either
        with open(os.path.join(tree, "profiles", "evil.lua"), "w") as x:
            x.write(TINY % ("evil", "1"))
        r = e.run("gen", "team/evil", "--stdout", *args)
        check(r.returncode != 0, "an extra cached file was used", r.stdout)
        check("a file the lock does not list" in r.stderr, "no warning",
              r.stderr)
        check(not os.path.exists(os.path.join(tree, "profiles",
                                              "evil.lua")), "extra kept")
    # the blob damaged too: online it is fetched again, offline exit 4
    blob = os.path.join(e.env["XDG_CACHE_HOME"], "dsforge", "blobs",
                        "sha256")
    sha = e.lock()["repositories"]["team"]["files"]["profiles/tiny.lua"]
    bpath = os.path.join(blob, sha)
    tamper(f)
    tamper(bpath)
    r = e.run("gen", "team/tiny", "--stdout", "--offline")
    assert_fails(r, 4, "not in the cache")
    check(not os.path.exists(f), "a damaged tree left in place")
    e.clear_log()
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "online refetch", r.stderr)
    check([q["path"] for q in e.requests()] == ["/repo/profiles/tiny.lua"],
          "refetch requests", e.requests())
    with open(f) as x:
        check(x.read() == good, "tree not restored online")


def test_cache_self_repair(e):
    """Every cached blob damaged and the trees removed: the first online
    run fetches what it needs again and succeeds (issue 30), for a
    snapshot (format 1) and for releases (format 2)."""
    def damage():
        root = os.path.join(e.env["XDG_CACHE_HOME"], "dsforge")
        for d, dirs, files in os.walk(root):
            os.chmod(d, 0o755)
            for n in files:
                p = os.path.join(d, n)
                os.chmod(p, 0o644)
                if "blobs" in p:
                    with open(p, "w") as f:
                        f.write("damaged")
        shutil.rmtree(os.path.join(root, "trees"))
    added(e)
    check(e.run("gen", "team/tiny", "--stdout").returncode == 0, "gen")
    damage()
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "format 1: the first run after the damage",
          r.stderr)
    e.clear_log()
    os.remove(os.path.join(e.repo, "index.json"))
    publish(e, "1.0.0", 8)
    check(e.run("repo", "update", "team").returncode == 0, "update")
    check(batch_of(e, "team/tiny") == 8, "format 2 gen")
    damage()
    check(batch_of(e, "team/tiny") == 8, "format 2: the first run after "
          "the damage")


def test_index_refuses_symlinks(e):
    """repo index publishes only the regular files inside DIR: a symbolic
    link (to a file or a directory, inside or outside) is an error naming
    it, and nothing is written (issue 30)."""
    e.write_repo()
    index = os.path.join(e.repo, "index.json")
    with open(index) as f:
        before = f.read()
    secret = os.path.join(e.tmp, "secret.lua")
    with open(secret, "w") as f:
        f.write(TINY % ("leak", "1.0.0"))
    outside = os.path.join(e.tmp, "outside-plugin")
    os.makedirs(outside)
    with open(os.path.join(outside, "init.lua"), "w") as f:
        f.write("return {}\n")
    links = [(os.path.join(e.repo, "profiles", "leak.lua"), secret),
             (os.path.join(e.repo, "plugins", "lint", "key.lua"), secret),
             (os.path.join(e.repo, "plugins", "other"), outside)]
    for link, target in links:
        os.symlink(target, link)
        for extra in ([], ["--version", "1.0.0"]):
            r = e.run("repo", "index", e.repo, "--name", "team", *extra)
            assert_fails(r, 3, link + ": error: is a symbolic link")
            with open(index) as f:
                check(f.read() == before, "index written", link)
            check(not os.path.exists(os.path.join(e.repo, "blobs")) or
                  not any(open(os.path.join(e.repo, "blobs", b)).read() ==
                          open(secret).read()
                          for b in os.listdir(os.path.join(e.repo, "blobs"))),
                  "the secret was published as a blob")
        os.remove(link)
    os.rename(os.path.join(e.repo, "profiles"),
              os.path.join(e.tmp, "real-profiles"))
    os.symlink(os.path.join(e.tmp, "real-profiles"),
               os.path.join(e.repo, "profiles"))
    assert_fails(e.run("repo", "index", e.repo, "--name", "team"), 3,
                 "is a symbolic link")


def test_malformed_index(e):
    e.write_repo()
    with open(os.path.join(e.repo, "index.json"), "w") as f:
        f.write('{\n  "format": 1,\n  "name": "team",\n  "profiles": {\n'
                '    "tiny": {"version": "1", "path": }\n  }\n}\n')
    e.start()
    r = e.run("repo", "add", "team", e.url())
    assert_fails(r, 4, "/repo/index.json:5:")
    with open(os.path.join(e.repo, "index.json"), "w") as f:
        f.write('{"format": 3, "name": "team"}')
    assert_fails(e.run("repo", "add", "team", e.url()), 4,
                 "unsupported index format 3")
    with open(os.path.join(e.repo, "index.json"), "w") as f:
        f.write('{"format": 2, "name": "team"}')
    assert_fails(e.run("repo", "add", "team", e.url()), 4,
                 '/repo/index.json:1:1', 'format 2 needs "releases"')
    with open(os.path.join(e.repo, "index.json"), "w") as f:
        f.write('{"format": 2, "name": "team", "releases": {\n'
                '  "1.0": {"profiles": {"tiny": "%s"}}}}' % ("0" * 64))
    assert_fails(e.run("repo", "add", "team", e.url()), 4,
                 '/repo/index.json:2:3', 'release "1.0" is not a version')


def test_traversal(e):
    e.write_repo()
    e.start()
    sha = "0" * 64
    cases = [
        ({"tiny": {"version": "1", "path": "../secret.lua", "sha256": sha}},
         None, "leaves the repository"),
        ({"tiny": {"version": "1", "path": "/etc/passwd", "sha256": sha}},
         None, "leaves the repository"),
        ({"tiny": {"version": "1", "path": "profiles\\tiny.lua",
                   "sha256": sha}}, None, "leaves the repository"),
        ({"../x": {"version": "1", "path": "profiles/x.lua", "sha256": sha}},
         None, "invalid name"),
        (None, {"lint": {"version": "1", "path": "plugins/lint",
                         "files": {"../../evil.lua": sha}}},
         "leaves the plugin"),
        (None, {"lint": {"version": "1", "path": "plugins/lint",
                         "files": {"a/./b.lua": sha}}}, "leaves the plugin"),
    ]
    for profiles, plugins, needle in cases:
        doc = {"format": 1, "name": "team"}
        if profiles:
            doc["profiles"] = profiles
        if plugins:
            doc["plugins"] = plugins
        with open(os.path.join(e.repo, "index.json"), "w") as f:
            json.dump(doc, f, indent=1)
        assert_fails(e.run("repo", "add", "team", e.url()), 4, needle)
    check(not os.path.exists(os.path.join(e.tmp, "serve", "secret.lua")),
          "sanity")


def test_offline(e):
    added(e)
    e.clear_log()
    r = e.run("repo", "path", "team/tiny", "--offline")
    check(r.returncode == 0, "offline with a cache", r.stderr)
    check(e.requests() == [], "offline made requests", e.requests())
    # the same project with an empty cache
    shutil.rmtree(e.env["XDG_CACHE_HOME"])
    r = e.run("repo", "path", "team/tiny", "--offline")
    assert_fails(r, 4, "--offline", "index.json of repository 'team'",
                 "not in the cache")
    check(e.requests() == [], "offline made requests", e.requests())
    # no lock at all
    os.remove(os.path.join(e.proj, "dsforge.lock"))
    assert_fails(e.run("repo", "path", "team", "--offline"), 4,
                 "not pinned")
    assert_fails(e.run("repo", "update", "--offline"), 2, "needs the network")


def test_concurrent(e):
    e.write_repo(n=60)
    e.start()
    procs = []
    for i in range(2):
        proj = os.path.join(e.tmp, "proj%d" % i)
        os.makedirs(proj)
        env = dict(e.env)
        procs.append(subprocess.Popen(
            [e.dsforge, "repo", "add", "--project", "team", e.url()],
            cwd=proj, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        check(p.returncode == 0, "concurrent add failed", out, err)
    for rel, data in e.cache_files().items():
        check(".tmp-" not in rel, "temporary file left in the cache", rel)
        if rel.startswith("dsforge/blobs/"):
            check(hashlib.sha256(data).hexdigest() ==
                  os.path.basename(rel), "corrupt blob", rel)
    trees = os.listdir(os.path.join(e.env["XDG_CACHE_HOME"], "dsforge",
                                    "trees"))
    check(len(trees) == 1, "trees", trees)


def test_concurrent_lock(e):
    """Processes adding different repositories to one project keep both."""
    e.write_repo(n=30)
    e.start()
    names = ["team%d" % i for i in range(4)]
    procs = [subprocess.Popen(
        [e.dsforge, "repo", "add", "--project", n, e.url()], cwd=e.proj,
        env=dict(e.env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for n in names]
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        check(p.returncode == 0, "concurrent add failed", out, err)
    pinned = sorted(e.lock()["repositories"])
    check(pinned == names, "the lock lost an entry", pinned)
    for f in os.listdir(e.proj):
        check(".tmp-" not in f, "temporary file left in the project", f)


def run_on_terminal(e, *args):
    """Runs dsforge with stderr on a pseudo-terminal; returns rc, stderr."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([e.dsforge] + list(args), cwd=e.proj, env=e.env,
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    rc = p.wait(timeout=60)
    os.close(master)
    return rc, b"".join(chunks).decode(errors="replace")


def test_progress(e):
    """A progress bar on a terminal, none otherwise."""
    e.write_repo(n=20)
    e.start()
    rc, err = run_on_terminal(e, "repo", "add", "team", e.url())
    check(rc == 0, "add on a terminal failed", err)
    check("fetching [" in err and "21/21 files" in err,
          "no progress bar on a terminal", err)
    r = e.run("repo", "remove", "team")
    check(r.returncode == 0, "remove", r.stderr)
    shutil.rmtree(e.env["XDG_CACHE_HOME"])
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "add", r.stderr)
    check("fetching" not in r.stderr, "a progress bar without a terminal",
          r.stderr)
    rc, err = run_on_terminal(e, "repo", "update", "--no-progress")
    check(rc == 0 and "fetching" not in err, "--no-progress", err)


def test_https(e):
    if not shutil.which("openssl"):
        print("SKIP: openssl is missing")
        sys.exit(77)
    e.write_repo()
    d = os.path.join(e.tmp, "pki")
    os.makedirs(d)

    def ssl(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True,
                       capture_output=True, timeout=60)
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=dsforge test CA")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key",
        "-out", "srv.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    ssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey",
        "ca.key", "-CAcreateserial", "-days", "2", "-out", "srv.pem",
        "-extfile", "ext")
    e.start("--tls-cert", os.path.join(d, "srv.pem"), "--tls-key",
            os.path.join(d, "srv.key"))
    url = e.url(scheme="https")
    # without our CA (system store only) the certificate is refused
    assert_fails(e.run("repo", "add", "team", url), 4, "certificate")
    for var in ("SSL_CERT_FILE", "CURL_CA_BUNDLE"):
        r = e.run("repo", "add", "team", url,
                  env={var: os.path.join(d, "ca.pem")})
        check(r.returncode == 0, "https with %s failed" % var, r.stderr)


def test_token(e):
    e.write_repo()
    secret = "s3cret-token-value"
    e.start("--token", secret)
    r = e.run("repo", "add", "team", e.url(),
              env={"DSFORGE_TOKEN_TEAM": secret})
    check(r.returncode == 0, "add with a token", r.stderr)
    reqs = e.requests()
    check(reqs and all(q["bearer_ok"] for q in reqs),
          "token not sent on every request", reqs)
    check(secret not in r.stdout + r.stderr, "token printed")
    for root in (e.env["XDG_CACHE_HOME"], e.env["XDG_CONFIG_HOME"], e.proj):
        for d, _, files in os.walk(root):
            for n in files:
                with open(os.path.join(d, n), "rb") as f:
                    check(secret.encode() not in f.read(),
                          "token written to " + os.path.join(d, n))


def test_no_libcurl(e):
    e.write_repo()
    e.start()
    r = e.run("repo", "add", "team", e.url(),
              env={"DSFORGE_LIBCURL": "libdsforge-no-such-curl.so"})
    assert_fails(r, 4, "needs libcurl", "libdsforge-no-such-curl.so")


def test_project_wins(e):
    added(e)
    other = e.url("_status/500/")
    cfgdir = os.path.join(e.env["XDG_CONFIG_HOME"], "dsforge")
    with open(os.path.join(cfgdir, "repos.json"), "w") as f:
        json.dump({"repositories": {"team": {"url": other}}}, f)
    with open(os.path.join(e.proj, "dsforge.repos.json"), "w") as f:
        json.dump({"repositories": {"team": {"url": e.url()}}}, f)
    r = e.run("repo", "list")
    check("hidden by the project's" in r.stdout, "list shadowing", r.stdout)
    e.clear_log()
    r = e.run("repo", "path", "team")
    check(r.returncode == 0, "project entry not used", r.stderr)
    check(all("_status" not in q["path"] for q in e.requests()),
          "user entry used", e.requests())
    r = e.run("repo", "remove", "team", "--project")
    check(r.returncode == 0, "remove", r.stderr)
    check("team" not in e.lock()["repositories"], "lock entry kept")


def test_many_files(e):
    e.write_repo(n=100)
    e.start()
    with open(os.path.join(e.proj, "dsforge.repos.json"), "w") as f:
        json.dump({"repositories": {"team": {"url": e.url()}}}, f)
    # Timings belong to contrib/bench/fetch.sh; this checks the requests.
    r = e.run("repo", "update", "--no-progress")
    check(r.returncode == 0, "cold update", r.stderr)
    check(len(e.requests()) == 1 + 100 + 1, "cold requests", len(e.requests()))
    e.clear_log()
    r = e.run("repo", "path", "team/p050")
    check(r.returncode == 0, "warm run", r.stderr)
    check(e.requests() == [], "warm run requests", e.requests())


def test_blob_layout(e):
    """Every blob of a fetch goes into one directory, so a cold fetch
    flushes a fixed number of directories however many files it gets
    (#15: it flushed one per hash prefix, ~80 for 100 files); a cache
    written with the older per-prefix layout is still read, offline."""
    e.write_repo(n=60)
    e.start()
    strace = shutil.which("strace")
    log = os.path.join(e.tmp, "strace.log")
    args = ["repo", "add", "team", e.url(), "--no-progress"]
    if strace:
        # LeakSanitizer cannot run under ptrace (the sanitizer build)
        env = dict(e.env)
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                               ":detect_leaks=0").lstrip(":")
        r = subprocess.run([strace, "-f", "-o", log, "-e", "trace=fsync",
                            e.dsforge] + args, cwd=e.proj, env=env,
                           capture_output=True, text=True, timeout=60)
    else:
        r = e.run(*args)
    check(r.returncode == 0, "repo add failed", r.stdout, r.stderr)
    blobs = os.path.join(e.env["XDG_CACHE_HOME"], "dsforge", "blobs",
                         "sha256")
    names = sorted(os.listdir(blobs))
    check(len(names) == 62, "blobs (index + 60 profiles + 1 plugin file)",
          names)
    for n in names:
        p = os.path.join(blobs, n)
        check(os.path.isfile(p), "not a flat blob", p)
        with open(p, "rb") as f:
            check(hashlib.sha256(f.read()).hexdigest() == n, "bad blob", n)
    if strace:
        with open(log) as f:
            n_fsync = sum(1 for ln in f if "fsync(" in ln)
        # blobs/, the tree's directories, the metadata, lock and config
        check(0 < n_fsync <= 10, "fsyncs of a cold fetch", n_fsync)
    # the older layout: blobs/sha256/ab/abcd..., and no tree yet
    for n in names:
        os.makedirs(os.path.join(blobs, n[:2]), exist_ok=True)
        os.rename(os.path.join(blobs, n), os.path.join(blobs, n[:2], n))
    shutil.rmtree(os.path.join(e.env["XDG_CACHE_HOME"], "dsforge", "trees"))
    e.clear_log()
    r = e.run("gen", "team/p042", "--stdout", "--offline")
    check(r.returncode == 0, "offline from an older cache", r.stderr)
    check('"train_batch_size"' in r.stdout, "no config", r.stdout)
    check(e.requests() == [], "offline made requests", e.requests())
    # a damaged blob in the older layout is removed and fetched again
    sha = e.lock()["repositories"]["team"]["files"]["profiles/p042.lua"]
    old = os.path.join(blobs, sha[:2], sha)
    shutil.rmtree(os.path.join(e.env["XDG_CACHE_HOME"], "dsforge", "trees"))
    with open(old, "a") as f:
        f.write("-- tampered\n")
    r = e.run("gen", "team/p042", "--stdout")
    check(r.returncode == 0, "refetch of a damaged older blob", r.stderr)
    check(not os.path.exists(old), "damaged older blob kept")
    check([q["path"] for q in e.requests()] == ["/repo/profiles/p042.lua"],
          "refetch requests", e.requests())
    check(os.path.isfile(os.path.join(blobs, sha)), "refetched blob not flat")


# A repository plugin that takes the built-in plugin's name: it would
# turn every DeepSpeed rule off.
NO_RULES_DEEPSPEED = ('return { name = "deepspeed", version = "9.9.9", '
                      'summary = "lets everything pass", rules = { { '
                      'id = "nothing", severity = "note", summary = "x", '
                      'check = function() end } } }\n')
BOTH_PRECISIONS = ('{"train_batch_size": 8, '
                   '"train_micro_batch_size_per_gpu": 8, '
                   '"gradient_accumulation_steps": 1, '
                   '"fp16": {"enabled": true}, "bf16": {"enabled": true}}\n')


def test_plugin_cannot_replace_builtin(e):
    os.makedirs(os.path.join(e.repo, "plugins", "deepspeed"))
    with open(os.path.join(e.repo, "plugins", "deepspeed", "init.lua"),
              "w") as f:
        f.write(NO_RULES_DEEPSPEED)
    added(e)
    cfg = os.path.join(e.proj, "c.json")
    with open(cfg, "w") as f:
        f.write(BOTH_PRECISIONS)
    # The built-in plugin still checks: fp16 and bf16 together fail.
    r = e.run("check", cfg)
    assert_fails(r, 1, "plugin 'deepspeed' of repo team is not used",
                 "override_plugins")
    r = e.run("plugins", "--json")
    check(r.returncode == 0, "plugins --json", r.stderr)
    rows = [p for p in json.loads(r.stdout) if p["name"] == "deepspeed"]
    check([(p["origin"], p["used"]) for p in rows] ==
          [("built-in", True), ("repo team", False)], "plugins rows", rows)
    check("may not replace" in rows[1]["reason"], "reason", rows[1])
    r = e.run("plugins")
    check("deepspeed (repo team: " in r.stdout and "not used" in r.stdout,
          "plugins text", r.stdout)
    # Its own profiles' require() gets the built-in modules too (same
    # order for plugins and modules): gen of a repository profile works.
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "gen team/tiny", r.stderr)
    # A user-level list cannot allow it (it applies to every project).
    user_conf = os.path.join(e.env["XDG_CONFIG_HOME"], "dsforge",
                             "repos.json")
    with open(user_conf) as f:
        conf = json.load(f)
    conf["repositories"]["team"]["override_plugins"] = True
    with open(user_conf, "w") as f:
        json.dump(conf, f)
    assert_fails(e.run("check", cfg), 1, "is not used")
    # The project may allow it explicitly; then the repository's copy runs.
    project_conf = os.path.join(e.proj, "dsforge.repos.json")
    with open(project_conf, "w") as f:
        json.dump(conf, f)
    r = e.run("check", cfg)
    check(r.returncode == 0, "allowed override not used", r.stdout,
          r.stderr)
    # Adding the repository again (a new URL or key) keeps the grant.
    r = e.run("repo", "add", "team", e.url(), "--project")
    check(r.returncode == 0, "re-add", r.stdout, r.stderr)
    with open(project_conf) as f:
        check(json.load(f)["repositories"]["team"].get("override_plugins")
              is True, "re-add dropped override_plugins")
    r = e.run("plugins", "--json")
    rows = [p for p in json.loads(r.stdout) if p["name"] == "deepspeed"]
    check([(p["origin"], p["used"]) for p in rows] ==
          [("repo team", True), ("built-in", False)], "allowed rows", rows)
    conf["repositories"]["team"]["override_plugins"] = "yes"
    with open(project_conf, "w") as f:
        json.dump(conf, f)
    assert_fails(e.run("check", cfg), 3, "override_plugins")
def keygen(e, name):
    path = os.path.join(e.tmp, "keys", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    r = e.run("repo", "keygen", path)
    check(r.returncode == 0, "keygen", r.stderr)
    return path


def sign(e, *keys, expires=None):
    args = ["repo", "index", e.repo, "--name", "team"]
    for k in keys:
        args += ["--sign", k]
    if expires is not None:
        args += ["--expires", expires]
    r = e.run(*args)
    check(r.returncode == 0, "repo index --sign", r.stdout, r.stderr)
    return r


def test_keygen(e):
    k = keygen(e, "team")
    check(os.stat(k).st_mode & 0o777 == 0o600, "secret key not 0600")
    with open(k) as f:
        lines = f.read().split("\n")
    check(lines[0] == "dsforge-ed25519-secret-key v1" and
          len(lines[1]) == 64, "secret key format", lines)
    with open(k + ".pub") as f:
        lines = f.read().split("\n")
    check(lines[0] == "dsforge-ed25519-public-key v1" and
          len(lines[1]) == 64, "public key format", lines)
    with open(k, "rb") as f:
        before = f.read()
    assert_fails(e.run("repo", "keygen", k), 2, "never overwritten")
    with open(k, "rb") as f:
        check(f.read() == before, "key overwritten")
    # a damaged key file is refused with its name, nothing written
    bad = os.path.join(e.tmp, "keys", "bad")
    with open(bad, "w") as f:
        f.write("not a key\n")
    e.write_repo()
    with open(os.path.join(e.repo, "index.json"), "rb") as f:
        index = f.read()
    assert_fails(e.run("repo", "index", e.repo, "--sign", bad), 2, bad,
                 "not a dsforge secret key file")
    with open(os.path.join(e.repo, "index.json"), "rb") as f:
        check(f.read() == index, "index.json written by a failed sign")


def test_signed(e):
    """Signed indexes: accepted when signed by the pinned key; refused
    (exit 4) when unsigned, tampered, wrongly signed or by another key."""
    key, other = keygen(e, "team"), keygen(e, "other")
    e.write_repo()
    r = sign(e, key)
    check("signed with key" in r.stdout, "no signing report", r.stdout)
    with open(os.path.join(e.repo, "index.json")) as f:
        doc = json.load(f)
    # write_repo's unsigned publish was serial 1: every publish counts
    check(doc["serial"] == 2 and doc["expires"].endswith("Z"),
          "serial/expires", doc)
    e.start()
    r = e.run("repo", "add", "team", e.url(), "--key", key + ".pub")
    check(r.returncode == 0, "signed add", r.stderr)
    check(e.lock()["repositories"]["team"]["serial"] == 2, "lock serial")
    cfg = os.path.join(e.env["XDG_CONFIG_HOME"], "dsforge", "repos.json")
    with open(cfg) as f:
        check(len(json.load(f)["repositories"]["team"]["keys"]) == 1,
              "key not pinned in the configuration")
    sig = os.path.join(e.repo, "index.json.sig")
    index = os.path.join(e.repo, "index.json")
    with open(sig) as f:
        good_sig = f.read()
    with open(index) as f:
        good_index = f.read()

    def refused(*needles):
        assert_fails(e.run("repo", "update", "team"), 4, *needles)
        check(e.lock()["repositories"]["team"]["serial"] == 2,
              "lock changed by a refused index")
    # missing signature
    os.remove(sig)
    refused("is refused", "not signed", "404")
    # wrong signature (one bit)
    d = json.loads(good_sig)
    s0 = d["signatures"][0]["signature"]
    d["signatures"][0]["signature"] = ("1" if s0[0] == "0" else "0") + s0[1:]
    with open(sig, "w") as f:
        json.dump(d, f)
    refused("is refused", "does not match its bytes")
    # tampered index, the signature left as it was
    with open(sig, "w") as f:
        f.write(good_sig)
    with open(index, "w") as f:
        f.write(good_index.replace('"serial": 2', '"serial": 7'))
    refused("is refused", "does not match its bytes")
    # the signature is checked on the raw bytes before they are parsed:
    # a server cannot make the client parse (or even read as JSON) what
    # the publishers did not sign
    with open(index, "w") as f:
        f.write('{"format": 1, "name": "team", "profiles": {' +
                ", ".join('"k%d": 1' % i for i in range(50000)) + "}")
    r = e.run("repo", "update", "team")
    assert_fails(r, 4, "is refused", "does not match its bytes")
    check("index.json:" not in r.stderr, "the index was parsed", r.stderr)
    # signed by another key
    with open(index, "w") as f:
        f.write(good_index)
    sign(e, other)
    refused("is refused", "signed by another key")
    # a project pinning the other key accepts it
    r = e.run("repo", "add", "team", e.url(), "--key", other + ".pub")
    check(r.returncode == 0, "add with the other key", r.stderr)


def test_rollback_expired(e):
    key = keygen(e, "team")
    e.write_repo()
    sign(e, key)
    old = {}
    for n in ("index.json", "index.json.sig"):
        with open(os.path.join(e.repo, n)) as f:
            old[n] = f.read()
    sign(e, key)     # serial 3 (write_repo's publish was 1)
    e.start()
    r = e.run("repo", "add", "team", e.url(), "--key", key + ".pub")
    check(r.returncode == 0, "add", r.stderr)
    check(e.lock()["repositories"]["team"]["serial"] == 3, "serial 3")
    for n, text in old.items():      # the serial-2 index served again
        with open(os.path.join(e.repo, n), "w") as f:
            f.write(text)
    assert_fails(e.run("repo", "update", "team"), 4, "rollback",
                 "serial 2 is served", "pins serial 3",
                 "repo index DIR --serial 4")
    # a fresh machine with the lock: the served index is checked
    shutil.move(e.env["XDG_CACHE_HOME"], e.env["XDG_CACHE_HOME"] + ".kept")
    assert_fails(e.run("repo", "path", "team/tiny", "--locked"), 4,
                 "rollback")
    shutil.rmtree(e.env["XDG_CACHE_HOME"], ignore_errors=True)
    shutil.move(e.env["XDG_CACHE_HOME"] + ".kept", e.env["XDG_CACHE_HOME"])
    check(e.lock()["repositories"]["team"]["serial"] == 3, "lock changed")
    # expired
    sign(e, key, expires="2001-01-01T00:00:00Z")
    assert_fails(e.run("repo", "update", "team"), 4,
                 "expired on 2001-01-01T00:00:00Z", "--allow-expired")
    r = e.run("repo", "update", "team", "--allow-expired")
    check(r.returncode == 0, "--allow-expired", r.stderr)
    # a pinned, cached copy keeps working after its expiry
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "pinned expired index", r.stderr)


def test_serial_survives(e):
    """Every publish grows the serial, signed or not, so an unsigned
    publish between two signed ones never looks like a rollback; a serial
    that goes back names the cause and the repair (issue 29)."""
    key = keygen(e, "team")
    e.write_repo()                    # unsigned: serial 1
    sign(e, key)                      # serial 2
    e.start()
    r = e.run("repo", "add", "team", e.url(), "--key", key + ".pub")
    check(r.returncode == 0, "add", r.stderr)
    index = os.path.join(e.repo, "index.json")

    def serial():
        with open(index) as f:
            return json.load(f)["serial"]
    # any order of unsigned, signed and re-signed publishes
    for i, signed in enumerate([False, True, False, False, True, True]):
        before = serial()
        if signed:
            sign(e, key)
        else:
            e.write_repo(version="1.0.%d" % i)
            check(not os.path.exists(index + ".sig"), "stale signature")
        check(serial() == before + 1, "serial did not grow", serial())
        if signed:
            r = e.run("repo", "update", "team")
            check(r.returncode == 0 and "rollback" not in r.stderr,
                  "false rollback after an unsigned publish", r.stderr)
            check(e.lock()["repositories"]["team"]["serial"] == serial(),
                  "lock serial", e.lock())
    pinned = serial()
    with open(index) as f:
        served = f.read()
    # --serial lower than the index it replaces: refused, nothing written
    r = e.run("repo", "index", e.repo, "--sign", key, "--serial", "2")
    assert_fails(r, 2, "--serial 2 is not above the serial %d" % pinned,
                 "--serial %d" % (pinned + 1))
    with open(index) as f:
        check(f.read() == served, "index changed by a refused publish")
    # an index.json that cannot be read: its serial is unknown
    with open(index, "w") as f:
        f.write("{not json")
    r = e.run("repo", "index", e.repo, "--sign", key)
    assert_fails(r, 3, "cannot read the serial", "--serial N")
    # a publisher indexing a copy without the index starts again at 1;
    # clients name the cause and the repair instead of blaming an attack
    os.remove(index)
    sign(e, key)
    check(serial() == 1, "fresh index serial", serial())
    r = e.run("repo", "update", "team")
    assert_fails(r, 4, "goes back", "serial 1 is served",
                 "pins serial %d" % pinned,
                 "without its previous index.json",
                 "repo index DIR --serial %d" % (pinned + 1))
    check(e.lock()["repositories"]["team"]["serial"] == pinned,
          "lock changed by a refused index")
    # the repair the message names
    r = e.run("repo", "index", e.repo, "--sign", key, "--serial",
              str(pinned + 1))
    check(r.returncode == 0 and "(serial %d)" % (pinned + 1) in r.stdout,
          "repo index --serial", r.stdout, r.stderr)
    r = e.run("repo", "update", "team")
    check(r.returncode == 0, "update after the repair", r.stderr)
    check(e.lock()["repositories"]["team"]["serial"] == pinned + 1,
          "lock serial after the repair", e.lock())


def test_index_swap(e):
    """Another repository's index and signature, by the same publisher
    key, served at this repository's URL: refused (issue 30)."""
    key = keygen(e, "org")
    e.write_repo()
    sign(e, key)
    other = os.path.join(e.tmp, "serve", "other")
    shutil.copytree(e.repo, other)
    with open(os.path.join(other, "profiles", "tiny.lua"), "w") as f:
        f.write(TINY % ("tiny", "9.9.9"))
    r = e.run("repo", "index", other, "--name", "other", "--sign", key)
    check(r.returncode == 0, "index other", r.stderr)
    e.start()
    for n in ("team", "other"):
        r = e.run("repo", "add", n, e.url() if n == "team" else
                  e.url().replace("/repo", "/other"), "--key", key + ".pub")
        check(r.returncode == 0, "add %s" % n, r.stderr)
    lock_before = e.lock()
    check(lock_before["repositories"]["team"]["index_name"] == "team",
          "the lock records the index's name", lock_before)
    # each repository's index (and signature) served at the other's URL
    saved = {}
    for n in ("index.json", "index.json.sig"):
        with open(os.path.join(e.repo, n)) as f:
            saved[n] = f.read()
        shutil.copy(os.path.join(other, n), os.path.join(e.repo, n))
    for args in (["repo", "update", "team"], ["repo", "outdated", "team"]):
        assert_fails(e.run(*args), 4, "is the index of repository 'other'",
                     "not of 'team' as pinned")
    check(e.lock() == lock_before, "lock changed by a swapped index")
    # a lock written before the name was recorded: the cached pinned
    # index says which name it had
    lock = dict(lock_before)
    for n in lock["repositories"]:
        del lock["repositories"][n]["index_name"]
    with open(os.path.join(e.proj, "dsforge.lock"), "w") as f:
        json.dump(lock, f)
    assert_fails(e.run("repo", "update", "team"), 4,
                 "is the index of repository 'other'")
    for n, text in saved.items():
        with open(os.path.join(other, n), "w") as f:
            f.write(text)
    assert_fails(e.run("repo", "update", "other"), 4,
                 "is the index of repository 'team'")


def test_key_rotation(e):
    """During a rotation the index carries signatures by the old and the
    new key; clients pinning either accept it."""
    old, new = keygen(e, "old"), keygen(e, "new")
    e.write_repo()
    sign(e, old)
    e.start()
    r = e.run("repo", "add", "team", e.url(), "--key", old + ".pub")
    check(r.returncode == 0, "add", r.stderr)
    e.write_repo(version="1.1.0")
    sign(e, old, new)
    with open(os.path.join(e.repo, "index.json.sig")) as f:
        check(len(json.load(f)["signatures"]) == 2, "two signatures")
    r = e.run("repo", "update", "team")
    check(r.returncode == 0, "old key during the transition", r.stderr)
    r = e.run("repo", "add", "team", e.url(), "--key", old + ".pub",
              "--key", new + ".pub")
    check(r.returncode == 0, "both keys pinned", r.stderr)
    sign(e, new)     # the transition is over
    r = e.run("repo", "update", "team")
    check(r.returncode == 0, "new key after the transition", r.stderr)
    r = e.run("repo", "add", "team", e.url(), "--key", old + ".pub")
    assert_fails(r, 4, "signed by another key")


# ---- releases side by side (index format 2) ------------------------------

BATCH = ('return { name = "%s", version = "%s", summary = "x", '
         'params = { world_size = 1 }, build = function(p) return { '
         'train_batch_size = %d, train_micro_batch_size_per_gpu = %d, '
         'gradient_accumulation_steps = 1 } end }\n')


def publish(e, version, tiny_batch, *extra, plugin=LINT_PLUGIN):
    """Writes the working tree (tiny with tiny_batch, big unchanged, the
    lint plugin) and adds it as release `version`."""
    with open(os.path.join(e.repo, "profiles", "tiny.lua"), "w") as f:
        f.write(BATCH % ("tiny", version, tiny_batch, tiny_batch))
    with open(os.path.join(e.repo, "profiles", "big.lua"), "w") as f:
        f.write(BATCH % ("big", "1.0.0", 64, 64))
    with open(os.path.join(e.repo, "plugins", "lint", "init.lua"),
              "w") as f:
        f.write(plugin)
    r = e.run("repo", "index", e.repo, "--name", "team", "--version",
              version, *extra)
    check(r.returncode == 0, "repo index --version %s" % version, r.stdout,
          r.stderr)
    return r


def sha_of(text):
    return hashlib.sha256(text.encode()).hexdigest()


def batch_of(e, ref, *args):
    r = e.run("gen", ref, "--stdout", *args)
    check(r.returncode == 0, "gen %s" % ref, r.stderr)
    return json.loads(r.stdout)["train_batch_size"]


def test_versions(e):
    """Two releases served side by side: @1.0.0, @^1.1, @~, no @ select
    the right files, the lock records each selection and its files, a
    shared file is stored and fetched once, and repo update moves only
    what a requirement allows."""
    publish(e, "1.0.0", 8)
    r = publish(e, "1.1.0", 16)
    check("2 releases: 1.0.0 1.1.0" in r.stdout, "index report", r.stdout)
    with open(os.path.join(e.repo, "index.json")) as f:
        doc = json.load(f)
    check(doc["format"] == 2 and sorted(doc["releases"]) ==
          ["1.0.0", "1.1.0"], "index.json", doc)
    big = sha_of(BATCH % ("big", "1.0.0", 64, 64))
    tiny10 = sha_of(BATCH % ("tiny", "1.0.0", 8, 8))
    tiny11 = sha_of(BATCH % ("tiny", "1.1.0", 16, 16))
    check(doc["releases"]["1.0.0"]["profiles"] == {"big": big,
                                                   "tiny": tiny10} and
          doc["releases"]["1.1.0"]["profiles"]["tiny"] == tiny11,
          "release contents", doc)
    # content addressed: big and the plugin are stored once for both
    check(sorted(os.listdir(os.path.join(e.repo, "blobs"))) ==
          sorted([big, tiny10, tiny11, sha_of(LINT_PLUGIN)]), "blobs",
          os.listdir(os.path.join(e.repo, "blobs")))
    # a release never changes; a format-2 index needs --version
    with open(os.path.join(e.repo, "profiles", "tiny.lua"), "a") as f:
        f.write("-- changed\n")
    assert_fails(e.run("repo", "index", e.repo, "--version", "1.1.0"), 2,
                 "release 1.1.0 is already in", "new version")
    assert_fails(e.run("repo", "index", e.repo), 2, "format 2",
                 "--version")
    assert_fails(e.run("repo", "index", e.repo, "--version", "1.2"), 2,
                 "not a release version")
    with open(os.path.join(e.repo, "index.json")) as f:
        check(json.load(f) == doc, "index.json changed by a refusal")
    check(len(os.listdir(os.path.join(e.repo, "blobs"))) == 4,
          "a refused release left a blob", os.listdir(
              os.path.join(e.repo, "blobs")))
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0 and "pinned 2 releases, newest 1.1.0" in
          r.stdout, "repo add", r.stdout, r.stderr)
    check(e.lock()["repositories"]["team"]["selections"] == {},
          "add selects nothing", e.lock())
    e.clear_log()
    check(batch_of(e, "team/tiny@1.0.0") == 8, "@1.0.0")
    check(batch_of(e, "team/tiny@^1.1") == 16, "@^1.1")
    check(batch_of(e, "team/tiny@^1.0") == 16, "@^1.0: the newest 1.x")
    check(batch_of(e, "team/tiny@~1.0.0") == 8, "@~1.0.0")
    check(batch_of(e, "team/tiny@=1.1") == 16, "@=1.1")
    check(batch_of(e, "team/tiny") == 16, "no @: the newest")
    blobs = [q["path"] for q in e.requests() if "/blobs/" in q["path"]]
    check(sorted(blobs) == sorted(set(blobs)) and
          sum(big in b for b in blobs) == 1, "a file fetched twice", blobs)
    lock = e.lock()["repositories"]["team"]
    check(lock["selections"] == {
        "profile tiny@1.0.0": "1.0.0", "profile tiny@^1.1": "1.1.0",
        "profile tiny@^1.0": "1.1.0", "profile tiny@~1.0.0": "1.0.0",
        "profile tiny@=1.1": "1.1.0", "profile tiny": "1.1.0",
        "repository": "1.1.0"}, "selections", lock)
    check(lock["files"]["1.0.0/profiles/tiny.lua"] == tiny10 and
          lock["files"]["1.1.0/profiles/tiny.lua"] == tiny11 and
          lock["files"]["1.0.0/profiles/big.lua"] == big and
          len(lock["files"]) == 6, "file pins", lock)
    # each release is its own directory
    d10 = e.run("repo", "path", "team/tiny@1.0.0").stdout.strip()
    d11 = e.run("repo", "path", "team/tiny@^1.1").stdout.strip()
    with open(os.path.join(d10, "profiles", "tiny.lua")) as f:
        check(sha_of(f.read()) == tiny10, "1.0.0 tree")
    with open(os.path.join(d11, "profiles", "tiny.lua")) as f:
        check(sha_of(f.read()) == tiny11, "1.1.0 tree")
    # no match: exit 4 listing the releases; bad syntax: exit 2 + column
    assert_fails(e.run("gen", "team/tiny@^2", "--stdout"), 4,
                 "no release of profile 'tiny'", "matches ^2",
                 "1.1.0, 1.0.0")
    assert_fails(e.run("repo", "path", "team/tiny@1.0.5"), 4,
                 "matches 1.0.5")
    assert_fails(e.run("gen", "team/tiny@^1.x", "--stdout"), 2,
                 "column 14", "wildcards")
    assert_fails(e.run("gen", "team/tiny@", "--stdout"), 2, "column 11")
    assert_fails(e.run("repo", "path", "team/nope@1.0.0"), 3,
                 "no profile 'nope'")
    # --locked: what the lock has works without a request to a blob; a
    # new selection is a lock change, refused
    before = e.lock()
    check(batch_of(e, "team/tiny@1.0.0", "--locked") == 8, "--locked")
    assert_fails(e.run("gen", "team/tiny@~1.1", "--stdout", "--locked"), 4,
                 "'profile tiny@~1.1' (release 1.1.0) is not in the lock",
                 "--locked")
    check(e.lock() == before, "lock changed under --locked")
    # a new release: pins keep working, outdated names the moves, update
    # moves the requirements that allow it and keeps exact ones
    publish(e, "1.2.0", 32)
    publish(e, "2.0.0", 64)
    check(batch_of(e, "team/tiny") == 16, "pinned after a publish")
    r = e.run("repo", "outdated", "team")
    check(r.returncode == 1 and "profile tiny: 1.1.0 -> 2.0.0" in r.stdout
          and "profile tiny@^1.1: 1.1.0 -> 1.2.0" in r.stdout and
          "profile tiny@1.0.0" not in r.stdout, "outdated", r.stdout)
    r = e.run("repo", "update", "team")
    check(r.returncode == 0 and "updated" in r.stdout, "update", r.stdout,
          r.stderr)
    sel = e.lock()["repositories"]["team"]["selections"]
    check(sel["profile tiny"] == "2.0.0" and
          sel["profile tiny@^1.1"] == "1.2.0" and
          sel["profile tiny@~1.0.0"] == "1.0.0" and
          sel["profile tiny@1.0.0"] == "1.0.0", "update", sel)
    check(batch_of(e, "team/tiny") == 64 and
          batch_of(e, "team/tiny@^1.1") == 32 and
          batch_of(e, "team/tiny@1.0.0") == 8, "after update")
    check(batch_of(e, "team/tiny@1.0.0", "--locked") == 8,
          "--locked after update")
    for p in e.servers:     # the selected releases are in the cache
        p.kill()
        p.wait()
    check(batch_of(e, "team/tiny@^1.1", "--offline") == 32, "--offline")


def test_locked_releases(e):
    """--locked as cargo's: fails only when resolving would change the
    lock. Upstream publishing new releases changes nothing for a locked
    build, on a machine with the cache or without (issue 29)."""
    publish(e, "1.0.0", 8)
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "add", r.stderr)
    check(batch_of(e, "team/tiny@1.0.0") == 8, "1.0.0")
    check(batch_of(e, "team/tiny") == 8, "tiny")
    lock_before = e.lock()
    publish(e, "1.1.0", 16)           # upstream moves on
    cache = e.env["XDG_CACHE_HOME"]
    for env, args in (({}, ["--locked"]), ({"CI": "true"}, [])):
        for fresh in (False, True):
            if fresh:
                shutil.rmtree(cache)
            for ref in ("team/tiny", "team/tiny@1.0.0"):
                r = e.run("gen", ref, "--stdout", *args, env=env)
                check(r.returncode == 0, "locked build after a publish "
                      "(fresh cache: %s)" % fresh, r.stderr)
                check(json.loads(r.stdout)["train_batch_size"] == 8,
                      "the locked release", r.stdout)
            check(e.lock() == lock_before, "lock changed", e.lock())
    # a new constraint would add to the lock
    assert_fails(e.run("gen", "team/tiny@^1.1", "--stdout", "--locked"), 4,
                 "forbids adding it")
    # a pinned file whose sha256 differs upstream (a republished release)
    index = os.path.join(e.repo, "index.json")
    with open(index) as f:
        served = f.read()
    doc = json.loads(served)
    doc["releases"]["1.0.0"]["profiles"]["tiny"] = \
        doc["releases"]["1.1.0"]["profiles"]["tiny"]
    with open(index, "w") as f:
        json.dump(doc, f)
    shutil.rmtree(cache)
    assert_fails(e.run("gen", "team/tiny", "--stdout", "--locked"), 4,
                 "no longer serves it", "1.0.0", "tiny")
    # a pinned release no longer served: the pin cannot be satisfied
    doc = json.loads(served)
    del doc["releases"]["1.0.0"]
    with open(index, "w") as f:
        json.dump(doc, f)
    shutil.rmtree(cache)
    assert_fails(e.run("gen", "team/tiny", "--stdout", "--locked"), 4,
                 "no longer serves it", "1.0.0")
    check(e.lock() == lock_before, "lock changed by a failing run")
    # a repository moved to another URL would change the lock
    with open(index, "w") as f:
        f.write(served)
    cfg = os.path.join(e.env["XDG_CONFIG_HOME"], "dsforge", "repos.json")
    with open(cfg, "w") as f:
        json.dump({"repositories": {"team": {"url": e.url() + "/"}}}, f)
    with open(cfg, "w") as f:
        json.dump({"repositories": {"team": {
            "url": e.url().replace("127.0.0.1", "localhost")}}}, f)
    assert_fails(e.run("gen", "team/tiny", "--stdout", "--locked"), 4,
                 "pinned at", "forbids changing the lock")
    r = e.run("gen", "team/tiny", "--stdout")
    check(r.returncode == 0, "without --locked the pin works", r.stderr)


def test_failed_release_not_locked(e):
    """Errors in a repository's profile name repo NAME@RELEASE:FILE, never
    the cache path, and a release that fails to load is not recorded in
    the lock (issue 29)."""
    prof = os.path.join(e.repo, "profiles")
    with open(os.path.join(prof, "tiny.lua"), "w") as f:
        f.write(BATCH % ("tiny", "1.0.0", 8, 8))
    with open(os.path.join(prof, "syn.lua"), "w") as f:
        f.write('return { name = "syn", summary = "x", build = '
                'function(p) return {\n')
    with open(os.path.join(prof, "typo.lua"), "w") as f:
        f.write('return { name = "typo", summary = "x", parmas = {}, '
                'build = function(p) return {} end }\n')
    r = e.run("repo", "index", e.repo, "--name", "team", "--version",
              "1.0.0")
    check(r.returncode == 0, "index", r.stderr)
    e.start()
    check(e.run("repo", "add", "team", e.url()).returncode == 0, "add")
    hexpath = re.compile(r"[0-9a-f]{40}")
    for name, code, needle in (("syn", 5, "repo team@1.0.0:profiles/syn.lua:2:"),
                               ("typo", 3, "repo team@1.0.0:profiles/typo.lua:"
                                " error: unknown profile field 'parmas'")):
        r = e.run("gen", "team/" + name, "--stdout")
        assert_fails(r, code, needle)
        check(not hexpath.search(r.stderr), "a cache path", r.stderr)
        sel = e.lock()["repositories"]["team"]["selections"]
        check("profile " + name not in sel, "a release that failed to load "
              "is in the lock", sel)
    check(batch_of(e, "team/tiny") == 8, "tiny")
    check(e.lock()["repositories"]["team"]["selections"]["profile tiny"] ==
          "1.0.0", "the loaded release is locked", e.lock())
    # the fix, published as the next release, is the one recorded
    with open(os.path.join(prof, "syn.lua"), "w") as f:
        f.write(BATCH % ("syn", "1.0.1", 4, 4))
    r = e.run("repo", "index", e.repo, "--name", "team", "--version",
              "1.0.1")
    check(r.returncode == 0, "index 1.0.1", r.stderr)
    check(e.run("repo", "update", "team").returncode == 0, "update")
    check(batch_of(e, "team/syn") == 4, "syn 1.0.1")
    check(e.lock()["repositories"]["team"]["selections"]["profile syn"] ==
          "1.0.1", "fixed release locked", e.lock())


def test_soak_publishes(e):
    """200 publishes in a seeded random order (signed, unsigned, re-signed,
    releases out of version order); after each, a client that pins the
    key and one that does not update and generate. Neither ever sees a
    false rollback, and every file either uses matches the index served
    (issue 29)."""
    import random
    rnd = random.Random(29)
    key = keygen(e, "team")
    cache = {}
    for who in ("keyed", "plain"):
        d = os.path.join(e.tmp, who)
        os.makedirs(d)
        with open(os.path.join(d, "dsforge.repos.json"), "w") as f:
            f.write('{"repositories": {}}\n')
        cache[who] = {"XDG_CACHE_HOME": os.path.join(e.tmp, who + "-cache")}
    publish(e, "1.0.0", 1, "--sign", key)
    e.start()
    for who, extra in (("keyed", ["--key", key + ".pub"]), ("plain", [])):
        r = e.run("repo", "add", "team", e.url(), "--project", *extra,
                  cwd=os.path.join(e.tmp, who), env=cache[who])
        check(r.returncode == 0, "add " + who, r.stderr)
    index = os.path.join(e.repo, "index.json")
    versions = {"1.0.0": 1}           # release -> tiny's batch
    last_signed_serial = 1
    for i in range(200):
        kind = rnd.choice(["new", "new", "old-line", "resign", "unsigned"])
        signed = kind != "unsigned" and rnd.random() < 0.8
        if kind == "resign":
            v = rnd.choice(sorted(versions))   # same files: "unchanged"
            batch = versions[v]
        else:
            major = len(versions) if kind != "old-line" else 0
            v = "%d.%d.0" % (major, i + 1)
            batch = (i % 7) + 1
        args = ["repo", "index", e.repo, "--name", "team", "--version", v]
        if signed:
            args += ["--sign", key]
        with open(os.path.join(e.repo, "profiles", "tiny.lua"), "w") as f:
            f.write(BATCH % ("tiny", v, batch, batch))
        r = e.run(*args)
        check(r.returncode == 0, "publish %d" % i, r.stdout, r.stderr)
        versions[v] = batch
        with open(index) as f:
            served = json.load(f)
        if signed:
            check(served["serial"] > last_signed_serial, "serial went back "
                  "between signed publishes", served["serial"])
            last_signed_serial = served["serial"]
        for who in ("keyed", "plain"):
            cwd = os.path.join(e.tmp, who)
            r = e.run("repo", "update", "team", cwd=cwd, env=cache[who])
            check("rollback" not in r.stderr and "goes back" not in
                  r.stderr, "false rollback (%s, publish %d)" % (who, i),
                  r.stderr)
            if who == "keyed" and not signed:
                assert_fails(r, 4, "not signed")   # refused, truthfully
            else:
                check(r.returncode == 0, "update %s %d" % (who, i),
                      r.stderr)
            r = e.run("repo", "path", "team/tiny", cwd=cwd, env=cache[who])
            check(r.returncode == 0, "path %s %d" % (who, i), r.stderr)
            lock = json.load(open(os.path.join(cwd, "dsforge.lock")))
            rel = lock["repositories"]["team"]["selections"]["profile tiny"]
            with open(os.path.join(r.stdout.strip(), "profiles",
                                   "tiny.lua")) as f:
                used = sha_of(f.read())
            check(used == served["releases"][rel]["profiles"]["tiny"],
                  "a file that does not match the index (%s, %d)" % (who, i))
            r = e.run("gen", "team/tiny@" + rel, "--stdout", cwd=cwd,
                      env=cache[who])
            check(r.returncode == 0 and json.loads(r.stdout)[
                "train_batch_size"] == versions[rel], "gen %s %d" % (who, i),
                r.stdout, r.stderr)


def test_versions_plugins(e):
    """A repository's plugins come from one release: the newest one the
    lock selected (so --locked needs no extra entry), else the newest."""
    publish(e, "1.0.0", 8)
    publish(e, "1.1.0", 16, plugin=LINT_PLUGIN.replace("(team rule)",
                                                       "(team rule v2)"))
    e.start()
    r = e.run("repo", "add", "team", e.url())
    check(r.returncode == 0, "repo add", r.stderr)
    r = e.run("repo", "path", "team/tiny@1.0.0")   # loads no plugin
    check(r.returncode == 0, "repo path", r.stderr)
    lock = e.lock()
    check(lock["repositories"]["team"]["selections"] ==
          {"profile tiny@1.0.0": "1.0.0"}, "selections", lock)
    r = e.run("gen", "team/tiny@1.0.0", "--stdout", "--locked")
    check(r.returncode == 0 and "(team rule)" in r.stderr and
          "v2" not in r.stderr, "plugins of the selected release",
          r.stderr)
    check(e.lock() == lock, "lock changed")
    r = e.run("gen", "team/tiny", "--stdout")        # selects 1.1.0
    check(r.returncode == 0, "gen team/tiny", r.stderr)
    # from the next run on (plugins load before profiles are resolved)
    r = e.run("gen", "team/tiny@1.0.0", "--stdout", "--locked")
    check(r.returncode == 0 and "(team rule v2)" in r.stderr,
          "plugins of the newest selected release", r.stderr)


def test_versions_tampered(e):
    """Format 2 keeps every integrity check: a changed blob is refused
    with nothing cached or pinned; a signed index edited after signing is
    refused."""
    key = keygen(e, "team")
    publish(e, "1.0.0", 8, "--sign", key)
    publish(e, "1.1.0", 16, "--sign", key)
    with open(os.path.join(e.repo, "index.json")) as f:
        check(json.load(f)["serial"] == 2, "serial grows per release")
    e.start()
    r = e.run("repo", "add", "team", e.url(), "--key", key + ".pub")
    check(r.returncode == 0, "signed format-2 add", r.stderr)
    check(batch_of(e, "team/tiny@1.1.0") == 16, "release 1.1.0")
    tiny10 = sha_of(BATCH % ("tiny", "1.0.0", 8, 8))
    blob = os.path.join(e.repo, "blobs", tiny10)
    os.chmod(blob, 0o644)
    with open(blob, "a") as f:
        f.write("-- tampered\n")
    lock = e.lock()
    before = e.cache_files()
    assert_fails(e.run("gen", "team/tiny@1.0.0", "--stdout"), 4,
                 "integrity check failed", "blobs/" + tiny10)
    check(e.lock() == lock, "lock changed by a tampered blob")
    check(not [k for k in set(e.cache_files()) - set(before)
               if "trees" in k or tiny10 in k],
          "tampered content cached",
          sorted(set(e.cache_files()) - set(before)))
    # the untouched release still works
    check(batch_of(e, "team/tiny@1.1.0", "--locked") == 16, "other release")
    # a signed index changed after signing
    index = os.path.join(e.repo, "index.json")
    with open(index) as f:
        good = f.read()
    with open(index, "w") as f:
        f.write(good.replace('"1.1.0"', '"1.1.1"'))
    assert_fails(e.run("repo", "update", "team"), 4, "is refused",
                 "does not match its bytes")


TESTS = {n[5:]: f for n, f in globals().items() if n.startswith("test_")}


def main():
    dsforge, name = sys.argv[1], sys.argv[2]
    names = sorted(TESTS) if name == "all" else [name]
    failed = 0
    for n in names:
        e = Env(os.path.abspath(dsforge))
        try:
            TESTS[n](e)
            print("PASS", n)
        except (Fail, subprocess.TimeoutExpired) as x:
            print("FAIL", n, x)
            failed += 1
        finally:
            e.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
