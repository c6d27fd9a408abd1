"""Opening an input never blocks forever (issue 30 item 8): a FIFO with no
writer given as a config (check), an override file (gen -f) or a file a
command names (check -- COMMAND's hostfile) is an input error after
DSFORGE_OPEN_WAIT seconds (5 by default), while standard input, a FIFO
with a writer (even one that writes late) and process substitution
(/dev/fd/N, a pipe) are read as before. Every run here has a subprocess
timeout: without the fix the FIFO cases hang until it fires."""
import os
import subprocess
import threading

import dsf
from dsf import run

# A config the batch rules accept at world size 1.
CFG = """{
  "train_batch_size": 8,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 1,
  "gradient_clipping": 1.0
}
"""

SHORT = {"DSFORGE_OPEN_WAIT": "0.3"}


def feed_later(path, text, delay):
    """Opens the FIFO path for writing after delay seconds (the open waits
    for the reader), then writes text: a writer that comes late."""
    def go():
        threading.Event().wait(delay)
        with open(path, "w") as f:
            f.write(text)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def run_with_pipe(args, text, cwd):
    """Runs dsforge with args where "{fd}" is /dev/fd/N, the read end of a
    pipe another thread writes text to: the shell's <(...)."""
    r, w = os.pipe()
    args = [a.replace("{fd}", "/dev/fd/%d" % r) for a in args]

    def go():
        with os.fdopen(w, "w") as f:
            f.write(text)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    try:
        p = subprocess.run([dsf.DSFORGE] + args, cwd=cwd, pass_fds=(r,),
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    finally:
        os.close(r)
    t.join(timeout=10)
    return dsf.Result(p.returncode, p.stdout, p.stderr)


class BlockingInputs(dsf.TempDirTest):
    def setUp(self):
        super().setUp()
        self.fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(self.fifo)
        self.write("cfg.json", CFG)

    def assertNoWriter(self, res, name):
        self.assertExit(res, 3)
        self.assertIn("%s: error: cannot read: a FIFO with no writer "
                      "(waited 0.3 s; DSFORGE_OPEN_WAIT sets the wait)" % name,
                      res.err)

    def test_config_fifo_without_writer(self):
        res = run("check", "fifo", cwd=self.tmp, env=SHORT, timeout=30)
        self.assertNoWriter(res, "fifo")

    def test_override_fifo_without_writer(self):
        res = run("gen", "base", "--tier", "small", "-f", "fifo", "--stdout",
                  cwd=self.tmp, env=SHORT, timeout=30)
        self.assertNoWriter(res, "fifo")

    def test_hostfile_fifo_without_writer(self):
        words = ["deepspeed", "--hostfile=fifo", "train.py", "--deepspeed",
                 "cfg.json"]
        res = run("check", "cfg.json", "--", *words, cwd=self.tmp,
                  env=SHORT, timeout=30)
        # the launch plugin's command check reports the file it cannot
        # read at the argument, as it does a missing one
        self.assertExit(res, 1)
        self.assertIn("argv[1] --hostfile=fifo: cannot read fifo", res.err)
        self.assertIn("a FIFO with no writer", res.err)

    def test_the_default_wait_is_five_seconds(self):
        res = run("check", "fifo", cwd=self.tmp, timeout=60,
                  env={"DSFORGE_OPEN_WAIT": ""})
        self.assertExit(res, 3)
        self.assertIn("a FIFO with no writer (waited 5.0 s;", res.err)

    def test_fifo_with_a_late_writer_is_read(self):
        # the writer opens after the reader has started waiting for one
        t = feed_later(self.fifo, CFG, 0.1)
        res = run("check", "fifo", cwd=self.tmp, env={"DSFORGE_OPEN_WAIT":
                                                      "5"}, timeout=30)
        t.join(timeout=10)
        self.assertExit(res, 0)

    def test_a_writer_that_opens_and_waits_is_not_refused(self):
        # the writer opens at once and writes only after the wait: it is
        # there, so the read waits for its data
        def go():
            with open(self.fifo, "w") as f:
                threading.Event().wait(1.0)
                f.write(CFG)
        t = threading.Thread(target=go, daemon=True)
        t.start()
        res = run("check", "fifo", cwd=self.tmp, env=SHORT, timeout=30)
        t.join(timeout=10)
        self.assertExit(res, 0)

    def test_stdin(self):
        p = subprocess.run([dsf.DSFORGE, "check", "-"], input=CFG, text=True,
                           capture_output=True, timeout=30, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_process_substitution(self):
        res = run_with_pipe(["check", "{fd}"], CFG, self.tmp)
        self.assertExit(res, 0)
        res = run_with_pipe(["gen", "base", "--tier", "small", "-f", "{fd}",
                             "--stdout"], '{"steps_per_print": 1000}',
                            self.tmp)
        self.assertExit(res, 0)
        self.assertIn('"steps_per_print": 1000', res.out)

    def test_an_empty_pipe_is_an_empty_file(self):
        # the writer wrote nothing and ended: the end of the file at once
        # (not a wait for a writer: this run's wait outlasts the timeout)
        r, w = os.pipe()
        os.close(w)
        try:
            p = subprocess.run([dsf.DSFORGE, "check", "/dev/fd/%d" % r],
                               pass_fds=(r,), capture_output=True, text=True,
                               timeout=30, stdin=subprocess.DEVNULL,
                               env=dict(os.environ, DSFORGE_OPEN_WAIT="600"))
        finally:
            os.close(r)
        self.assertEqual(p.returncode, 3)
        self.assertIn("/dev/fd/%d:1:1: error: unexpected end of input" % r,
                      p.stderr)

    def test_a_fifo_config_beside_a_manifest_is_read_once(self):
        # check CONFIG -- COMMAND looks CONFIG up in the manifest beside
        # it, reading it again for its hash: not a FIFO, whose second
        # read would wait for a writer (600 s here, past the timeout)
        self.assertExit(run("gen", "base", "--tier", "small", "-o", "out",
                            cwd=self.tmp), 0)
        fifo = os.path.join(self.tmp, "out", "cfg.json")
        os.mkfifo(fifo)
        t = feed_later(fifo, CFG, 0.1)
        res = run("check", fifo, "--", "deepspeed", "train.py",
                  "--deepspeed", fifo, cwd=self.tmp, timeout=30,
                  env={"DSFORGE_OPEN_WAIT": "600"})
        t.join(timeout=10)
        self.assertExit(res, 0)

    def test_bad_wait_values_keep_the_default(self):
        # not a number, negative, beyond an hour: the 5 s default, which
        # a writer that comes after 0.5 s is well within
        for bad in ("x", "-1", "7200", "1s"):
            with self.subTest(bad=bad):
                t = feed_later(self.fifo, CFG, 0.5)
                res = run("check", "fifo", cwd=self.tmp,
                          env={"DSFORGE_OPEN_WAIT": bad}, timeout=30)
                t.join(timeout=10)
                self.assertExit(res, 0)


if __name__ == "__main__":
    import unittest
    unittest.main()
