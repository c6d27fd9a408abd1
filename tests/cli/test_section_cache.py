"""The section cache (plugins/deepspeed/section_cache.lua) as the host
feeds it: one process checking many configs serves a top-level section's
findings again only for a section equal to one walked before, keyed by the
host's identity of the section (ctx.identity, src/lua/identity.h). Every
config's findings are those it gets checked alone, whatever came before
it: number subtypes, the sign of zero, strings and numbers, objects and
arrays, keys in another order (issue 15)."""
import json
import os
import unittest

import dsf
from dsf import run

# Pairs of configs, as JSON text (so 1 and 1.0 stay apart), that differ in
# one section by something only the section's identity tells apart.
PAIRS = [
    ('{"zero_optimization": {"stage": 3}}',
     '{"zero_optimization": {"stage": "3"}}'),
    ('{"zero_optimization": {"stage": 3}}',
     '{"zero_optimization": {"stage": 4}}'),
    ('{"zero_optimization": {"stage": 3}}',
     '{"zero_optimization": {"stage": 3, "bogus": 1}}'),
    ('{"optimizer": {"type": "AdamW", "params": {"lr": 1}}}',
     '{"optimizer": {"type": "AdamW", "params": {"lr": 1.0}}}'),
    ('{"gradient_clipping": 1, "fp16": {"enabled": true, "loss_scale": 0.0}}',
     '{"gradient_clipping": 1, "fp16": {"enabled": true, "loss_scale": -0.0}}'),
    ('{"optimizer": {"type": "AdamW", "params": {"betas": [0.9, 0.95]}}}',
     '{"optimizer": {"type": "AdamW", "params": {"betas": [0.9, "x"]}}}'),
    ('{"flops_profiler": {}}', '{"flops_profiler": []}'),
    ('{"train_batch_size": 8}', '{"train_batch_size": 8.0}'),
    ('{"train_batch_size": 8}', '{"train_batch_size": "8"}'),
    ('{"steps_per_print": null}', '{"steps_per_print": false}'),
    # the same section with its keys in another order: the same findings
    ('{"zero_optimization": {"stage": 3, "overlap_comm": "yes"}}',
     '{"zero_optimization": {"overlap_comm": "yes", "stage": 3}}'),
    # a section whose verdict reads another one (kept by no cache)
    ('{"aio": {"block_size": "auto"}}',
     '{"aio": {"block_size": "auto"}, "zero_optimization": {"stage": 3, '
     '"offload_param": {"device": "nvme", "nvme_path": "/n"}}}'),
]


def canon(findings):
    return sorted(json.dumps(f, sort_keys=True) for f in findings)


class SectionCache(dsf.TempDirTest):
    def findings(self, res, path):
        self.assertIn(res.rc, (0, 1), repr(res))
        return [{k: v for k, v in f.items() if k != "file"}
                for f in json.loads(res.out) if f.get("file") == path]

    def test_each_config_gets_its_own_findings(self):
        differ = 0
        warm = self.write("warm.json", "{}")
        for i, (a, b) in enumerate(PAIRS):
            pa = self.write("a%02d.json" % i, a)
            pb = self.write("b%02d.json" % i, b)
            for target in ("deepspeed", "hf"):
                for ver in ((), ("--ds-version", "0.14.5")):
                    common = ("--format", "json", "--target", target) + ver
                    alone = {p: self.findings(run("check", *common, p), p)
                             for p in (pa, pb)}
                    if alone[pa] != alone[pb]:
                        differ += 1
                    for first, second in ((pa, pb), (pb, pa)):
                        with self.subTest(pair=i, target=target, ver=ver,
                                          first=os.path.basename(first)):
                            # (the first config a process checks is
                            # walked without the cache: a warm-up one,
                            # then first is kept, second looked up, then
                            # second served from the cache)
                            res = run("check", "-j", "1", *common, warm,
                                      first, second, second)
                            # (a file's findings are listed by
                            # position: the two checks' interleave)
                            got = self.findings(res, second)
                            self.assertEqual(canon(got),
                                             canon(alone[second] * 2))
                            self.assertEqual(self.findings(res, first),
                                             alone[first])
        # (the pairs differ in their findings: else this tests nothing)
        self.assertGreaterEqual(differ, len(PAIRS) - 2)


if __name__ == "__main__":
    unittest.main()
