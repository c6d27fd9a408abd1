"""Run emitters (issue 31): an emitter with scope = "run" writes one set
of files per run, not per variant. Its row function sees each variant as
a variant emitter does; its emit function sees the whole run once (every
variant's name, tier, file, sha256 and row, in variant order) and names
its own files. The files go in gen's all-or-nothing transaction, are
listed in manifest.json under "emitted", and are the same bytes whatever
-j evaluates the variants."""
import hashlib
import json
import os
import shutil

import dsf
from dsf import run

PROFILE = """return { name = "p", params = { n = 1, ws = 8 },
  tiers = { a = {}, b = { n = 2 } },
  build = function(p) return { train_micro_batch_size_per_gpu = p.n } end }"""

# Shows everything a run emitter is given.
SHOW = """return { name = "runplug", version = "1.0", summary = "s",
  emitters = {
    { name = "runshow", scope = "run", summary = "what a run emitter sees",
      row = function(v, ctx)
        return { name = v.name, n = v.params.n, file = v.file,
                 opt = ctx.options.k or dsforge.null }
      end,
      emit = function(run, ctx)
        -- (run.variants is read by index: its elements are made when read)
        local variants = {}
        for i, v in ipairs(run.variants) do variants[i] = v end
        return {
          { file = "runshow.json", text = ctx.json({ profile = run.profile,
              dir = run.dir or dsforge.null, variants = variants,
              options = ctx.options, target = ctx.target,
              train_cmd = ctx.train_cmd or dsforge.null }, true) },
          { file = "runshow-count.txt", text = #run.variants .. "\\n" },
        }
      end },
    { name = "norow", scope = "run", summary = "a run emitter without rows",
      emit = function(run, ctx)
        local names = {}
        for _, v in ipairs(run.variants) do
          names[#names + 1] = v.name .. (v.row == nil and "" or " ROW")
        end
        return { { file = "norow.txt", text = table.concat(names, ",") } }
      end },
  } }
"""


def bad_plugin(emit, row="nil", extra=""):
    return ("""return { name = "bad", version = "1.0", summary = "s",
      emitters = { { name = "boom", scope = "run", summary = "s", %s
        row = %s, emit = function(run, ctx) %s end } } }""" % (extra, row, emit))


class RunEmitters(dsf.TempDirTest):

    def gen(self, *args, text=SHOW, profile=PROFILE):
        name = text.split('name = "', 1)[1].split('"', 1)[0]
        self.write(os.path.join("plugins", name, "init.lua"), text)
        prof = self.profile("p", profile)
        return run("gen", "p", "--profile-path", prof, "--plugin-path",
                   os.path.join(self.tmp, "plugins"), *args)

    def read(self, *parts):
        with open(os.path.join(self.tmp, *parts), "rb") as f:
            return f.read()

    def test_one_set_of_files_listed_in_the_manifest(self):
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "runshow,norow", "--emit-opt", "k=v 1",
                       "--max-parallel", "3", "--canary", "--train-cmd",
                       "t.py", "-o", out)
        self.assertExit(res, 0)
        self.assertIn("2 variants, 3 files (runshow, norow) and manifest.json",
                      res.out)
        seen = json.loads(self.read("out", "runshow.json"))
        m = json.loads(self.read("out", "manifest.json"))
        self.assertEqual(seen["profile"], "p")
        self.assertEqual(seen["dir"], out)
        self.assertEqual(seen["options"],
                         {"k": "v 1", "max_parallel": "3", "canary": "true"})
        self.assertEqual(seen["train_cmd"], "t.py")
        self.assertEqual([v["name"] for v in seen["variants"]], ["a", "b"])
        for v, e in zip(seen["variants"], m["variants"]):
            data = self.read("out", v["file"])
            self.assertEqual(v["sha256"], hashlib.sha256(data).hexdigest())
            self.assertEqual(v["sha256"], e["sha256"])
            self.assertEqual(v["row"]["name"], v["name"])
            self.assertEqual(v["row"]["file"], "p-%s.json" % v["name"])
            self.assertEqual(v["row"]["opt"], "v 1")
            self.assertEqual(v["tier"], v["name"])
        self.assertEqual([v["row"]["n"] for v in seen["variants"]], [1, 2])
        self.assertEqual(self.read("out", "norow.txt"), b"a,b")
        self.assertEqual(self.read("out", "runshow-count.txt"), b"2\n")
        listed = {e["file"]: e for e in m["emitted"]}
        self.assertEqual(sorted(listed), ["norow.txt", "runshow-count.txt",
                                          "runshow.json"])
        for name, e in listed.items():
            self.assertEqual(e["sha256"], hashlib.sha256(
                self.read("out", name)).hexdigest())
        self.assertEqual(listed["norow.txt"]["emitter"], "norow")
        # a second run with the same inputs: the same bytes
        before = {n: self.read("out", n) for n in os.listdir(out)}
        self.assertExit(self.gen("--emit", "runshow,norow", "--emit-opt",
                                 "k=v 1", "--max-parallel", "3", "--canary",
                                 "--train-cmd", "t.py", "-o", out), 0)
        self.assertEqual(before, {n: self.read("out", n)
                                  for n in os.listdir(out)})

    def test_dry_run_counts_and_writes_nothing(self):
        res = self.gen("--emit", "runshow")
        self.assertExit(res, 0)
        self.assertIn("2 variants and 2 files (runshow) checked", res.out)

    def test_workers_give_the_same_bytes(self):
        outs = []
        for jobs in ("1", "2"):
            out = os.path.join(self.tmp, "out" + jobs)
            res = self.gen("--matrix", "n=" + ",".join(map(str, range(1, 41))),
                           "-j", jobs, "--emit", "runshow,norow", "-o", out)
            self.assertExit(res, 0)
            outs.append({n: self.read("out" + jobs, n)
                         for n in os.listdir(out)})
        self.assertEqual(outs[0].keys(), outs[1].keys())
        for name in outs[0]:
            if name != "manifest.json":  # names -o's directory
                self.assertEqual(outs[0][name].replace(b"out1", b"outN"),
                                 outs[1][name].replace(b"out2", b"outN"), name)
        seen = json.loads(outs[1]["runshow.json"])
        self.assertEqual(len(seen["variants"]), 80)
        self.assertEqual([v["row"]["name"] for v in seen["variants"]],
                         [v["name"] for v in seen["variants"]])

    def assert_refused(self, res, code, *words):
        self.assertExit(res, code)
        for w in words:
            self.assertIn(w, res.err)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out")))

    def test_bad_results_are_the_plugins_error_and_nothing_is_written(self):
        out = os.path.join(self.tmp, "out")
        cases = [
            ("return 42", "must return a list of {file = NAME, text = TEXT}"),
            ('return { "x" }', "file #1 must be a table"),
            ('return { { file = "boom.txt" } }', "needs a string 'file'"),
            ('return { { file = "other.txt", text = "" } }',
             "must start with the emitter's name"),
            ('return { { file = "boom./x", text = "" } }',
             "may hold only letters"),
            ('return { { file = "boom.", text = "" } }',
             "must start with the emitter's name"),
            ('return { { file = "boom.a", text = "" },'
             ' { file = "boom.a", text = "" } }', "returned the file 'boom.a' twice"),
            ('error("kaput")', "kaput"),
        ]
        for emit, msg in cases:
            with self.subTest(emit=emit):
                res = self.gen("--emit", "boom", "-o", out,
                               text=bad_plugin(emit))
                self.assert_refused(res, 5, msg, "emitter boom (plugin bad)")

    def test_written_piece_by_piece(self):
        # ctx.write appends to a file as its text is made; what emit returns
        # comes after; a variant is made when read, nothing past the end
        text = bad_plugin("""
          for i = 1, #run.variants do ctx.write("boom.txt", run.variants[i].name .. ";") end
          ctx.write("boom-2.txt", "")
          assert(run.variants[#run.variants + 1] == nil and run.variants[0] == nil)
          return { { file = "boom.end", text = "end" } }""")
        out = os.path.join(self.tmp, "out")
        res = self.gen("--emit", "boom", "-o", out, text=text)
        self.assertExit(res, 0)
        self.assertEqual(self.read("out", "boom.txt"), b"a;b;")
        self.assertEqual(self.read("out", "boom-2.txt"), b"")
        self.assertEqual(self.read("out", "boom.end"), b"end")
        m = json.loads(self.read("out", "manifest.json"))
        self.assertEqual([e["file"] for e in m["emitted"]],
                         ["boom.txt", "boom-2.txt", "boom.end"])
        for bad, msg in (('ctx.write("other", "x")', "must start with the emitter's name"),
                         ('ctx.write("boom.a", "x") return { { file = "boom.a", text = "" } }',
                          "returned the file 'boom.a' twice"),
                         ('ctx.write("boom.a", {})', "bad argument #2")):
            with self.subTest(bad=bad):
                shutil.rmtree(out, ignore_errors=True)
                res = self.gen("--emit", "boom", "-o", out, text=bad_plugin(bad))
                self.assert_refused(res, 5, msg)

    def test_kept_past_the_call_the_closures_raise(self):
        # a second run emitter of the plugin calls what the first one kept
        text = """return { name = "bad", version = "1.0", summary = "s",
          emitters = {
            { name = "keep", scope = "run", summary = "s",
              emit = function(run, ctx) kept = { w = ctx.write, v = run.variants } return {} end },
            { name = "late", scope = "run", summary = "s",
              emit = function(run, ctx) kept.w("keep.x", "late") return {} end },
            { name = "late2", scope = "run", summary = "s",
              emit = function(run, ctx) return { { file = "late2.x", text = kept.v[1].name } } end },
          } }"""
        for name, what in (("late", "ctx.write"), ("late2", "run.variants")):
            with self.subTest(name=name):
                res = self.gen("--emit", "keep," + name, "-o", os.path.join(self.tmp, "out"),
                               text=text)
                self.assert_refused(res, 5, what + " was kept past the call")

    def test_a_row_that_is_not_json(self):
        res = self.gen("--emit", "boom", "-o", os.path.join(self.tmp, "out"),
                       text=bad_plugin("return {}", "function() return print end"))
        self.assert_refused(res, 5, "row returned a value that is not JSON")

    def test_fail_is_an_input_error(self):
        res = self.gen("--emit", "boom", "-o", os.path.join(self.tmp, "out"),
                       text=bad_plugin('dsforge.fail("no partition")'))
        self.assert_refused(res, 3, "no partition")

    def test_not_called_when_a_variant_has_errors(self):
        # an invalid batch size: the rules' error (exit 1), not the emitter's
        prof = PROFILE.replace("p.n }", "-p.n }")
        res = self.gen("--emit", "boom", "-o", os.path.join(self.tmp, "out"),
                       text=bad_plugin('error("called")'), profile=prof)
        self.assertExit(res, 1)
        self.assertNotIn("called", res.err)

    def test_a_file_named_like_a_variant(self):
        # emitter "p" writing p-a.json: variant a's own file
        text = bad_plugin('return { { file = "p-a.json", text = "" } }')
        res = self.gen("--emit", "p", "-o", os.path.join(self.tmp, "out"),
                       text=text.replace('name = "boom"', 'name = "p"'))
        self.assert_refused(res, 2, "two files of this run are named 'p-a.json'")

    def test_bad_declarations_exit_3(self):
        cases = [
            ('scope = "job",', "'scope' must be \"variant\" (the default) or \"run\""),
            ('file = "{profile}-{variant}.x",', "no 'file' or 'files'"),
        ]
        for extra, msg in cases:
            with self.subTest(extra=extra):
                text = bad_plugin("return {}", extra=extra)
                if "scope = \"job\"" in extra:
                    text = text.replace('scope = "run",', "")
                res = self.gen("--emit", "boom", text=text)
                self.assertExit(res, 3)
                self.assertIn(msg, res.err)
        text = ('return { name = "bad", version = "1.0", summary = "s",'
                ' emitters = { { name = "boom", summary = "s", file = "{profile}-{variant}.x",'
                ' row = function() end, emit = function() return "" end } } }')
        res = self.gen("--emit", "boom", text=text)
        self.assertExit(res, 3)
        self.assertIn("'row' is for a run emitter", res.err)
        res = self.gen("--emit", "boom", text=bad_plugin("return {}", "42"))
        self.assertExit(res, 3)
        self.assertIn("'row' must be a function", res.err)

    def test_emit_opt_usage(self):
        for args, msg in [
                (("--emit-opt", "Bad=1"), "KEY of lower-case letters"),
                (("--emit-opt", "novalue"), "expected KEY=VALUE"),
                (("--emit-opt", "k=1", "--emit-opt", "k=2"), "'k' is given twice"),
                (("--max-parallel", "0"), "--max-parallel"),
                (("--max-parallel", "2", "--emit-opt", "max_parallel=3"),
                 "'max_parallel' is given twice")]:
            with self.subTest(args=args):
                res = self.gen("--emit", "runshow", *args)
                self.assertExit(res, 2)
                self.assertIn(msg, res.err)


if __name__ == "__main__":
    import unittest
    unittest.main()
