#!/usr/bin/env python3
"""Writes plugins/deepspeed/torch_optim.lua: the constructor of every
torch.optim optimizer class and torch.optim.lr_scheduler class in each
covered torch release, read with ast from PyTorch's own source (no torch
import). DeepSpeed hands an optimizer.type it does not know to
getattr(torch.optim, type)(model_parameters, **optimizer.params)
(runtime/engine.py _configure_basic_optimizer), and builds torch.optim.Adam,
AdamW and Adagrad itself in some cases; a scheduler.type that is not in
deepspeed.runtime.lr_schedules goes to getattr(torch.optim.lr_scheduler,
type)(optimizer, **scheduler.params) (_scheduler_from_config). The
deepspeed plugin checks optimizer.params and scheduler.params against these
signatures.

    contrib/dsknow/torch_optim.py --source VERSION DIR ORIGIN [--source ...]

One --source per torch release: DIR holds torch/optim/ (a PyTorch
checkout, an unpacked wheel, or Debian's python3-torch), ORIGIN says where
it came from. The output is deterministic: the same sources give the same
bytes, releases oldest first whatever the order of the options. See
contrib/dsknow/README.md (and torch_optim.sh) for the committed file's
sources.
"""
import argparse
import ast
import os
import re
import sys


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lua_value(v):
    if v is None:
        return "dsforge.null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(v)
        return r if ("." in r or "e" in r or "n" in r) else r + ".0"
    if isinstance(v, str):
        return lua_str(v)
    if isinstance(v, (tuple, list)):
        return "{" + ", ".join(lua_value(x) for x in v) + "}"
    return lua_str("<expr>")


def default_of(node):
    """The literal default, "<required>" for torch.optim's `required`
    sentinel, or "<expr>" for anything computed."""
    if isinstance(node, ast.Name) and node.id == "required":
        return "<required>"
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return "<expr>"


def exported(optim_dir):
    """class name -> module file, from torch/optim/__init__.py's imports:
    relative (`from .sgd import SGD`, torch 1.x) or absolute (`from
    torch.optim.sgd import SGD as SGD`, torch 2.x)."""
    with open(os.path.join(optim_dir, "__init__.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and node.module):
            continue
        if node.level == 1:
            mod = node.module
        elif node.level == 0 and node.module.startswith("torch.optim."):
            mod = node.module[len("torch.optim."):]
        else:
            continue
        for a in node.names:
            name = a.asname or a.name
            if name[:1].isupper():
                out[name] = mod.replace(".", "/") + ".py"
    return out


def scheduler_names(path):
    """The public classes of lr_scheduler.py (its __all__)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return sorted(ast.literal_eval(node.value))
    return sorted(n.name for n in tree.body
                  if isinstance(n, ast.ClassDef) and not n.name.startswith("_"))


def signature(path, cls, first="params", bases_ok=("Optimizer",)):
    """The constructor of cls: an optimizer (a subclass of Optimizer, or of
    another optimizer class in bases_ok as AdamW(Adam) in torch 2.x, whose
    __init__ takes params first) or an LR scheduler (first="optimizer")."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
        if first == "params" and not any(b in bases_ok for b in bases):
            return None
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                a = item.args
                pos = a.posonlyargs + a.args
                if len(pos) < 2 or pos[1].arg != first:
                    return None
                pdefs = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
                args, required, defaults = [], [], {}
                # self, then the parameters DeepSpeed passes positionally
                for arg, d in list(zip(pos, pdefs))[2:] + list(zip(a.kwonlyargs, a.kw_defaults)):
                    args.append(arg.arg)
                    v = None if d is None else default_of(d)
                    if d is None or v == "<required>":
                        required.append(arg.arg)
                    else:
                        defaults[arg.arg] = v
                return {"line": item.lineno, "args": args, "required": required,
                        "defaults": defaults, "kwargs": a.kwarg is not None}
    return None


def read_release(torch_dir):
    """(optimizers, schedulers) of one torch source tree."""
    optim = os.path.join(torch_dir, "torch", "optim")
    names = exported(optim)
    bases_ok = ("Optimizer",) + tuple(sorted(names))
    classes = {}
    for cls, mod in sorted(names.items()):
        sig = signature(os.path.join(optim, mod), cls, "params", bases_ok)
        if sig:
            sig["file"] = "torch/optim/" + mod
            classes[cls] = sig
    if not classes:
        sys.exit("no torch.optim optimizer class found under " + optim)
    scheds = {}
    path = os.path.join(optim, "lr_scheduler.py")
    for cls in scheduler_names(path):
        sig = signature(path, cls, "optimizer")
        if sig:
            sig["file"] = "torch/optim/lr_scheduler.py"
            scheds[cls] = sig
    return classes, scheds


def version_key(v):
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+]", v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", nargs=3, action="append", required=True,
                    metavar=("VERSION", "DIR", "ORIGIN"))
    o = ap.parse_args()
    srcs = sorted(o.source, key=lambda s: version_key(s[0]))
    vers = [s[0] for s in srcs]
    if len(set(vers)) != len(vers):
        sys.exit("a torch version is given twice")
    for v in vers:
        if not re.match(r"^\d+\.\d+\.\d+$", v):
            sys.exit("torch version %r is not X.Y.Z" % v)
    data = {v: read_release(d) for v, d, _ in srcs}
    w = sys.stdout.write
    w("-- Generated by contrib/dsknow/torch_optim.py from torch %s:\n" % ", ".join(vers))
    for v, _, origin in srcs:
        w("--   %s: %s\n" % (v, origin))
    w("-- Do not edit: re-run the extractor (contrib/dsknow/README.md).\n")
    w("return {\n")
    w("  -- the covered torch releases, oldest first, and where each was read\n")
    w("  releases = {\n")
    for v, _, origin in srcs:
        w("    { version = %s, origin = %s },\n" % (lua_str(v), lua_str(origin)))
    w("  },\n")
    w("  -- torch.optim optimizer classes, per release that has them: the\n")
    w("  -- keyword arguments of __init__ after params (file:line of the def),\n")
    w("  -- the ones without a default, the defaults\n")
    w("  optimizers = {\n")
    write_table(w, vers, {v: data[v][0] for v in vers})
    w("  },\n")
    w("  -- torch.optim.lr_scheduler classes: the same, after optimizer\n")
    w("  schedulers = {\n")
    write_table(w, vers, {v: data[v][1] for v in vers})
    w("  },\n}\n")


def write_table(w, vers, per_release):
    for cls in sorted(set().union(*(per_release[v].keys() for v in vers))):
        w("    %s = {\n" % cls)
        for v in vers:
            s = per_release[v].get(cls)
            if not s:
                continue
            d = ", ".join("[%s] = %s" % (lua_str(k), lua_value(s["defaults"][k])) for k in sorted(s["defaults"]))
            w("      [%s] = { file = %s, line = %d, args = {%s}, required = {%s}, defaults = {%s}%s },\n" % (
                lua_str(v), lua_str(s["file"]), s["line"], ", ".join(lua_str(x) for x in s["args"]),
                ", ".join(lua_str(x) for x in s["required"]), d,
                ", kwargs = true" if s["kwargs"] else ""))
        w("    },\n")


if __name__ == "__main__":
    main()
