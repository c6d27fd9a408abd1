"""The published peak-memory figures of tests/estimate/published_memory.tsv
against `dsforge estimate` (issue 33).

Each row of the table: id; source (paper and table, documentation
file:line, DeepSpeed code file:line with the call evaluated, or the
thread a measurement was posted in); model; setup; the `dsforge estimate`
arguments that describe that setup; kind (gpu: model states per GPU; cpu:
host memory per node; gpu_total: model states + activations per GPU
without activation checkpointing); the published figure and its
unit (GiB: DeepSpeed's printed "GB", bytes / 2^30; MiB: bytes >> 20;
GB: 10^9 bytes; B: bytes); an explanation when dsforge differs by more
than 15 %; and dsforge's estimate in bytes with the difference in percent
(filled by `python3 tests/estimate/published_memory.py --update DSFORGE`).

Used by tests/cli/test_published_memory.py.
"""
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "published_memory.tsv")
TOLERANCE = 0.15
KINDS = ("gpu", "cpu", "gpu_total", "gpu_total_checkpointed")
UNITS = {"GiB": 2 ** 30, "MiB": 2 ** 20, "GB": 10 ** 9, "B": 1}
HEAD = ["id", "source", "model", "setup", "dsforge_args", "kind", "published", "unit",
        "explanation", "dsforge_bytes", "diff_pct"]


def read(path=TABLE):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if lines[0].split("\t") != HEAD:
        raise ValueError("%s: header is not %s" % (path, HEAD))
    rows = []
    for n, line in enumerate(lines[1:], 2):
        cells = line.split("\t")
        if len(cells) != len(HEAD):
            raise ValueError("%s:%d: %d cells, expected %d" % (path, n, len(cells), len(HEAD)))
        rows.append(dict(zip(HEAD, cells), line=n))
    return rows


def estimate(dsforge, row):
    """dsforge's bytes for the row's setup and kind."""
    args = [dsforge, "estimate"] + shlex.split(row["dsforge_args"]) + ["--json"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("%s: %s exited %d: %s" % (row["id"], args, p.returncode, p.stderr))
    out = json.loads(p.stdout)
    if len(out["rows"]) != 1:
        raise RuntimeError("%s: the arguments must select one row (--stage)" % row["id"])
    return out["rows"][0][row["kind"] + "_bytes"]


def published_bytes(row):
    return float(row["published"]) * UNITS[row["unit"]]


def diff_pct(dsforge_bytes, row):
    pub = published_bytes(row)
    return "%.1f" % (100.0 * (dsforge_bytes - pub) / pub)


def verdict(row, dsforge_bytes):
    """None when the row passes, else why it fails: dsforge more than
    TOLERANCE from the published figure and no explanation."""
    pub = published_bytes(row)
    off = abs(dsforge_bytes - pub) / pub
    if off > TOLERANCE and not row["explanation"].strip():
        return ("%s: dsforge %d bytes is %.1f%% from the published %s %s and the row "
                "explains nothing" % (row["id"], dsforge_bytes, 100 * off, row["published"],
                                      row["unit"]))
    return None


def update(dsforge):
    rows = read()
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write("\t".join(HEAD) + "\n")
        for r in rows:
            b = estimate(dsforge, r)
            r["dsforge_bytes"], r["diff_pct"] = str(b), diff_pct(b, r)
            f.write("\t".join(r[k] for k in HEAD) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--update":
        sys.exit("usage: published_memory.py --update path/to/dsforge")
    update(sys.argv[2])
