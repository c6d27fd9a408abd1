"""gen -j: a sweep's variants evaluated by worker processes give what one
process gives: the same files, manifest, summary table, diagnostics,
printed lines, exit code, and all or nothing on failure."""
import os
import unittest

import dsf
from dsf import run

# 40 variants (--matrix n=1..40): with -j 2 the parent evaluates the
# first (the control) and n=2..20, the worker n=21..40. Every variant
# prints a line and warns; FAIL_AT names the n whose config breaks a rule
# (partial offload below ZeRO-2), RAISE_AT those whose build raises.
SWEEP = """
local FAIL_AT = { %(fail)s }
local RAISE_AT = { %(raise)s }
return {
  name = "sw", summary = "a sweep for -j",
  params = { n = 1, world_size = 1 },
  build = function(p)
    print("building n=" .. p.n)
    dsforge.warn("warned by n=" .. p.n)
    for _, k in ipairs(RAISE_AT) do
      if p.n == k then error("raised by n=" .. p.n) end
    end
    local stage = 2
    for _, k in ipairs(FAIL_AT) do if p.n == k then stage = 1 end end
    local x = 0
    for i = 1, %(spin)d do x = x + i end
    return {
      train_batch_size = p.n, train_micro_batch_size_per_gpu = p.n,
      gradient_accumulation_steps = 1, steps_per_print = 100 + p.n,
      gradient_clipping = 1.0,
      optimizer = { type = "AdamW", params = { lr = 1e-4 } },
      zero_optimization = { stage = stage,
        offload_optimizer = stage < 2 and { device = "cpu", ratio = 0.5 }
                            or nil } }
  end,
}
"""

NS = ",".join(str(n) for n in range(1, 41))


class Jobs(dsf.TempDirTest):
    def sweep(self, fail="", raise_="", spin=0):
        return self.profile("sw", SWEEP % {"fail": fail, "raise": raise_,
                                           "spin": spin})

    def gen(self, jobs, *args, out="out", cwd=None):
        """Runs gen in a fresh directory of its own (emitted files name
        -o's path): returns the result and that directory."""
        work = cwd or os.path.join(self.tmp, "j%s" % jobs)
        os.makedirs(work, exist_ok=True)
        res = run("gen", *args, "-j", str(jobs),
                  *(["-o", out] if out else []), cwd=work)
        return res, work

    def assertSame(self, *args, code=0, out="out"):
        r1, w1 = self.gen(1, *args, out=out)
        r2, w2 = self.gen(2, *args, out=out)
        self.assertExit(r1, code)
        self.assertExit(r2, code)
        self.assertEqual(r1.out, r2.out)
        self.assertEqual(r1.err, r2.err)
        self.assertEqual(self.listing(w1), self.listing(w2))
        return r1, w1

    def test_outputs_are_those_of_one_process(self):
        d = self.sweep()
        res, work = self.assertSame("sw", "--profile-path", d,
                                    "--matrix", "n=" + NS)
        self.assertIn("40 variants and manifest.json in out", res.out)
        self.assertEqual(len(os.listdir(os.path.join(work, "out"))), 41)
        # what the scripts print, and their warnings, in variant order
        printed = [l for l in res.err.splitlines() if l.startswith("build")]
        self.assertEqual(printed, ["building n=%d" % n for n in range(1, 41)])
        self.assertEqual(res.err.count("warned by n="), 40)
        # a dry run too
        self.assertSame("sw", "--profile-path", d, "--matrix", "n=" + NS,
                        out=None)

    def test_emitters_and_a_manifest_merged_with_other_profiles(self):
        args = ("8xa100", "--tier", "medium",
                "--matrix", "micro_batch_size=1,2,3,4,5,6",
                "--matrix", "gradient_accumulation=1,2,4,8,16,32,64,128",
                "--emit", "hf-args,accelerate,launch",
                "--train-cmd", "train.py --x")
        for jobs in (1, 2):  # other profiles already in the directory
            work = os.path.join(self.tmp, "j%d" % jobs)
            self.assertExit(self.gen(jobs, "base", cwd=work)[0], 0)
            self.assertExit(self.gen(jobs, "high-performance",
                                     cwd=work)[0], 0)
        res, work = self.assertSame(*args)
        self.assertIn("48 variants, 192 files", res.out)

    def test_errors_in_either_range_are_reported_as_one_process_does(self):
        for fail in ("5", "30", "5,30", "2,39"):
            d = self.sweep(fail=fail)
            res, work = self.assertSame("sw", "--profile-path", d,
                                        "--matrix", "n=" + NS, code=1)
            self.assertIn("partial-offload-stage", res.err)
            self.assertFalse(os.path.exists(os.path.join(work, "out")),
                             "a failing run left its directory")

    def test_the_first_raising_variant_stops_the_run(self):
        # the worker's variant 30 raises too: one process would never have
        # evaluated it, so neither its lines nor its error appear
        for raise_ in ("33", "7,30", "21"):
            d = self.sweep(raise_=raise_)
            res, work = self.assertSame("sw", "--profile-path", d,
                                        "--matrix", "n=" + NS, code=5)
            first = raise_.split(",")[0]
            self.assertIn("raised by n=" + first, res.err)
            self.assertEqual(res.err.count("raised by"), 1)
            self.assertFalse(os.path.exists(os.path.join(work, "out")))

    def test_a_failure_leaves_an_existing_directory_as_it_was(self):
        d = self.sweep(fail="36")
        for jobs in (1, 2):
            work = os.path.join(self.tmp, "j%d" % jobs)
            self.assertExit(self.gen(jobs, "8xa100", cwd=work)[0], 0)
        before = self.listing(os.path.join(self.tmp, "j1"))
        self.assertSame("sw", "--profile-path", d, "--matrix", "n=" + NS,
                        code=1)
        self.assertEqual(self.listing(os.path.join(self.tmp, "j2")), before)

    def test_a_variant_ended_by_the_backstop_leaves_nothing(self):
        # variant 25 (the worker's, with -j 2) or 5 (the parent's) runs a
        # C function the hook cannot stop: the backstop ends the run with
        # exit code 5 and its message, and the temporary files of the
        # variants staged before go with it, in every process (when the
        # parent is the one ended, the worker has staged its whole range
        # by then), as does the directory the run made
        for at in (25, 5):
            prof = ('return { name = "bs", params = { n = 1 },\n'
                    '  build = function(p)\n'
                    '    if p.n == %d then\n'
                    '      local s = string.rep("a", 1e6)\n'
                    '      return { r = s:find(".-.-.-.-.-.-.-.-b") }\n'
                    '    end\n'
                    '    return { train_batch_size = 1 } end }\n' % at)
            d = self.profile("bs", prof, dirname="p%d" % at)
            for jobs in (1, 2):
                with self.subTest(at=at, jobs=jobs):
                    res, work = self.gen(jobs, "bs", "--profile-path", d,
                                         "--matrix", "n=" + NS,
                                         "--max-seconds", "1",
                                         out="new/out",
                                         cwd=os.path.join(
                                             self.tmp, "w%d-%d" % (at, jobs)))
                    self.assertExit(res, 5)
                    self.assertEqual(res.err.count(
                        "time limit of 1 s exceeded inside a C function"), 1,
                        res.err)
                    self.assertEqual(res.out, "")
                    self.assertEqual(os.listdir(work), [], "left behind")

    def test_workers_run_beside_the_parent(self):
        # Not a timing: while a -j 2 sweep runs, the dsforge process has a
        # child process (the worker); with -j 1 it never has one.
        if not os.path.isdir("/proc/self"):
            self.skipTest("no /proc")
        d = self.sweep(spin=300000)

        def children_seen(jobs):
            work = os.path.join(self.tmp, "p%d" % jobs)
            os.makedirs(work)
            seen, rc = dsf.had_child(["gen", "sw", "--profile-path", d,
                                      "--matrix", "n=" + NS, "-j", jobs],
                                     cwd=work)
            self.assertEqual(rc, 0)
            return seen

        self.assertTrue(children_seen(2))
        self.assertFalse(children_seen(1))

    def test_bad_jobs(self):
        for bad in ("0", "x", "65"):
            res = run("gen", "8xa100", "-j", bad)
            self.assertExit(res, 2)
            self.assertIn("--jobs", res.err)


if __name__ == "__main__":
    unittest.main()
