"""dsforge lsp (issue 34): its diagnostics are check's findings (rule,
severity, message with the fix, line and column) on the built-in profiles'
outputs, broken configs and, when present, the real-world configs; and
its command line. The sessions with real clients are tests/lsp/."""
import glob
import json
import os
import subprocess
import unittest

import dsf
from dsf import run

SEVERITY = {"error": 1, "warning": 2, "note": 3}


class Server:
    """A dsforge lsp process with a minimal client."""

    def __init__(self, options=None, env=None, cwd=None):
        self.p = subprocess.Popen([dsf.DSFORGE, "lsp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=cwd,
                                  env=dict(os.environ, **(env or {})))
        self.next_id = 0
        self.request("initialize", {"capabilities": {},
                                    "initializationOptions": options or {}})

    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        b = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def receive(self):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            c = self.p.stdout.read(1)
            if not c:
                raise EOFError("the server closed its output")
            head += c
        n = int(head.split(b":")[1].split(b"\r")[0])
        return json.loads(self.p.stdout.read(n))

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            m = self.receive()
            if m.get("id") == self.next_id:
                return m

    def diagnostics(self, uri, text):
        self.send({"method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "json", "version": 1,
                             "text": text}}})
        while True:
            m = self.receive()
            if m.get("method") == "textDocument/publishDiagnostics" and \
                    m["params"]["uri"] == uri:
                return m["params"]["diagnostics"]

    def wait(self):
        """The exit status, once the server ends; the pipes closed."""
        rc = self.p.wait(timeout=30)
        for f in (self.p.stdin, self.p.stdout):
            if not f.closed:
                f.close()
        return rc

    def close(self):
        self.request("shutdown", None)
        self.send({"method": "exit"})
        return self.wait()


BROKEN = [
    '{"train_batch_size": 8, "zero_optimization": {"stage": 9}}',
    '{"train_batch_size": "auto", "fp16": {"enabled": true}, '
    '"bf16": {"enabled": true}}',
    '{"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9,'
    ' "max_live_parameters": 1e9}, "optimizer": {"type": "adamw"}}',
    '{\n  "train_micro_batch_size_per_gpu": 2, // a comment\n'
    '  "gradient_accumulation_steps": 4,\n  "fp16": {"enabled": "auto",'
    ' "loss_scale": 0,},\n  "zero_optimization": {"stage": 2},\n'
    '  "zero_optimization": {"stage": 1}\n}',
    '[1, 2]',
]


class SameAsCheck(dsf.TempDirTest):
    def configs(self):
        out = sorted(glob.glob(os.path.join(dsf.GOLDEN_DIR, "*.json")))[:6]
        rw = dsf.shared("realworld-configs")
        if rw:
            out += sorted(glob.glob(os.path.join(rw, "*.json")))
        for i, text in enumerate(BROKEN):
            path = os.path.join(self.tmp, "broken%d.json" % i)
            with open(path, "w") as f:
                f.write(text)
            out.append(path)
        return out

    def compare(self, target, ds_version):
        server = Server({"dsforge": {"target": target,
                                     "dsVersion": ds_version}})
        compared = 0
        for path in self.configs():
            with self.subTest(target=target, config=os.path.basename(path)):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                got = server.diagnostics("file://" + path, text)
                r = run("check", "--format", "json", "--target", target,
                        "--ds-version", ds_version, path)
                self.assertIn(r.rc, (0, 1, 3), r)
                want = [(g["line"] - 1, g["col"] - 1, SEVERITY[g["severity"]],
                         g.get("rule"), g["message"] + (
                             "\nfix: " + g["fix"] if g.get("fix") else ""))
                        for g in r.json()]
                have = [(d["range"]["start"]["line"],
                         d["range"]["start"]["character"], d["severity"],
                         d.get("code"), d["message"]) for d in got]
                self.assertEqual(sorted(have), sorted(want))
                compared += len(want)
        self.assertGreater(compared, 10)  # the broken configs' alone
        self.assertEqual(server.close(), 0)

    def test_target_deepspeed(self):
        self.compare("deepspeed", "0.19.5")

    def test_target_hf_older_release(self):
        self.compare("hf", "0.14.5")


class Command(dsf.TempDirTest):
    def test_takes_no_arguments(self):
        r = run("lsp", "file.json")
        self.assertEqual(r.rc, 2, r)
        self.assertIn("lsp takes no arguments", r.err)

    def hover(self, server, text, at):
        server.diagnostics("file:///h.json", text)
        return server.request("textDocument/hover", {
            "textDocument": {"uri": "file:///h.json"},
            "position": {"line": 0, "character": text.index(at)}})["result"]

    def test_release_from_the_environment_then_the_settings(self):
        text = '{"zero_optimization": {"stage": 1, "stage3_prefetch": 1}}'
        s = Server(env={"DSFORGE_DS_VERSION": "0.16.9"})
        h = self.hover(s, text, "stage")
        self.assertIn("zero_optimization.stage  (DeepSpeed 0.16.9)",
                      h["contents"]["value"])
        s.send({"method": "workspace/didChangeConfiguration",
                "params": {"settings": {"dsforge": {"dsVersion": "0.15.4"}}}})
        h = self.hover(s, text, "stage")
        self.assertIn("(DeepSpeed 0.15.4)", h["contents"]["value"])
        # a key no release reads: the command's own answer
        h = self.hover(s, text, "stage3_prefetch")
        self.assertIn("not a DeepSpeed key", h["contents"]["value"])
        self.assertEqual(s.close(), 0)
        r = run("lsp", env={"DSFORGE_DS_VERSION": "0.1"})
        self.assertEqual(r.rc, 2, r)
        self.assertIn("DSFORGE_DS_VERSION", r.err)

    def test_exit_without_shutdown_is_1(self):
        s = Server()
        s.send({"method": "exit"})
        self.assertEqual(s.wait(), 1)

    def test_input_end_ends_the_server(self):
        s = Server()
        s.p.stdin.close()
        self.assertEqual(s.wait(), 1)
        s = Server()
        s.request("shutdown", None)
        s.p.stdin.close()
        self.assertEqual(s.wait(), 0)

    def test_requests_before_initialize(self):
        p = subprocess.Popen([dsf.DSFORGE, "lsp"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        b = b'{"jsonrpc":"2.0","id":1,"method":"textDocument/hover"}'
        out, _ = p.communicate(b"Content-Length: %d\r\n\r\n" % len(b) + b,
                               timeout=30)
        self.assertIn(b'"code":-32002', out)
        self.assertEqual(p.returncode, 1)


FIXABLE = """{
  "train_batch_size": 16,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8,
  "gradient_clipping": "auto",
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
  "zero_optimization": {"stage": 3, "overlap_com": true,
    "prefetch_bucket_size": 10, "stage3_prefetch_bucket_size": 20},
  "bfloat16": {"enabled": true, "loss_scale": 0}
}
"""


def apply_edits(text, edits):
    """text (ASCII: a character is a byte) with the LSP TextEdits applied."""
    lines = text.split("\n")
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)

    def off(p):
        return starts[p["line"]] + p["character"]
    for e in sorted(edits, key=lambda e: off(e["range"]["start"]),
                    reverse=True):
        a, b = off(e["range"]["start"]), off(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text


class CodeActions(dsf.TempDirTest):
    """textDocument/codeAction: every quick fix, applied, makes its finding
    go away and leaves a config that parses."""

    def actions(self, server, uri, rng, only=None):
        ctx = {"diagnostics": []}
        if only:
            ctx["only"] = only
        return server.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": rng,
            "context": ctx})["result"]

    def test_each_fix_removes_its_finding(self):
        s = Server({"dsforge": {"dsVersion": "0.19.5"}})
        s.diagnostics("file:///f.json", FIXABLE)
        whole = {"start": {"line": 0, "character": 0},
                 "end": {"line": 99, "character": 0}}
        acts = self.actions(s, "file:///f.json", whole)
        titles = [a["title"] for a in acts]
        self.assertEqual(sorted(titles), sorted([
            "Set train_batch_size to 32", "Set gradient_accumulation_steps to 4",
            "Set gradient_clipping to 1",
            'Rename "overlap_com" to "overlap_comm"',
            "Remove zero_optimization.stage3_prefetch_bucket_size",
            'Rename "bfloat16" to "bf16"',
            "Move bfloat16.loss_scale to fp16.loss_scale"]), titles)
        for i, a in enumerate(acts):
            with self.subTest(a["title"]):
                self.assertEqual(a["kind"], "quickfix")
                d = a["diagnostics"][0]
                self.assertEqual(d["source"], "dsforge")
                fixed = apply_edits(FIXABLE, a["edit"]["changes"]["file:///f.json"])
                json.loads(fixed)  # still JSON
                after = s.diagnostics("file:///g%d.json" % i, fixed)
                self.assertFalse([x for x in after if x["code"] == d["code"]
                                  and x["message"] == d["message"]], fixed)
        # a range on one line: only that line's fixes
        line = FIXABLE.splitlines().index(
            '  "gradient_clipping": "auto",')
        acts = self.actions(s, "file:///f.json", {
            "start": {"line": line, "character": 5},
            "end": {"line": line, "character": 5}})
        self.assertEqual([a["title"] for a in acts],
                         ["Set gradient_clipping to 1"])
        self.assertTrue(acts[0].get("isPreferred"))
        # other kinds only: none
        self.assertEqual(self.actions(s, "file:///f.json", whole,
                                      ["refactor"]), [])
        # a document not open: an error
        r = s.request("textDocument/codeAction", {
            "textDocument": {"uri": "file:///nothere.json"}, "range": whole,
            "context": {"diagnostics": []}})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertEqual(s.close(), 0)

    def test_capability(self):
        p = subprocess.Popen([dsf.DSFORGE, "lsp"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        b = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
        out, _ = p.communicate(b"Content-Length: %d\r\n\r\n" % len(b) + b,
                               timeout=30)
        caps = json.loads(out.split(b"\r\n\r\n", 1)[1])["result"]["capabilities"]
        self.assertEqual(caps["codeActionProvider"],
                         {"codeActionKinds": ["quickfix"]})


class InlayHints(dsf.TempDirTest):
    """textDocument/inlayHint: the global batch at the world size in use and
    the memory estimate per GPU, from the plugins' summary as their report
    layout draws it; the params of a gen -o variant from its manifest."""

    WHOLE = {"start": {"line": 0, "character": 0},
             "end": {"line": 999, "character": 0}}

    def hints(self, server, uri, text):
        server.diagnostics(uri, text)
        r = server.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri}, "range": self.WHOLE})
        return [h["label"] for h in r["result"]]

    def test_world_size_and_params_from_the_settings(self):
        text = ('{"train_micro_batch_size_per_gpu": 2,\n'
                ' "gradient_accumulation_steps": 8, "zero_optimization": '
                '{"stage": 3}, "bf16": {"enabled": true}}')
        s = Server({"dsforge": {"worldSize": 4}})
        self.assertEqual(self.hints(s, "file:///w.json", text), [
            "global batch = micro batch per GPU 2 \u00d7 gradient accumulation"
            " 8 \u00d7 data-parallel world 4 = 64"])
        s.send({"method": "workspace/didChangeConfiguration", "params": {
            "settings": {"dsforge": {"worldSize": 16, "params": {
                "model": "llama-2-7b", "gpus_per_node": 8}}}}})
        labels = self.hints(s, "file:///w.json", text)
        self.assertIn("data-parallel world 16 = 256", labels[0])
        mem = [l for l in labels if l.startswith("GPU memory per device")]
        self.assertEqual(len(mem), 1, labels)
        # the estimate of `dsforge estimate` at that stage and world size
        est = run("estimate", "--model", "llama-2-7b", "--gpus", "8",
                  "--nodes", "2", "--stage", "3", "--json")
        self.assertEqual(est.rc, 0, est)
        gpu = est.json()["rows"][0]["gpu_bytes"]
        self.assertEqual(mem[0], "GPU memory per device \u2248 %.1f GiB"
                         % (gpu / 2**30))
        self.assertEqual(s.close(), 0)

    def test_a_gen_output_variant_uses_its_manifest(self):
        out = os.path.join(self.tmp, "out")
        r = run("gen", "8xa100", "--param", "model=llama-2-7b", "-o", out)
        self.assertEqual(r.rc, 0, r)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        v = [x for x in m["variants"] if x["name"] == "small"][0]
        path = os.path.join(out, v["file"])
        with open(path) as f:
            text = f.read()
        s = Server()
        labels = self.hints(s, "file://" + path, text)
        b = v["summary"]["batch"]
        self.assertIn("global batch = micro batch per GPU %d \u00d7 gradient "
                      "accumulation %d \u00d7 data-parallel world %d = %d"
                      % (b["micro"], b["accumulation"], b["world"],
                         b["global"]), labels)
        gpu = v["summary"]["model_states_gpu_bytes"] + \
            v["summary"]["activation_bytes"]
        self.assertIn("GPU memory per device \u2248 %.1f GiB" % (gpu / 2**30),
                      " | ".join(labels))
        # an edit of the micro batch: the hint follows the text
        text2 = text.replace('"train_micro_batch_size_per_gpu": %d'
                             % b["micro"],
                             '"train_micro_batch_size_per_gpu": %d'
                             % (b["micro"] * 2))
        self.assertNotEqual(text, text2)
        labels = self.hints(s, "file://" + path, text2)
        self.assertIn("= %d" % (b["global"] * 2), labels[0])
        # not JSON: no hints
        self.assertEqual(self.hints(s, "file:///bad.json", "{"), [])
        self.assertEqual(s.close(), 0)


# tests/lsp/mkout.sh: the gen -o output of the real clients' go-to-
# definition checks (profile defp, -f team.json, an edit), made the same
# way here.
MKOUT = os.path.join(dsf.SOURCE_DIR, "tests", "lsp", "mkout.sh")


class Definition(dsf.TempDirTest):
    """textDocument/definition in a gen -o output: the profile line or -f
    file that set the value, as gen --why finds it; null for a value a
    command-line argument set and outside an output directory."""

    def define(self, s, uri, text, needle):
        at = text.index(needle) + 1
        line = text.count("\n", 0, at)
        ch = at - (text.rfind("\n", 0, at) + 1)
        r = s.request("textDocument/definition", {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": ch}})
        self.assertNotIn("error", r)
        return r["result"]

    def make_out(self):
        """Runs mkout.sh into the test's directory: sets self.pdir, returns
        the -f file and the output directory."""
        r = subprocess.run(["sh", MKOUT, dsf.DSFORGE, self.tmp],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.pdir = os.path.join(self.tmp, "profiles")
        return (os.path.join(self.tmp, "team.json"),
                os.path.join(self.tmp, "out"))

    def why(self, path, *args):
        r = run("gen", "defp", "--profile-path", self.pdir, "--why", path,
                *args)
        self.assertEqual(r.rc, 0, r)
        return r.out

    def test_profile_line_file_line_and_argument(self):
        over, out = self.make_out()
        edit = "zero_optimization.stage=1"  # (the one mkout.sh gives)
        with open(os.path.join(out, "manifest.json")) as f:
            v = json.load(f)["variants"][0]
        path = os.path.join(out, v["file"])
        with open(path) as f:
            text = f.read()
        uri = "file://" + path
        s = Server(env={"DSFORGE_PATH": self.pdir})
        s.diagnostics(uri, text)
        # a -f file's value: that file, at the member
        loc = self.define(s, uri, text, '"gradient_clipping"')
        self.assertEqual(loc["uri"], "file://" + os.path.realpath(over))
        self.assertEqual(loc["range"]["start"]["line"], 2)
        self.assertIn("(%s:3:" % over, self.why("gradient_clipping", "-f",
                                                 over))
        # the profile's value (on its value too): the profile's line that
        # gen --why names
        prof = os.path.join(self.pdir, "defp.lua")
        why = self.why("train_micro_batch_size_per_gpu")
        line = int(why.split("(%s:" % prof)[1].split(")")[0].split(":")[0])
        for needle in ('"train_micro_batch_size_per_gpu"', ': 2'):
            loc = self.define(s, uri, text, needle)
            self.assertEqual(loc["uri"], "file://" + os.path.realpath(prof))
            self.assertEqual(loc["range"]["start"]["line"], line - 1)
        loc = self.define(s, uri, text, '"lr"')
        self.assertEqual(loc["uri"], "file://" + os.path.realpath(prof))
        # set by a command-line argument: no file, so null
        self.assertIn("argument #", self.why("zero_optimization.stage", edit))
        self.assertIsNone(self.define(s, uri, text, '"stage"'))
        # outside an output directory: null
        other = "file://" + self.write("plain.json", text)
        s.diagnostics(other, text)
        self.assertIsNone(self.define(s, other, text, '"gradient_clipping"'))
        # the profile gone, then the manifest broken: null, and on it goes
        os.rename(prof, prof + ".gone")
        self.assertIsNone(self.define(s, uri, text, '"lr"'))
        os.rename(prof + ".gone", prof)
        self.assertIsNotNone(self.define(s, uri, text, '"lr"'))
        with open(os.path.join(out, "manifest.json"), "w") as f:
            f.write('{"variants": [{"file": 7}], "profile": ')
        self.assertIsNone(self.define(s, uri, text, '"lr"'))
        self.assertEqual(s.close(), 0)

    def test_a_sweeps_variants(self):
        # each cell of a --matrix sweep (a config path and a param) is made
        # again; a value the sweep set came from the command line: null
        self.make_out()
        out = os.path.join(self.tmp, "sweep")
        r = run("gen", "defp", "--profile-path", self.pdir, "--matrix",
                "zero_optimization.stage=1,2", "--matrix", "world_size=1,2",
                "-o", out)
        self.assertEqual(r.rc, 0, r)
        with open(os.path.join(out, "manifest.json")) as f:
            variants = json.load(f)["variants"]
        self.assertEqual(len(variants), 4)
        # (a manifest whose variant lacks its params: no crash)
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        del m["variants"][0]["params"]
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(m, f)
        prof = "file://" + os.path.realpath(os.path.join(self.pdir,
                                                         "defp.lua"))
        s = Server(env={"DSFORGE_PATH": self.pdir})
        for v in variants:
            path = os.path.join(out, v["file"])
            with open(path) as f:
                text = f.read()
            s.diagnostics("file://" + path, text)
            loc = self.define(s, "file://" + path, text, '"lr"')
            self.assertEqual(loc and loc["uri"], prof, v["file"])
            self.assertIsNone(self.define(s, "file://" + path, text,
                                          '"stage"'), v["file"])
        self.assertEqual(s.close(), 0)


PROFILE_HEAD = """return {
  name = "mine",
  summary = "a profile being edited",
  params = { world_size = 1 },
  build = function(p)
"""


class ProfileDiagnostics(dsf.TempDirTest):
    """A profile (.lua) opened or saved: gen's load errors at their line and
    its rules' findings on its variants."""

    def published(self, s, uri):
        while True:
            m = s.receive()
            if m.get("method") == "textDocument/publishDiagnostics" and \
                    m["params"]["uri"] == uri:
                return m["params"]["diagnostics"]

    def test_load_errors_then_findings_then_clean(self):
        path = self.write("profiles/mine.lua", PROFILE_HEAD +
                          "    return { x = = 1 }\n  end,\n}\n")
        uri = "file://" + path
        s = Server()
        with open(path) as f:
            d = s.diagnostics(uri, f.read())
        self.assertEqual(len(d), 1, d)
        self.assertEqual(d[0]["severity"], 1)
        self.assertEqual(d[0]["range"]["start"]["line"], 5)
        self.assertIn("syntax error", d[0]["message"])
        # saved with a value the rules reject: the finding, at the build
        # (what the build prints goes to stderr, not into the protocol)
        with open(path, "w") as f:
            f.write(PROFILE_HEAD + "    print('Content-Length: 2')\n"
                    "    return { train_micro_batch_size_per_gpu"
                    " = 1, zero_optimization = { stage = 7 } }\n  end,\n}\n")
        s.send({"method": "textDocument/didSave",
                "params": {"textDocument": {"uri": uri}}})
        d = self.published(s, uri)
        bad = [x for x in d if x["severity"] == 1]
        self.assertEqual([x["code"] for x in bad], ["invalid-value"], d)
        self.assertIn("zero_optimization.stage: 7 is not a valid value",
                      bad[0]["message"])
        self.assertEqual(bad[0]["range"]["start"]["line"], 4)
        self.assertTrue(s.request("textDocument/hover", {
            "textDocument": {"uri": uri},
            "position": {"line": 0, "character": 0}})["id"])
        # fixed and saved: no error
        with open(path, "w") as f:
            f.write(PROFILE_HEAD + "    return { train_micro_batch_size_per_gpu"
                    " = 1, zero_optimization = { stage = 2 } }\n  end,\n}\n")
        s.send({"method": "textDocument/didSave",
                "params": {"textDocument": {"uri": uri}}})
        d = self.published(s, uri)
        self.assertFalse([x for x in d if x["severity"] == 1], d)
        # an error in the profile it extends: at line 1, naming that file
        self.write("profiles/parent.lua", "return { name = 'parent', "
                   "summary = 's', build = function(p) error('boom') end }\n")
        with open(path, "w") as f:
            f.write(PROFILE_HEAD.replace('summary', 'extends = "parent", '
                                         'summary') +
                    "    return {}\n  end,\n}\n")
        s.send({"method": "textDocument/didSave",
                "params": {"textDocument": {"uri": uri}}})
        d = self.published(s, uri)
        bad = [x for x in d if x["severity"] == 1]
        self.assertTrue(bad and "parent.lua:1:" in bad[0]["message"]
                        and "boom" in bad[0]["message"], d)
        self.assertEqual(bad[0]["range"]["start"]["line"], 0)
        self.assertEqual(s.close(), 0)


if __name__ == "__main__":
    unittest.main()
