"""`perfship convert` against a real InfluxDB: every value that goes in as
JSONL or line protocol must come back through /query exactly (floats bit for
bit), every invalid line must be named on stderr as FILE:LINE: reason, and the
valid lines around it must still land."""
import json
import math
import os
import random
import re
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import InfluxTestCase, run_perfship  # noqa: E402

T0 = 1700000000
DB = "rt"

TAG_VALUES = [
    "plain", "sp ace", "com,ma", "equ=als", 'quo"te', "back\\slash",
    "all ,=\"\\x mixed", "ünïcödé ✓", "#hash", "emoji 😀", "tab\there",
]
STRINGS = [
    "", "plain", 'he said "hi"', "C:\\", "a\\\\b", "\\\"", "a,b c=d",
    "ünïcödé ✓ 😀", "ends in quote\"", " lead and trail ", "{json: [1,2]}",
]
FLOATS = [
    0.1, 0.30000000000000004, 1e-300, 5e-324, 2.2250738585072014e-308,
    1.7976931348623157e308, -1.7976931348623157e308, 1647216131.81362,
    123456789.123456789, 100.0, -3.5, 9007199254740993.0, 1e22, 1e23,
    2.0 ** -1074, 4.35, 0.000123, 1e16, -1e-7,
]
INTS = [0, 1, -1, 2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 63 - 1, -(2 ** 63),
        123456789012345678]


def bits(x):
    return struct.pack("<d", float(x))


class ConvertRoundTrip(InfluxTestCase):
    tmp_prefix = "perfship-convert-"

    def setUp(self):
        self.influx.query_raw(f'DROP DATABASE "{DB}"')
        self.influx.create_db(DB)

    def path(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return p

    def post(self, body):
        st, resp = self.influx.write(DB, body.encode("utf-8"))
        self.assertEqual(st, 204, resp[:500])

    def rows_by_time(self, measurement="m"):
        rows = self.influx.query(DB, f'SELECT * FROM "{measurement}"')
        return {r["time"]: r for r in rows}

    def make_records(self):
        rnd = random.Random(431)
        recs = []
        for i in range(200):
            r = {"ts": T0 + i, "t": TAG_VALUES[i % len(TAG_VALUES)]}
            r["f"] = FLOATS[i % len(FLOATS)] if i < 2 * len(FLOATS) else \
                struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(62)))[0]
            if not math.isfinite(r["f"]):
                r["f"] = 1.0
            r["n"] = INTS[i % len(INTS)]
            r["s"] = STRINGS[i % len(STRINGS)]
            r["b"] = bool(i % 2)
            r["key with space"] = i * 0.5
            r["c,d=e"] = -i
            r['q"uote ü'] = "v" * (i % 3)
            r["nested"] = {"deep": {"x": i + 0.25}}
            r["skipped"] = [1, 2, 3]
            recs.append(r)
        big = "".join(chr(c) for c in range(32, 127)) + "é\\\"✓"
        recs.append({"ts": T0 + 500, "t": "big", "s": (big * 700)[:65536],
                     "f": 1.5, "n": 7})
        recs.append({"ts": T0 + 501, "t": "newline", "s": "line1\nline2\r\nend",
                     "f": 2.5, "n": 8})
        recs.append({"ts": T0 + 502.000123, "t": "frac", "f": 3.5, "n": 9})
        return recs

    def expected_string(self, s):
        # the documented newline policy: CR and LF become \r and \n (2 chars)
        return s.replace("\r", "\\r").replace("\n", "\\n")

    def test_jsonl_every_value_reads_back_exactly(self):
        recs = self.make_records()
        src = self.path("tricky.jsonl",
                        "".join(json.dumps(r, ensure_ascii=(i % 2 == 0)) + "\n"
                                for i, r in enumerate(recs)))
        rc, out, err = run_perfship(["convert", "-f", "jsonl", "--measurement", "m",
                                     "--tag", "t", "--type", "n=integer",
                                     "--time-key", "ts", src])
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")
        self.assertEqual(len(out.splitlines()), len(recs))
        self.post(out)
        got = self.rows_by_time()
        self.assertEqual(len(got), len(recs))
        for r in recs:
            ts = r["ts"]
            ns = (T0 + 502) * 10 ** 9 + 123000 if ts == T0 + 502.000123 else ts * 10 ** 9
            row = got.get(ns)
            self.assertIsNotNone(row, f"no point at {ns} for {r}")
            self.assertEqual(row["t"], r["t"])
            self.assertEqual(bits(row["f"]), bits(r["f"]),
                             f"float {r['f']!r} came back as {row['f']!r}")
            self.assertEqual(row["n"], r["n"])
            self.assertIsInstance(row["n"], int)
            if "s" in r:
                self.assertEqual(row["s"], self.expected_string(r["s"]))
            if "b" in r:
                self.assertIs(row["b"], r["b"])
                self.assertEqual(bits(row["key with space"]), bits(r["key with space"]))
                self.assertEqual(row["c,d=e"], r["c,d=e"])
                self.assertEqual(row['q"uote ü'], r['q"uote ü'])
                self.assertEqual(bits(row["nested.deep.x"]), bits(r["nested"]["deep"]["x"]))
            self.assertNotIn("skipped", row)
        # types are stable: n integer, f float even where whole
        keys = self.influx.series(DB, 'SHOW FIELD KEYS FROM "m"')[0]["values"]
        types = dict(keys)
        self.assertEqual(types["n"], "integer")
        self.assertEqual(types["f"], "float")
        self.assertEqual(types["b"], "boolean")
        self.assertEqual(types["s"], "string")
        self.assertEqual(types["c,d=e"], "float")

    def test_jsonl_invalid_lines_named_and_rest_lands(self):
        lines = [
            (True, json.dumps({"ts": T0, "t": "ok", "v": 1.5, "n": 1})),
            (False, '{"ts": 1, "v": }'),                              # malformed
            (True, json.dumps({"ts": T0 + 1, "t": "ok", "v": 2, "n": 2})),
            (False, json.dumps({"ts": T0 + 2, "v": 1, "n": 1.5})),    # n not integer
            (False, json.dumps({"v": 1})),                             # no time
            (False, json.dumps({"ts": T0 + 3, "t": "C:\\", "v": 1})),  # tag ends in \
            (False, json.dumps({"ts": T0 + 4, "t": "a\nb", "v": 1})),  # LF in tag
            (False, json.dumps({"ts": T0 + 5, "time": 1})),            # key time
            (False, '{"ts": 7, "v": NaN}'),                            # NaN
            (False, '{"ts": 8, "v": 1} trailing'),                     # garbage
            (False, json.dumps({"ts": T0 + 6, "n": 2 ** 63})),         # out of int64
            (True, json.dumps({"ts": T0 + 7, "t": "ok", "v": -1, "n": 3})),
        ]
        # the last line has no newline: it must still be read
        text = "\n".join(l for _, l in lines)
        src = self.path("mixed.jsonl", text)
        rc, out, err = run_perfship(["convert", "-f", "jsonl", "--measurement", "m",
                                     "--tag", "t", "--type", "n=integer",
                                     "--time-key", "ts", src])
        self.assertEqual(rc, 65, err)
        for no, (valid, _) in enumerate(lines, start=1):
            named = re.search(rf"^{re.escape(src)}:{no}: \S", err, re.M)
            if valid:
                self.assertIsNone(named, f"valid line {no} reported: {err}")
            else:
                self.assertIsNotNone(named, f"line {no} not reported:\n{err}")
        self.assertIn(f"{src}:2: column 16: malformed JSON", err)
        self.assertIn(f"{src}:4: field 'n' is declared integer", err)
        self.assertIn(f"{src}:6: tag value ends in a backslash", err)
        self.assertEqual(len(out.splitlines()), 3)
        self.post(out)
        got = self.rows_by_time()
        self.assertEqual(sorted(got), [T0 * 10 ** 9, (T0 + 1) * 10 ** 9, (T0 + 7) * 10 ** 9])
        self.assertEqual(got[(T0 + 7) * 10 ** 9]["v"], -1)

    def test_lp_normalised_and_invalid_line_named(self):
        lines = [
            f'cpu,zone=b,host=a\\ 1 usage=0.5,count=3i,ok=T,msg="x \\"y\\"" {T0}000000000',
            "# a comment",
            "",
            f"cpu,host=a\\ 1 usage=1e400 {T0 + 1}000000000",             # float overflow
            f"cpu,host=a\\ 1,host=b usage=1 {T0 + 2}000000000",          # duplicate tag
            f"cpu,host=a\\ 1 usage=2 {T0 + 3}000000000\r",              # CRLF
            f"cpu,host=a\\ 1 usage=3",                                    # no timestamp
            f"cpu,zone=c,host=a\\ 1 usage=4.25 {T0 + 4}000000000",
        ]
        src = self.path("in.lp", "\n".join(lines) + "\n")
        rc, out, err = run_perfship(["convert", "-f", "lp", src])
        self.assertEqual(rc, 65, err)
        self.assertIn(f"{src}:4: column", err)
        self.assertIn(f"{src}:5: duplicate tag key", err)
        self.assertIn(f"{src}:7: column", err)
        self.assertNotIn(f"{src}:6:", err)
        self.assertNotIn(f"{src}:2:", err)
        want = [
            f'cpu,host=a\\ 1,zone=b count=3i,msg="x \\"y\\"",ok=true,usage=0.5 {T0}000000000',
            f"cpu,host=a\\ 1 usage=2.0 {T0 + 3}000000000",
            f"cpu,host=a\\ 1,zone=c usage=4.25 {T0 + 4}000000000",
        ]
        self.assertEqual(out.splitlines(), want)
        self.post(out)
        got = self.rows_by_time("cpu")
        self.assertEqual(len(got), 3)
        row = got[T0 * 10 ** 9]
        self.assertEqual((row["host"], row["zone"], row["usage"], row["count"], row["ok"],
                          row["msg"]), ("a 1", "b", 0.5, 3, True, 'x "y"'))
        self.assertEqual(got[(T0 + 4) * 10 ** 9]["usage"], 4.25)

    def test_lp_from_stdin_and_unreadable_file(self):
        missing = os.path.join(self.tmp, "does-not-exist.lp")
        rc, out, err = run_perfship(["convert", "-f", "lp", "-", missing],
                                    input=f"m,b=1,a=2 v=1 {T0}000000000".encode())
        self.assertEqual(rc, 66, err)
        self.assertIn(missing, err)
        self.assertEqual(out, f"m,a=2,b=1 v=1.0 {T0}000000000\n")
        self.post(out)
        self.assertEqual(self.influx.count(DB, "m"), 1)

    def test_usage_errors(self):
        for args in (["convert"], ["convert", "-f", "nope", "x"],
                     ["convert", "--type", "n=number", "x"],
                     ["convert", "--time-unit", "h", "x"],
                     ["convert", "--bogus", "x"]):
            rc, _, err = run_perfship(args)
            self.assertEqual(rc, 64, f"{args}: {err}")
            self.assertIn("usage:", err)


if __name__ == "__main__":
    unittest.main()
