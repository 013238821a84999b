// Opens a perfship report page in Debian's chromium (headless, driven by
// playwright-core) and prints, as one JSON object, what a reader sees of
// its Benchmarker section: per group (configuration and load) the heading,
// the arms listed, each arm's fitted curve, its measured steps with their
// kind (kept, discarded, unstable) and load, its latency line, the
// peaks table and the notes of the verdicts across releases; and whether any script the data could carry ran. It judges
// nothing itself: tests/integration/test_report_benchmarker.py does.
//
// Usage: node benchmarker-check.mjs PAGE.html
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pagePath] = process.argv.slice(2);
if (!pagePath) {
  console.error('usage: node benchmarker-check.mjs PAGE.html');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'perfship-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.PERFSHIP_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1400, height: 1000 },
});
try {
  const page = await context.newPage();
  const dialogs = [];
  const errors = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(pagePath).href, { waitUntil: 'load' });
  const section = await page.evaluate(() => {
    const s = document.querySelector('section#benchmarker');
    if (!s) return null;
    const box = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    return {
      empty: (s.querySelector('p.empty') || {}).textContent || null,
      groups: [...s.querySelectorAll('.bm-group')].map((g) => ({
        configuration: g.dataset.configuration,
        load: g.dataset.load,
        heading: g.querySelector('h3').textContent,
        arms: [...g.querySelectorAll('.bm-arms li')].map((li) => ({ scenario: li.dataset.scenario, arm: li.dataset.arm,
                                                                   text: li.textContent })),
        fits: [...g.querySelectorAll('svg.bm-throughput path.fit')].map((p) => ({
          scenario: p.dataset.scenario, arm: p.dataset.arm, drawn: box(p) })),
        steps: [...g.querySelectorAll('svg.bm-throughput g.step')].map((m) => ({
          scenario: m.dataset.scenario, arm: m.dataset.arm, load: Number(m.dataset.load), reason: m.dataset.reason,
          kind: m.classList.contains('kept') ? 'kept'
            : m.classList.contains('discarded') ? 'discarded' : 'unstable',
          drawn: box(m) })),
        latency: [...g.querySelectorAll('svg.bm-latency path.latency')].map((p) => ({
          scenario: p.dataset.scenario, arm: p.dataset.arm, drawn: box(p) })),
        peaks: [...g.querySelectorAll('table.bm-peaks tbody tr')].map(
          (tr) => [...tr.cells].map((c) => c.textContent)),
        notes: [...g.querySelectorAll('ul.bm-notes li')].map((li) => ({ text: li.textContent, shown: box(li) })),
      })),
      images: s.querySelectorAll('img').length,
      scripts: s.querySelectorAll('script').length,
    };
  });
  console.log(JSON.stringify({ section, dialogs, errors }));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
