// The draft-07 schema (`dsforge schema --draft 07`) in the JSON language
// service VS Code itself uses (vscode-json-languageservice): validation,
// completion of keys, enum values and snippets, hover, the SchemaStore
// file patterns and a "$schema" reference; then every real-world config
// validated with ajv. Run by tests/editor/run.sh:
//   node vscode_ls.js SCHEMA.json CATALOG-ENTRY.json [REALWORLD-DIR]
// Prints one line per check; exits 1 on the first failure.
'use strict';
const fs = require('fs');
const path = require('path');
const ls = require('vscode-json-languageservice');
const { TextDocument } = require('vscode-languageserver-textdocument');

const [schemaPath, catalogPath, realworld] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const catalog = JSON.parse(fs.readFileSync(catalogPath, 'utf8'));

let failed = false;
function check(what, ok, detail) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what + (ok || detail === undefined ? '' : ': ' + detail));
  if (!ok) failed = true;
}

const service = ls.getLanguageService({
  // nothing is fetched: an unknown schema address is an error here
  schemaRequestService: (uri) => Promise.reject(new Error('no network in the test: ' + uri)),
});
service.configure({
  validate: true,
  allowComments: false,
  schemas: [{ uri: schema['$id'], fileMatch: catalog.fileMatch, schema }],
});

let version = 0;
function doc(name, text) {
  return TextDocument.create('file:///project/' + name, 'json', ++version, text);
}
async function validate(name, text) {
  const d = doc(name, text);
  return service.doValidation(d, service.parseJSONDocument(d));
}
// "|" in text marks the cursor.
function at(name, textWithCursor) {
  const off = textWithCursor.indexOf('|');
  const text = textWithCursor.slice(0, off) + textWithCursor.slice(off + 1);
  const d = doc(name, text);
  return { d, json: service.parseJSONDocument(d), pos: d.positionAt(off) };
}
async function complete(name, textWithCursor) {
  const { d, json, pos } = at(name, textWithCursor);
  return (await service.doComplete(d, pos, json)).items;
}
async function hover(name, textWithCursor) {
  const { d, json, pos } = at(name, textWithCursor);
  const h = await service.doHover(d, pos, json);
  if (!h) return '';
  const c = Array.isArray(h.contents) ? h.contents : [h.contents];
  return c.map((x) => (typeof x === 'string' ? x : x.value)).join('\n');
}
const messages = (diags) => diags.map((x) => x.message).join(' | ');

async function main() {
  // validation: a wrong type is an error, a good config has none
  const good = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,\n'
    + ' "bf16": {"enabled": true},\n'
    + ' "zero_optimization": {"stage": 3, "overlap_comm": true,\n'
    + '   "offload_optimizer": {"device": "cpu", "pin_memory": true}},\n'
    + ' "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}';
  let diags = await validate('ds_config.json', good);
  check('a good config has no diagnostics', diags.length === 0, messages(diags));
  diags = await validate('ds_config.json', '{"zero_optimization": {"stage": "two"}}');
  check('a string for zero_optimization.stage is an error',
    diags.some((x) => /integer/i.test(x.message) || /type/i.test(x.message)), messages(diags));
  diags = await validate('ds_config.json', '{"zero_optimization": {"stage": 4}}');
  check('stage 4 is an error', diags.length > 0, messages(diags));
  diags = await validate('ds_config.json', '{"zero_optimization": {"stage": 2, "overlap_com": true}}');
  check('a mistyped key in zero_optimization is an error',
    diags.some((x) => x.message.includes('overlap_com')), messages(diags));
  diags = await validate('ds_config.json', '{"zero_optimization": {"stage": 2, "cpu_offload": true}}');
  check('a deprecated key shows its deprecationMessage',
    diags.some((x) => x.message.startsWith('Deprecated: use offload_optimizer')), messages(diags));

  // the SchemaStore file patterns, and "$schema" in any file
  const bad = '{"train_batch_size": "eight"}';
  for (const name of ['ds_config.json', 'ds_config_zero3.json', 'ds_z3_config.json',
    'ds_z2_offload_config.json', 'deepspeed_config.json', 'deepspeed_config_stage2.json']) {
    diags = await validate(name, bad);
    check(name + ' gets the schema (file pattern)', diags.length > 0, messages(diags));
  }
  diags = await validate('settings.json', bad);
  check('settings.json does not get the schema', diags.length === 0, messages(diags));
  diags = await validate('train.json', '{"$schema": "' + schema['$id'] + '", "train_batch_size": "eight"}');
  check('"$schema" names the schema in any file', diags.length > 0, messages(diags));
  diags = await validate('train.json', '{"$schema": "' + schema['$id'] + '", "train_batch_size": 8}');
  check('"$schema" itself is no diagnostic', diags.length === 0, messages(diags));

  // completion: keys at a place, enum values, snippets
  let items = await complete('ds_config.json', '{"zero_optimization": {|}}');
  let labels = items.map((i) => i.label);
  check('keys of zero_optimization are completed',
    ['stage', 'offload_optimizer', 'offload_param', 'overlap_comm'].every((k) => labels.includes(k)),
    labels.join(','));
  check('top-level keys are not offered inside zero_optimization', !labels.includes('train_batch_size'));
  items = await complete('ds_config.json', '{"zero_optimization": {"stage": |}}');
  labels = items.map((i) => i.label);
  check('the ZeRO stages are completed', ['0', '1', '2', '3'].every((k) => labels.includes(k)), labels.join(','));
  const three = items.find((i) => i.label === '3');
  const docText = three && (typeof three.documentation === 'string' ? three.documentation
    : three.documentation && three.documentation.value);
  check('stage 3 is described (enumDescriptions)', /parameters partitioned/.test(docText || ''), docText);
  items = await complete('ds_config.json', '{"zero_optimization": {"offload_param": {"device": |}}}');
  labels = items.map((i) => i.label);
  check('offload devices are completed', ['"cpu"', '"nvme"', '"none"'].every((k) => labels.includes(k)),
    labels.join(','));
  items = await complete('ds_config.json', '{"zero_optimization": |}');
  labels = items.map((i) => i.label);
  check('ZeRO stage 2 and 3 snippets are offered',
    labels.includes('ZeRO stage 2') && labels.includes('ZeRO stage 3'), labels.join(','));
  for (const [key, label] of [['bf16', 'bf16 enabled'], ['optimizer', 'AdamW'], ['scheduler', 'WarmupDecayLR']]) {
    items = await complete('ds_config.json', '{"' + key + '": |}');
    check(key + ' offers the ' + label + ' snippet', items.some((i) => i.label === label),
      items.map((i) => i.label).join(','));
  }

  // hover: the key's explanation and its default
  let text = await hover('ds_config.json', '{"zero_optimization": {"st|age": 3}}');
  check('hover on stage explains it', /ZeRO stage/.test(text) && /Default: `0`/.test(text), text);
  text = await hover('ds_config.json', '{"train_micro_batch_size_per_gpu|": "auto"}');
  check('hover on an "auto" key says who fills it', /Hugging Face/.test(text), text);

  // every snippet body is a valid config
  for (const key of Object.keys(schema.properties)) {
    for (const sn of schema.properties[key].defaultSnippets || []) {
      diags = await validate('ds_config.json', JSON.stringify({ [key]: sn.body }));
      check('snippet ' + JSON.stringify(sn.label) + ' is valid', diags.length === 0, messages(diags));
    }
  }

  // ajv: the schema compiles as draft-07 and accepts the real-world configs
  const Ajv = require('ajv');
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  ajv.addVocabulary(['markdownDescription', 'enumDescriptions', 'deprecationMessage', 'defaultSnippets']);
  const validateFn = ajv.compile(schema);
  check('ajv compiles the schema as draft-07', typeof validateFn === 'function');
  check('ajv rejects a wrong type', !validateFn({ zero_optimization: { stage: 'two' } }));
  if (realworld) {
    const names = fs.readdirSync(realworld).filter((n) => n.endsWith('.json')).sort();
    check('real-world configs found', names.length > 0, realworld);
    for (const n of names) {
      const ok = validateFn(JSON.parse(fs.readFileSync(path.join(realworld, n), 'utf8')));
      check('ajv accepts ' + n, ok, JSON.stringify(validateFn.errors));
    }
  } else {
    console.log('skip real-world configs: ../shared/realworld-configs absent');
  }
}

main().then(() => process.exit(failed ? 1 : 0), (e) => {
  console.log('FAIL ' + (e && e.stack || e));
  process.exit(1);
});
