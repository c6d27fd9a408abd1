"""The extractor re-run on the newest covered DeepSpeed tag reproduces the
committed data file byte for byte (issue 10; contrib/dsknow/reproduce.sh,
documented in contrib/dsknow/README.md). It needs git directories of
DeepSpeed and hjson-py (DS_GIT/HJSON_GIT, or the machine's mirror) and the
dsclient tool in ../shared; the dsclient cache for the tag is made by
reproduce.sh on the first run (its setup unpacks five Debian packages
fetched with `apt-get download`) and reused after. Skipped only where the
git directories or the tool are absent (CI has neither: it checks the
committed data only)."""
import os
import pwd
import subprocess
import unittest

import dsf

HERE = os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow")


def newest_tag():
    with open(os.path.join(HERE, "releases.txt")) as f:
        return f.read().split()[-1]


TAG = newest_tag()
# ctest points HOME at the build tree: the cache is the user's real one
CACHE = os.environ.get("DSCLIENT_HOME") or os.path.join(
    pwd.getpwuid(os.getuid()).pw_dir, ".cache", "dsclient", TAG)
DS_GIT, HJSON_GIT = dsf.git_dir("deepspeedai+DeepSpeed"), dsf.git_dir("hjson+hjson-py")
SETUP = dsf.dsclient_setup()
READY = bool(DS_GIT and HJSON_GIT and SETUP)


@unittest.skipUnless(READY, "no DeepSpeed/hjson git directory or no "
                     "../shared/tools/dsclient")
class Reproduce(unittest.TestCase):
    def test_newest_tag_reproduces_the_committed_file(self):
        env = dict(os.environ, DS_GIT=DS_GIT, HJSON_GIT=HJSON_GIT,
                   DSCLIENT_HOME=CACHE, DSCLIENT_SETUP=SETUP)
        p = subprocess.run(["sh", os.path.join(HERE, "reproduce.sh")], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("%s: the extractor reproduces" % TAG, p.stdout)
        self.assertIn("byte for byte", p.stdout)


if __name__ == "__main__":
    unittest.main()
