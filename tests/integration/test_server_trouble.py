"""What an operator sees when the server refuses the agent, against a real
influxd with auth on: a wrong password at start is called that (not "needs
admin rights"), and `perfship status` on the running agent shows the
server's error (HTTP 401, its message, since when) for as long as it lasts,
then that it answers again once the password is right; no point is lost.
"""
import calendar
import json
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Agent, InfluxTestCase, run_perfship, wait_until, write_config  # noqa: E402

RIGHT = "adm1n-right-pw-0042"
WRONG = "wr0ng-pw-0043-never-shown"


class ServerTrouble(InfluxTestCase):
    tmp_prefix = "perfship-trouble-"
    influx_options = {"auth": True}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.query_raw(f"CREATE USER admin WITH PASSWORD '{RIGHT}' WITH ALL PRIVILEGES")
        cls.influx.create_db("perf", user="admin", password=RIGHT)

    def status(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "status"])
        self.assertEqual(rc, 0, out + err)
        return out

    def test_status_shows_a_401_episode(self):
        src = os.path.join(self.tmp, "src")
        os.makedirs(src)
        with open(os.path.join(src, "bench.jsonl"), "w") as f:
            for i in range(20):
                f.write(json.dumps({"ts": 1700000000 + i, "n": i}) + "\n")
        pw = os.path.join(self.tmp, "pw")
        with open(pw, "w") as f:
            f.write(WRONG + "\n")
        os.chmod(pw, 0o600)
        cfg = write_config(
            os.path.join(self.tmp, "a.cfg"), self.influx.url, os.path.join(self.tmp, "state"),
            sources=f'{{ path = "{src}/*.jsonl"; format = "jsonl"; measurement = "m"; '
                    'time_key = "ts"; types = { n = "integer"; }; }',
            influx_extra=f'username = "admin"; password_file = "{pw}";')
        agent = Agent(cfg).start()
        self.addCleanup(agent.kill)
        # the start says what is wrong: the password, not the user's rights
        wait_until(lambda: "CREATE DATABASE" in agent.output(), timeout=30,
                   what="the CREATE DATABASE answer in the log")
        log = agent.output()
        self.assertIn("wrong user or password", log)
        self.assertNotIn("needs admin rights", log)
        # while it lasts, status says so, with the code, message and time
        out = wait_until(lambda: (lambda o: "server: failing since" in o and o)(
            self.status(cfg)), timeout=30, what="status showing the server's error")
        self.assertIn("(agent running)", out)
        line = next(ln for ln in out.splitlines() if ln.startswith("server:"))
        self.assertIn("HTTP 401", line)
        self.assertIn("authorization failed", line)
        m = re.search(r"since (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", line)
        self.assertIsNotNone(m, line)
        began = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ"))
        self.assertLessEqual(abs(time.time() - began), 60, line)
        errors = out.split("last errors:", 1)[1]
        self.assertIn("server: HTTP 401", errors)
        self.assertIn("wrong user or password", agent.output())
        self.assertNotIn(WRONG, out + agent.output())
        # the password made right on the server: the episode ends, nothing lost
        self.influx.query_raw(f"SET PASSWORD FOR admin = '{WRONG}'", user="admin",
                              password=RIGHT)
        out = wait_until(lambda: (lambda o: "server: answering" in o and o)(self.status(cfg)),
                         timeout=90, what="status showing the server answers again")
        self.assertIn("server: answers again", out)
        rows = self.influx.query("perf", "SELECT count(n) FROM m", user="admin",
                                 password=WRONG)
        self.assertEqual(rows[0]["count"], 20)
        agent.stop()
        self.assertIn("server: was answering when the agent stopped", self.status(cfg))


if __name__ == "__main__":
    unittest.main()
