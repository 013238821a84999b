"""The `host` tag without configuration: an agent whose `tags` set no host
tags everything it writes (data, markers, its own counters) with the
machine's name, against a real influxd; so two bench machines that keep the
sample configuration never write one series.
"""
import json
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import InfluxTestCase, run_perfship  # noqa: E402


class HostTag(InfluxTestCase):
    tmp_prefix = "perfship-hosts-"

    def test_host_is_the_machine_name_unless_set(self):
        src = os.path.join(self.tmp, "src")
        os.makedirs(src)
        with open(os.path.join(src, "bench.jsonl"), "w") as f:
            for i in range(5):
                f.write(json.dumps({"ts": 1700000000 + i, "n": i}) + "\n")
        for db, tags, want in (("nohost", "", socket.gethostname()),
                               ("sethost", 'tags = { host = "bench-a"; };', "bench-a")):
            cfg = os.path.join(self.tmp, db + ".cfg")
            with open(cfg, "w") as f:
                f.write(f'influxdb = {{ url = "{self.influx.url}"; database = "{db}"; }};\n'
                        f'state_dir = "{self.tmp}/state-{db}";\n{tags}\n'
                        f'sources = ( {{ path = "{src}/*.jsonl"; format = "jsonl"; '
                        'measurement = "m"; time_key = "ts"; } );\n')
            rc, out, err = run_perfship(["-c", cfg, "check"])
            self.assertEqual(rc, 0, out + err)
            if not tags:  # check says which name the agent will use
                self.assertIn(f"host: {want} (the machine's name", out)
            else:
                self.assertIn("tags: host=bench-a", out)
                self.assertNotIn("the machine's name", out)
            rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=120)
            self.assertEqual(rc, 0, err[-2000:])
            for measurement in ("m", "perfship"):
                with self.subTest(db=db, measurement=measurement):
                    rows = self.influx.query(db, f'SELECT count(*) FROM "{measurement}" '
                                                 'GROUP BY "host"')
                    self.assertEqual({r.get("host") for r in rows}, {want})


if __name__ == "__main__":
    unittest.main()
