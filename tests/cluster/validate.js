// tests/cluster/validate.js -- validates JSON documents against a JSON
// Schema with ajv (npm), as tests/cluster/test_schemas.py asks:
//   node validate.js SCHEMA.json DOCS.json
// DOCS.json is a list of {name, doc}. Prints one line per invalid
// document (its name and ajv's errors) and exits 1 when any is invalid,
// 0 when every one is valid.
//
// Kubernetes' OpenAPI schemas carry x-kubernetes-* extensions (CEL rules,
// list types) that are not JSON Schema: strict mode is off so ajv ignores
// them, and so are formats (int-or-string, date-time) it does not know.
"use strict";
const fs = require("fs");
const Ajv = require("ajv");

// kubectl's default field validation (Strict since Kubernetes 1.27)
// refuses a field the schema does not declare, where a structural schema
// alone would prune it: every object schema that lists its properties,
// has no additionalProperties of its own and does not preserve unknown
// fields is closed here the same way.
function closeObjects(node) {
  if (Array.isArray(node)) { node.forEach(closeObjects); return; }
  if (node === null || typeof node !== "object") return;
  if (node.properties && node.additionalProperties === undefined &&
      !node["x-kubernetes-preserve-unknown-fields"]) {
    node.additionalProperties = false;
  }
  for (const v of Object.values(node)) closeObjects(v);
}

const [schemaPath, docsPath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
delete schema.$comment;
if (schema["x-kubernetes-group-version-kind"] !== undefined || schema.properties?.apiVersion) {
  closeObjects(schema);
}
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validate = ajv.compile(schema);
const docs = JSON.parse(fs.readFileSync(docsPath, "utf8"));
let bad = 0;
for (const { name, doc } of docs) {
  if (!validate(doc)) {
    bad++;
    console.log(name + ": " + ajv.errorsText(validate.errors, { separator: "; " }));
  }
}
console.log(`${docs.length - bad} of ${docs.length} valid against ${schemaPath}`);
process.exit(bad ? 1 : 0);
