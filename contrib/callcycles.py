#!/usr/bin/env python3
"""Prints the call cycles between C files of src/ (issue 16: "no two C
files call each other in a loop").

The graph is read from the object files, as the linker sees it: file A
calls file B when A references a symbol (undefined in A's object) that B's
object defines (`nm`). Every strongly connected set of two or more files is
a cycle; each is printed with one path that closes it.

usage: callcycles.py OBJECT_DIR [--exclude PREFIX]...

OBJECT_DIR is searched for *.c.o files whose path contains src/ (CMake's
CMakeFiles/<target>.dir/src/...). Files whose source path starts with an
excluded PREFIX (e.g. src/cli/) are left out of the graph. Exit status: 0
when there is no cycle, 1 when there is one, 2 on a usage error.
"""
import os
import subprocess
import sys


def source_of(obj):
    """CMakeFiles/dsforge_engine.dir/src/lua/host.c.o -> src/lua/host.c"""
    i = obj.rfind(os.sep + "src" + os.sep)
    return obj[i + 1:-2] if i >= 0 and obj.endswith(".c.o") else None


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRCVW":
            defined.add(name)
    return defined, undefined


def graph(objdir, excluded):
    files = {}
    for root, _, names in os.walk(objdir):
        for n in names:
            path = os.path.join(root, n)
            src = source_of(path)
            if src and not any(src.startswith(p) for p in excluded):
                files[src] = symbols(path)
    owner = {}
    for src, (defined, _) in files.items():
        for s in defined:
            owner[s] = src
    edges = {src: set() for src in files}
    for src, (_, undefined) in files.items():
        for s in undefined:
            dst = owner.get(s)
            if dst and dst != src:
                edges[src].add(dst)
    return edges


def cycles(edges):
    """Tarjan's strongly connected components of size > 1, sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def closing_path(edges, comp):
    """A path from the first file of comp back to itself, inside comp."""
    start, inside = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main(argv):
    args, excluded = [], []
    it = iter(argv)
    for a in it:
        if a == "--exclude":
            excluded.append(next(it, ""))
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            args.append(a)
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__, file=sys.stderr)
        return 2
    edges = graph(args[0], excluded)
    if not edges:
        print("callcycles: no object files of src/ under %s" % args[0],
              file=sys.stderr)
        return 2
    found = cycles(edges)
    for comp in found:
        print("cycle: " + " -> ".join(closing_path(edges, comp)))
        print("  files: " + " ".join(comp))
    if found:
        return 1
    print("callcycles: %d files%s, no cycle" % (
        len(edges), "" if not excluded else
        " (excluding %s)" % ", ".join(excluded)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
