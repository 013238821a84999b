"""`perfship -c FILE convert` prints exactly what `run` ships from the same
files under that configuration: the global tags, and `host` (the machine's
name) when the configuration sets none. Without -c, no tag is added."""
import os
import shutil
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Agent, InfluxTestCase, run_perfship  # noqa: E402

LINES = "m,k=a v=1 1700000000000000000\nm,k=b n=2i,s=\"x\",v=2 1700000000000000001\n"


class ConvertWithConfig(InfluxTestCase):
    tmp_prefix = "perfship-convertcfg-"

    def config(self, name, tags):
        src = os.path.join(self.tmp, name)
        os.makedirs(src)
        with open(os.path.join(src, "in.lp"), "w") as f:
            f.write(LINES)
        path = os.path.join(self.tmp, name + ".cfg")
        with open(path, "w") as f:
            f.write(f'influxdb = {{ url = "{self.influx.url}"; database = "{name}"; }};\n'
                    f'state_dir = "{os.path.join(self.tmp, name + "-state")}";\n'
                    f'{tags}\n'
                    f'sources = ( {{ path = "{src}"; format = "lp"; }} );\n')
        return path, os.path.join(src, "in.lp")

    def shipped(self, db):
        out = set()
        for s in self.influx.series(db, "SELECT * FROM m GROUP BY *"):
            for row in s["values"]:
                out.add((s["name"], tuple(sorted((s.get("tags") or {}).items())),
                         tuple((k, v) for k, v in zip(s["columns"], row) if v is not None)))
        return out

    def converted(self, db, cfg, path):
        args = (["-c", cfg] if cfg else []) + ["convert", "-f", "lp", path]
        rc, lp, err = run_perfship(args)
        self.assertEqual(rc, 0, err)
        self.influx.create_db(db)
        self.assertEqual(self.influx.write(db, lp)[0], 204)
        return lp

    def check(self, name, tags, want_tags):
        cfg, path = self.config(name, tags)
        a = Agent(cfg, args=["--once"]).start()
        self.assertEqual(a.wait(60), 0, a.output()[-2000:])
        lp = self.converted(name + "_convert", cfg, path)
        shipped = self.shipped(name)
        self.assertEqual(len(shipped), 2)
        self.assertEqual(self.shipped(name + "_convert"), shipped)
        for line in lp.splitlines():
            for t in want_tags:
                self.assertIn("," + t, line.split(" ")[0])

    def test_host_default_is_added_as_run_adds_it(self):
        self.check("nohost", "tags = { lab = \"b2\"; };",
                   ["host=" + socket.gethostname(), "lab=b2"])

    def test_configured_host_wins(self):
        self.check("withhost", "tags = { host = \"bench-7\"; };", ["host=bench-7"])

    def test_without_c_no_tag_is_added(self):
        path = os.path.join(self.tmp, "plain.lp")
        with open(path, "w") as f:
            f.write(LINES)
        lp = self.converted("plain", None, path)
        self.assertEqual(lp, "m,k=a v=1.0 1700000000000000000\nm,k=b n=2i,s=\"x\",v=2.0 1700000000000000001\n")


if __name__ == "__main__":
    unittest.main()
