"""contrib/dsknow/dataflow.py tells a check of the config from a raise or
assert the config does not decide (issue 28), on a small package shaped
like DeepSpeed's config code, traced by trace.py's own Recorder as the
coverage report traces DeepSpeed: every kind of flow the analysis follows
(a parameter passed on, a helper's return value, self's attributes, a
container filled in a loop, a closure, super().__init__, a module
constant, a parameter every call leaves at its default, the environment,
the backend's global), each with the verdict it must get. No DeepSpeed needed."""
import os
import unittest

import dsknow_fake

PACKAGE = '''
import os

cdb = None                      # the backend: nothing of the config
VERSION = "1.0"


def get_rank():
    assert cdb is None or cdb.ready(), "backend not set"            # @backend
    return 0


def check_version(v):
    if v < "0.5":
        raise ValueError("too old")                                  # @version


def env_gated(cfg):
    if "FAKEDS_ELASTIC" in os.environ:
        if cfg.get("a") != os.environ["FAKEDS_ELASTIC"]:
            raise ValueError("changed")                              # @env
    return cfg


def helper(d, key):
    return d.get(key)


def pick(cfg, world, return_small=False):
    if world > 0:
        if cfg.get("w") == world:
            raise ValueError("world as w")                           # @pick
        return 1
    if return_small:
        if cfg.get("small") is None:
            raise ValueError("no small")                             # @constant
    return 2


def to_optimizer(opt):
    if isinstance(opt, list):
        return opt
    raise TypeError("not an optimizer")                              # @optimizer


class Base:
    def __init__(self, config, mpu=None):
        self.base_size = helper(config, "base")


class Config(Base):
    def __init__(self, config, mpu=None):
        super().__init__(config, mpu)
        self.world = mpu.world() if mpu else 1
        self.size = helper(config, "size")
        get_rank()
        check_version(VERSION)
        env_gated(config)
        to_optimizer(mpu or [])
        pick(config, self.world)
        keys = []
        for k in config:
            keys.append(k)
        if not keys:
            raise ValueError("empty")                                # @loop
        assert self.size != 0, "size is 0"                           # @attr
        if self.world < 0:
            raise ValueError("negative world")                       # @world

        def inner():
            if config.get("z"):
                raise ValueError("z set")                            # @closure
        inner()
        self.check()

    def check(self):
        if self.base_size == 3:
            raise ValueError("base is 3")                            # @super
'''

EXPECTED = {
    "backend": "other", "version": "other", "optimizer": "other", "world": "other",
    "env": "gate", "constant": "other", "pick": "config",
    "loop": "config", "attr": "config", "closure": "config", "super": "config",
}
CONFIGS = {"plain": {"size": 1}, "zero": {"size": 0}, "empty": {}, "z": {"size": 2, "z": 1},
           "base3": {"size": 1, "base": 3}, "w1": {"size": 1, "w": 1}}


class DataFlow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.pop("FAKEDS_ELASTIC", None)
        cls.fake = dsknow_fake.Traced("fakeds", PACKAGE, CONFIGS)
        cls.checks, cls.verdicts = cls.fake.checks, cls.fake.verdicts
        cls.lines = PACKAGE.splitlines()

    @classmethod
    def tearDownClass(cls):
        cls.fake.close()

    def test_every_check_is_found(self):
        self.assertEqual(sorted(self.checks), sorted(EXPECTED))

    def test_each_gets_its_verdict(self):
        for tag, kind in sorted(EXPECTED.items()):
            with self.subTest(tag):
                c = self.checks[tag]
                self.assertEqual(c["decided"], kind, c["why"])
                self.assertEqual(c["why"] == "", kind == "config", c["why"])

    def test_a_check_the_corpus_triggers_is_the_configs(self):
        for c in self.checks.values():
            if c["trigger"]:
                self.assertEqual(c["decided"], "config", c)
        self.assertEqual(sorted(t for t, c in self.checks.items() if c["trigger"]),
                         ["attr", "closure", "loop", "pick", "super"])

    def test_the_reason_names_the_test_and_its_line(self):
        why = self.checks["env"]["why"]
        self.assertIn("`'FAKEDS_ELASTIC' in os.environ`", why)
        self.assertIn("held in no run of the corpus", why)
        line = next(i for i, s in enumerate(self.lines, 1) if "FAKEDS_ELASTIC\" in" in s)
        self.assertIn("(line %d)" % line, why)
        self.assertIn("`cdb is None or cdb.ready()`", self.checks["backend"]["why"])
        self.assertIn("statements before it", self.checks["optimizer"]["why"])
        self.assertIn("every call of pick gives return_small the same constant, which makes"
                      " it false", self.checks["constant"]["why"])


if __name__ == "__main__":
    unittest.main()
