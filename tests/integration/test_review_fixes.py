"""Regression tests for defects found in review: each asserts what a user
would see (points read back from a real InfluxDB, files on disk)."""
import os
import shutil
import signal
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Agent, InfluxTestCase, free_port, or_empty, wait_until,  # noqa: E402
                     write_config)


def jline(i):
    return '{"ts": %d, "k": "a", "n": %d}\n' % (1700000000 + i, i)


SRC = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
       'tag_keys = ["k"]; types = { n = "integer"; }; }')


class ReviewFixes(InfluxTestCase):
    def setUp(self):
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.dir)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data)
        self.db = "db_" + self.id().rsplit(".", 1)[-1]
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.kill()

    def agent(self, cfg):
        a = Agent(cfg).start()
        self.agents.append(a)
        return a

    def append(self, i):
        with open(os.path.join(self.data, "a.jsonl"), "a") as f:
            f.write(jline(i))

    def count(self):
        rows = or_empty(self.influx.query, self.db, 'SELECT count("n") FROM "m"')
        return rows[0]["count"] if rows else 0

    def test_reload_keeps_state_dir_and_influxdb(self):
        state_a = os.path.join(self.dir, "state_a")
        state_b = os.path.join(self.dir, "state_b")
        os.makedirs(state_a)
        os.makedirs(state_b)
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, state_a, SRC % self.data, database=self.db,
                     influx_extra="create_database = true;")
        a = self.agent(cfg)
        self.append(0)
        wait_until(lambda: self.count() == 1, 15, what="first point")
        # Point the file at another state_dir and at a server that is not
        # there: both need a restart, so the agent keeps its own.
        write_config(cfg, "http://127.0.0.1:%d" % free_port(), state_b, SRC % self.data,
                     database=self.db, influx_extra="create_database = true;")
        a.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "configuration reread" in a.output(), 5)
        out = a.output()
        self.assertIn("influxdb.url", out)
        self.assertIn("state_dir", out)
        self.append(1)
        wait_until(lambda: self.count() == 2, 15, what="point after the reload")
        self.assertEqual(a.stop(), 0)
        self.assertTrue(os.path.exists(os.path.join(state_a, "state.json")))
        self.assertFalse(os.path.exists(os.path.join(state_b, "state.json")))

    def test_many_reloads_are_all_applied(self):
        state = os.path.join(self.dir, "state")
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, state, SRC % self.data, database=self.db,
                     influx_extra="create_database = true;")
        a = self.agent(cfg)
        self.append(0)
        wait_until(lambda: self.count() == 1, 15, what="first point")
        # Twenty reloads, each with a point behind it: every one applied
        # (the points keep landing), said in one line, not twenty (the line
        # is limited to one per 10 s; the next one counts the others).
        for i in range(20):
            a.proc.send_signal(signal.SIGHUP)
            time.sleep(0.05)
            self.append(i + 1)
        wait_until(lambda: self.count() == 21, 15, what="the points between the reloads")
        # The last reload changes the tags: it must be applied, not refused.
        with open(cfg) as f:
            text = f.read()
        with open(cfg, "w") as f:
            f.write(text.replace('host = "test"', 'host = "reloaded"'))
        a.proc.send_signal(signal.SIGHUP)
        # applied once a point written after it carries the new tag
        n = 21

        def reloaded():
            nonlocal n
            rows = or_empty(self.influx.query, self.db,
                            'SELECT "n" FROM "m" WHERE "host" = \'reloaded\'')
            if rows:
                return rows
            self.append(n)
            n += 1
            return None
        rows = wait_until(reloaded, 10, interval=0.3, what="a point with the reloaded tag")
        wait_until(lambda: self.count() == n, 15, what="every point")
        self.assertTrue(all(r["n"] >= 21 for r in rows))
        self.assertNotIn("too many reloads", a.output())
        self.assertLessEqual(a.output().count("configuration reread"), 3)
        self.assertEqual(a.stop(), 0)

    def test_truncated_after_a_reload_is_read_again(self):
        # The file was opened under the first configuration; the reload
        # replaces it, and the restart after the truncation must not use
        # the replaced configuration's freed sources.
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.dir, "state"), SRC % self.data,
                     database=self.db, influx_extra="create_database = true;")
        a = self.agent(cfg)
        for i in range(3):
            self.append(i)
        wait_until(lambda: self.count() == 3, 15, what="first points")
        a.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "configuration reread" in a.output(), 5)
        with open(os.path.join(self.data, "a.jsonl"), "w") as f:
            f.write(jline(10))
        wait_until(lambda: self.count() == 4, 15, what="the point after the truncation")
        self.assertIn("truncated", a.output())
        self.assertEqual(a.stop(), 0)

    def test_database_dropped_while_running_is_created_again(self):
        state = os.path.join(self.dir, "state")
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, state, SRC % self.data, database=self.db,
                     influx_extra="create_database = true;")
        a = self.agent(cfg)
        self.append(0)
        wait_until(lambda: self.count() == 1, 15, what="first point")
        self.influx.query_raw(f'DROP DATABASE "{self.db}"', method="POST")
        self.assertEqual(self.count(), 0)
        for i in range(1, 4):
            self.append(i)
        wait_until(lambda: self.count() == 3, 30, what="points after the drop")
        rows = self.influx.query(self.db, 'SELECT "n" FROM "m"')
        self.assertEqual(sorted(r["n"] for r in rows), [1, 2, 3])
        out = a.output()
        self.assertIn("creating it again", out)
        self.assertNotIn("set influxdb.create_database = true", out)
        self.assertEqual(a.stop(), 0)

    def test_create_database_does_not_block_the_loop(self):
        # A server that accepts connections and never answers: CREATE
        # DATABASE waits for its whole timeout. The agent must still answer
        # signals meanwhile (it used to sit in the request for timeout_ms).
        hole = socket.socket()
        hole.bind(("127.0.0.1", 0))
        hole.listen(16)
        self.addCleanup(hole.close)
        url = "http://127.0.0.1:%d" % hole.getsockname()[1]
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, url, os.path.join(self.dir, "state"), SRC % self.data,
                     database=self.db,
                     influx_extra="create_database = true; timeout_ms = 20000;")
        a = self.agent(cfg)
        wait_until(lambda: "starting" in a.output(), 5, what="the agent to start")
        t0 = time.time()
        a.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "configuration reread" in a.output(), 5, what="SIGHUP answered")
        self.assertLess(time.time() - t0, 5)

    def test_dss_backfill_only_for_results_found_at_start(self):
        synth = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                             "dss", "synth")
        old = os.path.join(self.data, "old")
        os.makedirs(old)
        shutil.copy(os.path.join(synth, "baseline_single", "results.json"), old)
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.dir, "state"),
                     '{ path = "%s"; format = "dss-bench"; }' % self.data,
                     database=self.db, influx_extra="create_database = true;",
                     extra="watch = { settle_ms = 200; rescan_interval_ms = 500; };")

        def markers():
            rows = or_empty(self.influx.query, self.db, "SELECT * FROM runs")
            return {r["run"]: r["backfill"] for r in rows}

        a = self.agent(cfg)
        wait_until(lambda: "old" in markers(), 15, what="the old run's marker")
        new = os.path.join(self.data, "new")
        os.makedirs(new)
        shutil.copy(os.path.join(synth, "datastores_with_errors", "results.json"), new)
        wait_until(lambda: "new" in markers(), 15, what="the new run's marker")
        # Found at start: ended before perfship saw it. Appeared while
        # watched: a live run, which alerts may act on.
        self.assertEqual(markers(), {"old": True, "new": False})
        self.assertEqual(a.stop(), 0)


if __name__ == "__main__":
    unittest.main()
