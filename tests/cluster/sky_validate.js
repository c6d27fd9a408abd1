// Validates SkyPilot task YAMLs (as sky_yaml.py prints them: a JSON list
// of {file, doc} on stdin) the way SkyPilot does: the document against
// get_task_schema() (draft 2020-12), its resources against
// get_resources_schema() (draft-07; sky/resources.py), with SkyPilot's
// two custom keywords (sky/utils/common_utils.py validate_schema:
// case_insensitive_enum, case_sensitive_enum), and the task name against
// sky/task.py's _VALID_NAME_REGEX (a check outside the schema). Strict,
// but for strictTypes: SkyPilot's schema puts minimum on a string (its
// autostop), which JSON Schema ignores and Python's jsonschema allows.
//   node sky_validate.js TASK_SCHEMA RESOURCES_SCHEMA < docs.json
'use strict';
const fs = require('fs');
const Ajv = require('ajv');
const Ajv2020 = require('ajv/dist/2020');

function keywords(ajv) {
  ajv.addKeyword({ keyword: 'case_insensitive_enum', type: 'string', schemaType: 'array',
    validate: (allowed, v) => allowed.some((a) => a.toLowerCase() === v.toLowerCase()) });
  ajv.addKeyword({ keyword: 'case_sensitive_enum', type: 'string', schemaType: 'array',
    validate: (allowed, v) => allowed.includes(v) });
  return ajv;
}

// SkyPilot's patterns are Python's: a scoped (?i:...) group (the infra
// pattern) is not JavaScript; it is written as the same group with each
// letter as [xX] (nothing else in these patterns differs).
function pyRegExp(pattern, flags) {
  let out = '';
  for (let i = 0; i < pattern.length;) {
    if (pattern.startsWith('(?i:', i)) {
      let depth = 1, j = i + 4;
      out += '(?:';
      for (; j < pattern.length && depth > 0; j++) {
        const c = pattern[j];
        if (c === '\\') { out += c + pattern[++j]; continue; }
        if (c === '(') depth++;
        if (c === ')') depth--;
        out += /[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c;
      }
      i = j;
    } else {
      out += pattern[i++];
    }
  }
  return new RegExp(out, flags);
}
pyRegExp.code = 'pyRegExp';

const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const task = keywords(new Ajv2020({ strict: true, strictTypes: false, allErrors: true, code: { regExp: pyRegExp } })).compile(read(process.argv[2]));
const res = keywords(new Ajv({ strict: true, strictTypes: false, allErrors: true, code: { regExp: pyRegExp } })).compile(read(process.argv[3]));
const NAME = /^[a-z0-9]+(?:[._-]{1,2}[a-z0-9]+)*$/;

const docs = JSON.parse(fs.readFileSync(0, 'utf8'));
let bad = 0;
for (const { file, doc } of docs) {
  const errs = [];
  if (!task(doc)) errs.push(...task.errors.map((e) => `task${e.instancePath} ${e.message}`));
  if (doc.resources !== undefined && !res(doc.resources)) {
    errs.push(...res.errors.map((e) => `resources${e.instancePath} ${e.message}`));
  }
  if (typeof doc.name === 'string' && !NAME.test(doc.name)) {
    errs.push(`name ${JSON.stringify(doc.name)} is not a SkyPilot task name`);
  }
  if (errs.length) {
    bad++;
    console.log(`FAIL ${file}:\n  ${errs.join('\n  ')}`);
  }
}
if (docs.length === 0) { console.log('FAIL: no task YAML to validate'); process.exit(1); }
console.log(`${docs.length - bad}/${docs.length} SkyPilot task YAMLs valid`);
process.exit(bad ? 1 : 0);
