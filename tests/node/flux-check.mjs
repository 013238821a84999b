// Offline Flux check for perfship's .flux files: the parser (syntax) and the
// semantic analyser (types, builtin function signatures, unknown functions)
// from @influxdata/flux-lsp-browser, run under Node without a server.
//
// The package is built for browser bundlers, so its glue module cannot be
// imported as is: it imports the .wasm file as an ES module, which Node does
// not do. We load a patched copy of the glue whose `wasm` binding is settable,
// instantiate the .wasm ourselves with the glue as its import object, then
// hand the instance's exports to the glue.
//
// Usage: node flux-check.mjs FILE.flux...   Exit 0 when every file is valid, 1
// otherwise; one line per file: "ok FILE" or "FAIL FILE: reason", the reason
// being what the language server says (LINE:COL: message, as an editor shows
// it), since "semantic check failed" alone sends the reader guessing.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, 'node_modules', '@influxdata', 'flux-lsp-browser');

async function loadFlux() {
  let glue = readFileSync(join(pkg, 'flux-lsp-browser_bg.js'), 'utf8');
  const importLine = /import \* as wasm from ['"]\.\/flux-lsp-browser_bg\.wasm['"];?/;
  if (!importLine.test(glue)) throw new Error('unexpected glue layout: wasm import not found');
  glue = glue.replace(importLine,
    'let wasm;\nexport function __perfship_set_wasm(w) { wasm = w; ' +
    'cachedInt32Memory0 = new Int32Array(wasm.memory.buffer); ' +
    'cachedUint8Memory0 = new Uint8Array(wasm.memory.buffer); }');
  // The trailing top-level memory views run at import time, before the
  // instance exists; the setter above creates them instead.
  glue = glue.replace(/\ncachedInt32Memory0 = new Int32Array\(wasm\.memory\.buffer\);\s*$/m, '\n')
             .replace(/\ncachedUint8Memory0 = new Uint8Array\(wasm\.memory\.buffer\);\s*$/m, '\n');
  const dir = mkdtempSync(join(tmpdir(), 'perfship-flux-'));
  const glueFile = join(dir, 'glue.mjs');
  writeFileSync(glueFile, glue);
  globalThis.module = { require: createRequire(import.meta.url) };
  try {
    const ns = await import(pathToFileURL(glueFile).href);
    const bytes = readFileSync(join(pkg, 'flux-lsp-browser_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './flux-lsp-browser_bg.js': ns });
    ns.__perfship_set_wasm(instance.exports);
    return ns;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Collects the parser's error nodes anywhere in the AST, to say *why*.
function parseErrors(node, out = []) {
  if (Array.isArray(node)) { for (const n of node) parseErrors(n, out); return out; }
  if (node && typeof node === 'object') {
    if (Array.isArray(node.errors)) {
      for (const e of node.errors) {
        const loc = node.location || node.loc;
        const where = loc && loc.start ? `${loc.start.line}:${loc.start.column}: ` : '';
        out.push(where + (e.msg || JSON.stringify(e)));
      }
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'errors') parseErrors(v, out);
  }
  return out;
}

// Dashboard queries use the variables the InfluxDB UI defines (v.timeRangeStart,
// v.windowPeriod, and one per dashboard variable). Offline they must be
// declared, or the type checker rightly reports an undefined identifier; the
// prelude declares them with the types the UI gives them.
function withDashboardVars(src) {
  if (!/\bv\./.test(src) || /^\s*v\s*=/m.test(src)) return { src, shift: 0 };
  const names = new Set([...src.matchAll(/\bv\.(\w+)/g)].map((m) => m[1]));
  const known = { timeRangeStart: '-1h', timeRangeStop: 'now()', windowPeriod: '1m' };
  const fields = [...names].map((n) => `${n}: ${known[n] || '"example"'}`);
  return { src: `v = {${fields.join(', ')}}\n` + src, shift: 1 };
}

// The package's language server, spoken to as an editor does (plain JSON-RPC
// messages, no Content-Length framing): each file is opened as a document,
// and the server answers with its diagnostics for it.
async function startLsp(ns) {
  // the server logs its start through console.info, onto stdout where the
  // verdict lines go; its errors still reach stderr
  console.info = console.debug = () => {};
  const lsp = new ns.Lsp();
  const waiting = new Map(); // uri -> resolve
  lsp.onMessage((raw) => {
    let m;
    try { m = JSON.parse(raw); } catch { return; }
    if (m.method !== 'textDocument/publishDiagnostics') return;
    const done = waiting.get(m.params.uri);
    if (done) { waiting.delete(m.params.uri); done(m.params.diagnostics || []); }
  });
  lsp.run().catch((e) => console.error(`language server stopped: ${e}`));
  await lsp.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
                                  params: { capabilities: {} } }));
  await lsp.send(JSON.stringify({ jsonrpc: '2.0', method: 'initialized', params: {} }));
  let n = 0;
  return async function diagnostics(text) {
    // a folder each: documents of one folder are one package, whose options
    // (option task) would clash across files
    const uri = `file:///perfship-check-${++n}/query.flux`;
    const answer = new Promise((resolve) => {
      waiting.set(uri, resolve);
      // a server that says nothing is reported as such, not waited on forever
      setTimeout(() => { if (waiting.delete(uri)) resolve(null); }, 10000);
    });
    await lsp.send(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen',
      params: { textDocument: { uri, languageId: 'flux', version: 1, text } } }));
    return answer;
  };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node flux-check.mjs FILE.flux...');
  process.exit(64);
}
const flux = await loadFlux();
const diagnostics = await startLsp(flux);
let failed = 0;
for (const f of files) {
  const { src, shift } = withDashboardVars(readFileSync(f, 'utf8'));
  const errs = parseErrors(flux.parse(src)).map((e) =>
    e.replace(/^(\d+):/, (_, l) => `${Number(l) - shift}:`));
  let valid = false;
  try { valid = flux.is_valid_flux(src); } catch (e) { errs.push(String(e)); }
  // LSP positions count from 0; the file's lines from 1, before the prelude
  const diags = await diagnostics(src);
  const said = (diags || []).filter((d) => !d.severity || d.severity === 1).map((d) =>
    `${d.range.start.line + 1 - shift}:${d.range.start.character + 1}: ${d.message}`);
  for (const d of said) if (!errs.some((e) => e.endsWith(d.replace(/^\d+:\d+: /, '')))) errs.push(d);
  if (errs.length || !valid) {
    failed++;
    const why = errs.length ? errs.join('; ')
      : diags === null ? 'semantic check failed, and the language server gave no diagnostics'
      : 'semantic check failed, though the language server reported no error';
    console.log(`FAIL ${f}: ${why}`);
  } else {
    console.log(`ok ${f}`);
  }
}
process.exit(failed ? 1 : 0);
