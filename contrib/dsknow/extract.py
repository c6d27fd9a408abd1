#!/usr/bin/env python3
"""Writes the DeepSpeed facts of one release as a Lua data file for the
dsforge DeepSpeed plugin (plugins/deepspeed/dsdata/<tag>.lua).

    eval "$(../shared/tools/dsclient/setup.sh DS_GIT HJSON_GIT v0.19.5)"
    contrib/dsknow/extract.py --git DS_GIT --tag v0.19.5 \
        > plugins/deepspeed/dsdata/v0_19_5.lua

DeepSpeed's config code is imported through the dsclient stand-in
(../shared/tools/dsclient/dscheck.py, or $DSCLIENT): torch is replaced,
pydantic and hjson are real. What is read:

- every key DeepSpeed reads. Top-level and lenient sections: a recording
  dict is handed to DeepSpeedConfig and every .get/[]/in is logged with its
  default (the plain dict reads of runtime/config.py with the defaults of
  runtime/constants.py). Pydantic sections: a section holding one unknown
  key makes the model raise a ValidationError titled with its class; the
  model's fields give type, default, ge/gt/le/lt, alias, deprecation and
  whether extra keys are forbidden (nested models are followed).
- the constructor of every DeepSpeed LR scheduler (runtime/lr_schedules.py,
  VALID_LR_SCHEDULES) and of the optimizer classes the engine builds for
  each built-in optimizer name (parsed from source with ast: no torch).

The output is deterministic: the same checkout gives the same bytes.
"""
import argparse
import ast
import importlib.util
import inspect
import json
import math
import os
import subprocess
import sys

def _find_dsclient():
    """$DSCLIENT, else shared/tools/dsclient/dscheck.py beside an ancestor
    of the repository (../shared for a checkout, ../../shared for a worktree)."""
    if os.environ.get("DSCLIENT"):
        return os.environ["DSCLIENT"]
    d = os.path.dirname(os.path.abspath(__file__))
    while d != os.path.dirname(d):
        d = os.path.dirname(d)
        p = os.path.join(d, "shared", "tools", "dsclient", "dscheck.py")
        if os.path.exists(p):
            return p
    sys.exit("extract: set DSCLIENT to the dsclient's dscheck.py")


DSCLIENT = _find_dsclient()

# The optimizer classes the engine constructs for a built-in name
# (runtime/engine.py _configure_basic_optimizer), with the params the engine
# pops before calling the constructor. A name absent here is not checked.
OPTIMIZER_CLASSES = {
    "adam": ("deepspeed/ops/adam/fused_adam.py", "FusedAdam", ["torch_adam", "adam_w_mode"]),
    "adamw": ("deepspeed/ops/adam/fused_adam.py", "FusedAdam", ["torch_adam", "adam_w_mode"]),
    "lamb": ("deepspeed/ops/lamb/fused_lamb.py", "FusedLamb", []),
    "onebitadam": ("deepspeed/runtime/fp16/onebit/adam.py", "OnebitAdam", []),
    "zerooneadam": ("deepspeed/runtime/fp16/onebit/zoadam.py", "ZeroOneAdam", []),
    "onebitlamb": ("deepspeed/runtime/fp16/onebit/lamb.py", "OnebitLamb", []),
    "adagrad": ("deepspeed/ops/adagrad/cpu_adagrad.py", "DeepSpeedCPUAdagrad", []),
    "lion": ("deepspeed/ops/lion/fused_lion.py", "FusedLion", []),
}
# Constructor arguments the engine passes itself (never from params).
ENGINE_ARGS = {"self", "optimizer", "params", "model_params", "deepspeed"}


def load_dsclient():
    spec = importlib.util.spec_from_file_location("dscheck", DSCLIENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jsonable(v):
    """A default as a JSON-able value, or a marker string for the rest."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if hasattr(v, "value") and not isinstance(v, (int, float)):  # enums
        return jsonable(v.value)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return "<" + type(v).__name__ + ">"


def type_word(ann):
    if isinstance(ann, type):  # pydantic 1's constrained types subclass the base
        for base, t in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string")):
            if issubclass(ann, base):
                return t
    s = str(ann).replace("typing.", "")
    low = s.lower()
    for word, t in (("bool", "bool"), ("int", "int"), ("float", "float"), ("str", "string"),
                    ("dict", "object"), ("list", "array"), ("tuple", "array")):
        if "<class '%s'>" % word == s or s == word:
            return t
    if "enum" in low:
        return "enum"
    if s.startswith("Optional[") and s.count("[") == 1:
        return type_word(s[9:-1]) + "?"
    return "any"


class Recorder(dict):
    """A dict that logs every key read: .get, [], in."""

    def __init__(self, log, prefix):
        super().__init__()
        self.log, self.prefix = log, prefix

    def _note(self, key, default=None, has_default=False):
        if isinstance(key, str):
            path = self.prefix + key
            if path not in self.log or (has_default and self.log[path] is None):
                self.log[path] = ("d", jsonable(default)) if has_default else ("d", None)

    def get(self, key, default=None):
        self._note(key, default, True)
        return super().get(key, default)

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)

    def keys(self):
        return _Keys(self)

    # The whole section handed on (iterated, copied): any key may be read
    # later (by the engine), so the section is "open".
    def _open(self):
        if self.prefix:
            self.log[self.prefix[:-1] + ".*"] = ("open", None)

    def items(self):
        self._open()
        return dict.items(self)

    def values(self):
        self._open()
        return dict.values(self)

    def __iter__(self):
        self._open()
        return dict.__iter__(self)

    def _clone(self):
        c = Recorder(self.log, self.prefix)
        dict.update(c, dict.items(self))
        return c

    def copy(self):
        self._open()
        return self._clone()

    def __copy__(self):
        self._open()
        return self._clone()

    def __deepcopy__(self, memo):
        self._open()
        return self._clone()


class _Spy(str):
    """A key that equals every name it is compared with, and logs them:
    `any(arg in list(section.keys()) for arg in NAMES)` (fp16's dynamic
    loss scaling up to 0.16) then reads the names it guards."""

    def __new__(cls, log):
        s = super().__new__(cls, "dsknow_spy_key")
        s.log = log
        return s

    def __eq__(self, other):
        if isinstance(other, str) and not isinstance(other, _Spy):
            self.log.add(other)
        return True

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


class _Keys:
    """d.keys() of a Recorder: `k in d.keys()` is a read of k too."""

    def __init__(self, d):
        self.d = d

    def __contains__(self, key):
        self.d._note(key)
        return dict.__contains__(self.d, key)

    def __iter__(self):
        return iter(dict.keys(self.d))

    def __len__(self):
        return dict.__len__(self.d)


class Extractor:
    def __init__(self, dsc):
        self.dsc = dsc
        self.cfgmod = dsc.ds_config
        from deepspeed.runtime.config_utils import DeepSpeedConfigModel
        self.base = DeepSpeedConfigModel
        self.v2 = hasattr(DeepSpeedConfigModel, "model_fields")

    def run(self, cfg):
        self.dsc.ds_comm.cdb = self.dsc.FakeBackend(1)
        try:
            self.cfgmod.DeepSpeedConfig(cfg, mpu=self.dsc.FakeMpu(1))
            return None
        except Exception as e:  # noqa: BLE001 - every failure is information
            return e
        finally:
            self.dsc.ds_comm.cdb = None

    def models(self):
        seen, out = set(), {}
        stack = [self.base]
        if not self.v2:
            # pydantic 1 (up to 0.14): some sections (comms_logger) are
            # plain pydantic models, not DeepSpeedConfigModel subclasses
            stack = [c for c in self.base.__mro__[1:2]]
        while stack:
            for s in stack.pop().__subclasses__():
                if s not in seen and s.__module__.startswith("deepspeed"):
                    seen.add(s)
                    out.setdefault(s.__name__, s)
                    stack.append(s)
        return out

    def fields(self, cls):
        """(name, alias, annotation, default, constraints, extra) per field."""
        out = []
        if self.v2:
            for n, f in cls.model_fields.items():
                c = {}
                for m in f.metadata:
                    for k in ("ge", "gt", "le", "lt"):
                        if getattr(m, k, None) is not None:
                            c[k] = getattr(m, k)
                extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
                default = None if f.is_required() else f.default
                out.append((n, f.alias, f.annotation, default, c, extra, f.is_required()))
        else:
            for n, f in cls.__fields__.items():
                c = {k: getattr(f.field_info, k) for k in ("ge", "gt", "le", "lt")
                     if getattr(f.field_info, k, None) is not None}
                extra = dict(f.field_info.extra or {})
                out.append((n, f.alias if f.alias != n else None, f.outer_type_,
                            None if f.required else f.default, c, extra, bool(f.required)))
        return out

    def forbids_extra(self, cls):
        if self.v2:
            return cls.model_config.get("extra") == "forbid"
        return str(getattr(cls.__config__, "extra", "")).endswith("forbid")

    def model_keys(self, cls, prefix, keys, strict, plain, depth=0):
        strict[prefix.rstrip(".")] = self.forbids_extra(cls)
        if not issubclass(cls, self.base):
            # DeepSpeedConfigModel.__init__ drops "auto" values; a plain
            # pydantic model does not (pydantic 1 releases only)
            plain.add(prefix.rstrip("."))
        for n, alias, ann, default, cons, extra, required in self.fields(cls):
            path = prefix + n
            rec = {"src": "pydantic", "t": type_word(ann), "d": jsonable(default)}
            if required:
                rec["required"] = True
            for k, v in cons.items():
                rec[k] = jsonable(v)
            if alias:
                rec["alias"] = alias
            if extra.get("deprecated"):
                rec["deprecated"] = True
                if extra.get("new_param"):
                    rec["new"] = extra["new_param"]
            keys[path] = rec
            sub = self.sub_model(ann)
            if sub is not None and depth < 4:
                rec["t"] = "object"
                self.model_keys(sub, path + ".", keys, strict, plain, depth + 1)

    def _with(self, log, extra):
        top = Recorder(log, "")
        dict.update(top, {"train_batch_size": 1}, **extra)
        return top

    def _validator_model(self, e, key, sub):
        """pydantic 1 (up to 0.14): a root validator that reads the section
        the probe made invalid fails with a plain exception (the monitors'
        DeepSpeedMonitorConfig.check_enabled: AttributeError on None) instead
        of a ValidationError. The validator's frame names the model (cls);
        the section is that model's field named key, when the same config
        without the probe key passes."""
        if self.v2 or sub or hasattr(e, "errors"):  # a ValidationError says more
            return None
        model, tb = None, e.__traceback__
        while tb is not None:
            c = tb.tb_frame.f_locals.get("cls")
            if isinstance(c, type) and issubclass(c, self.base):
                model = c
            tb = tb.tb_next
        if model is None or self.run({"train_batch_size": 1, key: {}}) is not None:
            return None
        for n, alias, ann, *_ in self.fields(model):
            if key in (n, alias):
                return self.sub_model(ann)
        return None

    def section_model(self, key, sub=None):
        """The pydantic model behind a top-level key (or key.sub), or None."""
        probe = {"dsknow_probe_key": 1}
        e = self.run({"train_batch_size": 1, key: {sub: probe} if sub else probe})
        title = getattr(e, "title", None)  # pydantic 2; 1 (up to 0.14): .model
        if not isinstance(title, str):
            title = getattr(getattr(e, "model", None), "__name__", None)
        if e is not None and not title:
            return self._validator_model(e, key, sub)
        if not title or "dsknow_probe_key" not in str(e):
            return None
        model = self.models().get(title)
        # a model read from several top-level keys (the monitors): the error
        # is at KEY.dsknow_probe_key and its field named KEY is the section
        locs = [tuple(x.get("loc", ())) for x in e.errors()]
        if not any(len(loc) >= 2 and loc[0] == key for loc in locs):
            return model
        for n, alias, ann, *_ in (self.fields(model) if model else []):
            if key in (n, alias):
                sub = self.sub_model(ann)
                if sub is not None:
                    return sub
        return model

    def sub_model(self, ann):
        text = str(ann)
        for name, m in sorted(self.models().items()):
            if text.endswith("." + name + "'>") or text.endswith("." + name + "]") or text == name:
                return m
        return None

    def extract(self):
        log = {}
        top = Recorder(log, "")
        top["train_batch_size"] = 1
        self.run(top)
        # the legacy bool form of zero_optimization reads allgather_size
        self.run(self._with(log, {"zero_optimization": True}))
        keys, strict, opened, plain = {}, {"": False}, set(), set()
        top_keys = sorted(k for k in log if "." not in k and not k.endswith("*"))
        for k in top_keys:
            kind, default = log[k]
            keys[k] = {"src": "dict", "d": default}
        for k in top_keys:
            model = self.section_model(k)
            if model is not None:
                keys[k]["t"] = "object"
                keys[k]["src"] = "pydantic"
                self.model_keys(model, k + ".", keys, strict, plain)
                continue
            sub = {}
            rec = Recorder(sub, k + ".")
            cfg = Recorder({}, "")
            cfg.update({"train_batch_size": 1, k: rec})
            self.run(dict(cfg))
            if sub:
                # again with every key read present (as a recording dict), so
                # reads guarded by `X in section` show up too
                rec2 = Recorder(sub, k + ".")
                for p in sorted(sub):
                    if p.count(".") == 1:
                        dict.__setitem__(rec2, p.split(".", 1)[1], Recorder(sub, p + "."))
                self.run({"train_batch_size": 1, k: rec2})
                if k + ".enabled" in sub:  # reads guarded by the section's enabled flag
                    rec3 = Recorder(sub, k + ".")
                    dict.__setitem__(rec3, "enabled", True)
                    self.run({"train_batch_size": 1, k: rec3})
                    # reads guarded by `NAME in list(section.keys())`: a spy
                    # key makes the guard true (the names it was compared
                    # with are read then, with .get, and so recorded)
                    rec4 = Recorder(sub, k + ".")
                    dict.__setitem__(rec4, "enabled", True)
                    dict.__setitem__(rec4, _Spy(set()), 1)
                    self.run({"train_batch_size": 1, k: rec4})
                keys[k]["t"] = "object"
                strict[k] = False
                for p in sorted(sub):
                    if p.endswith(".*"):
                        opened.add(p[:-2])
                        continue
                    if p.count(".") > 1 and p.rsplit(".", 1)[0] in keys:
                        keys[p.rsplit(".", 1)[0]]["t"] = "object"
                    keys.setdefault(p, {"src": "dict", "d": sub[p][1]})
                    if p.count(".") == 1:  # a pydantic model inside a dict section
                        model = self.section_model(k, p.split(".", 1)[1])
                        if model is not None:
                            keys[p].update({"src": "pydantic", "t": "object"})
                            self.model_keys(model, p + ".", keys, strict, plain)
        for p in log:
            if p.endswith(".*"):
                opened.add(p[:-2])
        for p in plain:
            keys[p]["plain"] = True
        return keys, strict, opened


def signature_of(src, cls_name):
    """(ordered param names, required names, defaults) of cls.__init__."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                    a = fn.args
                    names = [x.arg for x in a.args]
                    defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
                    out, req, dflt = [], [], {}
                    for n, d in zip(names, defaults):
                        if n in ENGINE_ARGS:
                            continue
                        out.append(n)
                        if d is None:
                            req.append(n)
                        else:
                            try:
                                dflt[n] = jsonable(ast.literal_eval(d))
                            except Exception:  # noqa: BLE001
                                dflt[n] = "<expr>"
                    for x, d in zip(a.kwonlyargs, a.kw_defaults):
                        out.append(x.arg)
                        if d is None:
                            req.append(x.arg)
                    return out, req, dflt, a.kwarg is not None
    return None


def constructors(git, commit):
    def show(path):
        try:
            return subprocess.run(["git", "--git-dir", git, "show", commit + ":" + path],
                                  check=True, capture_output=True, text=True).stdout
        except subprocess.CalledProcessError:
            return None

    sched = {}
    src = show("deepspeed/runtime/lr_schedules.py")
    tree = ast.parse(src)
    valid = []
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                consts[node.targets[0].id] = node.value.value
            if node.targets[0].id == "VALID_LR_SCHEDULES":
                valid = [consts.get(e.id, getattr(e, "value", None)) for e in node.value.elts]
    for name in valid:
        s = signature_of(src, name)
        if s:
            sched[name] = s
    opt = {}
    for name, (path, cls, popped) in sorted(OPTIMIZER_CLASSES.items()):
        text = show(path)
        s = text and signature_of(text, cls)
        if s:
            opt[name] = (cls, s, popped)
    return sched, opt


def lua_str(s):
    return json.dumps(s, ensure_ascii=False)


def lua_val(v):
    if v is None:
        return "dsforge.null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(v)
        return r if ("." in r or "e" in r or "inf" in r) else r + ".0"
    if isinstance(v, str):
        return lua_str(v)
    if isinstance(v, list):
        return "{" + ", ".join(lua_val(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[%s] = %s" % (lua_str(k), lua_val(v[k])) for k in sorted(v)) + "}"
    raise TypeError(v)


def lua_record(rec):
    order = ["src", "t", "d", "required", "ge", "gt", "le", "lt", "alias", "deprecated", "new", "plain"]
    parts = []
    for k in order:
        if k in rec:
            parts.append("%s = %s" % (k, lua_val(rec[k])))
    return "{ " + ", ".join(parts) + " }"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git", required=True, help="DeepSpeed git directory")
    ap.add_argument("--tag", required=True, help="the release tag the dsclient setup unpacked")
    a = ap.parse_args()
    commit = subprocess.run(["git", "--git-dir", a.git, "rev-parse", a.tag + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    dsc = load_dsclient()
    version = a.tag.lstrip("v")
    if dsc.DS_VERSION.split("+")[0] != version:
        sys.exit("extract.py: the dsclient setup is DeepSpeed %s, not %s" % (dsc.DS_VERSION, a.tag))
    ex = Extractor(dsc)
    keys, strict, opened = ex.extract()
    sched, opt = constructors(a.git, commit)
    # the params sections hold constructor keyword arguments (engine.py
    # passes them as **params): every argument of any class is a key
    for section, table in (("scheduler", {n: s[0] for n, s in sched.items()}),
                           ("optimizer", {n: o[1][0] + o[2] for n, o in opt.items()})):
        if section in keys:
            keys[section]["t"] = "object"
            keys.setdefault(section + ".params", {"src": "dict", "d": None})
            keys[section + ".params"]["t"] = "object"
            for args in table.values():
                for arg in args:
                    keys.setdefault(section + ".params." + arg, {"src": "ctor"})
    w = sys.stdout.write
    w("-- Generated by contrib/dsknow/extract.py from deepspeedai/DeepSpeed %s\n" % a.tag)
    w("-- (commit %s). Do not edit: re-run the extractor (contrib/dsknow/README.md).\n" % commit)
    w("return {\n")
    w("  tag = %s,\n  version = %s,\n  commit = %s,\n" % (lua_str(a.tag), lua_str(version), lua_str(commit)))
    if not ex.v2:
        # (absent: pydantic 2) pydantic 1 coerces differently: numbers to
        # strings, floats truncated to ints, no strings for an int enum
        w("  pydantic = 1,\n")
    w("  -- every key DeepSpeed reads: src dict (dict.get) or pydantic; t type; d default\n")
    w("  keys = {\n")
    for k in sorted(keys):
        w("    [%s] = %s,\n" % (lua_str(k), lua_record(keys[k])))
    w("  },\n")
    w("  -- sections whose unknown keys DeepSpeed rejects (pydantic extra=\"forbid\")\n")
    w("  strict = {\n")
    for k in sorted(strict):
        w("    [%s] = %s,\n" % (lua_str(k), lua_val(strict[k])))
    w("  },\n")
    w("  -- sections DeepSpeed hands on whole (iterated or copied): any key may be read later\n")
    w("  open = {\n")
    for k in sorted(opened):
        w("    [%s] = true,\n" % lua_str(k))
    w("  },\n")
    w("  -- LR schedulers: constructor keyword arguments, required ones, defaults\n")
    w("  schedulers = {\n")
    for name in sorted(sched):
        args, req, dflt, kw = sched[name]
        w("    %s = { args = %s, required = %s, defaults = %s%s },\n" % (
            name, lua_val(args), lua_val(req), lua_val(dflt), ", kwargs = true" if kw else ""))
    w("  },\n")
    w("  -- built-in optimizer names (lower case): the class the engine builds, its\n")
    w("  -- constructor, and the params the engine takes out first\n")
    w("  optimizers = {\n")
    for name in sorted(opt):
        cls, (args, req, dflt, kw), popped = opt[name]
        w("    %s = { class = %s, args = %s, required = %s, defaults = %s, engine = %s%s },\n" % (
            name, lua_str(cls), lua_val(args), lua_val(req), lua_val(dflt), lua_val(popped),
            ", kwargs = true" if kw else ""))
    w("  },\n")
    w("}\n")


if __name__ == "__main__":
    main()
