#!/usr/bin/env python3
"""Which of DeepSpeed's own config checks the conformance corpus reaches.

    trace.py [--world-size 8] FILE...      # prints JSON on stdout

Runs inside the environment dsclient's setup.sh prints (DSCHECK_DS_ROOT,
DSCHECK_HJSON, DSCHECK_DEBROOT): it loads dsclient's dscheck.py (DeepSpeed's
config code with torch replaced) and runs DeepSpeedConfig on every FILE
under sys.settrace, recording the DeepSpeed functions each parse calls, the
lines they execute and the exceptions raised in them. For a file DeepSpeedConfig
accepts whose scheduler.type is one of DeepSpeed's own, the engine's start-up
step that needs no GPU runs too, under the same trace: the scheduler's
constructor, as DeepSpeedEngine._scheduler_from_config calls it (with an
Adam-like optimizer standing in for the one the engine would build). The checks are not
listed by hand: every function any parse called is read back from its
source with `ast`, and every `raise` and `assert` statement in its own body
(a nested function's are its own) is
a reachable check, named deepspeed/...py:LINE. So is every function those
call by name with an argument (f(x), mod.f(x)) or on self/cls, and every
function they define, transitively (a class called stands for its
__init__ and its pydantic validators).

Per check and file, the verdict is:
  trigger  the raise ran, or the assert raised AssertionError in its own frame;
  pass     an assert ran without raising; a raise's guard ran (the test of
           the nearest enclosing if/elif or loop, the first line of the try
           body for one in an except clause, else the function's first
           line) and the raise did not.
A file that triggers nothing in a check it reaches passes it.

Whether a config value decides a check at all (or the machine, the
environment, DeepSpeed's own state) is dataflow.py's: "decided" is
"config", "other" or "gate", with "why" in words; "preempted" when
preempt.py proves that no config can fail it (something earlier fails
first on every value that would).

Output: {"deepspeed": VERSION, "world_size": N, "files": {FILE: VERDICT},
"engine": {FILE: VERDICT of the scheduler's constructor},
"checks": [{"check": "deepspeed/...:LINE", "kind": "raise"|"assert",
"function": QUALNAME, "code": FIRST_LINE, "decided": KIND, "why": TEXT,
"trigger": [FILE...], "pass": [FILE...]}...]} with FILE as given, sorted,
deterministic.
"""
import ast
import inspect
import contextlib
import io
import json
import os
import sys

DSCLIENT = os.environ.get("DSCLIENT_DIR", "")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dataflow  # noqa: E402 - beside this file
import preempt  # noqa: E402 - beside this file


def load_dscheck():
    import importlib.util
    path = os.path.join(DSCLIENT, "dscheck.py")
    spec = importlib.util.spec_from_file_location("dscheck", path)
    mod = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(sys.stderr):
        spec.loader.exec_module(mod)
    return mod


class Recorder:
    """sys.settrace hook: DeepSpeed frames only (everything under DS_ROOT)."""

    def __init__(self, ds_root):
        self.prefix = os.path.join(os.path.realpath(ds_root), "")
        self.functions = set()   # (file, co_firstlineno, co_name)
        self.lines = set()       # (file, line)
        self.asserted = set()    # (file, line): AssertionError raised in that frame there
        self.edges = {}          # callee (file, first line, name): {(file, line) of the call, or None}
        self._mine = {}

    def reset(self):
        self.lines = set()
        self.asserted = set()

    def ours(self, code):
        f = code.co_filename
        hit = self._mine.get(f)
        if hit is None:
            hit = os.path.realpath(f).startswith(self.prefix)
            self._mine[f] = hit
        return hit

    def global_trace(self, frame, event, arg):
        code = frame.f_code
        if not self.ours(code):
            return None
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        self.functions.add(key)
        up = frame.f_back
        self.edges.setdefault(key, set()).add(
            (up.f_code.co_filename, up.f_lineno) if up is not None and self.ours(up.f_code)
            else dataflow.EXTERNAL)
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.lines.add((frame.f_code.co_filename, frame.f_lineno))
        elif event == "exception":
            tb = arg[2]
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            if (tb is None or tb.tb_frame is frame) and issubclass(arg[0], AssertionError):
                self.asserted.add((frame.f_code.co_filename, frame.f_lineno))
        return self.local_trace


def unwrap(obj):
    obj = getattr(obj, "__func__", obj)
    return getattr(obj, "__wrapped__", obj)


def callees(func_node, module, owner, rec):
    """Functions func_node's own body calls by name that DeepSpeed defines:
    f(...) and mod.f(...) through the module's globals, self.f(...) and
    cls.f(...) through owner (the class of a method); a class stands for its
    __init__ and its pydantic validators. A call with no argument that is
    not on self/cls takes nothing of the config and is not followed."""
    out = []
    g = vars(module)
    for node in ast.walk(func_node):
        if not isinstance(node, ast.Call):
            continue
        f, obj = node.func, None
        via_self = (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    and f.value.id in ("self", "cls"))
        if not (node.args or node.keywords or via_self):
            continue   # nothing of the config goes in (get_accelerator())
        if isinstance(f, ast.Name):
            obj = g.get(f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            base = owner if f.value.id in ("self", "cls") else g.get(f.value.id)
            if base is not None:
                try:
                    obj = inspect.getattr_static(base, f.attr)
                except AttributeError:
                    obj = None
                if isinstance(obj, (staticmethod, classmethod)):
                    obj = obj.__func__
        if obj is None:
            continue
        if inspect.isclass(obj):
            out.extend(class_entry_points(obj))
            continue
        fn = unwrap(obj)
        if inspect.isfunction(fn):
            out.append(fn)
    return [fn for fn in out if rec.ours(fn.__code__)]


def class_entry_points(klass):
    """What building klass runs: each __init__ up its MRO and the
    validators pydantic (1 or 2) calls."""
    out = []
    for k in klass.__mro__:
        init = vars(k).get("__init__")
        if inspect.isfunction(init):
            out.append(init)
    decos = getattr(klass, "__pydantic_decorators__", None)
    if decos is not None:   # pydantic 2
        for group in ("validators", "field_validators", "root_validators",
                      "model_validators", "field_serializers", "model_serializers"):
            for d in getattr(decos, group, {}).values():
                out.append(unwrap(d.func))
    for vs in (getattr(klass, "__validators__", None) or {}).values():   # pydantic 1
        out.extend(unwrap(v.func) for v in vs)
    out.extend(unwrap(f) for f in getattr(klass, "__pre_root_validators__", None) or [])
    out.extend(unwrap(f[1]) for f in getattr(klass, "__post_root_validators__", None) or [])
    return [f for f in out if inspect.isfunction(f)]


def live_functions(rec):
    """{(file, first line, name): (function, owner class, module)} of every
    function and method DeepSpeed's loaded modules define."""
    out = {}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f or not os.path.realpath(f).startswith(rec.prefix):
            continue
        for obj in list(vars(mod).values()):
            cands = []
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                cands.append((obj, None))
            elif inspect.isclass(obj) and obj.__module__ == mod.__name__:
                for member in vars(obj).values():
                    fn = unwrap(getattr(member, "func", member))
                    if inspect.isfunction(fn):
                        cands.append((fn, obj))
                cands.extend((fn, obj) for fn in class_entry_points(obj))
            for fn, owner in cands:
                c = fn.__code__
                out.setdefault((c.co_filename, c.co_firstlineno, c.co_name), (fn, owner, mod))
    return out


def engine_scheduler(name, lr_schedules, optim):
    """What DeepSpeedEngine._scheduler_from_config does at deepspeed.initialize
    for a scheduler.type of DeepSpeed's own (lr_schedules.VALID_LR_SCHEDULES):
    scheduler(optimizer, **scheduler_params), with an Adam-like optimizer
    (one param group, lr 1e-3, betas) in place of the one the engine built.
    None when the file names no such scheduler, else (ok, verdict)."""
    import hjson
    with open(name, encoding="utf-8") as f:
        cfg = hjson.load(f)
    sch = cfg.get("scheduler") if isinstance(cfg, dict) else None
    if not isinstance(sch, dict) or sch.get("type") not in lr_schedules.VALID_LR_SCHEDULES:
        return None
    params = sch["params"] if "params" in sch else None   # runtime/config.py get_scheduler_params

    class Adam(optim.Optimizer):
        def __init__(self):   # (the stand-in's Optimizer refuses to be built)
            self.defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}
            self.param_groups = [dict(self.defaults, params=[])]
            self.state = {}

    try:
        getattr(lr_schedules, sch["type"])(Adam(), **params)
        return True, "OK"
    except Exception as e:  # noqa: BLE001 - every failure is the engine's verdict
        return False, "REJECT %s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")


def function_nodes(tree):
    """{(first line incl. decorators, name): FunctionDef} of a module."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out[(first, node.name)] = node
            out[(node.lineno, node.name)] = node
    return out


def qualnames(tree):
    names = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + child.name
                names[id(child)] = q
                walk(child, q + ".")
            else:
                walk(child, prefix)
    walk(tree, "")
    return names


def own_checks(func):
    """(node, guard lines) for each raise/assert in func's own body."""
    found = []

    def walk(node, guard):
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for child in items:
                if not isinstance(child, ast.AST):
                    continue
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                      ast.ClassDef, ast.Lambda)):
                    continue
                g = guard
                if isinstance(node, ast.If) and field in ("body", "orelse"):
                    g = span(node.lineno, node.test.end_lineno)
                elif isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and field in ("body", "orelse"):
                    g = span(node.lineno, (node.iter if hasattr(node, "iter") else node.test).end_lineno)
                elif isinstance(node, ast.Try) and isinstance(child, ast.ExceptHandler):
                    g = span(node.body[0].lineno, node.body[0].lineno)
                if isinstance(child, (ast.Raise, ast.Assert)):
                    found.append((child, g))
                walk(child, g)

    walk(func, span(func.body[0].lineno, func.body[0].lineno))
    return found


def span(a, b):
    return tuple(range(a, (b or a) + 1))


def main(argv):
    world = 8
    if argv[:1] == ["--world-size"]:
        world, argv = int(argv[1]), argv[2:]
    files = argv
    dscheck = load_dscheck()
    ds_root = os.environ["DSCHECK_DS_ROOT"]
    rec = Recorder(ds_root)
    import importlib
    lr_schedules = importlib.import_module("deepspeed.runtime.lr_schedules")
    optim = importlib.import_module("torch.optim")
    verdicts, engine, per_file = {}, {}, {}
    for name in files:
        rec.reset()
        sys.settrace(rec.global_trace)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                ok, verdict, _ = dscheck.check(name, world)
                built = engine_scheduler(name, lr_schedules, optim) if ok else None
        finally:
            sys.settrace(None)
        verdicts[name] = verdict
        if built is not None:
            engine[name] = built[1]
        per_file[name] = (rec.lines, rec.asserted)
    checks = find_checks(rec, ds_root, files, per_file)
    out = {"deepspeed": dscheck.DS_VERSION, "world_size": world,
           "files": verdicts, "engine": engine, "checks": checks}
    sys.stdout.write(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


def find_checks(rec, ds_root, files, per_file):
    """The checks of the functions rec saw called (and what they call),
    each with the files that trigger and pass it and what decides it
    (dataflow.py); per_file: {file: (lines, asserted)} of each run."""
    root = os.path.realpath(ds_root)
    trees = {}

    def rel(fname):   # deepspeed/...py
        return os.path.relpath(os.path.realpath(fname), root)

    def parsed(fname):
        if fname not in trees:
            with open(fname, encoding="utf-8") as f:
                text = f.read()
            tree = ast.parse(text, fname)
            trees[fname] = (function_nodes(tree), qualnames(tree), text.splitlines(), tree)
        return trees[fname]

    # The functions the parses called, then what those call by name and
    # the functions they define (transitively): a check there is reachable
    # even if no file reached it.
    live = live_functions(rec)
    called = set(rec.functions)
    reach, todo = {}, sorted(called)
    while todo:
        key = todo.pop()
        fname, first, co_name = key
        func = parsed(fname)[0].get((first, co_name))
        if func is None or key in reach:
            continue   # module or class body, lambda, comprehension
        reach[key] = func
        for node in ast.walk(func):   # its nested functions (get_params)
            if node is not func and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                todo.append((fname, first, node.name))
        fn, owner, mod = live.get(key, (None, None, None))
        if mod is None:
            continue
        for callee in callees(func, mod, owner, rec):
            c = callee.__code__
            nxt = (c.co_filename, c.co_firstlineno, c.co_name)
            if nxt not in reach:
                todo.append(nxt)

    # Which of them a config value decides (dataflow.py).
    modules = {}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and os.path.realpath(f).startswith(rec.prefix):
            modules[f] = mod
            modules.setdefault(os.path.realpath(f), mod)
    functions = {}
    for key, node in reach.items():
        fn, owner, mod = live.get(key, (None, None, None))
        functions[key] = (node, fn, owner, mod if mod is not None else modules.get(key[0]))
    executed = set()
    for lines, _ in per_file.values():
        executed |= lines
    decided, program = dataflow.decisions(functions, rec.edges, lambda f: parsed(f)[3], modules,
                                          lambda f: parsed(f)[2], executed)
    # Which of those no config can fail (preempt.py).
    decided = preempt.refine(program, decided, rel=rel)

    checks, seen = [], set()
    for key in sorted(reach):
        fname = key[0]
        func = reach[key]
        if id(func) in seen:
            continue
        seen.add(id(func))
        quals, src = parsed(fname)[1], parsed(fname)[2]
        for node, guard in own_checks(func):
            kind = "assert" if isinstance(node, ast.Assert) else "raise"
            body = span(node.lineno, (node.test if kind == "assert" else node).end_lineno)
            trig, passed = [], []
            for name in files:
                lines, asserted = per_file[name]
                if kind == "raise":
                    if any((fname, ln) in lines for ln in body):
                        trig.append(name)
                    elif any((fname, ln) in lines for ln in guard):
                        passed.append(name)
                else:
                    if any((fname, ln) in asserted for ln in body):
                        trig.append(name)
                    elif any((fname, ln) in lines for ln in body):
                        passed.append(name)
            checks.append({"check": "%s:%d" % (rel(fname), node.lineno), "kind": kind,
                           "function": quals.get(id(func), func.name),
                           "called": key in called,
                           "code": src[node.lineno - 1].strip()[:160],
                           "decided": decided[(fname, node.lineno)][0],
                           "why": decided[(fname, node.lineno)][1],
                           "trigger": trig, "pass": passed})
    checks.sort(key=lambda c: (c["check"].rsplit(":", 1)[0], int(c["check"].rsplit(":", 1)[1])))
    return checks


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
