// Opens a perfship report page in Debian's chromium (headless, driven by
// playwright-core) and prints, as one JSON object, what a reader would see
// and what the browser did: console messages, requests, dialogs, every
// chart's data and drawn pixels, the tables, and whether the page's
// Content-Security-Policy stops requests and injected scripts. It judges
// nothing itself: tests/integration/test_report.py compares all of it with
// what InfluxDB holds.
//
// Usage: node report-check.mjs PAGE.html SCREENSHOT.png PROBE_URL
//   PROBE_URL: a loopback HTTP receiver the page must never reach, used by
//   the CSP probes (fetch, image, inline script) after everything else.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pagePath, shotPath, probeUrl] = process.argv.slice(2);
if (!pagePath || !shotPath || !probeUrl) {
  console.error('usage: node report-check.mjs PAGE.html SCREENSHOT.png PROBE_URL');
  process.exit(2);
}

const profile = mkdtempSync(join(tmpdir(), 'perfship-chromium-'));
const out = { phases: {}, dialogs: [], charts: [], tables: {}, texts: {} };
let phase = 'load';
const events = (name) => (out.phases[name] ||= { console: [], requests: [], failed: [],
                                                 pageErrors: [] });

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.PERFSHIP_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // This machine's network is closed: without these chromium keeps trying
  // to reach Google's services in the background.
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1400, height: 1000 },
});
try {
  const page = await context.newPage();
  page.on('console', (m) => events(phase).console.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => events(phase).pageErrors.push(String(e)));
  page.on('request', (r) => events(phase).requests.push(r.url()));
  page.on('requestfailed', (r) => events(phase).failed.push(
    { url: r.url(), error: r.failure() && r.failure().errorText }));
  page.on('dialog', async (d) => { out.dialogs.push(d.message()); await d.dismiss(); });
  // Violations reported by the browser itself, seen before any page script.
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI });
    });
  });

  const url = pathToFileURL(pagePath).href;
  events('load');
  await page.goto(url, { waitUntil: 'load' });
  const t0 = Date.now();

  // Charts are drawn when they come into view: open every results file and
  // bring each canvas into view, as a reader scrolling through would.
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
  const count = await page.locator('canvas[data-chart]').count();
  for (let i = 0; i < count; i++) {
    const c = page.locator('canvas[data-chart]').nth(i);
    await c.scrollIntoViewIfNeeded();
    await page.waitForFunction((el) => el.dataset.drawn === '1' || el.dataset.drawn === 'error',
                               await c.elementHandle(), { timeout: 10000 });
  }
  out.drawMs = Date.now() - t0;

  out.charts = await page.evaluate(() => {
    const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
    return Array.from(document.querySelectorAll('canvas[data-chart]')).map((c) => {
      const chart = Chart.getChart(c);
      const ctx = c.getContext('2d');
      const img = ctx.getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      for (let i = 3; i < img.length; i += 4) if (img[i] > 0) painted++;
      // Pixels in each dataset's own colour: its line, points or bars were
      // drawn, not just the axes.
      const colourPixels = (chart ? chart.data.datasets : []).map((d) => {
        const col = typeof d.borderColor === 'string' && d.borderColor.length === 7
          ? d.borderColor : (typeof d.backgroundColor === 'string' &&
                             d.backgroundColor.length === 7 ? d.backgroundColor : null);
        if (!col) return null;
        const [r, g, b] = hex(col);
        let n = 0;
        for (let i = 0; i < img.length; i += 4)
          if (img[i + 3] > 200 && Math.abs(img[i] - r) < 40 && Math.abs(img[i + 1] - g) < 40 &&
              Math.abs(img[i + 2] - b) < 40) n++;
        return n;
      });
      // What the reader sees above the chart: its caption, the heading of
      // its group (a test type, a DSS test), and the results file it is in.
      const fig = c.closest('figure');
      const group = c.closest('.charts').previousElementSibling;
      const file = c.closest('details') ? c.closest('details').querySelector('summary') : null;
      return {
        kind: c.dataset.chart, series: c.dataset.series, metric: c.dataset.metric,
        dss: c.dataset.dss, chain: c.dataset.chain, drawn: c.dataset.drawn, width: c.width, height: c.height,
        painted, colourPixels,
        caption: fig ? fig.querySelector('figcaption').textContent : null,
        group: group ? group.textContent : null,
        file: file ? file.textContent : null,
        labels: chart ? chart.data.labels : null,
        datasets: chart ? chart.data.datasets.map((d) => ({
          label: d.label,
          data: d.data.map((p) => (p && typeof p === 'object')
            ? { x: p.x, y: p.y, run: p.run, rev: p.rev, v: p.v, status: p.status } : p),
        })) : null,
      };
    });
  });

  const rows = (sel) => page.evaluate((s) => Array.from(document.querySelectorAll(s)).map((tr) => ({
    cells: Array.from(tr.cells).map((td) => td.textContent),
    status: tr.dataset.status,
    badgeClass: tr.querySelector('.st') ? tr.querySelector('.st').className : null,
    badgeText: tr.querySelector('.st') ? tr.querySelector('.st').textContent : null,
    // stage drift in the runs table: the marks in view, the rest behind a disclosure
    stageMarks: Array.from(tr.querySelectorAll('.sd-mark')).filter((m) => !m.closest('details'))
      .map((m) => ({ text: m.textContent, cls: m.className, title: m.title,
                     children: m.children.length })),
    stageMore: tr.querySelector('details.sd-more') ? {
      summary: tr.querySelector('details.sd-more summary').textContent,
      items: Array.from(tr.querySelectorAll('details.sd-more > .v')).map((v) => v.textContent),
      text: tr.querySelector('details.sd-more').textContent,
    } : null,
    images: tr.querySelectorAll('img, script, iframe').length,
  })), sel);
  out.tables.runs = await rows('#runs-table tbody tr');
  out.tables.dss = await rows('#dss-table tbody tr');
  out.tables.drift = await rows('#drift-table tbody tr');
  out.tables.armVerdicts = await rows('table.arm-verdicts tbody tr');
  out.tables.chainStages = await rows('#chain-stages tbody tr');
  out.tables.chainVats = await rows('#chain-vats tbody tr');
  out.texts = await page.evaluate(() => ({
    headlines: Array.from(document.querySelectorAll('.headline')).map((h) => ({
      id: h.id, cls: h.className, text: h.textContent })),
    trendHeadings: Array.from(document.querySelectorAll('#trends h3')).map((h) => h.textContent),
    health: document.querySelector('#health').textContent,
    empty: Array.from(document.querySelectorAll('.empty')).map((e) => e.textContent),
    stageRun: document.querySelector('#stage-run') ? document.querySelector('#stage-run').textContent : null,
    images: document.images.length,
    scripts: document.scripts.length,
    pwned: window.__pwned === undefined ? null : window.__pwned,
    violations: window.__violations.slice(),
    csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]').content,
    // revision ranges: what a reader sees and where the link goes
    ranges: Array.from(document.querySelectorAll('.range')).map((r) => ({
      text: r.textContent, href: r.querySelector('a') ? r.querySelector('a').href : null })),
  }));
  // Text that could reorder what is shown: direction controls left in the
  // rendered text, and data strings whose direction is not isolated.
  out.bidi = await page.evaluate((find) => {
    const controls = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
    const names = Array.from(document.querySelectorAll('td.name, .name, .why'));
    const isolated = (el) => Array.from(el.childNodes).every((n) =>
      (n.nodeType === Node.TEXT_NODE && !n.textContent.trim()) ||
      (n.nodeType === Node.ELEMENT_NODE &&
       getComputedStyle(n).unicodeBidi === 'isolate'));
    const r = {
      rawControls: (document.body.textContent.match(controls) || []).length,
      dataStrings: names.length,
      notIsolated: names.filter((el) => !isolated(el)).map((el) => el.textContent),
    };
    if (find) {
      // The browser's own find-in-page: where does the name lead?
      // (the first hits may be in a headline: go on to the first in a row)
      window.getSelection().removeAllRanges();
      r.found = false;
      r.foundRow = null;
      for (let i = 0; i < 20 && !r.foundRow && window.find(find, false, false, false); i++) {
        r.found = true;
        const sel = window.getSelection();
        const at = sel.rangeCount ? sel.getRangeAt(0).startContainer.parentElement : null;
        const row = at ? at.closest('tr') : null;
        r.foundRow = row ? Array.from(row.cells).map((c) => c.textContent) : null;
      }
    }
    return r;
  }, process.env.PERFSHIP_FIND || '');

  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shotPath, fullPage: true });

  // The probes: the CSP must stop a fetch, an image and an injected inline
  // script, and the receiver must see nothing.
  phase = 'probe';
  events('probe');
  out.probe = await page.evaluate(async (target) => {
    const r = {};
    try { await fetch(target + '/fetch'); r.fetch = 'loaded'; } catch (e) { r.fetch = 'blocked'; }
    r.image = await new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve('loaded');
      img.onerror = () => resolve('blocked');
      img.src = target + '/image.png';
      setTimeout(() => resolve('timeout'), 3000);
    });
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1;';
    document.body.appendChild(s);
    r.inlineScript = window.__inline === 1 ? 'ran' : 'blocked';
    const holder = document.createElement('div');
    holder.innerHTML = '<img src="x" onerror="window.__handler = 1">';
    document.body.appendChild(holder);
    await new Promise((res) => setTimeout(res, 500));
    r.handler = window.__handler === 1 ? 'ran' : 'blocked';
    r.violations = window.__violations.slice();
    return r;
  }, probeUrl);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out));
