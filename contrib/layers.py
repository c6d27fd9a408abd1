#!/usr/bin/env python3
"""The folders of src/ as layers, from the code's own includes.

    contrib/layers.py [SRC_DIR]            a Mermaid graph of the folders
    contrib/layers.py --check [SRC_DIR]    exit 1 when two folders include
                                           each other, directly or round a
                                           circle (an arrow that runs back up)

A folder includes another when one of its files has #include "OTHER/...".
The graph is what contrib/docs/architecture.md shows; ctest's
lint_layers runs --check, so the picture cannot go stale unnoticed.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def edges(src):
    out = {}
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        out.setdefault(folder, {})
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(path, name), encoding="utf-8",
                      errors="replace") as f:
                for target in INCLUDE.findall(f.read()):
                    if target != folder and os.path.isdir(
                            os.path.join(src, target)):
                        out[folder][target] = out[folder].get(target, 0) + 1
    return out


def layers(g):
    """Folders by depth (what nothing includes first); None on a cycle."""
    depth, state = {}, {}

    def visit(n, stack):
        if state.get(n) == 1:
            return stack[stack.index(n):] + [n]
        if state.get(n) == 2:
            return None
        state[n] = 1
        d = 0
        for m in g.get(n, {}):
            cyc = visit(m, stack + [n])
            if cyc:
                return cyc
            d = max(d, depth[m] + 1)
        depth[n] = d
        state[n] = 2
        return None

    for n in sorted(g):
        cyc = visit(n, [])
        if cyc:
            return None, cyc
    return depth, None


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    src = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    g = edges(src)
    depth, cycle = layers(g)
    if cycle:
        print("folders include each other: " + " -> ".join(cycle),
              file=sys.stderr)
        return 1
    if check:
        print("%d folders, %d arrows, none runs back up" %
              (len(g), sum(len(v) for v in g.values())))
        return 0
    print("```mermaid")
    print("flowchart TD")
    for n in sorted(g, key=lambda n: (-depth[n], n)):
        print("  %s[%s/]" % (n, n))
    for n in sorted(g, key=lambda n: (-depth[n], n)):
        for m, k in sorted(g[n].items()):
            print("  %s -->|%d| %s" % (n, k, m))
    print("```")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
