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
// otherwise; one line per file: "ok FILE" or "FAIL FILE: reason".
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

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node flux-check.mjs FILE.flux...');
  process.exit(64);
}
const flux = await loadFlux();
let failed = 0;
for (const f of files) {
  const { src, shift } = withDashboardVars(readFileSync(f, 'utf8'));
  const errs = parseErrors(flux.parse(src)).map((e) =>
    e.replace(/^(\d+):/, (_, l) => `${Number(l) - shift}:`));
  let valid = false;
  try { valid = flux.is_valid_flux(src); } catch (e) { errs.push(String(e)); }
  if (errs.length || !valid) {
    failed++;
    console.log(`FAIL ${f}: ${errs.length ? errs.join('; ') : 'semantic check failed (unknown function, wrong argument or type)'}`);
  } else {
    console.log(`ok ${f}`);
  }
}
process.exit(failed ? 1 : 0);
