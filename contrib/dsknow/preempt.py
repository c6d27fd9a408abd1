"""Which of DeepSpeed's config checks no config can fail (issue 28).

dataflow.py says which checks a config value decides. Some of those can
still never fail, because something DeepSpeed runs earlier has already
failed on every value that would fail them:

- an earlier check of the same value: ElasticityConfig refuses a
  model_parallel_size below 1 before DeepSpeedConfig asks the same of the
  same dict entry; _batch_assertion asserts micro_batch > 0 before
  _do_error_check asserts that it is not zero;
- the caller's test: DeepSpeedConfig calls compute_elastic_config only
  when elasticity_enabled() returned true, which needs the section and
  its `enabled`, so compute_elastic_config's own tests of them cannot fail;
- a statement every path runs first that cannot succeed: a name the
  module does not define (NameError);
- a type: a value a JSON parser gave (or a dict) that has been read by a
  string key or .get is a dict (compute_elastic_config's not-a-dict
  raise); a pydantic model's field whose type is an int or str enum holds
  one of its values (ZeroStageEnum: the stage is at most 3).

This module proves that by walking DeepSpeed's code symbolically, from
every function something outside DeepSpeed calls (the trace's edges), with
each parameter an unknown value:

    refine(program, decided, rel)   # decided: dataflow.py's verdicts

The walk inlines every call it can resolve to DeepSpeed's code, keeps each
value as the expression that computed it from the unknowns (self.x =
d.get("k", 1) is `$self.x` = `$P['k'].get('k', 1)`), and keeps the facts a
path has established: an assert that passed, the test of an `if` that
raised, the test of the branch taken, and what a callee's return implies
(elasticity_enabled returned true: `'elasticity' in $P` and
`$P['elasticity'].get('enabled', False)`). A branch whose test the facts
contradict is not taken. Anything it cannot follow forgets: a call it
does not inline forgets every fact about what the call is given (its
arguments, the object of a method, whatever those hold or may alias);
a loop forgets what its body changes before it walks the body; a
`try` or `with` keeps nothing its body established. Pure calls (len, isinstance,
dict.get, math, logging) forget nothing.

A check is "preempted" when the walk reached its function, and on every
path it took to the check the facts imply the check passes (or no path
reached it: every one ended or turned away first), and every way DeepSpeed
can call its function is a call the walk followed (or its function is one
the walk started from). coverage.py --check holds it to the corpus: a
file that triggers a check proved here proves the walk wrong.

Values are what a JSON config holds (dict, list, str, int, float, bool,
None); `x > 0` is taken to make x true, which holds for those.
"""
import ast
import builtins
import enum
import os
import sys
import inspect

from dataflow import EXTERNAL, defaults_of, own_nodes
from preempt_facts import (Fact, State, add, denoted, enum_field_values, implied, isdict,
                           negate, short, sym_of, syms_of, text_of)

MAX_DEPTH = 24
# PREEMPT_DEBUG=FILE:LINE,... (a prefix: deepspeed/runtime/config.py:7) prints, for
# each `if` there the walk reaches, its test and the facts it holds.
DEBUG = [d for d in os.environ.get("PREEMPT_DEBUG", "").split(",") if d]

PURE_BUILTINS = frozenset((
    "isinstance", "issubclass", "len", "int", "float", "str", "bool", "list", "tuple",
    "dict", "set", "frozenset", "sorted", "reversed", "min", "max", "sum", "abs", "round",
    "any", "all", "map", "filter", "zip", "enumerate", "range", "repr", "type", "hasattr",
    "getattr", "id", "hash", "format", "print", "callable", "divmod", "pow", "chr", "ord",
    "ValueError", "TypeError", "KeyError", "AssertionError", "RuntimeError",
    "NotImplementedError", "Exception", "AttributeError"))
# Methods that change nothing they are called on or given.
PURE_METHODS = frozenset((
    "get", "keys", "values", "items", "copy", "index", "count", "startswith", "endswith",
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "join", "format",
    "replace", "isdigit", "isnumeric", "is_integer", "__contains__", "find",
    "debug", "info", "warning", "warn", "error", "critical", "exception"))
# Methods that change the object they are called on, and only that.
STORE_METHODS = frozenset(("append", "extend", "insert", "update", "add", "setdefault",
                           "appendleft"))
# Modules whose functions change nothing they are given.
PURE_MODULES = ("math", "numpy", "json", "hjson", "copy", "re", "posixpath", "os.path",
                "logging", "packaging", "operator", "functools", "itertools", "enum",
                "typing", "base64")



class Ended(Exception):
    """The path ends here (a raise, a NameError)."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


class Walk:
    """The symbolic walk over one trace's program (dataflow.Program, solved)."""

    def __init__(self, program, rel=None):
        self.p = program
        self.rel = rel          # file -> the name a reason gives it
        self.counter = 0
        self.alias = {}         # symbol: {symbols whose object it may be}
        self.up = {}            # symbol: {symbols whose object holds its object}
        self.down = {}          # the reverse of up
        self.occ = {}           # (file, line): [(implied, why)]
        self.skipped = {}       # (file, line): why no path reached it
        self.inlined = set()    # id of each call node the walk followed
        self.walked = set()     # id of each Func the walk went into
        self.recording = True
        self.stack = []         # Funcs being walked (no recursion)
        self.loops = []         # per loop: the states that leave it (break)
        self.effects = []       # ("forget", symbols) / ("attr", key), in walk order
        self.cls_of = {}        # symbol: the class of the object it names
        self.json = set()       # symbols of values a JSON parser gave (or dicts)

    # -- symbols and forgetting ------------------------------------------------

    def fresh(self, base="v", like=(), part_of=(), holding=()):
        """A new symbol: for an object that may be one of like, that is
        held in each of part_of, that holds each of holding."""
        self.counter += 1
        s = "$%s%d" % (base, self.counter)
        for o in like:
            self.alias.setdefault(s, set()).add(o)
            self.alias.setdefault(o, set()).add(s)
        for c in part_of:
            self.hold(c, s)
        for e in holding:
            self.hold(s, e)
        return ast.Name(id=s, ctx=ast.Load())

    def hold(self, container, element):
        self.up.setdefault(element, set()).add(container)
        self.down.setdefault(container, set()).add(element)

    def closure(self, st, syms, deep):
        """syms, what they may be and what holds them; when deep (code we
        do not follow may change them), what they hold too."""
        out, todo = set(), list(syms)
        while todo:
            s = todo.pop()
            if s in out:
                continue
            out.add(s)
            todo.extend(self.alias.get(s, ()))
            todo.extend(self.up.get(s, ()))
            if deep:
                todo.extend(self.down.get(s, ()))
                prefix = s + "."
                for k, v in st.attrs.items():
                    if k.startswith(prefix):
                        todo.extend(denoted(v))
        return out

    def forget(self, st, syms, deep=True, exact=False):
        """Something may have changed the objects syms name (and what holds
        them; deep: what they hold): drop every fact and value that reads
        them."""
        gone = set(syms) if exact else self.closure(st, syms, deep)
        if not gone:
            return
        st.facts = {k: f for k, f in st.facts.items() if not (f.syms & gone)}
        for k in [k for k in st.attrs if k.split(".", 1)[0] in gone]:
            del st.attrs[k]

        def stale(v):
            return sym_of(v) is None and bool(syms_of(v) & gone)
        for k, v in list(st.attrs.items()):
            if stale(v):
                st.attrs[k] = self.fresh(part_of=denoted(v))
        for fr in st.frames:
            for k, v in list(fr.items()):
                if stale(v):
                    fr[k] = self.fresh(part_of=denoted(v))
        for r, paths in list(st.rets.items()):
            st.rets[r] = [({t: f for t, f in facts.items() if not (f.syms & gone)},
                           None if v is None or stale(v) else v) for facts, v in paths]
        self.effects.append(("forget", gone))

    def forget_all(self, st):
        syms = set()
        for f in st.facts.values():
            syms |= f.syms
        for k, v in st.attrs.items():
            syms.add(k.split(".", 1)[0])
            syms |= syms_of(v)
        self.forget(st, syms)

    def branch(self, st, test, truth, where):
        """The state a branch starts in, or (None, the fact that rules it
        out)."""
        s = sym_of(test)
        neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        if neg and sym_of(test.operand) in st.rets:
            return self.branch(st, test.operand, not truth, where)
        if s in st.rets:
            live = []
            for facts, value in st.rets[s]:
                if isinstance(value, ast.Constant) and bool(value.value) != truth:
                    continue
                live.append((facts, value))
            if not live:
                return None, Fact(ast.Constant(value=not truth), where)
            out = st.copy()
            common = set(live[0][0])
            for facts, _v in live[1:]:
                common &= set(facts)
            for t in sorted(common):
                out.facts.setdefault(t, live[0][0][t])
            if len(live) == 1 and live[0][1] is not None:
                add(out.facts, live[0][1] if truth else negate(live[0][1]), where)
            return out, None
        cond = test if truth else negate(test)
        against = implied(st.facts, negate(cond))
        if against is not None:
            return None, against
        out = st.copy()
        add(out.facts, cond, where)
        return out, None

    # -- merging -----------------------------------------------------------------

    def merge(self, states):
        states = [s for s in states if s is not None]
        if not states:
            return None
        if len(states) == 1:
            return states[0]
        out = states[0].copy()
        keep = set(out.facts)
        for s in states[1:]:
            keep &= set(s.facts)
        out.facts = {k: out.facts[k] for k in sorted(keep)}
        for k in sorted(set().union(*(s.attrs for s in states))):
            vals = [s.attrs.get(k) for s in states]
            out.attrs[k] = self._same(vals, states)
        for i, fr in enumerate(out.frames):
            for k in sorted(set().union(*(s.frames[i] for s in states))):
                fr[k] = self._same([s.frames[i].get(k) for s in states], states)
        for r in list(out.rets):
            if any(r not in s.rets or len(s.rets[r]) != len(out.rets[r]) for s in states):
                del out.rets[r]
                continue
            paths = []
            for i, (facts, v) in enumerate(out.rets[r]):
                keep = set(facts)
                for s in states[1:]:
                    keep &= set(s.rets[r][i][0])
                same = all(s.rets[r][i][1] is not None and v is not None and
                           text_of(s.rets[r][i][1]) == text_of(v) for s in states)
                paths.append(({k: facts[k] for k in sorted(keep)}, v if same else None))
            out.rets[r] = paths
        return out

    def _same(self, vals, states):
        texts = {text_of(v) if v is not None else None for v in vals}
        if len(texts) == 1 and None not in texts:
            return vals[0]
        like = set()
        for v in vals:
            if v is not None:
                like |= denoted(v)
        out = self.fresh(like=like)
        if all(v is not None and self.mapping(s, v) for v, s in zip(vals, states)):
            self.json.add(out.id)
        return out

    def mapping(self, st, v):
        """v is a JSON value or a dict, on this path."""
        return sym_of(v) in self.json or text_of(isdict(v)) in st.facts

    def read_key(self, st, v, where):
        """v[str] or v.get(...) is evaluated: a JSON value that allows it
        is a dict."""
        if self.mapping(st, v):
            add(st.facts, isdict(v), where)

    # -- expressions ---------------------------------------------------------------

    def global_value(self, f, name):
        mod = f.mod
        g = vars(mod) if mod is not None else {}
        if name in g:
            obj = g[name]
            if not (inspect.ismodule(obj) or inspect.isclass(obj) or callable(obj)) and \
                    isinstance(self.literal(obj, ""), ast.Name):
                # a module's data (a dict, a list): code may change it
                return ast.Name(id="$g_%s_%s" % (f.modname.replace(".", "_"), name), ctx=ast.Load())
            return self.literal(obj, "@%s.%s" % (f.modname, name))
        if hasattr(builtins, name):
            return ast.Name(id="@builtins." + name, ctx=ast.Load())
        raise Ended("`%s` is not defined in %s: NameError" % (name, f.modname))

    @staticmethod
    def literal(obj, label):
        if obj is None or type(obj) in (str, int, float, bool):
            return ast.Constant(value=obj)
        if isinstance(obj, enum.Enum) and type(obj.value) in (int, str) and \
                isinstance(obj, type(obj.value)):
            return ast.Constant(value=obj.value)   # (an int or str enum compares as its value)
        if isinstance(obj, tuple) and all(x is None or type(x) in (str, int, float, bool)
                                          for x in obj):
            return ast.Tuple(elts=[ast.Constant(value=x) for x in obj], ctx=ast.Load())
        return ast.Name(id=label, ctx=ast.Load())

    def runtime(self, f, node):
        """The object a name or dotted name outside DeepSpeed's locals is, or None."""
        if isinstance(node, ast.Name):
            if node.id in st_locals(f):
                return None
            g = vars(f.mod) if f.mod is not None else {}
            if node.id in g:
                return g[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.runtime(f, node.value)
            if base is None:
                return None
            try:
                return inspect.getattr_static(base, node.attr)
            except AttributeError:
                return None
        return None

    def lookup(self, st, f, name):
        fr = st.frames[-1]
        if name in fr:
            return fr[name]
        if name in f.locals or name in f.params:
            return self.fresh()   # assigned on a path the walk did not take
        g = f.parent
        while g is not None and getattr(g, "node", None) is not None:
            if name in g.locals or name in g.params:
                return self.fresh()   # a closure's outer name
            g = g.parent
        return self.global_value(f, name)

    def ev(self, st, f, node):
        t = type(node)
        if t is ast.Constant:
            return node
        if t is ast.Name:
            return self.lookup(st, f, node.id)
        if t is ast.Attribute:
            v = self.ev(st, f, node.value)
            s = sym_of(v)
            if s is not None:
                key = s + "." + node.attr
                cls = self.cls_of.get(s)
                if cls is not None and isinstance(inspect.getattr_static(cls, node.attr, None),
                                                  property):
                    return self.fresh()   # code runs to read it
                if key not in st.attrs:
                    st.attrs[key] = ast.Attribute(value=v, attr=node.attr, ctx=ast.Load())
                    values = enum_field_values(cls, node.attr) if cls is not None else None
                    if values is not None:
                        add(st.facts, ast.Compare(
                            left=st.attrs[key], ops=[ast.In()],
                            comparators=[ast.Tuple(elts=[ast.Constant(value=x) for x in values],
                                                   ctx=ast.Load())]),
                            "the type of %s.%s, an enum of %s" % (
                                cls.__name__, node.attr, ", ".join(map(repr, values))))
                return st.attrs[key]
            if isinstance(v, ast.Name) and v.id.startswith("@"):
                obj = self.runtime(f, node)
                if obj is not None:
                    return self.literal(obj, v.id + "." + node.attr)
            return ast.Attribute(value=v, attr=node.attr, ctx=ast.Load())
        if t is ast.Subscript:
            v, k = self.ev(st, f, node.value), self.ev(st, f, node.slice)
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                self.read_key(st, v, "the read `%s` at %s (of a JSON value, which only a dict"
                              " allows)" % (short(node), self.where(f, node)))
            return ast.Subscript(value=v, slice=k, ctx=ast.Load())
        if t is ast.Compare:
            left = self.ev(st, f, node.left)
            return ast.Compare(left=left, ops=node.ops,
                               comparators=[self.ev(st, f, c) for c in node.comparators])
        if t is ast.BinOp:
            return ast.BinOp(left=self.ev(st, f, node.left), op=node.op,
                             right=self.ev(st, f, node.right))
        if t is ast.UnaryOp:
            return ast.UnaryOp(op=node.op, operand=self.ev(st, f, node.operand))
        if t is ast.BoolOp:
            first = self.ev(st, f, node.values[0])
            rest = [self.maybe(st, f, v) for v in node.values[1:]]
            return ast.BoolOp(op=node.op, values=[first] + rest)
        if t is ast.IfExp:
            test = self.ev(st, f, node.test)
            a, b = self.maybe(st, f, node.body), self.maybe(st, f, node.orelse)
            return ast.IfExp(test=test, body=a, orelse=b)
        if t in (ast.Tuple, ast.List, ast.Set):
            elts = [self.ev(st, f, e) for e in node.elts]
            return t(elts=elts, ctx=ast.Load()) if t is not ast.Set else ast.Set(elts=elts)
        if t is ast.Dict:
            keys = [self.ev(st, f, k) if k is not None else None for k in node.keys]
            vals = [self.ev(st, f, v) for v in node.values]
            return ast.Dict(keys=keys, values=vals)
        if t is ast.JoinedStr:
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    self.ev(st, f, v.value)
            return self.fresh("s")
        if t is ast.Call:
            return self.call(st, f, node)
        if t is ast.NamedExpr:
            v = self.ev(st, f, node.value)
            self.assign(st, f, node.target, v)
            return v
        if t is ast.Starred:
            return ast.Starred(value=self.ev(st, f, node.value), ctx=ast.Load())
        # lambdas, comprehensions, await...: what they read may change
        # only through the calls they make
        syms = self.opaque_syms(st, f, node)
        if self.mutating(f, node):
            self.forget(st, syms)
        return self.fresh(like=syms)

    def maybe(self, st, f, node):
        """An operand that may not run: its value, what it may forget
        forgotten, no fact it establishes kept."""
        side = st.copy()
        mark = len(self.effects)
        try:
            v = self.ev(side, f, node)
        except Ended:
            v = self.fresh()
        self.replay_forgets(st, mark)
        return v

    def replay_forgets(self, st, mark):
        """Forget in st what the walk forgot or assigned since mark."""
        gone = set()
        for kind, what in self.effects[mark:]:
            if kind == "forget":
                gone |= what
            else:
                self.drop_attr(st, what)
                st.attrs[what] = self.fresh()
        if gone:
            self.forget(st, gone, exact=True)

    def drop_attr(self, st, key):
        """key ($obj.name) gets a new value: what was known of the old one
        by that name is not known of the new."""
        st.facts = {k: x for k, x in st.facts.items() if key not in k}
        for r, paths in list(st.rets.items()):
            st.rets[r] = [({t: x for t, x in facts.items() if key not in t},
                           None if v is None or key in text_of(v) else v) for facts, v in paths]

    def opaque_syms(self, st, f, node):
        syms = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                fr = st.frames[-1]
                if n.id in fr:
                    syms |= syms_of(fr[n.id])
        return syms

    def mutating(self, f, node):
        """Some call in node may change what it is given."""
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and not self.pure_callee(f, n.func):
                return True
        return False

    def loads_json(self, f, func):
        """func is json's or hjson's load or loads."""
        obj = self.runtime(f, func)
        mod = getattr(obj, "__module__", None) or ""
        return getattr(obj, "__name__", None) in ("load", "loads") and \
            (mod.split(".")[0] in ("json", "hjson"))

    def pure_callee(self, f, func):
        """A call of func changes nothing it is given (or holds)."""
        if isinstance(func, ast.Attribute) and func.attr in PURE_METHODS:
            return True
        if isinstance(func, ast.Name) and func.id in st_locals(f):
            return False
        obj = self.runtime(f, func)
        if isinstance(func, ast.Name) and obj is not None and \
                obj is getattr(builtins, func.id, None):
            return func.id in PURE_BUILTINS
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        for o in (obj, self.runtime(f, root)):
            if o is None:
                continue
            mod = o.__name__ if inspect.ismodule(o) else getattr(o, "__module__", None)
            if isinstance(mod, str) and any(mod == m or mod.startswith(m + ".")
                                            for m in PURE_MODULES):
                return True
        return False

    def call(self, st, f, node):
        r = self.p.resolve(f, node)
        if r is not None and r[0] is not None and r[0] not in self.stack and \
                len(self.stack) < MAX_DEPTH and isinstance(r[0].node, ast.FunctionDef) and \
                not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(r[0].node)):
            return self.inline(st, f, node, r[0], r[1])   # (a generator's body runs later)
        args = [self.ev(st, f, a) for a in node.args]
        kws = [ast.keyword(arg=k.arg, value=self.ev(st, f, k.value)) for k in node.keywords]
        recv = None
        if isinstance(node.func, ast.Attribute):
            recv = self.ev(st, f, node.func.value)
            fn = ast.Attribute(value=recv, attr=node.func.attr, ctx=ast.Load())
        else:
            fn = self.ev(st, f, node.func)
        given = set()
        for v in args + [k.value for k in kws] + ([recv] if recv is not None else []):
            given |= denoted(v)
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call) and \
                isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "super" \
                and "self" in st.frames[-1]:
            given |= denoted(st.frames[-1]["self"])   # super().m(): m may change self
        pure = self.pure_callee(f, node.func) and not any(
            self.mutating(f, a) for a in node.args if isinstance(a, ast.Lambda))
        if pure:
            if recv is not None and node.func.attr == "get":
                self.read_key(st, recv, "the call `%s` at %s (on a JSON value, which only a"
                              " dict allows)" % (short(node), self.where(f, node)))
            if self.loads_json(f, node.func):
                out = self.fresh("j", like=given)   # a new JSON value
                self.json.add(out.id)
                return out
            return ast.Call(func=fn, args=args, keywords=kws)
        if recv is not None and node.func.attr in STORE_METHODS:
            # lst.append(x), d.update(x): the object changes and holds x
            held = set()
            for v in args + [k.value for k in kws]:
                held |= denoted(v)
            self.forget(st, denoted(recv), deep=False)
            for r in denoted(recv):
                for o in held:
                    self.hold(r, o)
            return ast.Constant(value=None)
        if inspect.isclass(self.runtime(f, node.func)) and \
                issubclass(self.runtime(f, node.func), BaseException):
            return self.fresh("x")   # an exception, made to be raised
        # (code we do not follow may change what it is given, and any
        # module's data)
        self.forget(st, given | self.module_data(st))
        return self.fresh(like=given)

    def module_data(self, st):
        out = set()
        for fact in st.facts.values():
            out |= {x for x in fact.syms if x.startswith("$g_")}
        for fr in st.frames:
            for v in fr.values():
                out |= {x for x in syms_of(v) if x.startswith("$g_")}
        return out

    def inline(self, st, f, node, g, shift):
        """Walk g with node's arguments bound; its value."""
        if self.recording:
            self.inlined.add(id(node))
        frame = {}
        result_obj = None
        if shift == 1:
            fn = node.func
            if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and \
                    fn.value.id in ("self", "cls") and fn.value.id in st.frames[-1]:
                frame[g.positional[0]] = self.lookup(st, f, fn.value.id)
            elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Call) and \
                    "self" in st.frames[-1]:   # super().m(...)
                frame[g.positional[0]] = st.frames[-1]["self"]
            elif g.node.name == "__init__":   # a class called: a new object
                result_obj = self.fresh("o")
                cls = self.runtime(f, fn)
                if inspect.isclass(cls):
                    self.cls_of[result_obj.id] = cls
                frame[g.positional[0]] = result_obj
            else:   # a classmethod called on its class
                frame[g.positional[0]] = self.fresh("c")
        pos = g.positional[shift:]
        starred = False
        vals = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                starred = True
                v = self.ev(st, f, a.value)
                self.forget(st, denoted(v))
                continue
            vals.append(self.ev(st, f, a))
        extra = {}
        for k in node.keywords:
            v = self.ev(st, f, k.value)
            if k.arg is None:
                starred = True
                self.forget(st, denoted(v))
            else:
                extra[k.arg] = v
        for name, v in zip(pos, vals):
            frame[name] = v
        if len(vals) > len(pos) and g.vararg:
            frame[g.vararg] = ast.Tuple(elts=vals[len(pos):], ctx=ast.Load())
        leftover = set()
        for k, v in extra.items():
            if k in g.params and k != g.kwarg and k != g.vararg:
                frame[k] = v
            else:
                leftover |= denoted(v)
        if g.kwarg:
            frame[g.kwarg] = self.fresh(holding=leftover)
        defaults = defaults_of(g.node)
        for name in g.params:
            if name in frame:
                continue
            if name in defaults and not starred and isinstance(defaults[name], ast.Constant):
                frame[name] = defaults[name]
            else:
                frame[name] = self.fresh()
        if self.recording:
            self.walked.add(id(g))
        st.frames.append(frame)
        self.stack.append(g)
        returns = []
        try:
            end = self.block(st, g, g.node.body, returns)
        finally:
            self.stack.pop()
        if end is not None:
            returns.append((end, ast.Constant(value=None)))
        if not returns:
            st.frames.pop()
            raise Ended("%s always raises" % g.node.name)
        for s, _v in returns:
            s.frames.pop()
        merged = self.merge([s for s, _v in returns])
        st.facts, st.attrs = merged.facts, merged.attrs
        st.frames, st.rets = merged.frames, merged.rets
        if result_obj is not None:
            return result_obj
        texts = {text_of(v) for _s, v in returns}
        if len(texts) == 1:
            v = returns[0][1]
            return v
        r = self.fresh("r", like=set().union(*(denoted(v) for _s, v in returns)))
        st.rets[r.id] = [(dict(s.facts), v) for s, v in returns]
        return r

    # -- statements ------------------------------------------------------------------

    def assign(self, st, f, target, v):
        t = type(target)
        if t is ast.Name and target.id in f.globals:
            self.forget(st, self.module_data(st))   # (a module's global, assigned anew)
            return
        if t is ast.Name:
            if isinstance(v, (ast.List, ast.Dict, ast.Set)):
                v = self.fresh(holding=denoted(v))   # a new object, which may change
            st.frames[-1][target.id] = v
        elif t is ast.Attribute:
            obj = self.ev(st, f, target.value)
            s = sym_of(obj)
            if s is None:
                self.forget(st, denoted(obj), deep=False)
                return
            key = s + "." + target.attr
            # (an attribute assigned anew: what read the old one stays true
            # of the old value, which the facts name by expression)
            self.drop_attr(st, key)
            st.attrs[key] = v
            self.effects.append(("attr", key))
        elif t is ast.Subscript:
            obj = self.ev(st, f, target.value)
            self.ev(st, f, target.slice)
            self.forget(st, denoted(obj), deep=False)
            for c in denoted(obj):
                for e in denoted(v):
                    self.hold(c, e)
        elif t in (ast.Tuple, ast.List):
            if isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == len(target.elts) and \
                    not any(isinstance(e, ast.Starred) for e in target.elts):
                for e, x in zip(target.elts, v.elts):
                    self.assign(st, f, e, x)
            else:
                for e in target.elts:
                    self.assign(st, f, e.value if isinstance(e, ast.Starred) else e,
                                self.fresh(part_of=denoted(v)))
        elif t is ast.Starred:
            self.assign(st, f, target.value, self.fresh(part_of=denoted(v)))

    def record(self, f, node, implied, why):
        if self.recording:
            self.occ.setdefault((f.key[0], node.lineno), []).append((implied, why))

    def skip(self, f, stmts, why):
        if not self.recording:
            return
        for s in stmts:
            for n in [s] + list(own_nodes(s)):
                if isinstance(n, (ast.Raise, ast.Assert)):
                    self.skipped.setdefault((f.key[0], n.lineno), why)

    def block(self, st, f, body, returns):
        """Walk the statements; the state after them, or None if no path
        gets past them."""
        for i, s in enumerate(body):
            try:
                st = self.stmt(st, f, s, returns)
            except Ended as e:
                self.skip(f, body[i + 1:], "every path ends before it: %s (line %d)" % (
                    e.why, s.lineno))
                return None
            if st is None:
                self.skip(f, body[i + 1:], "no path gets past line %d" % s.lineno)
                return None
        return st

    def where(self, f, node):
        return "%s:%d" % (self.rel(f.key[0]) if self.rel else f.key[0], node.lineno)

    def stmt(self, st, f, s, returns):
        t = type(s)
        if t is ast.Expr:
            self.ev(st, f, s.value)
            return st
        if t is ast.Assign:
            v = self.ev(st, f, s.value)
            for tg in s.targets:
                self.assign(st, f, tg, v)
            return st
        if t is ast.AnnAssign:
            if s.value is not None:
                self.assign(st, f, s.target, self.ev(st, f, s.value))
            return st
        if t is ast.AugAssign:
            old = self.ev(st, f, s.target)
            v = ast.BinOp(left=old, op=s.op, right=self.ev(st, f, s.value))
            self.forget(st, denoted(old), deep=False)
            self.assign(st, f, s.target, v)
            return st
        if t is ast.Assert:
            test = self.ev(st, f, s.test)
            fact = implied(st.facts, test)
            self.record(f, s, fact is not None, self.because(fact, s))
            if isinstance(test, ast.Constant) and not test.value:
                raise Ended("`assert %s`" % text_of(s.test))
            add(st.facts, test, "the assert `%s` at %s" % (short(s.test), self.where(f, s)))
            return st
        if t is ast.Raise:
            if s.exc is not None:
                self.ev(st, f, s.exc)
            self.record(f, s, False, "")
            raise Ended("a raise")
        if t is ast.Return:
            v = self.ev(st, f, s.value) if s.value is not None else ast.Constant(value=None)
            returns.append((st, v))
            return None
        if t is ast.If:
            test = self.ev(st, f, s.test)
            here = self.where(f, s)
            if DEBUG and any(here.startswith(d) for d in DEBUG):
                print("preempt: %s `%s` with %s" % (here, text_of(test), sorted(st.facts)),
                      file=sys.stderr)
            where = "the test `%s` at %s" % (short(s.test), self.where(f, s.test))
            ends = []
            for truth, body in ((True, s.body), (False, s.orelse)):
                start, against = self.branch(st, test, truth, where)
                if start is None:
                    self.skip(f, body, self.ruled_out(against, truth, s))
                    continue
                ends.append(self.block(start, f, body, returns) if body else start)
            return self.merge(ends)
        if t in (ast.For, ast.AsyncFor, ast.While):
            return self.loop(st, f, s, returns)
        if t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            return self.try_(st, f, s, returns)
        if t in (ast.With, ast.AsyncWith):
            for it in s.items:
                v = self.ev(st, f, it.context_expr)
                if it.optional_vars is not None:
                    self.assign(st, f, it.optional_vars, self.fresh(like=denoted(v)))
            mark = len(self.effects)
            before = st.copy()
            end = self.block(st.copy(), f, s.body, returns)
            # a context manager may swallow what the body raised
            self.replay_forgets(before, mark)
            self.havoc_names(before, f, s.body)
            return self.merge([end, before])
        if t in (ast.Pass, ast.Global, ast.Nonlocal):
            return st
        if t is ast.Break:
            if self.loops:
                self.loops[-1].append(st)
            return None
        if t is ast.Continue:
            return None
        if t in (ast.Import, ast.ImportFrom):
            for a in s.names:
                st.frames[-1][(a.asname or a.name).split(".")[0]] = self.fresh("m")
            return st
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            st.frames[-1][s.name] = self.fresh("d")
            return st
        if t is ast.Delete:
            for tg in s.targets:
                if isinstance(tg, ast.Name):
                    st.frames[-1].pop(tg.id, None)
                else:
                    self.forget(st, denoted(self.ev(st, f, tg.value)))
            return st
        # anything else (match): forget everything
        self.forget_all(st)
        self.havoc_names(st, f, [s])
        return st

    def havoc_names(self, st, f, body):
        for s in body:
            for n in [s] + list(own_nodes(s)):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    st.frames[-1][n.id] = self.fresh()
                elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                    try:
                        obj = self.ev(st.copy(), f, n.value)
                    except Ended:
                        continue
                    if sym_of(obj):
                        key = sym_of(obj) + "." + n.attr
                        self.drop_attr(st, key)
                        st.attrs[key] = self.fresh()
                    else:
                        self.forget(st, syms_of(obj))

    def effects_of(self, st, f, body):
        """What walking body (any number of times) may forget: walked once,
        recording nothing."""
        saved, self.recording = self.recording, False
        mark = len(self.effects)
        side = st.copy()
        try:
            self.block(side, f, body, [])
        except Ended:
            pass
        finally:
            self.recording = saved
        return mark

    def loop(self, st, f, s, returns):
        if isinstance(s, ast.While):
            self.ev(st, f, s.test)
        else:
            it = self.ev(st, f, s.iter)
        self.loops.append([])
        mark = self.effects_of(st, f, s.body)
        self.loops.pop()
        self.replay_forgets(st, mark)
        self.havoc_names(st, f, s.body)
        if not isinstance(s, ast.While):
            self.assign(st, f, s.target, self.fresh(part_of=denoted(it)))
        self.loops.append([])
        end = self.block(st.copy(), f, s.body, returns)
        breaks = self.loops.pop()
        after = st
        if s.orelse:
            after = self.block(st.copy(), f, s.orelse, returns)
        return self.merge([after] + breaks + ([end] if end is not None else []))

    def try_(self, st, f, s, returns):
        before = st.copy()
        mark = len(self.effects)
        end = self.block(st.copy(), f, s.body, returns)
        if end is not None and s.orelse:
            end = self.block(end, f, s.orelse, returns)
        caught = before.copy()
        self.replay_forgets(caught, mark)
        self.havoc_names(caught, f, s.body)
        ends = [end]
        for h in s.handlers:
            hs = caught.copy()
            if h.name:
                hs.frames[-1][h.name] = self.fresh("e")
            ends.append(self.block(hs, f, h.body, returns))
        out = self.merge(ends)
        if s.finalbody and out is not None:
            out = self.block(out, f, s.finalbody, returns)
        return out

    # -- reasons ---------------------------------------------------------------------

    def because(self, fact, s):
        if fact is None:
            return ""
        return "`%s` holds on every path to it, given %s" % (short(s.test), fact.where)

    def ruled_out(self, against, truth, s):
        return "it is reached only when `%s` (line %d) is %s, which no path to it allows," \
            " given %s" % (short(s.test), s.lineno, "true" if truth else "false", against.where)

    # -- entry -------------------------------------------------------------------------

    def entry(self, g):
        st = State()
        frame = {}
        for name in g.params:
            frame[name] = self.fresh("self" if name in ("self", "cls") else "p")
            if name in ("self", "cls") and g.owner is not None:
                self.cls_of[frame[name].id] = g.owner
        st.frames.append(frame)
        self.walked.add(id(g))
        self.stack.append(g)
        try:
            self.block(st, g, g.node.body, [])
        except Ended:
            pass
        finally:
            self.stack.pop()


def st_locals(f):
    return getattr(f, "locals", set()) | getattr(f, "params", set())


def refine(program, decided, rel=None):
    """Mark "preempted" the checks of decided ({(file, line): (kind, why)},
    dataflow.py's) the walk proves no config can fail. program: a solved
    dataflow.Program; rel(file) -> the name a reason gives it."""
    w = Walk(program, rel)
    funcs = {}
    for key, f in sorted(program.funcs.items()):
        funcs.setdefault(id(f), (key, f))
    # Where each function is called from: the calls the index resolves to
    # it (dataflow.py resolved them), and the trace's callers.
    sites = {}
    for call, _enc, (g, _shift) in program.resolved:
        sites.setdefault(id(g), set()).add(id(call))
    explained = program.explained
    entries = []
    for fid, (key, f) in sorted(funcs.items(), key=lambda kv: kv[1][0]):
        callers = program.edges.get(key, set())
        if any(c is EXTERNAL or fid not in explained.get(c, ()) for c in callers):
            entries.append(f)
    for f in entries:
        if f.node is not None and not isinstance(f.node, ast.Module):
            w.entry(f)
    entry_ids = {id(f) for f in entries}
    owners = {}
    for fid, (key, f) in sorted(funcs.items(), key=lambda kv: kv[1][0]):
        if f.node is None or isinstance(f.node, ast.Module):
            continue
        for n in own_nodes(f.node):
            if isinstance(n, (ast.Raise, ast.Assert)):
                owners.setdefault((key[0], n.lineno), f)
    out = dict(decided)
    for (fname, line), (kind, why) in sorted(decided.items()):
        if kind != "config":
            continue
        owner = owners.get((fname, line))
        if owner is None or id(owner) not in w.walked:
            continue
        if id(owner) not in entry_ids:
            if any(cid not in w.inlined for cid in sites.get(id(owner), ())):
                continue
        occ = w.occ.get((fname, line), [])
        if occ:
            if not all(ok for ok, _why in occ):
                continue
            out[(fname, line)] = ("preempted", occ[0][1])
        elif (fname, line) in w.skipped:
            out[(fname, line)] = ("preempted", w.skipped[(fname, line)])
    return out
