#!/usr/bin/env python3
"""Writes plugins/deepspeed/torch_optim.lua: the constructor of every
torch.optim optimizer class and torch.optim.lr_scheduler class, read with
ast from PyTorch's own source (no torch import). DeepSpeed hands an optimizer.type it does not know to
getattr(torch.optim, type)(model_parameters, **optimizer.params)
(runtime/engine.py _configure_basic_optimizer), and builds torch.optim.Adam,
AdamW and Adagrad itself in some cases; a scheduler.type that is not in
deepspeed.runtime.lr_schedules goes to getattr(torch.optim.lr_scheduler,
type)(optimizer, **scheduler.params) (_scheduler_from_config). The
deepspeed plugin checks optimizer.params and scheduler.params against these
signatures.

    contrib/dsknow/torch_optim.py --torch-dir DIR --version V --origin TEXT

DIR holds torch/optim/ (a PyTorch checkout, an unpacked wheel, or Debian's
python3-torch). The output is deterministic: the same source gives the
same bytes. See contrib/dsknow/README.md for the committed file's source.
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
    """class name -> module file, from torch/optim/__init__.py's imports."""
    with open(os.path.join(optim_dir, "__init__.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for a in node.names:
                name = a.asname or a.name
                if name[:1].isupper():
                    out[name] = node.module.replace(".", "/") + ".py"
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


def signature(path, cls, first="params"):
    """The constructor of cls: an optimizer (a subclass of Optimizer whose
    __init__ takes params first) or an LR scheduler (first="optimizer")."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
        if first == "params" and "Optimizer" not in bases:
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch-dir", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--origin", required=True)
    o = ap.parse_args()
    optim = os.path.join(o.torch_dir, "torch", "optim")
    classes = {}
    for cls, mod in sorted(exported(optim).items()):
        sig = signature(os.path.join(optim, mod), cls)
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
    w = sys.stdout.write
    w("-- Generated by contrib/dsknow/torch_optim.py from torch %s\n" % o.version)
    w("-- (%s). Do not edit: re-run the extractor (contrib/dsknow/README.md).\n" % o.origin)
    w("return {\n")
    w("  torch_version = %s,\n" % lua_str(o.version))
    w("  origin = %s,\n" % lua_str(o.origin))
    w("  -- torch.optim optimizer classes: the keyword arguments of __init__ after\n")
    w("  -- params (file:line of the def), the ones without a default, the defaults\n")
    w("  optimizers = {\n")
    write_table(w, classes)
    w("  },\n")
    w("  -- torch.optim.lr_scheduler classes: the same, after optimizer\n")
    w("  schedulers = {\n")
    write_table(w, scheds)
    w("  },\n}\n")


def write_table(w, classes):
    for cls in sorted(classes):
        s = classes[cls]
        d = ", ".join("[%s] = %s" % (lua_str(k), lua_value(s["defaults"][k])) for k in sorted(s["defaults"]))
        w("    %s = { file = %s, line = %d, args = {%s}, required = {%s}, defaults = {%s}%s },\n" % (
            cls, lua_str(s["file"]), s["line"], ", ".join(lua_str(x) for x in s["args"]),
            ", ".join(lua_str(x) for x in s["required"]), d,
            ", kwargs = true" if s["kwargs"] else ""))


if __name__ == "__main__":
    main()
