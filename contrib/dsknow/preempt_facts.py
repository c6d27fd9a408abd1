"""What a path of preempt.py's walk knows, and what that implies (issue 28).

A value is an expression (ast) over symbols: `$self3` an object the walk
made up, `$p2` a parameter it does not know, `$v53` a value it merged or
could not follow; `@mod.name` an object of a module it does not change.
A fact is such an expression known to be true on the path (its text is
its key). implied(facts, test) finds the fact that makes test true: the
test itself; `x > 0`, `x >= 1`, `not x < 1` for x itself; `x > d` for
`x > c` (d >= c); `x in (numbers)` for a comparison of x every one of
them passes.
"""
import ast
import enum
import inspect
import re

SYM = re.compile(r"\$[A-Za-z_][A-Za-z_0-9]*")


class Fact:
    """A value known true on a path (node), and what established it, in
    words (where)."""
    __slots__ = ("node", "text", "syms", "where")

    def __init__(self, node, where):
        self.node = node
        self.text = ast.unparse(node)
        self.syms = frozenset(SYM.findall(self.text))
        self.where = where


class State:
    """What one path knows: facts {text: Fact}, attrs {"$obj.name": value},
    frames [{local: value}] (the walk's call stack), rets {symbol: [(facts,
    value)]} (the return paths of a call whose result is that symbol)."""

    def __init__(self):
        self.facts, self.attrs, self.frames, self.rets = {}, {}, [], {}

    def copy(self):
        s = State()
        s.facts, s.attrs = dict(self.facts), dict(self.attrs)
        s.frames = [dict(f) for f in self.frames]
        s.rets = {k: list(v) for k, v in self.rets.items()}
        return s


def text_of(node):
    return ast.unparse(node) if node is not None else "?"


def syms_of(node):
    return set(SYM.findall(text_of(node)))


def sym_of(node):
    return node.id if isinstance(node, ast.Name) and node.id.startswith("$") else None


# Calls whose value is a new int, float, str or bool: it shares nothing.
SCALAR_CALLS = frozenset(("int", "float", "str", "bool", "len", "isinstance", "issubclass",
                          "abs", "round", "hasattr", "repr", "format", "callable", "id",
                          "hash", "any", "all", "divmod", "pow", "chr", "ord", "type"))


def denoted(v):
    """The symbols whose objects v may be, or be part of: what a callee
    given v could change."""
    t = type(v)
    if t is ast.Name:
        return {v.id} if v.id.startswith("$") else set()
    if t in (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare):
        return set()
    if t in (ast.Subscript, ast.Attribute, ast.Starred):
        return denoted(v.value)
    if t in (ast.BoolOp,):
        return set().union(*(denoted(x) for x in v.values))
    if t is ast.IfExp:
        return denoted(v.body) | denoted(v.orelse)
    if t in (ast.Tuple, ast.List, ast.Set):
        return set().union(set(), *(denoted(x) for x in v.elts))
    if t is ast.Dict:
        return set().union(set(), *(denoted(x) for x in v.values))
    if t is ast.Call:
        fn = v.func
        name = fn.id if isinstance(fn, ast.Name) else ""
        if name.startswith("@builtins.") and name[len("@builtins."):] in SCALAR_CALLS:
            return set()
        if name == "@copy.deepcopy":
            return set()
        if isinstance(fn, ast.Attribute) and fn.attr in ("get", "copy", "keys", "values", "items"):
            return denoted(fn.value) | set().union(set(), *(denoted(a) for a in v.args[1:]))
    return syms_of(v)


def normalize(node):
    """not not x -> x; not (a in b) -> a not in b, and the like."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return normalize(inner.operand)
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
            flip = {ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
                    ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}.get(type(inner.ops[0]))
            if flip is not None:
                return ast.Compare(left=inner.left, ops=[flip()], comparators=inner.comparators)
    return node


def negate(node):
    return normalize(ast.UnaryOp(op=ast.Not(), operand=node))


def enum_field_values(cls, name):
    """The values a field of a pydantic model class holds when its type is
    an int or str enum (every member compares as its value), or None."""
    if not (inspect.isclass(cls) and any(k.__name__ == "BaseModel" for k in cls.__mro__)):
        return None
    fields = getattr(cls, "model_fields", None)   # pydantic 2
    if isinstance(fields, dict) and name in fields:
        kind, default = fields[name].annotation, fields[name].default
    else:
        old = getattr(cls, "__fields__", {}).get(name)   # pydantic 1
        if old is None:
            return None
        kind, default = getattr(old, "outer_type_", None), getattr(old, "default", None)
    if not (inspect.isclass(kind) and issubclass(kind, enum.Enum)):
        return None
    values = tuple(sorted({m.value for m in kind}, key=repr))
    if not values or any(type(x) not in (int, str) or not isinstance(m, type(m.value))
                         for m in kind for x in (m.value,)):
        return None
    d = default.value if isinstance(default, enum.Enum) else default
    if d not in values:   # (a default pydantic 1 does not validate)
        return None
    return values


def isdict(v):
    """The fact `isinstance(v, dict)`, as the walk writes it."""
    return ast.Call(func=ast.Name(id="@builtins.isinstance", ctx=ast.Load()),
                    args=[v, ast.Name(id="@builtins.dict", ctx=ast.Load())], keywords=[])


def number_of(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = number_of(node.operand)
        return -v if v is not None else None
    return None


def short(node):
    text = text_of(node)
    return text if len(text) <= 100 else text[:97] + "..."



def implied(facts, node):
    """The fact of facts ({text: Fact}) that makes node true, or None."""
    node = normalize(node)
    f = facts.get(text_of(node))
    if f is not None:
        return f
    if isinstance(node, ast.BoolOp):
        got = [implied(facts, v) for v in node.values]
        if isinstance(node.op, ast.And):
            return got[0] if all(got) else None
        return next((g for g in got if g), None)
    if isinstance(node, ast.Constant):
        return Fact(node, "a constant") if node.value else None
    if isinstance(node, (ast.Compare, ast.UnaryOp)):
        return _compare_implied(facts, node)
    # x is true when a fact says x > 0, x >= 1, not x < 1, x == a true constant
    text = text_of(node)
    for f in facts.values():
        n = f.node
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and text_of(n.left) == text:
            c = number_of(n.comparators[0])
            op = type(n.ops[0])
            if c is not None and ((op is ast.Gt and c >= 0) or (op is ast.GtE and c > 0)):
                return f
            if op is ast.Eq and isinstance(n.comparators[0], ast.Constant) \
                    and n.comparators[0].value:
                return f
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and \
                isinstance(n.operand, ast.Compare) and len(n.operand.ops) == 1 and \
                isinstance(n.operand.ops[0], ast.Lt) and text_of(n.operand.left) == text:
            c = number_of(n.operand.comparators[0])
            if c is not None and c > 0:
                return f
    return None

def _compare_implied(facts, node):
    """`x > c` by `x > d`, d >= c; `not x < c` by `not x < d`, d >= c;
    x compared with a number by `x in (numbers)` every one of which
    passes."""
    neg = isinstance(node, ast.UnaryOp)
    cmp = node.operand if neg else node
    if not isinstance(cmp, ast.Compare) or len(cmp.ops) != 1:
        return None
    member = _member_implied(facts, cmp, neg)
    if member is not None:
        return member
    c = number_of(cmp.comparators[0])
    op = type(cmp.ops[0])
    if c is None or (neg and op is not ast.Lt) or (not neg and op not in (ast.Gt, ast.GtE)):
        return None
    left = text_of(cmp.left)
    for f in facts.values():
        n = f.node
        fneg = isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)
        fc = n.operand if fneg else n
        if fneg != neg or not isinstance(fc, ast.Compare) or len(fc.ops) != 1 \
                or type(fc.ops[0]) is not op or text_of(fc.left) != left:
            continue
        d = number_of(fc.comparators[0])
        if d is not None and d >= c:
            return f
    return None

def _member_implied(facts, cmp, neg):
    c = number_of(cmp.comparators[0])
    test = {ast.Lt: lambda x: x < c, ast.LtE: lambda x: x <= c,
            ast.Gt: lambda x: x > c, ast.GtE: lambda x: x >= c}.get(type(cmp.ops[0]))
    if c is None or test is None:
        return None
    left = text_of(cmp.left)
    for f in facts.values():
        n = f.node
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.In) \
                and text_of(n.left) == left and isinstance(n.comparators[0], ast.Tuple):
            xs = [number_of(e) for e in n.comparators[0].elts]
            if xs and None not in xs and all(test(x) != neg for x in xs):
                return f
    return None

def add(facts, node, where):
    """Add node to facts (an `and` as its parts, a `not (a or b)` as `not a`,
    `not b`), established where."""
    node = normalize(node)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for v in node.values:
            add(facts, v, where)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and \
            isinstance(node.operand, ast.BoolOp) and isinstance(node.operand.op, ast.Or):
        for v in node.operand.values:
            add(facts, negate(v), where)
        return
    f = Fact(node, where)
    facts.setdefault(f.text, f)
