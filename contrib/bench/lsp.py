#!/usr/bin/env python3
"""contrib/bench/lsp.py -- what `dsforge lsp` costs an editor (issue 34;
run by contrib/bench/lsp.sh, see README.md).

    lsp.py DSFORGE [EDITS] [RSS_EDITS]

A 200-line config (a built-in profile's output, indented 2, with every
section a DeepSpeed config commonly has) is opened, then:
  - diagnostics: EDITS (200) incremental edits, each a one-character
    change of a value; the time from writing the didChange to reading its
    publishDiagnostics, median and 95th percentile;
  - hover: EDITS hovers over the keys of the file in turn, the time from
    request to response, median and p95;
  - code actions and inlay hints: EDITS requests of each over the whole
    file, median (no target);
  - memory: RSS_EDITS (10,000) more edits; the server's RSS (VmRSS) after
    the first 1,000 and at the end.
Times are the client's round trip over the pipes (framing and JSON both
ways included). Exit 1 when a target is missed: median diagnostics
<= 5 ms, median hover <= 2 ms, RSS growth <= 5% over the RSS edits.
"""
import json
import os
import statistics
import subprocess
import sys
import time


class Client:
    def __init__(self, dsforge):
        self.p = subprocess.Popen([dsforge, "lsp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=0)
        self.out = self.p.stdout
        self.n = 0

    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        b = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)

    def receive(self):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += self.out.read(1)
        n = int(head.split(b":")[1].split(b"\r")[0])
        body = b""
        while len(body) < n:
            body += self.out.read(n - len(body))
        return json.loads(body)

    def request(self, method, params):
        self.n += 1
        self.send({"id": self.n, "method": method, "params": params})
        while True:
            m = self.receive()
            if m.get("id") == self.n:
                return m

    def wait_diagnostics(self, version):
        while True:
            m = self.receive()
            if m.get("method") == "textDocument/publishDiagnostics" and \
                    m["params"]["version"] == version:
                return m["params"]["diagnostics"]

    def rss_kib(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def config_200_lines():
    """A 200-line config: the high-performance profile's output
    (tests/golden) with the
    sections a DeepSpeed config commonly has, indented by 2."""
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "..", "tests", "golden",
                          "high-performance-large.json")
    with open(golden) as f:
        doc = json.load(f)
    doc.setdefault("optimizer", {"type": "AdamW", "params": {
        "lr": 1e-4, "betas": [0.9, 0.95], "eps": 1e-8,
        "weight_decay": 0.1}})
    doc.setdefault("scheduler", {"type": "WarmupDecayLR", "params": {
        "warmup_min_lr": 0, "warmup_max_lr": 1e-4, "warmup_num_steps": 100,
        "total_num_steps": 10000}})
    doc["flops_profiler"] = {"enabled": False, "profile_step": 1,
                             "module_depth": -1, "top_modules": 1,
                             "detailed": True, "output_file": None}
    doc["activation_checkpointing"] = {
        "partition_activations": False, "cpu_checkpointing": False,
        "contiguous_memory_optimization": False, "number_checkpoints": None,
        "synchronize_checkpoint_boundary": False, "profile": False}
    doc["tensorboard"] = {"enabled": False, "output_path": "", "job_name": "x"}
    doc["wandb"] = {"enabled": False, "group": "g", "team": "t",
                    "project": "p"}
    doc["csv_monitor"] = {"enabled": False, "output_path": "", "job_name": "x"}
    doc["comms_logger"] = {"enabled": False, "verbose": False,
                           "prof_all": True, "debug": False}
    doc["aio"] = {"block_size": 1048576, "queue_depth": 8,
                  "thread_count": 1, "single_submit": False,
                  "overlap_events": True}
    doc["data_types"] = {"grad_accum_dtype": "fp32"}
    doc["checkpoint"] = {"tag_validation": "Warn", "load_universal": False,
                         "use_node_local_storage": False}
    doc["elasticity"] = {"enabled": False, "max_train_batch_size": 2000,
                         "micro_batch_sizes": [2, 4, 6], "min_gpus": 1,
                         "max_gpus": 10000, "min_time": 20,
                         "version": 0.1}
    text = json.dumps(doc, indent=2)
    lines = text.splitlines()
    while len(lines) < 200:  # pad with list entries that change nothing
        doc["elasticity"]["micro_batch_sizes"].append(8)
        lines = json.dumps(doc, indent=2).splitlines()
    return "\n".join(lines) + "\n"


def ms(xs):
    xs = sorted(xs)
    return (statistics.median(xs) * 1e3, xs[int(len(xs) * 0.95)] * 1e3)


def main(argv):
    dsforge = argv[1]
    edits = int(argv[2]) if len(argv) > 2 else 200
    rss_edits = int(argv[3]) if len(argv) > 3 else 10000
    text = config_200_lines()
    lines = text.splitlines()
    c = Client(dsforge)
    c.request("initialize", {"capabilities": {}, "initializationOptions": {
        "dsforge": {"target": "deepspeed"}}})
    c.send({"method": "initialized", "params": {}})
    uri = "file:///bench/ds_config.json"
    c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "json", "version": 1, "text": text}}})
    c.wait_diagnostics(1)
    # a one-digit value to flip: the first line with "": <digit>,
    row = next(i for i, l in enumerate(lines)
               if l.rstrip(",").rstrip()[-1:].isdigit() and '": ' in l)
    col = len(lines[row].rstrip(",").rstrip()) - 1
    version = 1

    def edit():
        nonlocal version
        version += 1
        digit = str(version % 8 + 1)
        c.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {
                "start": {"line": row, "character": col},
                "end": {"line": row, "character": col + 1}},
                "text": digit}]}})
        return c.wait_diagnostics(version)

    diag_t = []
    for _ in range(edits):
        t = time.perf_counter()
        edit()
        diag_t.append(time.perf_counter() - t)
    keys = [(i, l.index('"') + 1) for i, l in enumerate(lines)
            if l.strip().startswith('"') and '":' in l]
    hover_t, shown = [], 0
    for k in range(edits):
        line, ch = keys[k % len(keys)]
        t = time.perf_counter()
        r = c.request("textDocument/hover", {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": ch}})
        hover_t.append(time.perf_counter() - t)
        shown += r.get("result") is not None
    # code actions and inlay hints over the whole file (no target: they
    # run when the editor asks, not on every keystroke)
    whole = {"start": {"line": 0, "character": 0},
             "end": {"line": len(lines), "character": 0}}
    action_t, hint_t = [], []
    for _ in range(edits):
        t = time.perf_counter()
        c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": whole,
            "context": {"diagnostics": []}})
        action_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri}, "range": whole})
        hint_t.append(time.perf_counter() - t)
    rss = []
    for k in range(rss_edits):
        edit()
        if k + 1 in (1000, rss_edits):
            rss.append(c.rss_kib())
    c.request("shutdown", None)
    c.send({"method": "exit"})
    c.p.wait(timeout=30)
    d_med, d_p95 = ms(diag_t)
    h_med, h_p95 = ms(hover_t)
    growth = (rss[-1] - rss[0]) / rss[0] * 100 if rss else 0.0
    print("config: %d lines, %d bytes" % (len(lines), len(text)))
    print("diagnostics after one edit: median %.2f ms, p95 %.2f ms "
          "(%d edits; target median <= 5 ms)" % (d_med, d_p95, edits))
    print("hover: median %.2f ms, p95 %.2f ms (%d hovers, %d with text; "
          "target median <= 2 ms)" % (h_med, h_p95, edits, shown))
    print("code actions: median %.2f ms, inlay hints: median %.2f ms "
          "(%d each, the whole file)" % (ms(action_t)[0], ms(hint_t)[0],
                                         edits))
    if rss:
        print("RSS: %d KiB after 1,000 edits, %d KiB after %d (%+.1f%%; "
              "target flat: <= 5%%)" % (rss[0], rss[-1], rss_edits, growth))
    missed = d_med > 5 or h_med > 2 or growth > 5
    if missed:
        print("a target is missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
