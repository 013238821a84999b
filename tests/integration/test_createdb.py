"""CREATE DATABASE on the threadpool (pipeline/createdb.c): created again
when the database is dropped while the agent runs, and never blocking the
loop while the server holds the request (docs/design-notes.md, "CREATE
DATABASE runs on libuv's threadpool"). Against a real InfluxDB."""
import os
import signal
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import JSONL_SOURCE as SRC, AgentTestCase, wait_until, write_config  # noqa: E402


class CreateDatabase(AgentTestCase):
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


if __name__ == "__main__":
    unittest.main()
