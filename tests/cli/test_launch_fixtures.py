"""The launch plugin's fixtures (tests/lua/fixtures/launch/variants.lua)
are what today's built-in profiles generate: a profile change must come
with `tests/lua/fixtures/launch/update.sh`, or the Trainer reproduction
test would keep checking yesterday's configs."""
import os
import subprocess
import unittest

import dsf

FIXTURES = os.path.join(dsf.SOURCE_DIR, "tests", "lua", "fixtures", "launch")


class LaunchFixturesTest(dsf.TempDirTest):

    def test_fixtures_match_the_built_in_profiles(self):
        out = os.path.join(self.tmp, "variants.lua")
        p = subprocess.run([os.path.join(FIXTURES, "update.sh"), dsf.DSFORGE,
                            out], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out, encoding="utf-8") as f:
            fresh = f.read()
        with open(os.path.join(FIXTURES, "variants.lua"),
                  encoding="utf-8") as f:
            committed = f.read()
        self.assertTrue(fresh == committed,
                        "tests/lua/fixtures/launch/variants.lua is stale: run"
                        " tests/lua/fixtures/launch/update.sh")


if __name__ == "__main__":
    unittest.main()
