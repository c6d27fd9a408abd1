"""Hand-written knowledge names only keys DeepSpeed reads (issue 10): every
literal config path a rule of plugins/deepspeed/ reports on must be a key
of the generated per-release data (plugins/deepspeed/dsdata/, from
DeepSpeed's own code) in some covered release, or a key the hand-written
schema marks as newer than every covered release (explain names that
release). tests/lua/test_dsversion.lua does the same for every key of the
hand-written schema, tests/lua/test_hand_keys.lua for its Hugging Face
"auto" list."""
import glob
import os
import re
import unittest

import dsf
from dsf import run

PLUGIN = os.path.join(dsf.SOURCE_DIR, "plugins", "deepspeed")
PATH_RE = re.compile(r'(?:emit\(ctx, "[a-z0-9-]+", |path = )'
                     r'\{ *("[A-Za-z0-9_]+"(?: *, *"[A-Za-z0-9_]+")*) *\}')


def generated_keys():
    keys = set()
    for f in glob.glob(os.path.join(PLUGIN, "dsdata", "v*.lua")):
        with open(f, encoding="utf-8") as fh:
            keys |= set(re.findall(r'^    \["([^"]+)"\] = \{ src = ', fh.read(), re.M))
    return keys


def literal_paths():
    out = {}
    for f in sorted(glob.glob(os.path.join(PLUGIN, "*.lua"))):
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                for m in PATH_RE.finditer(line):
                    path = ".".join(re.findall(r'"([^"]+)"', m.group(1)))
                    out.setdefault(path, "%s:%d" % (os.path.basename(f), n))
    return out


class HandWrittenKeys(unittest.TestCase):
    def test_generated_data_is_read(self):
        keys = generated_keys()
        self.assertIn("zero_optimization.stage", keys)
        self.assertGreater(len(keys), 300)

    def test_rules_report_on_keys_deepspeed_reads(self):
        keys, paths = generated_keys(), literal_paths()
        self.assertIn("zero_optimization.overlap_comm", paths)
        missing = []
        for path, where in sorted(paths.items()):
            if path in keys:
                continue
            # hand-marked as newer than every covered release: explain says so
            r = run("explain", path)
            if r.rc == 2 and "first appears in" in r.err:
                continue
            missing.append("%s (%s)" % (path, where))
        self.assertEqual(missing, [])


if __name__ == "__main__":
    unittest.main()
