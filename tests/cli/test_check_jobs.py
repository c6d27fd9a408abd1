"""check -j: files checked by worker processes give what one process
gives: the same findings in the same order (text and JSON), the same
printed lines, the same exit code, and the same stop at the first file
whose check fails (issue 15)."""
import json
import os
import unittest

import dsf
from dsf import run

# A plugin whose rule prints a line per file (what scripts print reaches
# stderr in file order), reports a finding on files marked "warn", raises
# on files marked "raise" and runs a C function the hook cannot stop on
# files marked "hang" (the backstop ends the run).
PLUGIN = """
return { name = "jx", version = "1", rules = {
  { id = "jx-rule", severity = "warning", summary = "s",
    check = function(cfg, ctx)
      print("checked " .. tostring(cfg.steps_per_print))
      local m = cfg.wall_clock_breakdown
      if m == "warn" then
        ctx.report{ path = { "wall_clock_breakdown" }, message = "marked" }
      elseif m == "raise" then
        error("raised at " .. tostring(cfg.steps_per_print))
      elseif m == "hang" then
        local s = string.rep("a", 1e6)
        return s:find(".-.-.-.-.-.-.-.-b")
      end
      local x = 0
      for i = 1, %(spin)d do x = x + i end
    end } } }
"""

N = 48


class Jobs(dsf.TempDirTest):
    def files(self, marks=None, spin=0):
        """N configs (some with findings of the built-in rules, some
        marked for the plugin), the plugin directory, the file names."""
        marks = marks or {}
        plug = os.path.join(self.tmp, "plugins")
        self.write(os.path.join("plugins", "jx", "init.lua"),
                   PLUGIN % {"spin": spin})
        names = []
        for i in range(N):
            cfg = {"train_micro_batch_size_per_gpu": 1 + i % 3,
                   "gradient_accumulation_steps": 1,
                   "steps_per_print": i,
                   "zero_optimization": {"stage": i % 4}}
            if i % 5 == 0:
                cfg["optimizer"] = {"type": "AdamW", "params": {"lr": "x"}}
            if i % 7 == 0:
                cfg["no_such_key"] = True
            if i in marks:
                cfg["wall_clock_breakdown"] = marks[i]
            names.append(self.write("c%02d.json" % i,
                                    json.dumps(cfg, indent=2) + "\n"))
        return plug, names

    def check(self, jobs, plug, names, *args):
        return run("check", "--plugin-path", plug, "-j", str(jobs), *args,
                   *names, cwd=self.tmp)

    def assertSame(self, plug, names, *args, code):
        one = self.check(1, plug, names, *args)
        self.assertExit(one, code)
        for jobs in (2, 3, 7):
            with self.subTest(jobs=jobs):
                res = self.check(jobs, plug, names, *args)
                self.assertExit(res, code)
                self.assertEqual(res.out, one.out)
                self.assertEqual(res.err, one.err)
        return one

    def test_findings_are_those_of_one_process(self):
        plug, names = self.files({3: "warn", 40: "warn"})
        one = self.assertSame(plug, names, code=1)
        self.assertIn("c40.json", one.out + one.err)
        printed = [l for l in one.err.splitlines() if l.startswith("checked")]
        self.assertEqual(printed, ["checked %d" % i for i in range(N)])
        one = self.assertSame(plug, names, "--format", "json", code=1)
        found = json.loads(one.out)
        self.assertEqual(sorted({f["file"] for f in found
                                 if f.get("rule") == "jx-rule"}),
                         [os.path.join(self.tmp, "c03.json"),
                          os.path.join(self.tmp, "c40.json")])

    def test_an_unreadable_file_is_noted_and_the_run_goes_on(self):
        plug, names = self.files()
        with open(names[30], "w") as f:
            f.write('{"train_batch_size": 1,,}\n')
        names.insert(35, os.path.join(self.tmp, "missing.json"))
        one = self.assertSame(plug, names, code=3)
        printed = [l for l in one.err.splitlines() if l.startswith("checked")]
        self.assertEqual(len(printed), N - 1)

    def test_the_first_raising_file_stops_the_run(self):
        # one raises in the parent's range, one in a worker's: the first
        # stops the run wherever it is, and nothing after it is reported
        for marks in ({10: "raise", 40: "raise"}, {40: "raise"}):
            with self.subTest(marks=marks):
                plug, names = self.files(marks)
                one = self.assertSame(plug, names, code=5)
                first = min(marks)
                self.assertIn("raised at %d" % first, one.err)
                self.assertNotIn("checked %d" % (first + 1), one.err)

    def test_a_file_ended_by_the_backstop_ends_the_run_the_same_way(self):
        plug, names = self.files({40: "hang"})
        for jobs in (1, 2):
            res = self.check(jobs, plug, names, "--max-seconds", "1")
            self.assertExit(res, 5)
            self.assertEqual(res.err.count("time limit of 1 s exceeded "
                                           "inside a C function"), 1,
                             res.err)
            self.assertEqual(res.out, "")

    def test_workers_run_beside_the_parent(self):
        # Not a timing: while a -j 2 check runs, dsforge has a child
        # process (the worker); with -j 1, or with standard input among
        # the files, it never has one.
        if not os.path.isdir("/proc/self"):
            self.skipTest("no /proc")
        plug, names = self.files(spin=300000)

        def children_seen(jobs, extra=()):
            seen, rc = dsf.had_child(["check", "--plugin-path", plug, "-j",
                                      jobs, *names, *extra], cwd=self.tmp)
            self.assertIn(rc, (0, 1, 3))
            return seen

        self.assertTrue(children_seen(2))
        self.assertFalse(children_seen(1))
        self.assertFalse(children_seen(2, ["-"]))

    def test_bad_jobs(self):
        for bad in ("0", "x", "65"):
            res = run("check", "-j", bad, "x.json")
            self.assertExit(res, 2)
            self.assertIn("--jobs", res.err)


if __name__ == "__main__":
    unittest.main()
