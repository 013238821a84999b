"""Unsigned values (`5u`) in line protocol passed through (format `lp`),
against Debian's influxd 1.6.7 (docs/line-protocol.md "Numbers"): the
server itself refuses them (`invalid number`, and a batch holding one is a
partial write), so perfship writes each as an integer when it fits int64 and
refuses one that does not with FILE:LINE and its reason; every other line
of the file lands, in one `run --once`, with the field typed integer."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import InfluxTestCase, run_perfship, write_config  # noqa: E402

LINES = [
    "cpu,host=a used=5u,free=2i,load=0.5 1700000000000000000",
    "cpu,host=a used=9223372036854775807u,free=3i,load=0.25 1700000001000000000",
    "cpu,host=a used=18446744073709551615u,free=4i,load=0.75 1700000002000000000",
    "cpu,host=a used=0u,free=5i,load=1.5 1700000003000000000",
    "cpu,host=b used=7i,free=6i,load=2.5 1700000004000000000",
]
TOO_BIG = 3  # the line holding 2^64 - 1


class UnsignedLineProtocol(InfluxTestCase):
    tmp_prefix = "perfship-lp-unsigned-"

    def test_the_server_refuses_unsigned_values(self):
        """The premise, asked of the real server: a `u` value is refused,
        and so is the batch's write as a whole (a partial write)."""
        self.influx.create_db("raw")
        status, body = self.influx.write("raw", "\n".join(LINES[:2]) + "\n")
        self.assertEqual(status, 400, body)
        self.assertIn(b"invalid number", body)

    def test_unsigned_values_land_as_integers_and_the_oversized_one_is_refused(self):
        src = os.path.join(self.tmp, "lp")
        os.makedirs(src)
        path = os.path.join(src, "metrics.lp")
        with open(path, "w") as f:
            f.write("\n".join(LINES) + "\n")
        cfg = write_config(os.path.join(self.tmp, "perfship.cfg"), self.influx.url,
                           os.path.join(self.tmp, "state"), database="u",
                           sources='{ path = "%s"; format = "lp"; }' % src)
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=120)
        # 65: some input was rejected (the one line), every write went through
        self.assertEqual(rc, 65, err[-3000:])
        self.assertRegex(err, r"points written, 1 rejected")
        self.assertIn("%s:%d: field 'used': unsigned 18446744073709551615u does not fit an "
                      "integer (at most 9223372036854775807), and InfluxDB 1.x has no "
                      "unsigned type" % (path, TOO_BIG), err)
        rows = self.influx.query("u", "SELECT * FROM cpu")
        self.assertEqual([(r["time"], r["used"], r["free"]) for r in rows],
                         [(1700000000000000000, 5, 2),
                          (1700000001000000000, 9223372036854775807, 3),
                          (1700000003000000000, 0, 5),
                          (1700000004000000000, 7, 6)])
        types = {k: t for s in self.influx.series("u", "SHOW FIELD KEYS FROM cpu") for k, t in s["values"]}
        self.assertEqual(types, {"used": "integer", "free": "integer", "load": "float"})
        # the refused line is counted as rejected, not as a failed write
        st = run_perfship(["-c", cfg, "status"])
        self.assertIn("metrics.lp:%d" % TOO_BIG, st[1] + st[2])


if __name__ == "__main__":
    unittest.main()
