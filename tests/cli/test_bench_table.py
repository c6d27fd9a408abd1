"""The README's performance table is generated from contrib/bench/targets.sh
results by contrib/bench/readme_table.py: the README has the markers and a
table of the generated shape (never timing: numbers move with the
machine); the generator rewrites only what is between the markers; a hand-
edited or incomplete table fails the check."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("DSF_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "contrib", "bench", "readme_table.py")
sys.path.insert(0, os.path.dirname(TOOL))
import readme_table  # noqa: E402


def results(ok=True):
    t = []
    for i, id_ in enumerate(readme_table.IDS):
        peer = None if id_.startswith("matrix") else "peer %d" % i
        unit = "MiB" if id_ == "matrix-rss" else "s"
        t.append({"id": id_, "what": "work %d" % i, "value": 0.001 * (i + 1),
                  "unit": unit, "target": "≤ 1.5×", "ok": ok,
                  "peer": peer, "peer_value": 0.002 if peer else None,
                  "ratio": 0.5 if peer else None})
    return {"date": "2026-11-23", "machine": "2 CPUs", "targets": t}


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                          text=True)


class BenchTable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dsf-bench-table-")

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_readme_table_is_generated(self):
        res = run("--check", os.path.join(ROOT, "README.md"))
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_rewrites_only_between_the_markers(self):
        readme = self.write("README.md", "# x\n\nbefore\n\n%s\nold junk\n%s\n\nafter\n"
                            % (readme_table.BEGIN, readme_table.END))
        rj = self.write("r.json", json.dumps(results()))
        res = run(rj, readme)
        self.assertEqual(res.returncode, 0, res.stderr)
        text = open(readme, encoding="utf-8").read()
        self.assertTrue(text.startswith("# x\n\nbefore\n\n" + readme_table.BEGIN + "\n"))
        self.assertTrue(text.endswith(readme_table.END + "\n\nafter\n"))
        self.assertNotIn("old junk", text)
        self.assertIn(readme_table.HEADER, text)
        self.assertIn("| work 0 | 1.0 ms | peer 0 2.0 ms | 0.50× | ≤ 1.5× | yes |", text)
        self.assertEqual(run("--check", readme).returncode, 0)
        # Regenerating gives the same bytes.
        run(rj, readme)
        self.assertEqual(open(readme, encoding="utf-8").read(), text)
        # A missed target says so.
        run(self.write("r2.json", json.dumps(results(ok=False))), readme)
        self.assertIn("| ≤ 1.5× | no |", open(readme, encoding="utf-8").read())

    def test_several_runs_give_ranges_and_counts(self):
        readme = self.write("README.md", "%s\n%s\n" % (readme_table.BEGIN,
                                                       readme_table.END))
        a, b = results(), results(ok=False)
        for t in b["targets"]:  # the second run: ratios and values doubled
            t["value"] *= 2
            if t["ratio"] is not None:
                t["ratio"] *= 2
        res = run(self.write("a.json", json.dumps(a)),
                  self.write("b.json", json.dumps(b)), readme)
        self.assertEqual(res.returncode, 0, res.stderr)
        text = open(readme, encoding="utf-8").read()
        # the last run's figures, the range over both, held in 1 of 2
        self.assertIn("| work 0 | 2.0 ms | peer 0 2.0 ms | 1.00× (0.50–1.00) "
                      "| ≤ 1.5× | 1 of 2 |", text)
        self.assertIn("| work 3 | 8.0 ms (4.0 ms–8.0 ms) |  |  | ≤ 1.5× "
                      "| 1 of 2 |", text)
        self.assertIn("2 runs", text)
        self.assertEqual(run("--check", readme).returncode, 0)

    def test_check_refuses_hand_edits_and_missing_markers(self):
        readme = self.write("README.md", "%s\n%s\n" % (readme_table.BEGIN,
                                                       readme_table.END))
        self.assertNotEqual(run("--check", readme).returncode, 0)
        run(self.write("r.json", json.dumps(results())), readme)
        text = open(readme, encoding="utf-8").read()
        lines = text.split("\n")
        row = next(i for i, l in enumerate(lines) if l.startswith("| work 3 "))
        del lines[row]
        self.write("README.md", "\n".join(lines))
        res = run("--check", readme)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("rows", res.stderr)
        self.write("README.md", text.replace(readme_table.END, ""))
        self.assertNotEqual(run("--check", readme).returncode, 0)
        # Results that lack a target are refused, the README untouched.
        r = results()
        r["targets"].pop()
        before = open(readme, encoding="utf-8").read()
        self.assertNotEqual(run(self.write("r3.json", json.dumps(r)), readme).returncode, 0)
        self.assertEqual(open(readme, encoding="utf-8").read(), before)


if __name__ == "__main__":
    unittest.main()
