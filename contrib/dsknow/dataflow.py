"""Which of DeepSpeed's checks a config value decides (issue 28).

trace.py lists every `raise` and `assert` in the functions a parse calls,
and in the functions those call: the code that can run. Not every one of
them is a check *of the config*: `assert cdb is not None` in comm.py asks
whether the communication backend is up, `if "WORLD_SIZE" in os.environ`
asks the environment. This module tells them apart by data flow, read
from DeepSpeed's source with `ast` at the release traced, with the trace's
own record of who called whom:

    decisions(functions, edges, root) -> {(file, check line): (kind, why)}

kind is "config" (a value from the config decides it), "other" (the test
that decides whether it fails reads no value derived from the config: the
machine, the environment or DeepSpeed's own state decides) or "gate" (its
own test reads the config, but it is reached only through a test that
reads none: the elastic launcher's environment variable, an argument
DeepSpeedConfig always passes the same way). why says which test, at
which line, in words.

Taint, flow-insensitive and context-insensitive (it errs towards "config"):

- Sources: the parameters of a function something outside DeepSpeed calls
  (the harness calling DeepSpeedConfig(config, mpu=...) and a scheduler's
  constructor, pydantic calling a validator), except the ones that are not
  the config there (NOT_CONFIG: mpu, mesh_device, the optimizer the
  engine built). A function called from a line where no call to it can be
  read (getattr, a decorator) counts as called from outside.
- A parameter is tainted when some call site the parse can reach passes it
  a tainted value (positional, keyword, *args, **kwargs).
- A local name is tainted when anything assigned to it is (=, +=, for,
  with, :=, except ... as after a tainted try body, a method of it called
  with a tainted argument, a closure's outer name); `self.x` when some
  assignment `self.x = ...` in its class (or a base or subclass) is, or
  when DeepSpeed never assigns it (a pydantic field); a module's global
  when a function assigns it (`global`) a tainted value.
- An expression is tainted when it reads a tainted name, or calls a
  DeepSpeed function whose return value is tainted.

A check is "config" unless its deciding test (an assert's test; for a
raise, the innermost enclosing if/elif/while test or for iterable, or the
try body of its except clause) is untainted ("other"), or it or a test
further out tests a parameter every call gives one constant that makes
it false ("other": `if return_microbatch:` where no call passes it), or
some enclosing test further out is untainted and the corpus ran it but
never got past it ("gate"). A raise with no enclosing test
is decided by its function being called: "config". The classification is
checked against the corpus by coverage.py: a check some config file
triggers is "config", or the analysis is wrong.

DATAFLOW_DEBUG=NAME,... (in trace.py's environment) prints what the
analysis found for the functions so named (tainted names, return value,
callers) on standard error.
"""
import ast
import inspect
import os

# Parameters of an entry point that are not the config: DeepSpeedConfig's
# mpu and mesh_device, and the optimizer the engine passes a scheduler.
NOT_CONFIG = frozenset(("mpu", "mesh_device", "optimizer"))
EXTERNAL = None   # an edge's caller outside DeepSpeed


def _unwrap(obj):
    obj = getattr(obj, "__func__", obj)
    return getattr(obj, "__wrapped__", obj)


class Func:
    """One function (or a module's body: node is the Module) and its taint."""

    def __init__(self, key, node, owner, mod, parent):
        self.key, self.node, self.owner, self.mod = key, node, owner, mod
        self.parent = parent
        self.modname = getattr(mod, "__name__", "?")
        a = node.args if not isinstance(node, ast.Module) else None
        self.positional = [x.arg for x in (a.posonlyargs + a.args)] if a else []
        self.vararg = a.vararg.arg if a and a.vararg else None
        self.kwarg = a.kwarg.arg if a and a.kwarg else None
        self.params = (set(self.positional) | {x.arg for x in a.kwonlyargs}) if a else set()
        if self.vararg:
            self.params.add(self.vararg)
        if self.kwarg:
            self.params.add(self.kwarg)
        self.locals, self.globals = set(), set()
        for n in own_nodes(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.locals.add(n.id)
            elif isinstance(n, ast.Global):
                self.globals.update(n.names)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                self.locals.add(n.name)
        self.locals -= self.globals
        if isinstance(node, ast.Module):   # its names are the module's globals
            self.globals, self.locals = self.locals | self.globals, set()
        self.tainted = set()      # names
        self.returns = False      # its return value is tainted
        self.const = {}           # parameter: the one constant every call gives it


def own_nodes(node):
    """node's body, not the functions, classes and lambdas it defines."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


class Program:
    """The functions, their call sites and the taint, solved to a fixpoint."""

    def __init__(self, functions, edges, parse, modules):
        """functions: {key: (FunctionDef, function or None, owner class or
        None, module)}; edges: {callee key: {(file, line) or EXTERNAL}};
        parse(file) -> the module's ast; modules: {file: module}."""
        self.edges, self.parse, self.modules = edges, parse, modules
        self.funcs = {}
        self.by_node = {}
        for key, (node, _fn, owner, mod) in functions.items():
            self._add(key, node, owner, mod)
        self.attr_tainted, self.attr_assigned = set(), set()
        self.global_tainted = set()
        self.changed = True

    def _add(self, key, node, owner, mod):
        if id(node) in self.by_node:
            self.funcs[key] = self.by_node[id(node)]
            return
        f = Func(key, node, owner, mod, None)
        self.funcs[key] = f
        self.by_node[id(node)] = f

    def module_func(self, fname):
        tree = self.parse(fname)
        f = self.by_node.get(id(tree))
        if f is None:
            f = Func((fname, 0, "<module>"), tree, None, self.modules.get(fname), None)
            self.by_node[id(tree)] = f
        return f

    # -- where each node is ------------------------------------------------

    def index(self):
        """(file, line) -> [(Call node, enclosing Func)]; each Func's
        enclosing one (closures); parent maps for the guards."""
        self.calls = {}
        self.parents = {}
        files = {k[0] for k in self.funcs}
        for callers in self.edges.values():
            files.update(c[0] for c in callers if c is not EXTERNAL)
        for fname in sorted(files):
            tree = self.parse(fname)
            if tree is None:
                continue
            self._walk(fname, tree, self.module_func(fname))

    def _walk(self, fname, node, enclosing):
        for child in ast.iter_child_nodes(node):
            self.parents[id(child)] = node
            inner = enclosing
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                f = self.by_node.get(id(child))
                if f is None:
                    f = _Opaque(enclosing)
                elif not isinstance(node, ast.ClassDef) and enclosing.node is not None \
                        and not isinstance(enclosing.node, ast.Module):
                    f.parent = enclosing   # a closure: its free names are enclosing's
                inner = f
            elif isinstance(child, ast.Call):
                # (every line it spans: a frame's line at a call of several)
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    self.calls.setdefault((fname, line), []).append((child, enclosing))
            self._walk(fname, child, inner)

    # -- taint -------------------------------------------------------------

    def mark_all(self, f, skip=()):
        for p in f.params:
            if p not in ("self", "cls") and p not in skip:
                self.taint_name(f, p)

    def taint_name(self, f, name):
        if name in f.globals or (name not in f.locals and name not in f.params
                                 and f.parent is None):
            key = (f.modname, name)
            if key not in self.global_tainted:
                self.global_tainted.add(key)
                self.changed = True
            return
        if name not in f.locals and name not in f.params and f.parent is not None:
            return self.taint_name(f.parent, name)
        if name not in f.tainted:
            f.tainted.add(name)
            self.changed = True

    def classes_of(self, owner):
        out = list(owner.__mro__)
        todo = list(owner.__subclasses__()) if hasattr(owner, "__subclasses__") else []
        while todo:
            k = todo.pop()
            if k not in out:
                out.append(k)
                todo.extend(k.__subclasses__())
        return out

    def attr(self, owner, name):
        ks = self.classes_of(owner)
        if any((k, name) in self.attr_tainted for k in ks):
            return True
        if any((k, name) in self.attr_assigned for k in ks):
            return False
        prop = None
        for k in owner.__mro__:
            if name in vars(k):
                prop = vars(k)[name]
                break
        if isinstance(prop, property) and prop.fget is not None:
            g = self.func_of(_unwrap(prop.fget))
            return g.returns if g is not None else True
        if prop is not None and inspect.isfunction(_unwrap(prop)):
            return False   # a method: what calling it gives is decided at the call
        return True        # never assigned here: a pydantic field, the config's

    def func_of(self, fn):
        c = getattr(fn, "__code__", None)
        if c is None:
            return None
        return self.funcs.get((c.co_filename, c.co_firstlineno, c.co_name))

    def lookup(self, f, n):
        g = f
        while g is not None:
            if n in g.tainted:
                return True
            if n in g.globals:
                return (g.modname, n) in self.global_tainted
            if n in g.locals or n in g.params:
                return False
            if g.parent is None:
                return (g.modname, n) in self.global_tainted
            g = g.parent
        return False

    def expr(self, f, node):
        if node is None:
            return False
        t = type(node)
        if t is ast.Name:
            # (a method's self or cls as a whole: the config, as far as we know)
            return self.owner_of(f, node) is not None or self.lookup(f, node.id)
        if t is ast.Constant:
            return False
        if t is ast.Attribute:
            v = node.value
            owner = self.owner_of(f, v)
            if owner is not None:
                return self.attr(owner, node.attr)
            return self.expr(f, v)
        if t is ast.Call:
            if any(self.expr(f, a) for a in node.args) or \
                    any(self.expr(f, k.value) for k in node.keywords):
                return True
            g = self.resolve(f, node)
            if g is not None:
                return g[0].returns
            return self.expr(f, node.func)
        return any(self.expr(f, c) for c in ast.iter_child_nodes(node))

    def stmts(self, f, body):
        """Some expression of the statements reads a tainted value."""
        for s in body:
            for n in [s] + list(own_nodes(s)):
                if isinstance(n, ast.expr) and self.expr(f, n):
                    return True
        return False

    def mark(self, f, target):
        t = type(target)
        if t is ast.Name:
            self.taint_name(f, target.id)
        elif t in (ast.Tuple, ast.List):
            for e in target.elts:
                self.mark(f, e)
        elif t is ast.Starred:
            self.mark(f, target.value)
        elif t is ast.Attribute:
            v = target.value
            owner = self.owner_of(f, v)
            if owner is not None:
                if (owner, target.attr) not in self.attr_tainted:
                    self.attr_tainted.add((owner, target.attr))
                    self.changed = True
            else:
                self.mark(f, v)
        elif t is ast.Subscript:
            self.mark(f, target.value)

    def owner_of(self, f, v):
        """The class whose instance (or itself) v is, when v is the self
        or cls of a method (or of the method a closure is in)."""
        if not (isinstance(v, ast.Name) and v.id in ("self", "cls")):
            return None
        g = f
        while g is not None:
            if v.id in g.params:
                return g.owner
            if v.id in g.locals or v.id in g.globals:
                return None
            g = g.parent
        return None

    def assigned(self, f, target):
        owner = self.owner_of(f, target.value) if isinstance(target, ast.Attribute) else None
        if owner is not None:
            self.attr_assigned.add((owner, target.attr))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                self.assigned(f, e)

    def propagate(self, f):
        for n in own_nodes(f.node):
            t = type(n)
            if t is ast.Assign:
                if self.expr(f, n.value):
                    for tg in n.targets:
                        self.mark(f, tg)
            elif t in (ast.AnnAssign, ast.AugAssign):
                if n.value is not None and self.expr(f, n.value):
                    self.mark(f, n.target)
            elif t in (ast.For, ast.AsyncFor):
                if self.expr(f, n.iter):
                    self.mark(f, n.target)
            elif t in (ast.With, ast.AsyncWith):
                for it in n.items:
                    if it.optional_vars is not None and self.expr(f, it.context_expr):
                        self.mark(f, it.optional_vars)
            elif t is ast.NamedExpr:
                if self.expr(f, n.value):
                    self.mark(f, n.target)
            elif t is ast.comprehension:
                if self.expr(f, n.iter):
                    self.mark(f, n.target)
            elif t is ast.Try:
                if any(h.name for h in n.handlers) and self.stmts(f, n.body):
                    for h in n.handlers:
                        if h.name:
                            self.taint_name(f, h.name)
            elif t is ast.Call:
                fn = n.func
                if isinstance(fn, ast.Attribute) and (
                        any(self.expr(f, a) for a in n.args)
                        or any(self.expr(f, k.value) for k in n.keywords)):
                    self.mark(f, fn.value)   # lst.append(x), d.update(x)
            elif t is ast.Return:
                if not f.returns and n.value is not None and self.expr(f, n.value):
                    f.returns = True
                    self.changed = True

    # -- calls ---------------------------------------------------------------

    def resolve(self, f, call):
        """(Func, how many leading parameters the call does not pass) of a
        DeepSpeed function call calls, or None."""
        mod = f.mod
        if mod is None:
            return None
        g = vars(mod)
        fn, obj, shift = call.func, None, 0
        if isinstance(fn, ast.Name):
            obj = g.get(fn.id)
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Call) \
                and isinstance(fn.value.func, ast.Name) and fn.value.func.id == "super":
            # super().m(...) / super(C, self).m(...): the next class's m
            owner = self.owner_of(f, ast.Name(id="self")) or self.owner_of(f, ast.Name(id="cls"))
            if owner is None:
                return None
            for k in owner.__mro__[1:]:
                if fn.attr in vars(k):
                    obj, shift = _unwrap(vars(k)[fn.attr]), 1
                    break
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
            base = f.owner if fn.value.id in ("self", "cls") and fn.value.id in f.params \
                else g.get(fn.value.id)
            if base is not None:
                try:
                    obj = inspect.getattr_static(base, fn.attr)
                except (AttributeError, TypeError):
                    obj = None
                if inspect.isclass(base) or fn.value.id in ("self", "cls"):
                    if isinstance(obj, staticmethod):
                        obj = obj.__func__
                    elif isinstance(obj, classmethod):
                        obj, shift = obj.__func__, 1
                    elif inspect.isfunction(obj) and fn.value.id in ("self", "cls"):
                        shift = 1
        if obj is None:
            return None
        if inspect.isclass(obj):
            init = None
            for k in obj.__mro__:
                if "__init__" in vars(k) and inspect.isfunction(vars(k)["__init__"]):
                    init = vars(k)["__init__"]
                    break
            obj, shift = init, 1
            if obj is None:
                return None
        target = self.func_of(_unwrap(obj))
        return (target, shift) if target is not None else None

    def bind(self, f, call, g, shift):
        pos = g.positional[shift:]
        i = 0
        for a in call.args:
            if isinstance(a, ast.Starred):
                if self.expr(f, a.value):
                    self.mark_all(g)
                continue
            if self.expr(f, a):
                if i < len(pos):
                    self.taint_name(g, pos[i])
                elif g.vararg:
                    self.taint_name(g, g.vararg)
            i += 1
        for k in call.keywords:
            if not self.expr(f, k.value):
                continue
            if k.arg is None:
                self.mark_all(g)
            elif k.arg in g.params:
                self.taint_name(g, k.arg)
            elif g.kwarg:
                self.taint_name(g, g.kwarg)

    def sources(self, explained):
        """Parameters something outside DeepSpeed passes, or a call no
        call site explains: tainted (but NOT_CONFIG). explained: {(file,
        line): {id of a Func a call there resolves to}}."""
        called_somewhere = set()
        for ids in explained.values():
            called_somewhere |= ids
        for key, f in sorted(self.funcs.items()):
            callers = self.edges.get(key)
            if callers is None:
                # not called in the trace: its call sites decide, if any
                if id(f) not in called_somewhere:
                    self.mark_all(f)
                continue
            for c in callers:
                if c is EXTERNAL:
                    self.mark_all(f, NOT_CONFIG)
                elif id(f) not in explained.get(c, ()):
                    self.mark_all(f)

    def constants(self, resolved, explained):
        """f.const: {parameter: value} of each parameter every call leaves
        at its constant default or passes one and the same constant, where
        every call the trace saw is one of those calls (none from outside
        DeepSpeed) and the function never assigns the parameter."""
        sites = {}
        for call, _enc, (g, shift) in resolved:
            sites.setdefault(id(g), []).append((call, shift))
        for key, f in sorted(self.funcs.items()):
            callers = self.edges.get(key)
            if not callers or EXTERNAL in callers or not sites.get(id(f)) or \
                    any(id(f) not in explained.get(c, ()) for c in callers):
                continue
            defaults = defaults_of(f.node)
            for name in f.positional + [x.arg for x in f.node.args.kwonlyargs]:
                if name in f.locals or name in ("self", "cls"):
                    continue
                values = set()
                for call, shift in sites[id(f)]:
                    v = _bound(call, f, shift, name, defaults.get(name))
                    if not isinstance(v, ast.Constant):
                        break
                    values.add(repr(v.value))
                else:
                    if len(values) == 1:
                        f.const[name] = ast.literal_eval(values.pop())

    def solve(self):
        self.index()
        everyone = [f for f in {id(f): f for f in self.by_node.values()}.values()
                    if not isinstance(f, _Opaque)]
        for f in everyone:   # (before any taint: an attribute never assigned is the config's)
            for n in own_nodes(f.node):
                if isinstance(n, ast.Assign):
                    for tg in n.targets:
                        self.assigned(f, tg)
                elif isinstance(n, (ast.AnnAssign, ast.AugAssign)):
                    self.assigned(f, n.target)
        # each call the index resolves, once; (file, line): {id of each
        # Func a call there resolves to} (preempt.py reads both too)
        self.resolved, self.explained, seen = [], {}, set()
        resolved, explained = self.resolved, self.explained
        for loc in sorted(self.calls):
            for call, enc in self.calls[loc]:
                r = self.resolve(enc, call)
                if r is None:
                    continue
                explained.setdefault(loc, set()).add(id(r[0]))
                if id(call) not in seen:
                    seen.add(id(call))
                    resolved.append((call, enc, r))
        self.sources(explained)
        self.constants(resolved, explained)
        rounds = 0
        while self.changed:
            self.changed = False
            rounds += 1
            for f in everyone:
                self.propagate(f)
            for call, enc, (g, shift) in resolved:
                self.bind(enc, call, g, shift)
        return rounds

    # -- the checks ----------------------------------------------------------

    def guards(self, node):
        """(test node or statement list, line) of each test that decides
        whether node runs, innermost first, up to its function."""
        out = []
        child = node
        parent = self.parents.get(id(child))
        while parent is not None and not isinstance(
                parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.ClassDef)):
            if isinstance(parent, ast.If) and child is not parent.test:
                out.append((parent.test, parent.test.lineno))
            elif isinstance(parent, ast.While) and child is not parent.test:
                out.append((parent.test, parent.test.lineno))
            elif isinstance(parent, (ast.For, ast.AsyncFor)) and child is not parent.iter:
                out.append((parent.iter, parent.iter.lineno))
            elif isinstance(parent, ast.ExceptHandler):
                tr = self.parents.get(id(parent))
                out.append((tr.body, tr.body[0].lineno))
                child, parent = tr, self.parents.get(id(tr))
                continue
            elif isinstance(parent, ast.Try) and child in parent.orelse:
                out.append((parent.body, parent.body[0].lineno))
            child, parent = parent, self.parents.get(id(parent))
        return out

    def before(self, node):
        """The statements before node in its block."""
        parent = self.parents.get(id(node))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                return block[:[id(s) for s in block].index(id(node))]
        return []

    def tested(self, f, test):
        return self.stmts(f, test) if isinstance(test, list) else self.expr(f, test)

    def decide(self, f, check, lines, executed):
        """(kind, why) of one raise/assert node of f."""
        if isinstance(check, ast.Assert) and not isinstance(check.test, ast.Constant):
            deciding, gates = (check.test, check.test.lineno), self.guards(check)
        else:
            g = self.guards(check)
            if not g:
                # No test encloses it: what runs before it in its block (an
                # early return) decides, or the call itself.
                before = self.before(check)
                if before:
                    g = [(before, before[0].lineno)]
                elif any(p in f.tainted for p in f.params):
                    return "config", ""
                else:
                    return "other", "it is the first statement of %s, and no value derived" \
                        " from the config is passed to it" % getattr(f.node, "name", "the module")
            deciding, gates = g[0], g[1:]
        if not self.tested(f, deciding[0]) and isinstance(deciding[0], list) and not isinstance(
                self.parents.get(id(deciding[0][0])), ast.Try):
            return "other", "the statements before it in its block (lines %d-%d), which decide" \
                " whether it is reached, read no value derived from the config" % (
                    deciding[0][0].lineno, deciding[0][-1].end_lineno)
        if not self.tested(f, deciding[0]):
            return "other", "the test that decides it, `%s` (line %d), reads no value derived from the config" % (
                _text(deciding, lines), deciding[1])
        # A test of a parameter every call gives the same constant, which
        # makes it false: nothing reaches the check.
        for gate in [deciding] + gates:
            held = _constant(gate[0], f.const)
            if held is not None and not held:
                name = ", ".join(sorted(n.id for n in ast.walk(gate[0]) if isinstance(n, ast.Name)))
                return "other", "it is reached only when `%s` (line %d) holds, and every call of" \
                    " %s gives %s the same constant, which makes it false" % (
                        _text(gate, lines), gate[1], getattr(f.node, "name", "it"), name)
        # An untainted test further out decides whether it is reached. That
        # alone proves nothing (world_size > 0 holds on every machine): only
        # when the corpus ran that test and never got past it to this check.
        if (f.key[0], deciding[1]) in executed:
            return "config", ""
        for gate in gates:
            if (f.key[0], gate[1]) in executed and not self.tested(f, gate[0]):
                return "gate", "it is reached only when `%s` (line %d) holds, which reads no" \
                    " value derived from the config and held in no run of the corpus" % (
                        _text(gate, lines), gate[1])
        return "config", ""


def defaults_of(node):
    """{parameter: its default expression} of a function's ast."""
    a = node.args
    positional = a.posonlyargs + a.args
    out = dict(zip([x.arg for x in positional[len(positional) - len(a.defaults):]], a.defaults))
    out.update((x.arg, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
    return out


def _bound(call, g, shift, name, default):
    """The expression call passes g's parameter name (its default when it
    passes none), or None when a *args or **kwargs may pass it."""
    if any(isinstance(x, ast.Starred) for x in call.args) or \
            any(k.arg is None for k in call.keywords):
        return None
    pos = g.positional[shift:]
    if name in pos and pos.index(name) < len(call.args):
        return call.args[pos.index(name)]
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return default


def _constant(test, const):
    """The truth of test when it is a constant or a parameter's constant
    (or `not` of one), else None."""
    if isinstance(test, list):
        return None
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id in const:
        return bool(const[test.id])
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _constant(test.operand, const)
        return None if inner is None else not inner
    return None


class _Opaque:
    """A function outside the analysis (not reached): its names are its own."""

    def __init__(self, parent):
        self.node = None
        self.parent, self.tainted, self.locals, self.params = parent, set(), set(), set()
        self.globals, self.modname, self.owner, self.mod = set(), parent.modname, None, parent.mod


def _text(guard, lines):
    """The test as DeepSpeed's source has it (normalized by ast.unparse),
    cut to 100 characters; a statement list by its first line."""
    node, line = guard
    if isinstance(node, list):
        return lines[line - 1].strip()[:80] + (" ..." if len(node) > 1 else "")
    text = ast.unparse(node)
    return text if len(text) <= 100 else text[:97] + "..."


def decisions(functions, edges, parse, modules, sources, executed):
    """({(file, line): (kind, why)} of every raise/assert in functions'
    own bodies, the solved Program) (functions, edges, parse, modules: as
    Program takes; sources(file) -> its lines; executed: the (file,
    line)s any run of the corpus executed)."""
    p = Program(functions, edges, parse, modules)
    p.solve()
    dbg = os.environ.get("DATAFLOW_DEBUG")
    if dbg:
        import sys
        for key, f in sorted(p.funcs.items()):
            if key[2] in dbg.split(","):
                print("dataflow:", key, "tainted", sorted(f.tainted), "returns", f.returns,
                      "callers", sorted(map(str, edges.get(key, ()))), file=sys.stderr)
    out = {}
    for key, (node, _fn, _owner, _mod) in sorted(functions.items(), key=lambda kv: kv[0]):
        f = p.funcs[key]
        for n in own_nodes(node):
            if isinstance(n, (ast.Raise, ast.Assert)):
                out[(key[0], n.lineno)] = p.decide(f, n, sources(key[0]), executed)
    return out, p
