// The report page's own script: draws the charts from the data the page
// carries (docs/report.md). perfship embeds this file in its binary at build
// time and inlines it into every page, allowed by its hash in the page's
// Content-Security-Policy.
//
// The tables and texts are already in the page as HTML; this script only
// turns each <canvas data-chart=...> into a Chart.js chart, when it first
// scrolls into view (a year of runs and a hundred DSS files make hundreds
// of charts; drawing them all at load would freeze the page) and all at
// once before printing. Data strings reach the page only through
// textContent and Chart.js labels, never through innerHTML.
'use strict';
(function () {
  var data = JSON.parse(document.getElementById('perfship-data').textContent);

  // Okabe-Ito: told apart with the common colour-vision deficiencies.
  var PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00',
                 '#F0E442', '#000000'];
  var RED = '#C62828', GREEN = '#2E7D32', GREY = '#616161';

  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, sans-serif';
  Chart.defaults.plugins.legend.labels.boxWidth = 12;

  function colour(i) { return PALETTE[i % PALETTE.length]; }

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  // UTC, as every time in the tables.
  function day(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());
  }
  function stamp(ms) {
    var d = new Date(ms);
    return day(ms) + ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ' UTC';
  }
  function num(v) {
    if (v === null || v === undefined) return '–';
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
  }
  function signed(p) { return (p > 0 ? '+' : '') + p.toFixed(1) + ' %'; }

  var VERDICT_WORD = { 1: 'regression', 2: 'improvement', 3: 'no change' };

  // --- across revisions: one metric of one test type on one machine over its
  // successful runs (never two machines on one line)
  function trend(canvas) {
    var s = data.trends[+canvas.dataset.series];
    var m = s.metrics[+canvas.dataset.metric];
    var points = [], styles = [], colours = [], radii = [];
    var plain = s.x.length > 60 ? 1.5 : 3; // a year of nights: dots, not discs
    for (var i = 0; i < s.x.length; i++) {
      if (m.y[i] === null) continue;
      points.push({ x: s.x[i], y: m.y[i], run: s.run[i], rev: s.rev[i], v: m.v[i], c: m.c[i] });
      styles.push(m.v[i] === 1 ? 'triangle' : m.v[i] === 2 ? 'rectRot' : 'circle');
      colours.push(m.v[i] === 1 ? RED : m.v[i] === 2 ? GREEN : PALETTE[0]);
      radii.push(m.v[i] === 1 || m.v[i] === 2 ? 7 : plain);
    }
    // On the time axis: just above the bottom of a hidden 0..1 axis.
    var bad = s.bad.map(function (b) { return { x: b.x, y: 0.05, run: b.run, status: b.status }; });
    var few = points.length <= 16;
    return {
      type: 'line',
      data: {
        datasets: [
          { label: m.label + ' (' + m.unit + ')', data: points, borderColor: PALETTE[0],
            backgroundColor: colours, pointBackgroundColor: colours, pointBorderColor: colours,
            pointStyle: styles, pointRadius: radii, pointHoverRadius: 8, borderWidth: 1.5,
            yAxisID: 'y' },
          { label: 'failed, interrupted or stalled', data: bad, showLine: false,
            pointStyle: 'crossRot', pointRadius: 7, borderColor: RED, backgroundColor: RED,
            borderWidth: 2, yAxisID: 'mark', clip: false }
        ]
      },
      options: {
        parsing: false,
        scales: {
          x: {
            type: 'linear',
            afterBuildTicks: few && points.length ? function (axis) {
              // Few runs: one tick per run, labelled with its revision.
              axis.ticks = points.map(function (p) { return { value: p.x }; });
            } : undefined,
            ticks: {
              maxRotation: 60,
              callback: function (v) {
                if (!few) return day(v);
                for (var i = 0; i < points.length; i++)
                  if (points[i].x === v) return [day(v), points[i].rev || points[i].run];
                return day(v);
              }
            }
          },
          y: { title: { display: true, text: m.unit } },
          mark: { axis: 'y', position: 'right', display: false, min: 0, max: 1 }
        },
        plugins: {
          legend: { display: bad.length > 0 },
          tooltip: {
            callbacks: {
              title: function (items) { return items[0].raw.run; },
              label: function (item) {
                var p = item.raw;
                if (item.datasetIndex === 1) return p.status + ', ' + stamp(p.x);
                var line = [num(p.y) + ' ' + m.unit + ', ' + stamp(p.x)];
                if (p.rev) line.push('revision ' + p.rev);
                if (p.v && p.v !== 3)
                  line.push(VERDICT_WORD[p.v] + (p.c !== null ? ' ' + signed(p.c) : ''));
                return line;
              }
            }
          }
        }
      }
    };
  }

  // --- each machine's newest run, stage against stage
  function stageBars(canvas, field, unit) {
    var s = data.stages[+canvas.dataset.stage];
    return {
      type: 'bar',
      data: {
        labels: s.stages.map(function (x) { return 'stage ' + x; }),
        datasets: s.tasks.map(function (t, i) {
          return { label: t.task, data: t[field], backgroundColor: colour(i) };
        })
      },
      options: { scales: { y: { beginAtZero: true, title: { display: true, text: unit } } } }
    };
  }

  function stageBlocks(canvas) {
    var s = data.stages[+canvas.dataset.stage];
    return {
      type: 'bar',
      data: {
        labels: s.stages.map(function (x) { return 'stage ' + x; }),
        datasets: [
          { label: 'avg swingset time (s)', data: s.swingset, backgroundColor: colour(0),
            yAxisID: 'y' },
          { label: 'avg block time (s)', data: s.block, type: 'line', borderColor: colour(1),
            backgroundColor: colour(1), yAxisID: 'y2' }
        ]
      },
      options: {
        scales: {
          y: { beginAtZero: true, position: 'left', title: { display: true, text: 'swingset s' } },
          y2: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                title: { display: true, text: 'block s' } }
        }
      }
    };
  }

  // --- inside the chain: the vats that moved most, then and now
  function chainVats(canvas) {
    var c = data.chains[+canvas.dataset.chain];
    return {
      type: 'bar',
      data: {
        labels: c.vats,
        datasets: [
          { label: 'old level (s per cycle)', data: c.then, backgroundColor: colour(0) },
          { label: 'this run (s per cycle)', data: c.now, backgroundColor: colour(1) }
        ]
      },
      options: { indexAxis: 'y',
                 scales: { x: { beginAtZero: true, title: { display: true, text: 's per cycle' } } } }
    };
  }

  // --- inside the chain: the top vats' delivery seconds in each block, one
  // line per vat (a block in which a vat had no delivery has no point)
  function chainBlocks(canvas) {
    var c = data.chains[+canvas.dataset.chain];
    return {
      type: 'line',
      data: {
        datasets: c.blocks.map(function (v, i) {
          var points = v.x.map(function (x, j) { return { x: x, y: v.y[j] }; });
          return { label: v.name || v.vat, data: points, borderColor: colour(i),
                   backgroundColor: colour(i), borderWidth: 1.5,
                   pointRadius: points.length > 200 ? 0 : 2 };
        })
      },
      options: {
        parsing: false,
        scales: {
          x: { type: 'linear', title: { display: true, text: 'block height' },
               ticks: { precision: 0 } },
          y: { beginAtZero: true, title: { display: true, text: 'delivery s per block' } }
        },
        plugins: {
          tooltip: {
            callbacks: {
              title: function (items) { return 'block ' + items[0].raw.x; },
              label: function (item) {
                var v = c.blocks[item.datasetIndex];
                return (v.name ? v.name + ' (' + v.vat + ')' : v.vat) + ': ' +
                  num(item.raw.y) + ' s';
              }
            }
          }
        }
      }
    };
  }

  // --- DSS bench: one test of one results file, against the sweep's variants
  function dss(canvas, field, unit) {
    var t = data.dss[+canvas.dataset.dss];
    var sets = t.arms.map(function (a, i) {
      return { label: a.arm, data: a[field], borderColor: colour(i), backgroundColor: colour(i),
               pointRadius: 4, yAxisID: 'y', type: 'line' };
    });
    var scales = {
      x: { title: { display: true, text: t.sweep || 'variant' } },
      y: { beginAtZero: true, title: { display: true, text: unit } }
    };
    if (field === 'rps') {
      // Failed actions on an axis of their own, as bars under the lines.
      t.arms.forEach(function (a, i) {
        sets.push({ label: a.arm + ' errors', data: a.errors, type: 'bar', yAxisID: 'errors',
                    backgroundColor: colour(i) + '55', borderColor: RED, borderWidth: 1 });
      });
      scales.errors = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                        title: { display: true, text: 'errors' },
                        ticks: { precision: 0 } };
    }
    return { type: 'line', data: { labels: t.variants, datasets: sets },
             options: { spanGaps: false, scales: scales } };
  }

  var BUILD = {
    'trend': trend,
    'stage-cycles': function (c) { return stageBars(c, 'cycles', 'cycles'); },
    'stage-duration': function (c) { return stageBars(c, 'duration', 's'); },
    'stage-blocks': stageBlocks,
    'chain-vats': chainVats,
    'chain-blocks': chainBlocks,
    'dss-rps': function (c) { return dss(c, 'rps', 'q/s'); },
    'dss-p95': function (c) { return dss(c, 'p95', 'p95 ms'); }
  };

  function draw(canvas) {
    if (canvas.dataset.drawn) return;
    canvas.dataset.drawn = 'pending';
    try {
      new Chart(canvas, BUILD[canvas.dataset.chart](canvas));
      canvas.dataset.drawn = '1';
    } catch (e) {
      canvas.dataset.drawn = 'error';
      throw e;
    }
  }

  var canvases = Array.prototype.slice.call(document.querySelectorAll('canvas[data-chart]'));
  if ('IntersectionObserver' in window) {
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
      });
    }, { rootMargin: '400px 0px' });
    canvases.forEach(function (c) { seen.observe(c); });
  } else {
    canvases.forEach(draw);
  }
  window.addEventListener('beforeprint', function () {
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
    canvases.forEach(draw);
  });
})();
