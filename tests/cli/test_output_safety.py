"""gen -o after the unlucky cases (issue 30 items 3 and 9):

- Preflight: everything a rename needs is checked before the first one
  (manifest.json, a variant's or --report's path being a directory, a
  directory this user cannot write in, free space), so a run that fails
  changes nothing.
- Debris: the temporary files an interrupted run leaves in DIR
  (F.tmp-PID-N) and its staging directory beside a new one (.DIR.tmp-PID)
  are removed by the next run, with a note, when their process is gone
  (or the process with that id started after them); those of a live
  process stay.
- A -j worker killed by a signal ends the run with exit code 6 and a
  message naming the variant (or file) and the signal, and nothing of the
  run stays behind."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import dsf
from dsf import run

# A sweep of 40 cheap variants; SPIN makes each slow enough to be caught
# mid-run.
SWEEP = """
return {
  name = "sw", summary = "a sweep", params = { n = 1, world_size = 1 },
  build = function(p)
    local x = 0
    for i = 1, %(spin)d do x = x + i end
    return { train_batch_size = p.n, train_micro_batch_size_per_gpu = p.n,
             gradient_accumulation_steps = 1, gradient_clipping = 1.0 }
  end,
}
"""

NS = ",".join(str(n) for n in range(1, 41))


def snapshot(path):
    """Every entry below path (directories too, dot files too) with the
    bytes of each file: what 'nothing changed' compares."""
    snap = {}
    for root, dirs, files in os.walk(path):
        for d in dirs:
            snap[os.path.relpath(os.path.join(root, d), path) + "/"] = None
        for f in files:
            full = os.path.join(root, f)
            with open(full, "rb") as fh:
                snap[os.path.relpath(full, path)] = fh.read()
    return snap


def dead_pid():
    """A process id no process has. Linux gives out ids below
    /proc/sys/kernel/pid_max, so that one is never alive. (The id of a
    child just reaped was used before: once the ids wrap around, which a
    ctest -j8 run that spawns thousands of processes makes happen on a
    pid_max of 32768, another process can get it before dsforge looks,
    and its files are then rightly kept.)"""
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            return int(f.read())
    except (OSError, ValueError):
        p = subprocess.Popen(["true"])
        p.wait()
        return p.pid


def as_other_user():
    """preexec_fn making the child an unprivileged user when the tests
    run as root (root writes anywhere); None otherwise."""
    if os.geteuid() != 0:
        return None

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    return drop


class Preflight(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "8xa100", "-o", self.out), 0)
        # a changed variant file: the next run would replace it
        with open(os.path.join(self.out, "8xa100-small.json"), "w") as f:
            f.write("{}\n")

    def test_manifest_path_is_a_directory(self):
        # the reproducer: it exited 3 after replacing the variant files
        os.remove(os.path.join(self.out, "manifest.json"))
        os.mkdir(os.path.join(self.out, "manifest.json"))
        before = snapshot(self.tmp)
        res = run("gen", "8xa100", "-o", self.out)
        self.assertExit(res, 3)
        self.assertIn("out/manifest.json: error: cannot write: it is a "
                      "directory, where a file goes", res.err)
        self.assertEqual(snapshot(self.tmp), before)

    def test_a_variant_path_is_a_directory(self):
        # the last variant's file: the first two would have been replaced
        path = os.path.join(self.out, "8xa100-large.json")
        os.remove(path)
        os.mkdir(path)
        before = snapshot(self.tmp)
        for jobs in ("1", "2"):
            res = run("gen", "8xa100", "-o", self.out, "-j", jobs)
            self.assertExit(res, 3)
            self.assertIn("8xa100-large.json: error: cannot write: it is a "
                          "directory", res.err)
            self.assertEqual(snapshot(self.tmp), before)

    def test_an_emitted_file_path_is_a_directory(self):
        path = os.path.join(self.out, "8xa100-large.hf-args.json")
        os.mkdir(path)
        before = snapshot(self.tmp)
        res = run("gen", "8xa100", "-o", self.out, "--emit", "hf-args")
        self.assertExit(res, 3)
        self.assertIn("8xa100-large.hf-args.json: error: cannot write: it is "
                      "a directory", res.err)
        self.assertEqual(snapshot(self.tmp), before)

    def test_the_report_path_is_a_directory(self):
        os.mkdir(os.path.join(self.tmp, "page.html"))
        before = snapshot(self.tmp)
        res = run("gen", "8xa100", "-o", self.out, "--report",
                  os.path.join(self.tmp, "page.html"))
        self.assertExit(res, 3)
        self.assertIn("page.html: error: cannot write: it is a directory",
                      res.err)
        self.assertEqual(snapshot(self.tmp), before)

    def test_an_immutable_file(self):
        # chattr +i (root, a file system with attributes): a rename onto
        # it fails whatever the permissions say
        path = os.path.join(self.out, "8xa100-large.json")
        with open(path, "w") as f:
            f.write("{}\n")
        if not shutil.which("chattr") or subprocess.run(
                ["chattr", "+i", path], capture_output=True).returncode:
            self.skipTest("cannot make a file immutable here")
        try:
            before = snapshot(self.tmp)
            res = run("gen", "8xa100", "-o", self.out)
            after = snapshot(self.tmp)
        finally:
            subprocess.run(["chattr", "-i", path])
        self.assertExit(res, 3)
        self.assertIn("8xa100-large.json: error: cannot replace it: it is "
                      "immutable or append-only (chattr)", res.err)
        self.assertEqual(after, before)

    def test_checked_before_any_variant_is_evaluated(self):
        # a profile that prints: nothing printed, so no time spent
        d = self.profile("sw", (SWEEP % {"spin": 0}).replace(
            "local x = 0", 'print("evaluated") local x = 0'))
        os.remove(os.path.join(self.out, "manifest.json"))
        os.mkdir(os.path.join(self.out, "manifest.json"))
        res = run("gen", "sw", "--profile-path", d, "--matrix", "n=1,2",
                  "-o", self.out)
        self.assertExit(res, 3)
        self.assertNotIn("evaluated", res.err)

    def test_a_directory_this_user_cannot_write_in(self):
        drop = as_other_user()
        binary = dsf.DSFORGE
        if drop:
            os.chmod(self.tmp, 0o755)  # (mkdtemp's is 0700)
            # The other user may not reach the build tree (a checkout in a
            # directory of mode 0700, as mktemp -d makes): a copy it can
            # run (the built-ins are in the binary).
            bindir = tempfile.mkdtemp(prefix="dsforge-bin-")
            self.addCleanup(shutil.rmtree, bindir, True)
            os.chmod(bindir, 0o755)
            binary = os.path.join(bindir, "dsforge")
            shutil.copy2(shutil.which(dsf.DSFORGE) or dsf.DSFORGE, binary)
            os.chmod(binary, 0o755)
        else:
            os.chmod(self.out, 0o555)
        before = snapshot(self.tmp)
        p = subprocess.run([binary, "gen", "8xa100", "-o", self.out],
                           capture_output=True, text=True, timeout=60,
                           preexec_fn=drop, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, HOME=self.tmp))
        os.chmod(self.out, 0o755)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("out: error: cannot write in it: Permission denied",
                      p.stderr)
        self.assertEqual(snapshot(self.tmp), before)


def in_small_fs(tmp, kib, script):
    """Runs the shell script with a tmpfs of kib KiB mounted on tmp in a
    mount namespace of its own (the mount goes with it); None when this
    machine does not allow that (not root, no unshare)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    full = ('mount -t tmpfs -o size=%dk tmpfs "$1" || exit 99; cd "$1"; %s'
            % (kib, script))
    p = subprocess.run(["unshare", "-m", "sh", "-c", full, "sh", tmp,
                        dsf.DSFORGE], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    return None if p.returncode == 99 else p


class FreeSpace(dsf.TempDirTest):
    def test_a_run_that_does_not_fit_changes_nothing(self):
        # 48 KiB: base's 3 files and manifest (4 KiB blocks: 20 KiB) fit,
        # then a filler leaves 12 KiB: 8xa100's manifest head (8 KiB) and
        # one of its three variants fit, the next does not
        script = r'''
D="$2"
"$D" gen base -o out >/dev/null || exit 90
head -c 16384 /dev/zero > fill
snap() { find . | sort; find . -type f | sort | xargs sha256sum; }
b=$(snap)
"$D" gen 8xa100 -o out; echo "rc=$?"
"$D" gen 8xa100 -o new; echo "rc=$?"
[ "$b" = "$(snap)" ] && echo same
'''
        p = in_small_fs(self.tmp, 48, script)
        if p is None:
            self.skipTest("cannot mount a small file system here")
        self.assertEqual(p.stdout.split(), ["rc=3", "rc=3", "same"],
                         p.stderr)
        self.assertRegex(p.stderr, r"out/8xa100-\w+\.json: error: not "
                         r"enough free space on its file system: 4096 "
                         r"bytes needed \(whole blocks\), \d+ free")
        self.assertRegex(p.stderr, r"new/\S+: error: not enough free space")


class RenameFails(dsf.TempDirTest):
    def test_the_renames_before_a_failing_one_are_undone(self):
        # a rename no check foresees: onto a mount point (EBUSY; a bind
        # mount in a mount namespace of its own). The first variant's
        # file, changed by hand, was replaced before: it is put back.
        if os.geteuid() != 0 or not shutil.which("unshare") or \
                subprocess.run(["unshare", "-m", "true"],
                               capture_output=True).returncode:
            self.skipTest("cannot make a mount namespace here")
        script = r'''
cd "$1"; D="$2"
"$D" gen 8xa100 -o out >/dev/null || exit 90
echo '{}' > out/8xa100-small.json
echo x > src
mount --bind src out/8xa100-large.json || exit 99
snap() { find . | sort; find . -type f | sort | xargs sha256sum; }
b=$(snap)
"$D" gen 8xa100 -o out; echo "rc=$?"
[ "$b" = "$(snap)" ] && echo same
cat out/8xa100-small.json
'''
        p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh",
                            self.tmp, dsf.DSFORGE], capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        if p.returncode == 99:
            self.skipTest("cannot bind-mount here")
        self.assertEqual(p.stdout.split(), ["rc=3", "same", "{}"], p.stderr)
        self.assertIn("8xa100-large.json: error: cannot rename the finished "
                      "file into place: Device or resource busy; the files "
                      "placed before it are put back", p.stderr)


class Debris(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "8xa100", "-o", self.out), 0)

    def touch(self, rel, age=0):
        path = os.path.join(self.tmp, rel)
        with open(path, "w") as f:
            f.write("partial")
        if age:
            t = time.time() - age
            os.utime(path, (t, t))
        return path

    def test_stale_temporary_files_are_removed_with_a_note(self):
        dead, me = dead_pid(), os.getpid()
        gone = self.touch("out/8xa100-small.json.tmp-%d-1" % dead)
        gone2 = self.touch("out/manifest.json.tmp-%d-7" % dead)
        live = self.touch("out/8xa100-large.json.tmp-%d-2" % me)
        # this process's id, on a file older than this process: made by
        # an earlier process the id belonged to
        reused = self.touch("out/x.sh.tmp-%d-3" % me, age=86400 * 30)
        # not a temporary name: kept
        other = self.touch("out/notes.tmp-1")
        res = run("gen", "8xa100", "-o", self.out)
        self.assertExit(res, 0)
        for p in (gone, gone2, reused):
            self.assertFalse(os.path.exists(p), p)
        for p in (live, other):
            self.assertTrue(os.path.exists(p), p)
        self.assertEqual(len(re.findall(r"note: removed", res.err)), 1,
                         res.err)
        self.assertRegex(res.err, r"out: note: removed 3 temporary files "
                         r"of an interrupted gen -o \(processes "
                         r"(%d, %d|%d, %d)\)" % (dead, me, me, dead))

    def test_a_stale_staging_directory_beside_a_new_one(self):
        dead, me = dead_pid(), os.getpid()
        os.mkdir(os.path.join(self.tmp, ".new.tmp-%d" % dead))
        self.touch(".new.tmp-%d/8xa100-small.json" % dead)
        self.touch(".new.tmp-%d/manifest.json" % dead)
        os.mkdir(os.path.join(self.tmp, ".new.tmp-%d" % me))  # live
        # beside an existing directory too
        os.mkdir(os.path.join(self.tmp, ".out.tmp-%d" % dead))
        res = run("gen", "8xa100", "-o", "new", cwd=self.tmp)
        self.assertExit(res, 0)
        self.assertIn("\n.new.tmp-%d: note: removed the staging directory "
                      "(and its 2 files) of an interrupted gen -o (process "
                      "%d)" % (dead, dead), "\n" + res.err)
        self.assertIn(".new.tmp-%d: note: removed the staging directory "
                      "(and its 2 files) of an interrupted gen -o (process "
                      "%d)" % (dead, dead), res.err)
        res = run("gen", "8xa100", "-o", "out/", cwd=self.tmp)
        self.assertExit(res, 0)
        self.assertIn(".out.tmp-%d: note: removed the staging directory "
                      "(and its 0 files)" % dead, res.err)
        self.assertEqual(sorted(n for n in os.listdir(self.tmp)
                                if n.startswith(".")),
                         [".new.tmp-%d" % me])

    def test_the_report_pages_temporary_file(self):
        # --report's page may be outside DIR: its own stale temporary
        # files beside it go, other files' stay
        dead = dead_pid()
        os.mkdir(os.path.join(self.tmp, "pages"))
        page = self.touch("pages/page.html.tmp-%d-4" % dead)
        other = self.touch("pages/other.html.tmp-%d-5" % dead)
        res = run("gen", "8xa100", "-o", self.out, "--report",
                  os.path.join(self.tmp, "pages", "page.html"))
        self.assertExit(res, 0)
        self.assertFalse(os.path.exists(page))
        self.assertTrue(os.path.exists(other))
        self.assertIn("pages: note: removed 1 temporary file of an "
                      "interrupted gen -o (process %d)" % dead, res.err)

    def test_a_run_without_debris_prints_no_note(self):
        res = run("gen", "8xa100", "-o", self.out)
        self.assertExit(res, 0)
        self.assertEqual(res.err, "")

    def kill_mid_sweep(self, out, jobs):
        """Starts a slow 40-variant sweep into out, kills it with SIGKILL
        once it has written a temporary file (at most 60 s), and returns
        what it left."""
        d = self.profile("sw", SWEEP % {"spin": 5000000}, dirname="p")
        env = dict(os.environ)
        if "ASAN_OPTIONS" in env:
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        p = subprocess.Popen([dsf.DSFORGE, "gen", "sw", "--profile-path", d,
                              "--matrix", "n=" + NS, "-j", jobs, "-o", out,
                              "--max-seconds", "100"],
                             cwd=self.tmp, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        stage = os.path.join(self.tmp, ".%s.tmp-%d" % (out, p.pid))
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline and p.poll() is None:
                where = stage if os.path.isdir(stage) else \
                    os.path.join(self.tmp, out)
                names = os.listdir(where) if os.path.isdir(where) else []
                if any(n.startswith("sw-") for n in names):
                    break
                time.sleep(0.01)
            self.assertIsNone(p.poll(), "the sweep ended before the kill")
        finally:
            p.kill()
            p.wait(timeout=60)
        time.sleep(0.2)  # (a worker sees its parent gone at its next variant)
        return stage

    def test_kill_9_during_a_sweep_into_an_existing_directory(self):
        for jobs in ("1", "2"):
            with self.subTest(jobs=jobs):
                self.kill_mid_sweep("out", jobs)
                left = [n for n in os.listdir(self.out) if ".tmp-" in n]
                self.assertTrue(left, "the kill left nothing to remove")
                res = run("gen", "8xa100", "-o", self.out)
                self.assertExit(res, 0)
                self.assertIn("out: note: removed %d temporary files of an "
                              "interrupted gen -o (process " % len(left),
                              res.err)
                self.assertEqual([n for n in os.listdir(self.out)
                                  if ".tmp-" in n], [])

    def test_kill_9_during_a_sweep_into_a_new_directory(self):
        stage = self.kill_mid_sweep("new", "1")
        self.assertTrue(os.path.isdir(stage))
        res = run("gen", "8xa100", "-o", "new", cwd=self.tmp)
        self.assertExit(res, 0)
        self.assertIn("%s: note: removed the staging directory"
                      % os.path.relpath(stage, self.tmp), res.err)
        self.assertFalse(os.path.exists(stage))
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         ["new", "out", "p"])


class WorkerKilled(dsf.TempDirTest):
    """DSFORGE_TEST_KILL_WORKER_AT (test only, core/workers.h) makes the
    worker raise SIGKILL on the variant it names, after that variant's
    files are written and before they are recorded: the stray files the
    parent never hears of."""

    def setUp(self):
        super().setUp()
        self.d = self.profile("sw", SWEEP % {"spin": 0})

    def gen(self, out, at="default.n-30", jobs="2"):
        return run("gen", "sw", "--profile-path", self.d, "--matrix",
                   "n=" + NS, "-j", jobs, "-o", out, cwd=self.tmp,
                   env={"DSFORGE_TEST_KILL_WORKER_AT": at})

    def assertKilled(self, res, variant):
        self.assertExit(res, 6)
        self.assertIn("error: a worker process was killed by signal 9 "
                      "(Killed) while evaluating variant %s; the run "
                      "stopped there and wrote nothing" % variant, res.err)
        self.assertEqual(res.out, "")

    def test_into_a_new_directory(self):
        before = snapshot(self.tmp)
        res = self.gen("new")
        self.assertKilled(res, "default.n-30")
        self.assertEqual(snapshot(self.tmp), before)  # no new/, no .new.*

    def test_into_an_existing_directory(self):
        self.assertExit(run("gen", "8xa100", "-o", "out", cwd=self.tmp), 0)
        before = snapshot(self.tmp)
        for at in ("default.n-21", "default.n-30", "default.n-40"):
            with self.subTest(at=at):
                self.assertKilled(self.gen("out", at=at), at)
                self.assertEqual(snapshot(self.tmp), before)

    def test_the_parents_own_range_is_not_a_worker(self):
        # n=5 is the parent's: the hook is for workers only, the run is
        # whole
        res = self.gen("out", at="default.n-5")
        self.assertExit(res, 0)
        self.assertIn("40 variants and manifest.json in out", res.out)

    def test_a_worker_killed_from_outside(self):
        # no hook: the worker's first variant (n=21) spins until this test
        # finds the worker process (a child of dsforge, in /proc) and
        # sends it SIGKILL, as the OOM killer would
        if not os.path.isdir("/proc/self"):
            self.skipTest("no /proc")
        spin = SWEEP.replace("local x = 0", "local x = 0 if p.n == 21 then "
                             "while true do x = x + 1 end end")
        d = self.profile("sw", spin % {"spin": 0}, dirname="q")
        env = dict(os.environ)
        if "ASAN_OPTIONS" in env:
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        p = subprocess.Popen([dsf.DSFORGE, "gen", "sw", "--profile-path", d,
                              "--matrix", "n=" + NS, "-j", "2", "-o", "new",
                              "--max-seconds", "60",
                              "--max-instructions", "100000000000"],
                             cwd=self.tmp, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        killed = None
        deadline = time.monotonic() + 30
        while killed is None and time.monotonic() < deadline and \
                p.poll() is None:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/stat" % pid) as f:
                        ppid = f.read().rsplit(")", 1)[1].split()[1]
                except (OSError, IndexError):
                    continue
                if ppid == str(p.pid):
                    os.kill(int(pid), signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.01)
        out, err = p.communicate(timeout=60)
        self.assertIsNotNone(killed, err)
        self.assertKilled(dsf.Result(p.returncode, out, err), "default.n-21")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["profiles", "q"])

    def test_check_names_the_file(self):
        cfg = '{"train_batch_size": 1, "train_micro_batch_size_per_gpu": 1}'
        files = [self.write("c%02d.json" % i, cfg) for i in range(40)]
        res = run("check", "-j", "2", *files,
                  env={"DSFORGE_TEST_KILL_WORKER_AT": files[30]})
        self.assertExit(res, 6)
        self.assertIn("a worker process was killed by signal 9 (Killed) "
                      "while checking %s" % files[30], res.err)


if __name__ == "__main__":
    unittest.main()
