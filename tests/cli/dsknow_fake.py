"""A small package shaped like DeepSpeed's config code, traced by
contrib/dsknow/trace.py's own Recorder as the coverage report traces
DeepSpeed (the dataflow and preempt tests)."""
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import textwrap

import dsf

DSKNOW = os.path.join(dsf.SOURCE_DIR, "contrib", "dsknow")


class Traced:
    """package's source as the package `name` (and each of modules,
    {name: source}, as a module beside it, outside the package), its
    Config(cfg) run on each of configs under the Recorder: .checks
    {tag: trace.py's check} (a check's tag is the `# @tag` ending its
    line), .verdicts {config name: "accept" or "reject: TYPE: message"}."""

    def __init__(self, name, package, configs, modules=None):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="dsknow-%s-" % name)
        self.modules = sorted(modules or {})
        pkg = os.path.join(self.tmp, name)
        os.mkdir(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(package))
        for mod, text in sorted((modules or {}).items()):
            with open(os.path.join(self.tmp, mod + ".py"), "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        sys.path.insert(0, self.tmp)
        spec = importlib.util.spec_from_file_location(   # (not the standard library's trace)
            "dsknow_trace", os.path.join(DSKNOW, "trace.py"))
        tr = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tr)
        fake = importlib.import_module(name)
        rec = tr.Recorder(pkg)
        per_file, self.verdicts = {}, {}
        for cname, cfg in sorted(configs.items()):
            rec.reset()
            sys.settrace(rec.global_trace)
            try:
                fake.Config(cfg)
                self.verdicts[cname] = "accept"
            except Exception as e:   # (a NameError too: DeepSpeed's own bug, as at 0.14.5)
                self.verdicts[cname] = "reject: %s: %s" % (type(e).__name__, e)
            finally:
                sys.settrace(None)
            per_file[cname] = (rec.lines, rec.asserted)
        self.checks = {c["code"].split("# @")[-1].strip(): c
                       for c in tr.find_checks(rec, pkg, sorted(configs), per_file)}

    def close(self):
        sys.path.remove(self.tmp)
        sys.path.remove(DSKNOW)   # (trace.py puts its folder first, for dataflow)
        for m in [self.name, "dataflow", "preempt", "preempt_facts"] + self.modules:
            sys.modules.pop(m, None)
        shutil.rmtree(self.tmp)
