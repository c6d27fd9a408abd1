"""The A/B report page: gen --report and dsforge report DIR. A structural
test (html.parser: every variant, numbers equal to the manifest, nothing
external, proper headers, deterministic bytes) always runs; a browser test
renders the page in headless Chromium (skipped when chromium is absent)
and checks the screenshot is not blank and the console has no error."""
import html.parser
import json
import re
import os
import shutil
import subprocess
import tempfile
import unittest
import zlib

import dsf
from dsf import run


class Page(html.parser.HTMLParser):
    """Tables as lists of rows of (tag, attrs, text) cells, plus every
    tag and attribute seen."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.tags, self.cell, self.row = [], [], None, None
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = []
            self.tables[-1].append(self.row)
        elif tag in ("td", "th"):
            self.cell = [tag, attrs, ""]
            self.row.append(self.cell)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cell[2] = self.cell[2].strip()
            self.cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell[2] += data


def parse(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = Page()
    p.feed(text)
    p.close()
    return text, p


def leaf(obj, path):
    for part in path.split("."):
        obj = obj[part]
    return obj


class Structure(dsf.TempDirTest):
    def gen_report(self, *args):
        out = os.path.join(self.tmp, "out")
        page = os.path.join(self.tmp, "r.html")
        res = run("gen", "8xa100", "-o", out, "--report", page, *args)
        self.assertExit(res, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            return out, page, json.load(f)

    def test_every_variant_and_the_manifest_numbers(self):
        out, page, manifest = self.gen_report()
        text, p = parse(page)
        names = [v["name"] for v in manifest["variants"]]
        main = p.tables[0]
        head = [c[2] for c in main[0]]
        self.assertEqual(head[0], "path")
        self.assertEqual([h.split(" ")[0] for h in head[1:]], names)
        self.assertTrue(all(c[0] == "th" and c[1].get("scope") == "col"
                            for c in main[0]))
        rows = {r[0][2]: r[1:] for r in main[1:] if len(r) == len(names) + 1}
        # Summary numbers equal the manifest's, variant by variant; sizes
        # in the unit a person reads (GiB, or MiB below one GiB).
        for key in ("batch.global", "batch.micro", "batch.accumulation", "fits"):
            for cell, v in zip(rows[key], manifest["variants"]):
                self.assertEqual(json.loads(cell[2]), leaf(v["summary"], key), key)
        for key in ("gpu_bytes", "cpu_bytes", "activation_bytes"):
            for cell, v in zip(rows[key], manifest["variants"]):
                n = leaf(v["summary"], key)
                want = ("%.2f GiB" % (n / 2 ** 30) if n >= 2 ** 30
                        else "%.1f MiB" % (n / 2 ** 20))
                self.assertEqual(cell[2], want, key)
        for key in ("micro_batch_size", "gradient_accumulation", "model"):
            for cell, v in zip(rows[key], manifest["variants"]):
                self.assertEqual(json.loads(cell[2]), v["params"][key], key)
        # Config rows: exactly the paths that differ from the control,
        # highlighted exactly where they differ.
        docs = []
        for v in manifest["variants"]:
            with open(os.path.join(out, v["file"])) as f:
                docs.append(json.load(f))
        differ = sorted({p for v in manifest["variants"]
                         for p in v["differs_from_control"]})
        self.assertEqual(differ, ["gradient_accumulation_steps",
                                  "train_batch_size",
                                  "train_micro_batch_size_per_gpu"])
        for path in differ:
            cells = rows[path]
            for i, (cell, doc) in enumerate(zip(cells, docs)):
                self.assertEqual(json.loads(cell[2]), doc[path])
                highlighted = "d" in cell[1].get("class", "").split()
                self.assertEqual(highlighted, i > 0 and doc[path] != docs[0][path],
                                 (path, i))
        # Memory bars: an inline SVG per variant and bar, with the budget.
        svgs = [t for t in p.tags if t[0] == "svg"]
        self.assertEqual(len(svgs), 2 * len(names))
        self.assertIn("bars", manifest["report_layout"])
        gib = 1024 ** 3
        for v in manifest["variants"]:
            s = v["summary"]
            self.assertIn("total %.2f GiB of %.2f GiB, margin %.2f GiB"
                          % (s["gpu_bytes"] / gib, s["gpu_budget_bytes"] / gib,
                             (s["gpu_budget_bytes"] - s["gpu_bytes"]) / gib), text)
            self.assertIn("activations %.2f GiB" % (s["activation_bytes"] / gib),
                          text)
            # the host memory bar has its budget line too (cpu_mem_gb)
            self.assertIn("total %.2f GiB of %.2f GiB, margin %.2f GiB"
                          % (s["cpu_bytes"] / gib, s["cpu_budget_bytes"] / gib,
                             (s["cpu_budget_bytes"] - s["cpu_bytes"]) / gib), text)
            self.assertEqual(s["fits"], s["gpu_fits"] and s["cpu_fits"])
        # Batch composition and findings, per variant.
        comp = [r for t in p.tables for r in t
                if len(r) == 4 and r[1][2] == "global batch"]
        self.assertEqual([(r[0][2], int(r[2][2])) for r in comp],
                         [(v["name"], v["summary"]["batch"]["global"])
                          for v in manifest["variants"]])
        self.assertEqual(comp[2][3][2].split(), ["4", "micro", "batch", "per", "GPU",
                                                 "\u00d7", "16", "gradient",
                                                 "accumulation", "\u00d7", "8",
                                                 "data-parallel", "world"])
        # Links to each JSON, relative, to files that exist.
        hrefs = [a["href"] for t, a in p.tags if t == "a" and "href" in a]
        files = [h for h in hrefs if not h.startswith("#")]
        self.assertEqual(files, ["out/" + v["file"] for v in manifest["variants"]])
        for h in files:
            self.assertTrue(os.path.exists(os.path.join(self.tmp, h)))
        # Versions and hashes.
        for c in manifest["chain"]:
            self.assertIn(c["sha256"], text)
        for v in manifest["variants"]:
            self.assertIn(v["sha256"], text)
        self.assertIn(manifest["dsforge_version"], text)

    def test_self_contained_light_and_dark(self):
        _, page, _ = self.gen_report()
        text, p = parse(page)
        tags = {t for t, _ in p.tags}
        self.assertNotIn("script", tags)
        self.assertNotIn("link", tags)
        self.assertNotIn("img", tags)
        self.assertNotIn("iframe", tags)
        for t, a in p.tags:
            for k, v in a.items():
                if k in ("src", "href", "action", "srcset"):
                    self.assertFalse(v.startswith(("http:", "https:", "//")), (t, k, v))
        # The only URL is the SVG namespace; a Content-Security-Policy
        # forbids every request anyway.
        self.assertEqual(text.replace('xmlns="http://www.w3.org/2000/svg"', "")
                         .count("://"), 0)
        self.assertIn("default-src 'none'", text)
        self.assertIn("@media (prefers-color-scheme:dark)", text)
        self.assertIn("color-scheme:light dark", text)
        # Every table has a header row of th scope=col, every body row a th.
        for t in p.tables:
            self.assertTrue(all(c[0] == "th" and c[1].get("scope") == "col"
                                for c in t[0]), t[0])
            for r in t[1:]:
                self.assertTrue(r[0][0] == "th" or r[0][1].get("colspan"), r)

    def test_deterministic_and_the_same_as_report_dir(self):
        out, page, _ = self.gen_report()
        with open(page, "rb") as f:
            first = f.read()
        self.gen_report()
        with open(page, "rb") as f:
            self.assertEqual(f.read(), first)
        again = os.path.join(self.tmp, "again.html")
        res = run("report", out, "-o", again)
        self.assertExit(res, 0)
        with open(again, "rb") as f:
            self.assertEqual(f.read(), first)
        res = run("report", out)
        self.assertExit(res, 0)
        _, p = parse(os.path.join(out, "report.html"))
        hrefs = [a["href"] for t, a in p.tags if t == "a"
                 and not a["href"].startswith("#")]
        self.assertEqual(hrefs, ["8xa100-small.json", "8xa100-medium.json",
                                 "8xa100-large.json"])

    def test_without_an_output_directory_there_are_no_links(self):
        page = os.path.join(self.tmp, "r.html")
        self.assertExit(run("gen", "8xa100", "--report", page), 0)
        _, p = parse(page)
        self.assertEqual([a["href"] for t, a in p.tags if t == "a"
                          and not a["href"].startswith("#")], [])
        self.assertEqual(len([t for t in p.tags if t[0] == "svg"]), 6)

    def test_a_sweep_and_a_profile_without_memory(self):
        page = os.path.join(self.tmp, "r.html")
        self.assertExit(run("gen", "8xa100", "--tier", "medium", "--matrix",
                            "zero_optimization.overlap_comm=true,false",
                            "--report", page), 0)
        text, p = parse(page)
        row = [r for r in p.tables[0] if r[0][2] == "zero_optimization.overlap_comm"]
        self.assertEqual([c[2] for c in row[0][1:]], ["true", "false"])
        self.assertIn("overlap-comm-off", text)  # the finding, on one variant
        self.profile("plain", 'return { name = "plain", summary = "s", '
                     'build = function(p) return { train_batch_size = 8, '
                     'train_micro_batch_size_per_gpu = 8 } end }')
        self.assertExit(run("gen", "plain", "--profile-path",
                            os.path.join(self.tmp, "profiles"), "--report", page), 0)
        text, _ = parse(page)
        self.assertIn("No plugin reported memory", text)

    def test_bad_input(self):
        res = run("report", os.path.join(self.tmp, "none"))
        self.assertExit(res, 3)
        self.assertIn("manifest.json", res.err)
        self.assertExit(run("report"), 2)
        self.assertExit(run("report", "a", "b"), 2)
        self.assertExit(run("gen", "8xa100", "--tier", "small", "--stdout",
                            "--report", os.path.join(self.tmp, "r.html")), 2)
        out = os.path.join(self.tmp, "out")
        self.assertExit(run("gen", "8xa100", "-o", out), 0)
        with open(os.path.join(out, "manifest.json"), "w") as f:
            f.write('{"variants": [}')
        res = run("report", out)
        self.assertExit(res, 3)
        self.assertRegex(res.err, r"manifest\.json:1:\d+: error")
        self.assertFalse(os.path.exists(os.path.join(out, "report.html")))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def png_rows(path):
    """The distinct byte values of a PNG's decompressed image data, and
    its size: enough to tell a blank page from a drawn one."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            size = (int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big"))
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return len(set(raw)), size


def render(tmp, page):
    """Screenshot of page in headless Chromium with no network: (png path
    or None, console lines, Chromium's stderr tail)."""
    shot = os.path.join(tmp, os.path.basename(page) + ".png")
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", "--user-data-dir=" + profile,
           "--host-resolver-rules=MAP * ~NOTFOUND",
           "--enable-logging=stderr", "--v=0", "--window-size=1280,1600",
           "--screenshot=" + shot, "file://" + os.path.abspath(page)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    return (shot if os.path.exists(shot) else None), console, p.stderr[-2000:]


@unittest.skipUnless(CHROMIUM, "chromium is not installed (contrib/install-deps.sh "
                     "--browser installs it); the browser test is skipped")
class Browser(dsf.TempDirTest):
    def render(self, page):
        shot, console, err = render(self.tmp, page)
        self.assertTrue(shot, err)
        return shot, console

    def test_report_renders_with_no_console_error(self):
        out = os.path.join(self.tmp, "out")
        page = os.path.join(self.tmp, "r.html")
        self.assertExit(run("gen", "8xa100", "-o", out, "--report", page), 0)
        # Controls: a blank page is told apart, a console error is seen.
        blank = self.write("blank.html", "<!DOCTYPE html><title>x</title>")
        noisy = self.write("noisy.html", "<!DOCTYPE html><title>x</title><p>x"
                           "<script>console.error('marker-1234')</script>")
        blank_shot, _ = self.render(blank)
        _, noisy_console = self.render(noisy)
        self.assertTrue(any("marker-1234" in l for l in noisy_console))
        shot, console = self.render(page)
        self.assertEqual(console, [])
        colours, size = png_rows(shot)
        blank_colours, blank_size = png_rows(blank_shot)
        self.assertEqual(size, (1280, 1600))
        self.assertLess(blank_colours, 8)
        self.assertGreater(colours, 50)


    def test_report_with_measurements_renders(self):
        """collect's results on the page: no script, no request, drawn."""
        import results_tree as rt
        out = os.path.join(self.tmp, "ab")
        self.assertExit(run("gen", "8xa100", "--matrix",
                            "micro_batch_size=1,2", "-o", out), 0)
        with open(os.path.join(out, "manifest.json")) as f:
            vs = json.load(f)["variants"]
        for i, v in enumerate(vs):
            rt.write_variant(out, v, "oom" if i == 2 else "ok",
                             sps=40.0 + 7 * i, peak_gib=6 + i)
        self.assertExit(run("collect", out), 0)
        self.assertExit(run("report", out), 0)
        page = os.path.join(out, "report.html")
        with open(page) as f:
            html = f.read()
        self.assertNotIn("<script", html)
        self.assertEqual(re.findall(r'(?:src|href)="https?:', html), [])
        shot, console = self.render(page)
        self.assertEqual(console, [])
        colours, size = png_rows(shot)
        self.assertGreater(colours, 50)


if __name__ == "__main__":
    unittest.main()
