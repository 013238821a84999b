"""Candidates and revision ranges end to end, against a real InfluxDB.

A candidate (a `manual` run of a PR image) is judged against the current
level of the nightly series (docs/verdicts.md, "Candidates"): configured
(`verdicts.candidates`) when the agent sees it end, or asked for
(`perfship verdicts --candidate RUN --against SERIES`). A regression of the
nightly series names the last good and the first bad revision, and with
`verdicts.compare_url` the link reaches the webhook's payload (a real
receiver on loopback) and `perfship verdicts`.

Histories come from the loadgen generator (tests/data/loadgen/gen_loadgen.py)
as in test_verdicts.py: Scenario(slow=...) makes a slower revision, each run
within +-3 % of its level.
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (DATA_DIR, InfluxTestCase, WebhookReceiver, run_perfship,  # noqa: E402
                     scratch_dir, write_config)
from test_verdicts import DAY, make_history  # noqa: E402
from test_report import CHART_JS, CHROMIUM, open_in_browser  # noqa: E402
from test_report import Receiver as Probe  # noqa: E402

sys.path.insert(0, os.path.join(DATA_DIR, "loadgen"))

COMPARE = "https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}"


class Candidates(InfluxTestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-candidates-")
        self.hook = WebhookReceiver()
        self.addCleanup(self.hook.close)
        self.n = getattr(type(self), "_n", 0) + 1
        type(self)._n = self.n

    def agent(self, results, db, candidates=True):
        cand = ('candidates = { series = ["manual"]; against = "daily-perf"; };'
                if candidates else "")
        cfg = os.path.join(self.tmp, f"{db}.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.tmp, f"state-{db}"), database=db,
                     sources=f'{{ path = "{results}"; format = "loadgen"; }}', extra=f"""
verdicts = {{ {cand} compare_url = "{COMPARE}"; }};
alerts = {{ webhook = {{ url = "{self.hook.url}"; timeout_ms = 5000; }};
  on = ["regression", "improvement"]; catch_up_s = {60 * DAY}; min_interval_s = 0; }};
""")
        return cfg

    def once(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=240)
        self.assertEqual(rc, 0, err[-3000:])
        return err

    def revisions(self, db):
        rows = self.influx.query(db, "SELECT \"cycleAvgDuration\" FROM \"loadgen_run\" "
                                     "GROUP BY \"run\", \"revision\"")
        return {r["run"]: r["revision"] for r in rows}

    def nightly_and_manual(self):
        res = os.path.join(self.tmp, "results")
        t0 = int(time.time()) - 30 * DAY
        nightly = make_history(res, [1.0] * 15, seed=31, t0=t0)
        slow = make_history(res, [1.12], seed=32, noise=0.0, test_type="manual",
                            t0=t0 + 15 * DAY)[0]
        same = make_history(res, [1.0], seed=33, noise=0.0, test_type="manual",
                            t0=t0 + 15 * DAY + 3 * 3600)[0]
        return res, nightly, slow, same

    def test_configured_candidate(self):
        res, nightly, slow, same = self.nightly_and_manual()
        db = f"c{self.n}"
        self.once(self.agent(res, db))
        rows = self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE "
                                     "\"method\" = 'candidate' AND \"metric\" = 'cycleAvgDuration'")
        got = {r["run"]: r for r in rows}
        self.assertEqual(sorted(got), sorted([slow, same]), rows)
        reg = got[slow]
        self.assertEqual(reg["verdict"], "regression")
        self.assertEqual(reg["against"], "daily-perf")
        self.assertEqual(reg["series"], "manual")
        self.assertGreater(reg["change_pct"], 8)
        self.assertEqual(reg["baseline_runs"], 15)
        revs = self.revisions(db)
        # the range: the newest nightly run of the level, and the candidate
        self.assertEqual(reg["good_run"], nightly[-1])
        self.assertEqual(reg["good_revision"], revs[nightly[-1]])
        self.assertEqual(reg["bad_revision"], revs[slow])
        self.assertEqual(got[same]["verdict"], "none")
        self.assertEqual(got[same]["good_revision"], "")  # written, so a rewrite clears it
        # the candidate's own series has too few runs for verdicts within it
        own = self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE "
                                    "\"series\" = 'manual' AND \"method\" = 'edivisive'")
        self.assertEqual(own, [])
        # the alert: one regression, for the slow candidate, with the link
        # (the nightly runs' own verdicts may flag a metric the generator
        # draws with a wider spread: only the candidates are looked at)
        # The metric under test only: the generator draws the deploy
        # durations with a +-20 % spread, which a pass of the backfill that
        # knew few nightly runs may judge either way.
        regs = [b for b in self.hook.delivered() if b.get("event") == "regression"
                and b["run"].startswith("manual-")
                and "cycleAvgDuration" in [m["metric"] for m in b["metrics"]]]
        self.assertEqual([b["run"] for b in regs], [slow], self.hook.delivered())
        m = [x for x in regs[0]["metrics"] if x["metric"] == "cycleAvgDuration"][0]
        # (a backfill may raise it from a pass that knew fewer nightly runs:
        # the range is then a nightly revision of that level, and the link
        # is made of the range the event names)
        self.assertIn(m["good_revision"], [revs[n] for n in nightly])
        self.assertEqual(m["bad_revision"], revs[slow])
        link = COMPARE.format(good=m["good_revision"], bad=revs[slow])
        self.assertEqual(m["against"], "daily-perf")
        self.assertEqual(m["compare_url"], link)
        self.assertIn(f"{slow}: regression against the current daily-perf level", regs[0]["text"])
        self.assertIn(link, regs[0]["text"])

    def test_candidate_in_the_report(self):
        """The report shows the candidate's verdict as against the nightly
        level, with its range, and counts its metrics once."""
        res, nightly, slow, same = self.nightly_and_manual()
        db = f"c{self.n}"
        cfg = self.agent(res, db)
        self.once(cfg)
        page = os.path.join(self.tmp, "report.html")
        rc, out, err = run_perfship(["-c", cfg, "report", "-o", page, "--since", "10000d"])
        self.assertEqual(rc, 0, err)
        with open(page) as f:
            html = f.read()
        row = html[html.index(f"<bdi>{same}</bdi>"):]
        row = row[:row.index("</tr>")]
        # the candidate's metrics once (7), not again for its own series
        self.assertNotIn("no change in 14 metrics", row)
        self.assertTrue("no change in 7 metrics" in row or "regression" in row
                        or "improvement" in row, row)
        row = html[html.index(f"<bdi>{slow}</bdi>"):]
        row = row[:row.index("</tr>")]
        self.assertIn("against <bdi>daily-perf</bdi>", row)
        self.assertIn('class="range"', row)

    def test_candidate_asked_for(self):
        res, nightly, slow, same = self.nightly_and_manual()
        db = f"c{self.n}"
        cfg = self.agent(res, db, candidates=False)
        self.once(cfg)
        self.assertEqual(self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE "
                                               "\"method\" = 'candidate'"), [])
        revs = self.revisions(db)
        for run, want in ((slow, "regression"), (same, "none")):
            rc, out, err = run_perfship(["-c", cfg, "verdicts", "--candidate", run,
                                         "--against", "daily-perf", "--json"])
            self.assertEqual(rc, 0, err)
            got = {g["metric"]: g for g in json.loads(out)}
            c = got["cycleAvgDuration"]
            self.assertEqual(c["verdict"], want, out)
            self.assertEqual(c["method"], "candidate")
            self.assertEqual(c["baseline_runs"], 15)
            if want == "regression":
                self.assertEqual(c["compare_url"],
                                 COMPARE.format(good=revs[nightly[-1]], bad=revs[slow]))
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--candidate", slow,
                                     "--against", "daily-perf"])
        self.assertEqual(rc, 0, err)
        line = [x for x in out.splitlines() if "cycleAvgDuration" in x][0]
        self.assertTrue(line.startswith("regression"), out)
        self.assertIn(f"{revs[nightly[-1]]}..{revs[slow]}", line)
        # a run the server does not have: said, exit 65
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--candidate", "manual-nope",
                                     "--against", "daily-perf"])
        self.assertEqual(rc, 65, err)
        self.assertIn("manual-nope", err)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--candidate", slow])
        self.assertEqual(rc, 64, err)

    def test_regression_names_its_revision_range(self):
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.0] * 9 + [1.12] * 6, seed=11,
                             t0=int(time.time()) - 20 * DAY)
        db = f"c{self.n}"
        cfg = self.agent(res, db, candidates=False)
        self.once(cfg)
        revs = self.revisions(db)
        rows = self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE "
                                     "\"metric\" = 'cycleAvgDuration' AND "
                                     "\"verdict\" = 'regression'")
        self.assertEqual(len(rows), 1, rows)
        reg = rows[0]
        self.assertEqual(reg["good_run"], names[8])
        self.assertEqual(reg["bad_run"], names[9])
        self.assertEqual(reg["good_revision"], revs[names[8]])
        self.assertEqual(reg["bad_revision"], revs[names[9]])
        link = COMPARE.format(good=revs[names[8]], bad=revs[names[9]])
        regs = [b for b in self.hook.delivered() if b.get("event") == "regression"]
        self.assertTrue(regs, self.hook.delivered())
        ev = [b for b in regs if b["run"] == reg["run"]][0]
        m = [x for x in ev["metrics"] if x["metric"] == "cycleAvgDuration"][0]
        self.assertEqual(m["good_revision"], revs[names[8]])
        self.assertEqual(m["compare_url"], link)
        self.assertIn(link, ev["text"])
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d"])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"revisions {revs[names[8]]}..{revs[names[9]]} {link}", out)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d", "--json"])
        got = [g for g in json.loads(out) if g["verdict"] == "regression"
               and g["metric"] == "cycleAvgDuration"]
        self.assertEqual(got[0]["compare_url"], link)
        self.report_check(cfg, link)

    def report_check(self, cfg, link):
        """The report, in the browser: the regression shows its revision range
        as a link to the compare page, which the page's CSP lets through as a
        link (it loads nothing)."""
        if not (os.path.exists(CHROMIUM) and os.path.exists(CHART_JS)):
            self.skipTest("needs Debian's chromium and libjs-chart.js (scripts/deps --test)")
        page = os.path.join(self.tmp, "report.html")
        rc, out, err = run_perfship(["-c", cfg, "report", "-o", page, "--since", "10000d"])
        self.assertEqual(rc, 0, err)
        probe = Probe()
        try:
            seen = open_in_browser(page, os.path.join(self.tmp, "shot.png"), probe.url)
        finally:
            probe.close()
        good, bad = link.rsplit("/", 1)[1].split("...")
        ranges = seen["texts"]["ranges"]
        self.assertIn({"text": f"{good}..{bad}", "href": link}, ranges)
        self.assertTrue(all(r["href"] is None or r["href"].startswith("https://")
                            for r in ranges), ranges)
        self.assertEqual(seen["texts"]["violations"], [])


if __name__ == "__main__":
    unittest.main()
