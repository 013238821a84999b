"""SIGHUP (agent/service/reload.c): the file is reread and applied, except
the `influxdb` group and `state_dir`, which keep their running values until
a restart (docs/design-notes.md, "SIGHUP rereads the file"). Each test
asserts what a user would see: points read back from a real InfluxDB,
files on disk, the agent's log."""
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (JSONL_SOURCE as SRC, AgentTestCase, free_port, jsonl_line as jline,  # noqa: E402
                     or_empty, wait_until, write_config)


class Reload(AgentTestCase):
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


if __name__ == "__main__":
    unittest.main()
