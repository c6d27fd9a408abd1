#!/usr/bin/env python3
"""tests/lint/core_names.py -- fails when the core (a C file under src/, or
CMakeLists.txt) names what belongs to a plugin: DeepSpeed (its config
keys, params, summary fields, rules, modules), Hugging Face, accelerate,
a launcher or a scheduler (issues 16, 12 and 35). The core knows plugins
only through the declared interface (contrib/docs/plugins.md).

What is read: every string literal, and what the code builds from them at
run time --
  - adjacent literals ("deep" "speed" is one string in C),
  - the literals of one statement joined in order (dsf_xconcat("deep",
    "speed", NULL), a strcat of pieces, a format and its arguments),
  - each of those with '-' read as '_' (an option's name turned into a
    param's: "world-size" is the param world_size; "--strict-fit" is
    strict_fit),
  - in CMakeLists.txt, the whole text but comments (paths included).
Comments are not read (they may say why the core knows nothing).

  core_names.py ROOT [--debt FILE]

--debt FILE lists, one a line ("path: name: N"), the names still in the
core that a later change removes, each allowed on N lines (pieces) of
that file: one more fails, and so does one fewer (lower N: the list only
shrinks). Exit 0 clean, 1 with the names
found (file:line: name: the text), 2 on bad usage.
"""
import os
import re
import sys

# Names in any spelling (case-insensitive, as whole words of letters and
# digits: "hf" in "hf-args" or "--target hf", not in "shfmt").
WORDS = [
    "deepspeed", "hugging", "huggingface", "hf", "accelerate",
    "torchrun", "slurm", "sbatch", "srun", "squeue", "kubernetes", "k8s",
    "kubeflow", "skypilot", "pbs", "lsf", "trainer", "dsdata",
]
# Config keys, params, summary fields and rule ids the core once read
# (issue 16), compared after '-' -> '_' (so "world-size" is world_size).
NAMES = [
    "world_size", "fit_message", "gpu_bytes", "cpu_bytes",
    "zero_optimization", "offload_optimizer", "offload_param",
    "train_batch_size", "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps", "bf16", "fp16", "gpu_mem_gb",
    "memory_fit", "hf_training_args", "hf_args", "master_addr", "hostfile",
    "ds_version", "strict_fit", "hf_json_load",
]
# ... and those that are also English words: only as a whole literal.
WHOLE = ["fits"]

WORD_RE = re.compile(r"(?<![a-z0-9])(%s)(?![a-z0-9])"
                     % "|".join(sorted(WORDS, key=len, reverse=True)))
NAME_RE = re.compile(r"(?<![a-z0-9_])(%s)(?![a-z0-9_])"
                     % "|".join(sorted(NAMES, key=len, reverse=True)))

C_TOKEN = re.compile(r'''
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<semi>[;{}])
  | (?P<other>[^"'/;{}]+|/)
''', re.S | re.X)


def unescape(lit):
    body = lit[1:-1]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(
        m.group(1), m.group(1)), body)


def names_in(text):
    """The forbidden names in text (lower-cased; '-' also read as '_')."""
    low = text.lower()
    found = set(m.group(1) for m in WORD_RE.finditer(low))
    # an option's dashes ("--strict-fit") start no name: only those
    # inside one are read as '_'
    opts = re.sub(r"(?<![a-z0-9])-+", " ", low)
    found |= set(m.group(1) for m in NAME_RE.finditer(opts.replace("-", "_")))
    found |= set(w for w in WHOLE if low.strip() == w)
    # Split words read joined ("deep" "speed" -> "deepspeed").
    squeezed = re.sub(r"[^a-z0-9]", "", low)
    for w in ("deepspeed", "huggingface", "torchrun", "skypilot",
              "kubeflow"):
        if w in squeezed:
            found.add(w)
    return found


def c_pieces(text):
    """(line, text) of each literal run, and of each statement's literals
    joined; comments skipped."""
    out = []
    stmt, stmt_line = [], None
    run, run_line = [], None
    line = 1
    # An #include names a file, not part of a statement: its own piece.
    text = re.sub(r'^([ \t]*#[ \t]*include[ \t]*)("[^"\n]*")',
                  lambda m: " " * len(m.group(1)) + m.group(2) + ";",
                  text, flags=re.M)
    for m in C_TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "string":
            if not run:
                run_line = line
            run.append(unescape(tok))
            if not stmt:
                stmt_line = line
            stmt.append(unescape(tok))
        elif kind == "comment" or (kind == "other" and not tok.strip()):
            pass  # adjacent literals stay one run across these
        else:
            if run:
                out.append((run_line, "".join(run)))
                run = []
            if kind == "semi":
                if len(stmt) > 1:
                    out.append((stmt_line, "".join(stmt)))
                stmt = []
            elif kind == "char":
                pass
        line += tok.count("\n")
    if run:
        out.append((run_line, "".join(run)))
    return out


def cmake_pieces(text):
    out = []
    for i, l in enumerate(text.splitlines(), 1):
        code = l.split("#", 1)[0]
        if code.strip():
            out.append((i, code))
    return out


def scan(root):
    hits = []  # (relpath, line, name, text)
    files = []
    for d, _, fs in os.walk(os.path.join(root, "src")):
        for f in sorted(fs):
            if f.endswith((".c", ".h")):
                files.append(os.path.join(d, f))
    cm = os.path.join(root, "CMakeLists.txt")
    for path in sorted(files) + ([cm] if os.path.isfile(cm) else []):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rel = os.path.relpath(path, root)
        pieces = (cmake_pieces(text) if path == cm else c_pieces(text))
        seen = set()
        for line, piece in pieces:
            for name in sorted(names_in(piece)):
                if (line, name) not in seen:
                    seen.add((line, name))
                    hits.append((rel, line, name, piece))
    return hits


def main(argv):
    args = argv[1:]
    debt_file = None
    if "--debt" in args:
        i = args.index("--debt")
        if i + 1 >= len(args):
            print("usage: core_names.py ROOT [--debt FILE]", file=sys.stderr)
            return 2
        debt_file = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: core_names.py ROOT [--debt FILE]", file=sys.stderr)
        return 2
    root = args[0]
    debt = {}  # (path, name) -> how many lines may name it
    if debt_file:
        with open(debt_file, encoding="utf-8") as f:
            for l in f:
                l = l.split("#", 1)[0].strip()
                if l:
                    path, name, count = [x.strip() for x in l.split(":")]
                    debt[(path, name)] = int(count)
    hits = scan(root)
    found = {}
    for h in hits:
        found[(h[0], h[2])] = found.get((h[0], h[2]), 0) + 1
    # A name listed is allowed on as many lines as listed, no more.
    bad = [h for h in hits if found[(h[0], h[2])] > debt.get((h[0], h[2]), 0)]
    stale = sorted(k for k, n in debt.items() if found.get(k, 0) < n)
    for rel, line, name, piece in bad:
        short = piece if len(piece) < 90 else piece[:87] + "..."
        print("%s:%d: %s: %r" % (rel, line, name, short), file=sys.stderr)
    for rel, name in stale:
        print("%s: %s: listed %d times in %s but found %d: lower the count"
              % (rel, name, debt[(rel, name)], debt_file,
                 found.get((rel, name), 0)), file=sys.stderr)
    if bad:
        print("the core names plugin knowledge (declare it in the plugin)",
              file=sys.stderr)
    if bad or stale:
        return 1
    print("no plugin names in %s/src or CMakeLists.txt (%d known, listed "
          "in %s)" % (root, len(debt), debt_file) if debt else
          "no plugin names in %s/src or CMakeLists.txt" % root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
