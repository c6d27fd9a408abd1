"""dsforge collect: a sweep's results read back through the readers the
plugins declare (plugins/results, contrib/docs/results.md): statuses,
refused results, broken inputs, --best, calibration rows, the JSON output,
10,000 variants, and readers declared by another plugin."""
import json
import os
import stat
import unittest

import dsf
import results_tree as rt
from dsf import run


class CollectTest(dsf.TempDirTest):
    def sweep(self, *extra):
        out = os.path.join(self.tmp, "ab")
        self.assertExit(run("gen", "8xa100", "--matrix",
                            "micro_batch_size=1,2", *extra, "-o", out), 0)
        with open(os.path.join(out, "manifest.json")) as f:
            return out, json.load(f)["variants"]

    def results(self, out):
        with open(os.path.join(out, "results.json")) as f:
            return json.load(f)

    def by_name(self, out):
        return {r["variant"]: r for r in self.results(out)["variants"]}


class Statuses(CollectTest):
    def test_every_status_with_its_line(self):
        out, vs = self.sweep()
        kinds = ["ok", "oom", "failed", "running", "none", "ok"]
        for v, k in zip(vs, kinds):
            rt.write_variant(out, v, k, sps=40.0 + len(k))
        r = run("collect", out)
        self.assertExit(r, 0)
        recs = self.by_name(out)
        self.assertEqual([recs[v["name"]]["status"] for v in vs],
                         ["ok", "oom", "failed", "running", "missing", "ok"])
        self.assertIn("CUDA out of memory", recs[vs[1]["name"]]["error"])
        self.assertEqual(recs[vs[2]["name"]]["error"],
                         "ValueError: the training script failed on purpose")
        ok = recs[vs[0]["name"]]
        self.assertEqual(ok["values"]["steps"], 10)
        self.assertEqual(ok["values"]["peak_memory_bytes"],
                         round(12.5 * 1024 ** 3))
        self.assertEqual(ok["values"]["loss_last"], 1.0)
        self.assertEqual(ok["sources"]["samples_per_sec"],
                         "throughput:stdout.log")
        self.assertEqual(ok["sources"]["loss_last"],
                         "trainer_state:trainer_state.json")
        self.assertEqual(ok["results_dir"],
                         "results/" + vs[0]["file"][:-5])
        # the table: a row per variant, the failures' first lines, counts
        self.assertIn("samples/s", r.out)
        self.assertIn("12.50 GiB", r.out)
        self.assertIn(vs[1]["name"] + ": oom: torch.OutOfMemoryError", r.out)
        self.assertIn("6 variants: 1 failed, 1 missing, 2 ok, 1 oom, "
                      "1 running", r.out)
        self.assertEqual(self.results(out)["counts"],
                         {"failed": 1, "missing": 1, "ok": 2, "oom": 1,
                          "running": 1})

    def test_other_config_refused_naming_both_hashes(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v, "mismatch" if v is vs[3] else "ok")
        r = run("collect", out)
        self.assertExit(r, 1)
        self.assertIn("0" * 64, r.err)
        self.assertIn(vs[3]["sha256"], r.err)
        rec = self.by_name(out)[vs[3]["name"]]
        self.assertEqual(rec["status"], "mismatch")
        self.assertEqual(rec["values"], {})
        self.assertTrue(rec["refused"])

    def test_json_output_is_the_file_and_bytes_repeat(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        r = run("collect", out, "--format", "json")
        self.assertExit(r, 0)
        with open(os.path.join(out, "results.json")) as f:
            first = f.read()
        self.assertEqual(r.out, first)
        self.assertExit(run("collect", out), 0)
        with open(os.path.join(out, "results.json")) as f:
            self.assertEqual(f.read(), first)
        self.assertEqual(self.results(out)["control"], vs[0]["name"])


class BrokenInputs(CollectTest):
    def test_log_cut_mid_line(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        log = os.path.join(rt.variant_dir(out, vs[0]), "stdout.log")
        with open(log) as f:
            text = f.read()
        with open(log, "w") as f:  # the last timer line cut mid-write
            f.write(text[:-30])
        self.assertExit(run("collect", out), 0)
        rec = self.by_name(out)[vs[0]["name"]]
        self.assertEqual(rec["status"], "ok")
        self.assertEqual(rec["values"]["steps"], 9)

    def test_truncated_run_file_is_a_problem_not_a_crash(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        path = os.path.join(rt.variant_dir(out, vs[1]), "dsf-run.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[:25])
        self.assertExit(run("collect", out), 0)
        rec = self.by_name(out)[vs[1]["name"]]
        self.assertEqual(rec["status"], "missing")
        self.assertRegex(rec["message"],
                         r"^results/[^ ]+/dsf-run\.json:\d+:\d+: ")
        self.assertEqual(self.by_name(out)[vs[0]["name"]]["status"], "ok")

    def test_fifo_and_empty_files_never_block(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        d = rt.variant_dir(out, vs[2])
        os.unlink(os.path.join(d, "stdout.log"))
        os.mkfifo(os.path.join(d, "stdout.log"))
        open(os.path.join(rt.variant_dir(out, vs[3]), "stdout.log"),
             "w").close()
        r = run("collect", out, timeout=30)
        self.assertExit(r, 0)
        recs = self.by_name(out)
        self.assertIn("not a regular file", " ".join(recs[vs[2]["name"]]
                                                     ["problems"]))
        self.assertEqual(recs[vs[3]["name"]]["status"], "ok")
        self.assertNotIn("samples_per_sec", recs[vs[3]["name"]]["values"])

    def test_no_manifest_and_bad_options_write_nothing(self):
        r = run("collect", self.tmp)
        self.assertExit(r, 3)
        self.assertIn("manifest.json", r.err)
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        r = run("collect", out, "--best", "loss_first")
        self.assertExit(r, 2)
        self.assertIn("samples_per_sec", r.err)  # the metrics it takes
        self.assertExit(run("collect", out, "--results-for", "nope=/tmp"), 2)
        self.assertExit(run("collect", out, "--format", "yaml"), 2)
        self.assertFalse(os.path.exists(os.path.join(out, "results.json")))


class Best(CollectTest):
    def test_best_override_reproduces_a_variant_of_another_tier(self):
        out, vs = self.sweep("--matrix",
                             "zero_optimization.overlap_comm=true,false")
        best = next(v for v in vs if v["tier"] == "large"
                    and v["name"] != vs[0]["name"]
                    and "overlap_comm-false" in v["name"])
        for v in vs:
            rt.write_variant(out, v, sps=90.0 if v is best else 40.0)
        r = run("collect", out, "--best", "samples_per_sec")
        self.assertExit(r, 0)
        self.assertIn("best by samples/s: " + best["name"], r.out)
        again = os.path.join(self.tmp, "again")
        self.assertExit(run("gen", "8xa100", "--tier", vs[0]["tier"], "-f",
                            os.path.join(out, "best.json"), "-o", again), 0)
        with open(os.path.join(out, best["file"]), "rb") as f:
            want = f.read()
        with open(os.path.join(again, "8xa100-%s.json" % vs[0]["tier"]),
                  "rb") as f:
            self.assertEqual(f.read(), want)

    def test_min_metric_and_failed_variants_left_out(self):
        out, vs = self.sweep()
        for i, v in enumerate(vs):
            kind = "oom" if i == 2 else "ok"
            rt.write_variant(out, v, kind, peak_gib=5.0 if i == 2 else
                             20.0 - i)
        r = run("collect", out, "--best", "peak_memory_bytes")
        self.assertExit(r, 0)
        self.assertIn("best by peak GPU: " + vs[5]["name"], r.out)

    def test_probe_metric_file_name_is_not_a_difference(self):
        out, vs = self.sweep("--probe", "20")
        for i, v in enumerate(vs):
            rt.write_variant(out, v, sps=40.0 + i)
        self.assertExit(run("collect", out, "--best", "samples_per_sec"), 0)
        with open(os.path.join(out, "best.json")) as f:
            self.assertNotIn("metric_path", f.read())


class Elsewhere(CollectTest):
    def test_results_for_and_calibration_rows(self):
        out, vs = self.sweep()
        for v in vs[1:]:
            rt.write_variant(out, v)
        other = os.path.join(self.tmp, "elsewhere")
        os.makedirs(os.path.join(other, "results"))
        rt.write_variant(other, vs[0], sps=77.0)
        rows = os.path.join(self.tmp, "calib.jsonl")
        r = run("collect", out, "--results-for", "%s=%s" % (
            vs[0]["name"], rt.variant_dir(other, vs[0])),
            "--export-calibration", rows)
        self.assertExit(r, 0)
        rec = self.by_name(out)[vs[0]["name"]]
        self.assertEqual(rec["values"]["samples_per_sec"], 77.0)
        with open(rows) as f:
            lines = [json.loads(x) for x in f]
        self.assertEqual(len(lines), len(vs))
        row = lines[0]
        self.assertEqual(row["variant"], vs[0]["name"])
        est = vs[0]["summary"]["gpu_bytes"]
        meas = round(12.5 * 1024 ** 3)
        self.assertEqual(row["estimate_gpu_bytes"], est)
        self.assertEqual(row["measured_peak_bytes"], meas)
        self.assertAlmostEqual(row["error_ratio"], (est - meas) / meas)


class Scale(CollectTest):
    def test_ten_thousand_variants(self):
        out, vs = self.sweep()
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        base = m["variants"][0]
        m["variants"] = []
        for i in range(10000):
            v = dict(base, name="v%05d" % i, file="8xa100-v%05d.json" % i)
            m["variants"].append(v)
            rt.write_variant(out, v, "oom" if i % 1000 == 7 else "ok",
                             sps=40.0 + i % 50)
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(m, f)
        r = run("collect", out, timeout=600)
        self.assertExit(r, 0)
        self.assertEqual(r.out.splitlines()[-1].split(";")[0],
                         "10000 variants: 9990 ok, 10 oom")
        recs = self.results(out)["variants"]
        self.assertEqual(len(recs), 10000)
        self.assertEqual(recs[9999]["values"]["samples_per_sec"], 40.0 + 49)


class ProfilerFile(CollectTest):
    def test_the_flops_profilers_output_file(self):
        """flops_profiler.output_file: print_model_profile's summary
        (deepspeed/profiling/flops_profiler/profiler.py v0.19.5 lines
        328-399, line_fmt '{:<70}  {:<8}')."""
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        row = lambda k, v: "%-70s  %-8s\n" % (k, v)
        with open(os.path.join(rt.variant_dir(out, vs[0]), "flops_profile.txt"),
                  "w") as f:
            f.write("Profile Summary at step 10:\n" + row("iter latency: ", "1.21 s")
                    + row("FLOPS per GPU = 3 * fwd flops per GPU / iter "
                          "latency: ", "118.33 TFLOPS"))
        self.assertExit(run("collect", out), 0)
        rec = self.by_name(out)[vs[0]["name"]]
        self.assertAlmostEqual(rec["values"]["tflops_per_gpu"], 118.33)
        self.assertEqual(rec["sources"]["tflops_per_gpu"],
                         "flops:flops_profile.txt")


class JobRecords(CollectTest):
    """Slurm's own record of the jobs (results/slurm-jobcomp.log, the
    job completion log's format; results/sacct.txt, sacct --parsable2)."""

    JOBCOMP = ("JobId=%d UserId=root(0) GroupId=root(0) Name=dsf JobState=%s "
               "Partition=debug TimeLimit=1 StartTime=2026-01-05T10:00:00 "
               "EndTime=2026-01-05T10:01:00 NodeList=n1 NodeCnt=1 ProcCnt=2 "
               "WorkDir=/w ReservationName= Tres=cpu=2 Account= QOS= WcKey= "
               "Cluster=c SubmitTime=unknown EligibleTime=unknown "
               "ArrayJobId=4240 ArrayTaskId=%d DerivedExitCode=0:0 "
               "ExitCode=0:%d \n")

    def tree(self):
        out, vs = self.sweep()
        for i, v in enumerate(vs):
            rt.write_variant(out, v, "running" if i in (1, 2) else "ok")
            path = os.path.join(rt.variant_dir(out, v), "dsf-run.json")
            with open(path) as f:
                run_rec = json.load(f)
            run_rec.update(job_id=str(4241 + i), array_job_id="4240",
                           array_task_id=str(i))
            with open(path, "w") as f:
                json.dump(run_rec, f)
        return out, vs

    def test_a_job_killed_by_its_time_limit(self):
        out, vs = self.tree()
        with open(os.path.join(out, "results", "slurm-jobcomp.log"), "w") as f:
            for i in range(len(vs)):
                state = {1: "TIMEOUT", 2: "RUNNING"}.get(i, "COMPLETED")
                f.write(self.JOBCOMP % (4241 + i, state, i, 15 if i == 1 else 0))
        r = run("collect", out)
        self.assertExit(r, 0)
        recs = self.by_name(out)
        self.assertEqual(recs[vs[1]["name"]]["status"], "timeout")
        self.assertEqual(recs[vs[1]["name"]]["error"],
                         "jobcomp: job TIMEOUT (exit 0, signal 15)")
        self.assertEqual(recs[vs[2]["name"]]["status"], "running")
        self.assertEqual(recs[vs[0]["name"]]["job"]["state"], "COMPLETED")
        self.assertIn("timeout", r.out)

    def test_sacct_output(self):
        out, vs = self.tree()
        with open(os.path.join(out, "results", "sacct.txt"), "w") as f:
            f.write("JobID|JobName|State|ExitCode\n")
            for i in range(len(vs)):
                state = "CANCELLED by 0" if i == 2 else "COMPLETED"
                f.write("4240_%d|dsf|%s|0:0\n4240_%d.batch|batch|%s|0:15\n"
                        % (i, state, i, state.split()[0]))
        self.assertExit(run("collect", out), 0)
        recs = self.by_name(out)
        self.assertEqual(recs[vs[2]["name"]]["status"], "cancelled")
        self.assertEqual(recs[vs[2]["name"]]["job"]["source"], "sacct")
        self.assertEqual(recs[vs[1]["name"]]["status"], "running")

    def test_an_unreadable_job_log_is_a_warning(self):
        out, vs = self.tree()
        os.mkfifo(os.path.join(out, "results", "slurm-jobcomp.log"))
        r = run("collect", out, timeout=30)
        self.assertExit(r, 0)
        self.assertIn("slurm-jobcomp.log: not a regular file", r.err)


class ReportMeasured(CollectTest):
    """report DIR after collect: the Measured section (results.json)."""

    def collected(self):
        out, vs = self.sweep()
        kinds = ["ok", "ok", "oom", "failed", "ok", "ok"]
        for i, (v, k) in enumerate(zip(vs, kinds)):
            rt.write_variant(out, v, k, sps=40.0 + 10 * i,
                             peak_gib=[8, 6, 9, 9, 12, 10][i])
        self.assertExit(run("collect", out), 0)
        self.assertExit(run("report", out), 0)
        with open(os.path.join(out, "report.html")) as f:
            return out, vs, f.read()

    def test_measured_beside_estimated_and_failures_with_their_line(self):
        out, vs, page = self.collected()
        section = page[page.index('id="measured"'):page.index('id="memory"')]
        for v in vs:
            self.assertIn(">%s</th>" % v["name"], section)
        self.assertIn("oom<br><code class=\"mut\">torch.OutOfMemoryError: "
                      "CUDA out of memory.", section)
        self.assertIn("ValueError: the training script failed on purpose",
                      section)
        est = vs[1]["summary"]["gpu_bytes"]
        err = (est - 6 * 2 ** 30) / (6 * 2 ** 30) * 100
        self.assertIn("%+.1f %%" % err, section)
        # speed-up against the control (40/s): variant 1 ran 50/s
        self.assertIn("1.25&#215;", section)
        self.assertNotIn("<script", page)

    def test_scatter_with_the_pareto_front(self):
        out, vs, page = self.collected()
        svg = page[page.index('<svg id="scatter"'):]
        svg = svg[:svg.index("</svg>")]
        # four ok variants: (8 GiB, 40), (6, 50), (12, 80), (10, 90)
        self.assertEqual(svg.count("<circle"), 4)
        self.assertEqual(svg.count('<circle class="p2"'), 2)  # 6->50, 10->90
        front = svg[svg.index('points="') + 8:].split('"')[0].split()
        self.assertEqual(len(front), 2)

    def test_control_characters_from_a_log_are_never_raw(self):
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v, "failed" if v is vs[1] else "ok")
        with open(os.path.join(rt.variant_dir(out, vs[1]), "stderr.log"),
                  "w") as f:
            f.write("ValueError: \x1b]0;owned\x07 \x1b[2J\x7f done\n")
        r = run("collect", out)
        self.assertExit(r, 0)
        self.assertNotIn("\x1b", r.out + r.err)
        self.assertIn("ValueError: ^[]0;owned^G ^[[2J^? done", r.out)
        self.assertExit(run("report", out), 0)
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertNotIn("\x1b", page)
        self.assertIn("ValueError: ^[]0;owned^G ^[[2J^? done", page)

    def test_results_of_another_manifest_are_not_shown(self):
        out, vs, _ = self.collected()
        self.assertExit(run("gen", "8xa100", "--matrix",
                            "micro_batch_size=1,4", "-o", out), 0)
        self.assertExit(run("report", out), 0)
        with open(os.path.join(out, "report.html")) as f:
            page = f.read()
        self.assertIn("collected from another manifest", page)
        self.assertNotIn('<svg id="scatter"', page)


class PluginReaders(CollectTest):
    def plugin(self, body):
        d = os.path.join(self.tmp, "plugins", "extra")
        os.makedirs(d)
        with open(os.path.join(d, "init.lua"), "w") as f:
            f.write(body)
        return os.path.join(self.tmp, "plugins")

    def test_another_plugins_reader_feeds_the_record(self):
        path = self.plugin("""return { name = "extra", interface = 1,
          version = "1", summary = "a team's reader",
          readers = { { name = "mine", files = { "mine.txt" }, format = "text",
            read = function(input, ctx)
              return { tokens_per_sec = tonumber(input.text:match("tps=(%d+)")) }
            end } } }""")
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        with open(os.path.join(rt.variant_dir(out, vs[0]), "mine.txt"),
                  "w") as f:
            f.write("tps=1234\n")
        r = run("collect", out, "--plugin-path", path)
        self.assertExit(r, 0)
        rec = self.by_name(out)[vs[0]["name"]]
        self.assertEqual(rec["values"]["tokens_per_sec"], 1234)
        self.assertEqual(rec["sources"]["tokens_per_sec"], "mine:mine.txt")

    def test_reader_error_names_reader_and_file(self):
        path = self.plugin("""return { name = "extra", interface = 1,
          version = "1", summary = "a broken reader",
          readers = { { name = "broken", files = { "stdout.log" },
            lines = { "RunningAvg" },
            read = function() error("cannot parse") end } } }""")
        out, vs = self.sweep()
        for v in vs:
            rt.write_variant(out, v)
        r = run("collect", out, "--plugin-path", path)
        self.assertExit(r, 5)
        self.assertIn("reader broken (plugin extra) on stdout.log", r.err)
        self.assertIn("cannot parse", r.err)
        self.assertFalse(os.path.exists(os.path.join(out, "results.json")))

    def test_bad_declaration(self):
        path = self.plugin("""return { name = "extra", interface = 1,
          version = "1", summary = "no files",
          readers = { { name = "x", read = function() end } } }""")
        out, vs = self.sweep()
        r = run("collect", out, "--plugin-path", path)
        self.assertExit(r, 3)
        self.assertIn("plugin 'extra': reader #1: needs 'files'", r.err)


if __name__ == "__main__":
    unittest.main()
