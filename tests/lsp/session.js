// tests/lsp/session.js -- `dsforge lsp` driven by vscode-jsonrpc (the
// JSON-RPC library VS Code's language client is built on) through a
// scripted session (issue 34): initialize, open, edit into an error and
// out of it, hover, complete, apply quick fixes (code actions), inlay
// hints, go to definition in a gen -o output, a profile's diagnostics,
// settings, a malformed
// message, an unknown
// method, a 10 MB document, invalid UTF-8, shutdown/exit, and a client
// that goes away. Exit 0 when every check holds.
//   node session.js DSFORGE
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const rpc = require('vscode-jsonrpc/node');

const dsforge = process.argv[2];
let failures = 0;
function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
  if (!cond) failures++;
}

// A server process with a connection; raw: every byte it wrote.
function start(env) {
  const proc = spawn(dsforge, ['lsp', '--stdio'],
                     { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const s = { proc, raw: '', stderr: '', diags: new Map(), waiters: [] };
  proc.stdout.on('data', (b) => { s.raw += b.toString('latin1'); });
  proc.stderr.on('data', (b) => { s.stderr += b.toString(); });
  s.exited = new Promise((res) => proc.on('exit', (code) => res(code)));
  s.conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout),
                                       new rpc.StreamMessageWriter(proc.stdin));
  s.conn.onNotification('textDocument/publishDiagnostics', (p) => {
    s.diags.set(p.uri, p);
    s.waiters = s.waiters.filter((w) => !(w.uri === p.uri && w.version === p.version && (w.resolve(p), true)));
  });
  s.conn.onError(() => {});
  s.conn.listen();
  return s;
}

// The diagnostics of uri at version (waits for them).
function diagnostics(s, uri, version, ms = 20000) {
  const have = s.diags.get(uri);
  if (have && have.version === version) return Promise.resolve(have);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no diagnostics for ${uri} v${version}`)), ms);
    s.waiters.push({ uri, version, resolve: (p) => { clearTimeout(t); resolve(p); } });
  });
}

// The LSP position (UTF-16 units: JavaScript's own string indexes) of
// the first occurrence of needle in text.
function pos(text, needle, after = 0) {
  const i = text.indexOf(needle, after);
  if (i < 0) throw new Error('not in text: ' + needle);
  const before = text.slice(0, i).split('\n');
  return { line: before.length - 1, character: before[before.length - 1].length };
}

// Waits until cond() holds (polling; at most ms): what the server sends
// without a request to wait on, however loaded the machine.
async function until(cond, ms = 20000) {
  for (const t0 = Date.now(); !cond() && Date.now() - t0 < ms;)
    await new Promise((r) => setTimeout(r, 20));
}

function frame(body) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]);
}

const CONFIG = [
  '{',
  '  "train_batch_size": 16,',
  '  "train_micro_batch_size_per_gpu": 2,',
  '  "gradient_accumulation_steps": 8,',
  '  "gradient_clipping": 1.0,',
  '  "optimizer": {"type": "AdamW", "params": {"lr": 0.0001}},',
  '  "zero_optimization": {"stage": 2, "overlap_comm": true},',
  '  "bf16": {"enabled": true}',
  '}',
  ''].join('\n');

async function main_session() {
  const s = start({ DSFORGE_PATH: process.env.DEF_PROFILES });
  const init = await s.conn.sendRequest('initialize', {
    processId: process.pid, rootUri: null, capabilities: {}, locale: 'en-US',
    initializationOptions: { dsforge: { dsVersion: '0.16.9', target: 'deepspeed' } } });
  check(init.capabilities.textDocumentSync.change === 2, 'initialize: incremental sync (2)');
  check(init.capabilities.hoverProvider === true && !!init.capabilities.completionProvider,
        'initialize: hover and completion');
  s.conn.sendNotification('initialized', {});

  // open a clean config: no errors
  const uri = 'file:///work/ds_config.json';
  let text = CONFIG, version = 1;
  s.conn.sendNotification('textDocument/didOpen',
    { textDocument: { uri, languageId: 'json', version, text } });
  let d = await diagnostics(s, uri, version);
  check(d.diagnostics.filter((x) => x.severity === 1).length === 0,
        'open: a valid config has no error: ' + JSON.stringify(d.diagnostics.map((x) => x.code)));

  // edit into an error (stage 2 -> 7), incrementally, and out of it
  async function edit(needle, replacement, after = 0) {
    const a = pos(text, needle, after);
    const b = { line: a.line, character: a.character + needle.length };
    const i = text.indexOf(needle, after);
    text = text.slice(0, i) + replacement + text.slice(i + needle.length);
    version++;
    s.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: [{ range: { start: a, end: b }, text: replacement }] });
    return diagnostics(s, uri, version);
  }
  d = await edit('"stage": 2', '"stage": 7');
  let bad = d.diagnostics.find((x) => x.code === 'invalid-value');
  const at = pos(text, '"stage": 7'); // check's line:col: the member's key
  check(bad && bad.severity === 1 && bad.range.start.line === at.line &&
        bad.range.start.character === at.character,
        'edit into an error: invalid-value at check\'s line:col (the key) ' + JSON.stringify(bad && bad.range));
  check(bad && bad.message.startsWith('zero_optimization.stage: 7 is not a valid value'),
        'the message is check\'s: ' + (bad && bad.message.split('\n')[0]));
  d = await edit('"stage": 7', '"stage": 3');
  check(!d.diagnostics.some((x) => x.severity === 1), 'edit out of it: the error clears');

  // non-ASCII before the error on the same line: UTF-16 columns
  d = await edit('"type": "AdamW"', '"type": "AdamW", "name": "Übung 😀 ok", "betas": [0.9, "x"]');
  const names = d.diagnostics.map((x) => x.code + '@' + x.range.start.line + ':' + x.range.start.character);
  const u = d.diagnostics.find((x) => x.message.includes('optimizer.name'));
  const want = pos(text, '"name"');
  check(u && u.range.start.line === want.line && u.range.start.character === want.character,
        'a finding after non-ASCII text is at its UTF-16 column: ' + names.join(' '));
  const v = d.diagnostics.find((x) => x.message.startsWith('optimizer.betas'));
  check(!v || (v.range.start.line === want.line && v.range.start.character > want.character),
        'a second finding on the line is further right');
  d = await edit(', "name": "Übung 😀 ok", "betas": [0.9, "x"]', '');

  // a document that does not parse: the syntax error at its position
  d = await edit('"bf16": {"enabled": true}', '"bf16": {"enabled": tru');
  bad = d.diagnostics.find((x) => x.severity === 1);
  check(bad && bad.range.start.line === 7, 'a syntax error is reported on its line: ' +
        JSON.stringify(bad && [bad.range.start, bad.message]));
  d = await edit('"bf16": {"enabled": tru', '"bf16": {"enabled": true}');
  check(!d.diagnostics.some((x) => x.severity === 1), 'fixed again: no error');

  // hover: the explain text of the key
  let h = await s.conn.sendRequest('textDocument/hover',
    { textDocument: { uri }, position: pos(text, 'stage"') });
  check(h && h.contents.value.includes('zero_optimization.stage') && h.contents.value.includes('ZeRO stage'),
        'hover on "stage": explain text');
  check(h && h.contents.value.includes('0.16.9'), 'hover at the release of the settings (0.16.9)');
  h = await s.conn.sendRequest('textDocument/hover',
    { textDocument: { uri }, position: { line: 0, character: 0 } });
  check(h === null, 'hover on "{": nothing');

  // completion: keys of zero_optimization, values of stage
  d = await edit('"stage": 3, ', '"stage": 3, "", ');
  let c = await s.conn.sendRequest('textDocument/completion',
    { textDocument: { uri }, position: (() => { const p = pos(text, '"", '); p.character += 1; return p; })() });
  const labels = c.items.map((x) => x.label);
  check(labels.includes('offload_optimizer') && labels.includes('stage3_max_live_parameters') &&
        !labels.includes('train_batch_size'), 'complete a key inside zero_optimization (' + labels.length + ' keys)');
  d = await edit('"stage": 3, "", ', '"stage": 3, ');
  c = await s.conn.sendRequest('textDocument/completion',
    { textDocument: { uri }, position: pos(text, '3, "overlap') });
  check(JSON.stringify(c.items.map((x) => x.label)) === '["0","1","2","3"]', 'complete the values of stage');
  c = await s.conn.sendRequest('textDocument/completion',
    { textDocument: { uri }, position: pos(text, 'true}\n}') });
  check(c.items.map((x) => x.label).join() === 'true,false', 'complete a boolean');

  // code action: a mistyped key; its quick fix applied as a client applies
  // a WorkspaceEdit (the edits as incremental changes, last first)
  async function applyEdit(we) {
    const edits = we.changes[uri].slice().sort((x, y) =>
      y.range.start.line - x.range.start.line || y.range.start.character - x.range.start.character);
    const off = (p) => text.split('\n').slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
    for (const e of edits)
      text = text.slice(0, off(e.range.start)) + e.newText + text.slice(off(e.range.end));
    version++;
    s.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: edits.map((e) => ({ range: e.range, text: e.newText })) });
    return diagnostics(s, uri, version);
  }
  d = await edit('"overlap_comm": true', '"overlap_com": true');
  const typo = d.diagnostics.find((x) => x.code === 'unknown-key');
  check(typo && typo.message.includes('did you mean "overlap_comm"'), 'a mistyped key: unknown-key');
  let acts = await s.conn.sendRequest('textDocument/codeAction', { textDocument: { uri },
    range: typo.range, context: { diagnostics: [typo], only: ['quickfix'] } });
  let fix = acts.find((a) => a.title === 'Rename "overlap_com" to "overlap_comm"');
  check(fix && fix.kind === 'quickfix' && fix.diagnostics[0].code === 'unknown-key' &&
        fix.diagnostics[0].message === typo.message, 'code action: the rename, with its diagnostic');
  const renamed = text.replace('"overlap_com"', '"overlap_comm"');
  d = await applyEdit(fix.edit);
  check(text === renamed, 'the fixed text is the config with the key renamed');
  check(!d.diagnostics.some((x) => x.code === 'unknown-key'), 'after the fix: no unknown-key');

  // inlay hints: the global batch at the world size in use
  check(init.capabilities.inlayHintProvider === true && init.capabilities.definitionProvider === true &&
        init.capabilities.codeActionProvider.codeActionKinds[0] === 'quickfix',
        'initialize: inlay hints, definition, quick fixes');
  const whole = { start: { line: 0, character: 0 }, end: { line: 99, character: 0 } };
  let hints = await s.conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: whole });
  check(hints.some((x) => x.label === 'global batch = micro batch per GPU 2 \u00d7 gradient accumulation 8 \u00d7 data-parallel world 1 = 16'),
        'inlay hint: the global batch at world size 1: ' + JSON.stringify(hints.map((x) => x.label)));
  // at world size 2 the batch identity breaks; its fix sets train_batch_size
  s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { dsforge: { worldSize: 2 } } });
  s.diags.delete(uri);
  d = await diagnostics(s, uri, version);
  bad = d.diagnostics.find((x) => x.code === 'batch-identity');
  check(bad && bad.severity === 1, 'world size 2: batch-identity');
  acts = await s.conn.sendRequest('textDocument/codeAction', { textDocument: { uri },
    range: bad.range, context: { diagnostics: [bad] } });
  fix = acts.find((a) => a.title === 'Set train_batch_size to 32');
  check(!!fix && acts.some((a) => a.title === 'Set gradient_accumulation_steps to 4'),
        'code actions: both ways to make the identity hold: ' + acts.map((a) => a.title).join(' | '));
  d = await applyEdit(fix.edit);
  check(text.includes('"train_batch_size": 32,') && !d.diagnostics.some((x) => x.code === 'batch-identity'),
        'the fix applied: train_batch_size 32, no batch-identity');
  hints = await s.conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: whole });
  check(hints.some((x) => x.label.endsWith('data-parallel world 2 = 32')), 'inlay hint at world size 2: 32');
  // with a model: the memory per GPU too (dsforge estimate's numbers)
  s.conn.sendNotification('workspace/didChangeConfiguration',
    { settings: { dsforge: { params: { model: 'llama-2-7b', gpus_per_node: 2 } } } });
  hints = await s.conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: whole });
  check(hints.some((x) => /^GPU memory per device \u2248 \d+\.\d GiB/.test(x.label)),
        'inlay hint with a model: the memory per GPU: ' + JSON.stringify(hints.map((x) => x.label)));
  s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { dsforge: { worldSize: 1 } } });

  // a profile: gen's diagnostics when it is opened and saved
  const pfile = process.env.DEF_PROFILES + '/broken.lua';
  const puri = 'file://' + pfile;
  const good = fs.readFileSync(process.env.DEF_PROFILE, 'utf8').replace('"defp"', '"broken"');
  const broken = good.replace('stage = 2', 'stage = 7');
  fs.writeFileSync(pfile, broken);
  s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: puri, languageId: 'lua', version: 1, text: broken } });
  d = await diagnostics(s, puri, 1);
  let perr = d.diagnostics.find((x) => x.severity === 1);
  check(perr && perr.code === 'invalid-value' && perr.range.start.line === 4 &&
        perr.message.includes('zero_optimization.stage: 7'),
        'a profile opened: its variant\'s error at the build\'s line: ' + JSON.stringify(perr && [perr.range.start, perr.message.split('\n')[0]]));
  fs.writeFileSync(pfile, good);
  s.diags.delete(puri);
  s.conn.sendNotification('textDocument/didSave', { textDocument: { uri: puri } });
  d = await diagnostics(s, puri, 1);
  check(!d.diagnostics.some((x) => x.severity === 1), 'saved fixed: no error');
  s.conn.sendNotification('textDocument/didClose', { textDocument: { uri: puri } });

  // go to definition in a gen -o output (tests/lsp/mkout.sh)
  const out = process.env.DEF_OUT;
  const vfile = out + '/defp-default.json';
  const vuri = 'file://' + vfile;
  const vtext = fs.readFileSync(vfile, 'utf8');
  s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: vuri, languageId: 'json', version: 1, text: vtext } });
  await diagnostics(s, vuri, 1);
  const defAt = (needle) => s.conn.sendRequest('textDocument/definition', { textDocument: { uri: vuri },
    position: (() => { const p = pos(vtext, needle); p.character += 1; return p; })() });
  let loc = await defAt('"gradient_clipping"');
  check(loc && loc.uri === 'file://' + fs.realpathSync(process.env.DEF_TEAM) && loc.range.start.line === 2,
        'definition of a -f file\'s value: that file, line 3: ' + JSON.stringify(loc));
  loc = await defAt('"train_micro_batch_size_per_gpu"');
  check(loc && loc.uri === 'file://' + fs.realpathSync(process.env.DEF_PROFILE) && loc.range.start.line === 4,
        'definition of a profile\'s value: its line (gen --why\'s): ' + JSON.stringify(loc));
  loc = await defAt('"stage"');
  check(loc === null, 'definition of a value a command-line argument set: null');
  s.conn.sendNotification('textDocument/didClose', { textDocument: { uri: vuri } });

  // settings: "auto" is an error for plain DeepSpeed, fine at target hf
  d = await edit('"train_micro_batch_size_per_gpu": 2', '"train_micro_batch_size_per_gpu": "auto"');
  check(d.diagnostics.some((x) => x.code === 'auto-value' && x.severity === 1), 'target deepspeed: "auto" is an error');
  s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { dsforge: { target: 'hf' } } });
  s.diags.delete(uri);
  d = await diagnostics(s, uri, version);
  check(!d.diagnostics.some((x) => x.code === 'auto-value'), 'target hf (didChangeConfiguration): no auto-value');
  s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { dsforge: { dsVersion: '0.0.1' } } });
  const shown = () => /"method":"window\/showMessage".*dsVersion/.test(s.raw);
  await until(shown);
  check(shown(), 'a release no plugin covers is shown to the user');

  // a malformed message: not JSON -> -32700; a bad header -> skipped
  s.proc.stdin.write(frame('{"jsonrpc": "2.0", "id": 99, "method": '));
  s.proc.stdin.write(Buffer.from('X-Nonsense\r\n\r\n'));
  s.proc.stdin.write(frame('[1, 2]'));
  await until(() => s.raw.includes('"code":-32700') && s.raw.includes('"code":-32600'));
  check(s.raw.includes('"code":-32700'), 'a body that is not JSON: parse error -32700');
  check(s.raw.includes('"code":-32600'), 'a body that is not a request: -32600');
  // an unknown method: -32601 for a request; a notification is ignored
  s.conn.sendNotification('dsforge/nothing', {});
  try {
    await s.conn.sendRequest('dsforge/nothing', {});
    check(false, 'an unknown method is an error');
  } catch (e) {
    check(e.code === -32601, 'an unknown method: -32601 (' + e.message + ')');
  }

  // invalid UTF-8 in a document (raw bytes in the JSON body)
  const bu = 'file:///work/bad_utf8.json';
  const body = Buffer.concat([
    Buffer.from(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"${bu}","languageId":"json","version":1,"text":"{\\"train_batch_size\\": 8, \\"`),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('\\": 1}"}}}')]);
  s.proc.stdin.write(frame(body));
  d = await diagnostics(s, bu, 1);
  check(d.diagnostics.some((x) => x.severity === 1), 'invalid UTF-8: an error, no crash: ' +
        (d.diagnostics[0] && d.diagnostics[0].message.split('\n')[0]));
  s.conn.sendNotification('textDocument/didChange', { textDocument: { uri: bu, version: 2 },
    contentChanges: [{ range: { start: { line: 0, character: 26 }, end: { line: 0, character: 28 } }, text: 'é' }] });
  d = await diagnostics(s, bu, 2);
  check(true, 'a ranged edit over invalid bytes: diagnostics again');

  // a 10 MB document, then an edit near its end
  const big = 'file:///work/big.json';
  let bigText = '{\n  "train_batch_size": 8,\n  "train_micro_batch_size_per_gpu": 8,\n  "gradient_clipping": 1.0,\n  "zero_optimization": {"stage": 2},\n  "comment": [\n';
  const row = '    "' + 'x'.repeat(96) + '",\n';
  while (bigText.length < 10 * 1024 * 1024) bigText += row;
  bigText += '    "end"\n  ]\n}\n';
  const t0 = Date.now();
  s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: big, languageId: 'json', version: 1, text: bigText } });
  d = await diagnostics(s, big, 1, 60000);
  check(!d.diagnostics.some((x) => x.severity === 1), `10 MB document: diagnostics in ${Date.now() - t0} ms`);
  const endPos = pos(bigText, '"end"');
  s.conn.sendNotification('textDocument/didChange', { textDocument: { uri: big, version: 2 },
    contentChanges: [{ range: { start: endPos, end: { line: endPos.line, character: endPos.character + 5 } }, text: '"end",' }] });
  d = await diagnostics(s, big, 2, 60000);
  bad = d.diagnostics.find((x) => x.severity === 1);
  check(!bad || bad.range.start.line >= endPos.line, '10 MB document: an edit at its end is checked there');
  s.conn.sendNotification('textDocument/didClose', { textDocument: { uri: big } });

  // shutdown, exit: status 0
  await s.conn.sendRequest('shutdown');
  s.conn.sendNotification('exit');
  const code = await s.exited;
  check(code === 0, 'shutdown then exit: exit status 0 (got ' + code + ')');
}

async function chinese_and_gone() {
  const s = start({});
  await s.conn.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {}, locale: 'zh-CN' });
  s.conn.sendNotification('initialized', {});
  const uri = 'file:///work/zh.json';
  const text = '{"zero_optimization": {"stage": 3}}';
  s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'json', version: 1, text } });
  await diagnostics(s, uri, 1);
  const h = await s.conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: pos(text, 'stage') });
  check(h && /[\u4e00-\u9fff]/.test(h.contents.value), 'locale zh-CN: the hover text is Chinese');
  // the client goes away: its end of the pipe closes, the server exits
  s.proc.stdin.end();
  const code = await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('timeout'), 10000))]);
  check(code === 1, 'a client that goes away: the server exits (status 1, no shutdown; got ' + code + ')');
}

(async () => {
  try {
    await main_session();
    await chinese_and_gone();
  } catch (e) {
    console.log('FAIL ' + (e.stack || e));
    failures++;
  }
  console.log(failures ? `${failures} failed` : 'all passed');
  process.exit(failures ? 1 : 0);
})();
