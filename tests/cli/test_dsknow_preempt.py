"""contrib/dsknow/preempt.py proves which config checks no config can
fail (issue 28), on a small package shaped like DeepSpeed's config code,
traced by trace.py's own Recorder as the coverage report traces DeepSpeed.

Each way a check is pre-empted gets "preempted": the caller's test
(elasticity_enabled before compute_elastic_config, the key it read that
only a dict allows before isinstance(ds_config, dict)), the same test of the
same value earlier (ElasticityConfig before DeepSpeedConfig), `x > 0`
before `assert x` (_batch_assertion before _do_error_check), a NameError
before it (get_eigenvalue_config). Each way the proof must fail keeps
"config", and the corpus triggers every one of those, which shows the walk
would have been wrong to claim them: a call it cannot follow that changes
the value, a loop's second turn, a `try` that swallows the earlier check,
a second call site without the caller's test, a key read of an object no
JSON parser made, a model field whose type is not an enum. A model field
whose type is an enum (ZeroStageEnum) holds only the enum's values. No DeepSpeed needed."""
import unittest

import dsknow_fake

# A module outside the package: the walk cannot follow a call into it.
EXTERNAL = '''
import enum


def touch(d):
    d["sec"]["n"] = 0


class Box:
    def __init__(self, d):
        self.d = d

    def __getitem__(self, key):
        return self.d.get(key)


def box(d):
    return Box(d)


class Stage(int, enum.Enum):
    off = 0
    one = 1
    two = 2
    max_stage = 2


class FieldInfo:
    def __init__(self, annotation, default):
        self.annotation, self.default = annotation, default


class BaseModel:
    """What a pydantic 2 model shows the walk: model_fields, and values
    its constructor has validated."""
    model_fields = {}

    def __init__(self, **data):
        for name, field in type(self).model_fields.items():
            value = data.get(name, field.default)
            if issubclass(field.annotation, enum.Enum):
                value = field.annotation(value).value
            setattr(self, name, value)
'''

PACKAGE = '''
import json

import fakeext


def enabled(cfg):
    if "sec" not in cfg:
        return False
    return cfg["sec"].get("on", False)


def compute(cfg):
    if not isinstance(cfg, dict):
        raise TypeError("not a dict")                                # @guarded_dict
    if "sec" not in cfg:
        raise ValueError("no section")                               # @guarded
    sec = cfg["sec"]
    if not sec.get("on", False):
        raise ValueError("off")                                      # @guarded_on
    part = Part(sec)
    return part.n


def need_sec(cfg):
    if "sec" not in cfg:
        raise ValueError("need sec")                                 # @two_sites


def eigen(cfg):
    if cfg.get("q"):
        cfg = cfg[QUANT]
        assert not cfg.get("e"), "e set"                             # @dead
    return 0


class ConfigModel(fakeext.BaseModel):
    def __init__(self, **data):
        super().__init__(**data)


class ZeroCfg(ConfigModel):
    model_fields = {"stage": fakeext.FieldInfo(fakeext.Stage, 0),
                    "size": fakeext.FieldInfo(int, 0)}


class Part:
    def __init__(self, d):
        self.n = d.get("n", 1)
        if self.n < 1:
            raise ValueError("n below 1")                            # @first
        self.items = []
        self.items.extend(d.get("list", []))


class Config:
    def __init__(self, config):
        if isinstance(config, dict):
            self.d = config
        else:
            self.d = json.loads(config)
        self.on = enabled(self.d)
        if self.on:
            n = compute(self.d)
            sec = self.d["sec"]
            if sec.get("n", 1) < 1:
                raise ValueError("n again")                          # @same_test
            need_sec(self.d)
            fakeext.touch(self.d)
            if sec.get("n", 1) < 1:
                raise ValueError("n after touch")                    # @after_opaque
        if self.d.get("force"):
            need_sec(self.d)
        eigen(self.d)
        self.micro = self.d.get("micro")
        self.fill()
        self.assert_batch()
        self.error_check()
        total = self.d.get("total", 1)
        assert total > 0, "total"                                    # @total
        for k in list(self.d):
            total = total - 1
        assert total, "total spent"                                  # @after_loop
        try:
            assert self.d.get("t", 1) > 0, "t"                       # @in_try
        except AssertionError:
            pass
        assert self.d.get("t", 1), "t zero"                          # @after_try
        count = self.d.get("count", 1)
        assert count > 0, "count"                                    # @count
        for k in list(self.d):
            assert count > 0, "count in loop"                        # @in_loop
            count = count - 1
        if self.d.get("boxed"):
            b = fakeext.box(self.d)
            b["boxed"]
            if not isinstance(b, dict):
                raise ValueError("not JSON")                         # @not_json
        self.zero = ZeroCfg(**self.d.get("zero", {}))
        if self.zero.stage > 0:
            assert self.zero.stage <= fakeext.Stage.max_stage, "stage"  # @enum_field
        assert self.zero.size <= 3, "size"                           # @plain_field

    def fill(self):
        if self.micro is None:
            self.micro = 1

    def assert_batch(self):
        micro = self.micro
        assert micro > 0, "micro"                                    # @positive

    def error_check(self):
        assert self.micro, "micro unset"                             # @implied
'''

PREEMPTED = ("guarded_dict", "guarded", "guarded_on", "same_test", "dead", "implied",
             "enum_field")
CONFIG = ("first", "two_sites", "after_opaque", "positive", "total", "after_loop",
          "in_try", "after_try", "count", "in_loop", "not_json", "plain_field")
CONFIGS = {"plain": {}, "on": {"sec": {"on": True, "n": 2}},
           "n0": {"sec": {"on": True, "n": 0}}, "micro0": {"micro": 0},
           "spent": {"total": 1}, "force": {"force": True},
           "q": {"q": True}, "total0": {"total": 0}, "t0": {"t": 0, "total": 3},
           "count0": {"count": 0, "total": 5}, "loop2": {"count": 1, "a": 1, "total": 5},
           "boxed": {"boxed": True, "total": 5, "count": 5},
           "stage2": {"zero": {"stage": 2}, "total": 5, "count": 5},
           "size5": {"zero": {"size": 5}, "total": 5, "count": 5}}


class Preempt(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = dsknow_fake.Traced("fakeds2", PACKAGE, CONFIGS, modules={"fakeext": EXTERNAL})
        cls.checks, cls.verdicts = cls.fake.checks, cls.fake.verdicts
        cls.lines = PACKAGE.splitlines()

    @classmethod
    def tearDownClass(cls):
        cls.fake.close()

    def line(self, tag):
        return next(i for i, s in enumerate(self.lines, 1) if s.rstrip().endswith("# @" + tag))

    def test_every_check_is_found(self):
        self.assertEqual(sorted(self.checks), sorted(PREEMPTED + CONFIG))

    def test_what_no_config_can_fail_is_preempted(self):
        for tag in PREEMPTED:
            with self.subTest(tag):
                c = self.checks[tag]
                self.assertEqual(c["decided"], "preempted", c["why"])
                self.assertEqual(c["trigger"], [])

    def test_what_the_walk_cannot_prove_stays_the_configs(self):
        for tag in CONFIG:
            with self.subTest(tag):
                self.assertEqual(self.checks[tag]["decided"], "config", self.checks[tag]["why"])

    def test_the_corpus_triggers_what_stays_the_configs(self):
        # Each case the proof must refuse is one a config really fails: had
        # the walk claimed it, coverage.py --check would catch it.
        for tag in CONFIG:
            with self.subTest(tag):
                self.assertNotEqual(self.checks[tag]["trigger"], [], tag)
        self.assertEqual(self.checks["after_opaque"]["trigger"], ["on"])
        self.assertEqual(self.checks["after_try"]["trigger"], ["t0"])
        self.assertEqual(self.checks["two_sites"]["trigger"], ["force"])
        self.assertEqual(self.checks["after_loop"]["trigger"], ["spent"])
        self.assertEqual(self.checks["in_loop"]["trigger"], ["loop2"])
        self.assertIn("NameError", self.verdicts["q"])

    def test_the_reason_names_the_earlier_test_and_its_line(self):
        why = self.checks["same_test"]["why"]
        self.assertIn("`sec.get('n', 1) < 1` (line %d)" % (self.line("same_test") - 1), why)
        self.assertIn("the test `self.n < 1` at __init__.py:%d" % (self.line("first") - 1), why)
        why = self.checks["guarded"]["why"]
        self.assertIn("the test `'sec' not in cfg` at __init__.py:", why)
        why = self.checks["guarded_dict"]["why"]
        self.assertIn("the read `cfg['sec']` at __init__.py:", why)
        self.assertIn("which only a dict allows", why)
        why = self.checks["enum_field"]["why"]
        self.assertIn("given the type of ZeroCfg.stage, an enum of 0, 1, 2", why)
        why = self.checks["implied"]["why"]
        self.assertIn("`self.micro` holds on every path to it", why)
        self.assertIn("the assert `micro > 0` at __init__.py:%d" % self.line("positive"), why)
        why = self.checks["dead"]["why"]
        self.assertIn("`QUANT` is not defined", why)
        self.assertIn("NameError (line %d)" % (self.line("dead") - 1), why)


if __name__ == "__main__":
    unittest.main()
