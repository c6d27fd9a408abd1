#!/usr/bin/env python3
"""Fails when a C file under SRC is over 900 lines or a function in one is
over 120 (issue 35: one room per job, small functions).

    tests/lint/c_sizes.py SRC            check every *.c below SRC
    tests/lint/c_sizes.py --self-test    the check fails on planted files

A function is counted from the first line of its signature to its closing
brace, both included: this tree's style opens a function's body with a
"{" alone on a line and closes it with a "}" at column 0 (.clang-format).
"""
import os
import sys
import tempfile

MAX_FILE = 900
MAX_FUNCTION = 120


def functions(lines):
    """(name, first line, length) of each function of a C file's lines."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            start = i - 1
            # the signature may span lines: back to the line after a blank,
            # a comment or the end of the previous definition
            while start > 0 and lines[start - 1].strip() and \
                    not lines[start - 1].startswith(("}", "/*", "**", "#")) and \
                    not lines[start - 1].rstrip().endswith((";", "*/")):
                start -= 1
            end = i
            while end < len(lines) and lines[end] != "}":
                end += 1
            head = lines[start].split("(")[0].split()
            name = head[-1].lstrip("*") if head else "?"
            out.append((name, start + 1, end - start + 1))
            i = end
        i += 1
    return out


def problems(src):
    found = []
    for folder, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if not name.endswith(".c"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            n = len(lines) - (1 if lines and lines[-1] == "" else 0)
            if n > MAX_FILE:
                found.append("%s: %d lines (at most %d)" % (path, n, MAX_FILE))
            for fn, first, length in functions(lines):
                if length > MAX_FUNCTION:
                    found.append("%s:%d: function %s is %d lines (at most %d)"
                                 % (path, first, fn, length, MAX_FUNCTION))
    return found


def self_test():
    with tempfile.TemporaryDirectory() as d:
        def write(name, text):
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        body = "".join("    x++;\n" for _ in range(MAX_FUNCTION - 4))
        write("ok.c", "static int\nfits(int x)\n{\n" + body + "}\n")
        assert problems(d) == [], problems(d)
        write("long.c", "int too_long(int x)\n{\n" + body + "    x++;\n    x++;\n}\n")
        got = problems(d)
        assert len(got) == 1 and "too_long is 121 lines" in got[0], got
        os.remove(os.path.join(d, "long.c"))
        write("big.c", "int a;\n" * (MAX_FILE + 1))
        got = problems(d)
        assert len(got) == 1 and "901 lines" in got[0], got
    print("c_sizes self-test: ok")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(argv[1])
    for p in found:
        print(p)
    if found:
        return 1
    print("no C file over %d lines, no function over %d in %s"
          % (MAX_FILE, MAX_FUNCTION, argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
