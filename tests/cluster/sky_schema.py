#!/usr/bin/env python3
"""Writes SkyPilot's task schema as JSON, by running SkyPilot's own code.

usage: sky_schema.py SCHEMAS_PY OUT_DIR COMMIT

SCHEMAS_PY is sky/utils/schemas.py of a skypilot-org/skypilot checkout at
COMMIT (git --git-dir=DIR show COMMIT:sky/utils/schemas.py > schemas.py).
It is loaded as sky.utils.schemas with small stand-ins for the modules it
imports (below: the values are SkyPilot's own, copied from the files
named), and its functions write
  OUT_DIR/skypilot-task.json       get_task_schema()
  OUT_DIR/skypilot-resources.json  get_resources_schema()
SkyPilot checks a task YAML in these two steps (sky/task.py
Task.from_yaml_config validates the document against get_task_schema(),
whose `resources` is only {"type": "object"}; sky/resources.py then
validates `resources` against get_resources_schema()); tests/cluster/
sky_validate.js does the same.

Stand-ins, and what they change in the output:
- _task_config_schema (the task's `config:` block) is the global config
  schema filtered to the keys a task may override (get_config_schema(),
  which imports most of SkyPilot): replaced by the same object with only
  its `hooks` property; it allows other keys (additionalProperties is
  true on a client), so only the values of those keys go unchecked.
  dsforge writes no `config:` block.
- constants.SUB_PATH_PATTERN (volume_mounts[].sub_path) was not looked
  up: the pattern is left out. dsforge writes no volume_mounts.
Nothing else is changed; a "$comment" naming the source is added.
"""
import enum
import json
import os
import sys
import types
from typing import List


def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _make_time_pattern(units):
    unit_pattern = '|'.join([u.lower() for u in units] + [u.upper() for u in units])
    return f'^[0-9]+({unit_pattern})?$'


# sky/skylet/constants.py (skypilot-org/skypilot e8f691298eb50fdb73e7d50b54cf3b575c51c54c)
MEMORY_SIZE_UNITS = ['kb', 'ki', 'mb', 'mi', 'gb', 'gi', 'tb', 'ti', 'pb', 'pi']
CONSTANTS = dict(
    ALL_CLOUDS=('aws', 'azure', 'gcp', 'ibm', 'lambda', 'scp', 'oci', 'kubernetes', 'runpod',
                'vast', 'vsphere', 'cudo', 'fluidstack', 'paperspace', 'primeintellect', 'do',
                'nebius', 'ssh', 'slurm', 'hyperbolic', 'seeweb', 'shadeform', 'yotta'),
    TIME_PATTERN=_make_time_pattern({'m': 1, 'h': 60, 'd': 24 * 60, 'w': 7 * 24 * 60}),
    MEMORY_SIZE_PATTERN=('^[0-9]+('
                         f'{"|".join([u.lower() for u in MEMORY_SIZE_UNITS])}|'
                         f'{"|".join([u.upper() for u in MEMORY_SIZE_UNITS])}|'
                         f'{"|".join([u[0].upper() + u[1:] for u in MEMORY_SIZE_UNITS if len(u) > 1])}'
                         ')?$'),
    MIN_PRIORITY=-1000,
    MAX_PRIORITY=1000,
    ENV_VAR_IS_SKYPILOT_SERVER='IS_SKYPILOT_SERVER',
    SUB_PATH_PATTERN='\0not looked up',
    OVERRIDEABLE_CONFIG_KEYS_IN_TASK=[],
)


# sky/skylet/autostop_lib.py (the same commit as constants.py)
class AutostopWaitFor(enum.Enum):
    JOBS_AND_SSH = 'jobs_and_ssh'
    JOBS = 'jobs'
    NONE = 'none'

    @classmethod
    def supported_modes(cls) -> List[str]:
        return [mode.value for mode in cls]


class _AnyEnums(types.ModuleType):
    """kubernetes_enums: read only by get_config_schema's module-level
    tables, not by the task or resources schema."""

    def __getattr__(self, name):
        return enum.Enum(name, {})


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    src, out, commit = argv[1], argv[2], argv[3]
    os.environ.pop(CONSTANTS['ENV_VAR_IS_SKYPILOT_SERVER'], None)  # a client's view
    stub('sky', __path__=[])
    stub('sky.skylet', __path__=[])
    stub('sky.skylet.constants', **CONSTANTS)
    stub('sky.skylet.autostop_lib', AutostopWaitFor=AutostopWaitFor)
    stub('sky.utils', __path__=[])
    sys.modules['sky.utils.kubernetes_enums'] = _AnyEnums('sky.utils.kubernetes_enums')
    mod = types.ModuleType('sky.utils.schemas')
    mod.__file__ = src
    sys.modules['sky.utils.schemas'] = mod
    with open(src, encoding='utf-8') as f:
        code = compile(f.read(), src, 'exec')
    exec(code, mod.__dict__)  # pylint: disable=exec-used

    def task_config_schema():
        return {'type': 'object', 'additionalProperties': mod._allow_additional_properties(),
                'properties': {'hooks': mod._HOOKS_SCHEMA}}
    mod._task_config_schema = task_config_schema

    def drop_sub_path_pattern(s):
        if isinstance(s, dict):
            if s.get('pattern') == CONSTANTS['SUB_PATH_PATTERN']:
                del s['pattern']
            for v in s.values():
                drop_sub_path_pattern(v)
        elif isinstance(s, list):
            for v in s:
                drop_sub_path_pattern(v)
        return s

    where = f'skypilot-org/skypilot sky/utils/schemas.py at {commit}'
    for name, fn in (('skypilot-task.json', mod.get_task_schema),
                     ('skypilot-resources.json', mod.get_resources_schema)):
        schema = drop_sub_path_pattern(fn())
        doc = {'$comment': f'{fn.__name__}() of {where}, written by dsforge'
                           ' tests/cluster/sky_schema.py (its docstring: the stand-ins)'}
        doc.update(schema)
        with open(os.path.join(out, name), 'w', encoding='utf-8') as f:
            json.dump(doc, f, indent=2, sort_keys=False)
            f.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
