"""influxdata's line-protocol corpus through `perfship convert -f lp` into a
real InfluxDB: every decode case either lands as the corpus says it reads,
or differs for a reason docs/line-protocol.md gives ("The line-protocol
corpus"). The reasons are checked, not only counted: a case listed as
"no timestamp" must be a case whose line has none, and a case that starts to
agree (or to differ for another reason) fails the test until the table is
updated."""
import base64
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, SOURCE_DIR, InfluxTestCase, run_perfship  # noqa: E402

CORPUS = os.path.join(DATA_DIR, "corpus", "lp", "corpus_sample.json")

# docs/line-protocol.md, "The line-protocol corpus": reason -> cases.
TIMESTAMP = "no timestamp: perfship needs the time from the data"
UNSIGNED = ("unsigned integer: written as an integer (InfluxDB 1.x has no unsigned type), "
            "refused above 2^63 - 1")
INT64_MAX = 2**63 - 1
CRLF_STRING = "CR or LF in a string: stored as the two characters \\r or \\n"
RAW_NEWLINE = "a raw newline in a string: refused, one reject for the record"
TIME_KEY = "a tag or field key named time: InfluxDB 1.x drops it"
MEASUREMENT_BS = "backslash before a separator in a measurement or field key"
LENIENT = "read as InfluxDB 1.x reads it, which the corpus refuses"
PER_LINE = "a bad line is refused alone; the corpus drops the lines after it"


def case_bytes(case):
    text = case["text"]
    if isinstance(text, dict):  # not UTF-8: the corpus keeps it as base64
        return base64.b64decode(text["binary"])
    return text.encode()


def expected_points(case):
    """The corpus's points as InfluxDB keeps them: a later point of the same
    series and time merges its fields into the earlier one."""
    out = {}
    for p in case["output"].get("result") or []:
        key = (p["name"], tuple(sorted((t["key"], t["value"]) for t in p["tags"])), p["time"])
        fields = out.setdefault(key, {})
        for f in p["fields"]:
            (typ, v), = f["value"].items()
            fields[f["key"]] = (typ, v)
    return out


TYPES = {"float": "float", "integer": "int", "unsigned": "uint", "string": "string",
         "boolean": "bool"}


class CorpusLineProtocol(InfluxTestCase):
    tmp_prefix = "perfship-lpcorpus-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(CORPUS) as f:
            cls.cases = json.load(f)["cases"]
        cls.results = {}
        for i, case in enumerate(cls.cases):
            cls.results[case["key"]] = cls.run_case(i, case)

    @classmethod
    def run_case(cls, i, case):
        data = case_bytes(case)
        res = cls.convert_and_write(f"c{i}", data)
        lines = [int(n) for n, why in res["rejects"] if "missing timestamp" in why]
        if lines and len(lines) == len(res["rejects"]) and "result" in case["output"]:
            # The same text with the corpus's default time written into the
            # lines without one: the rest of each line is checked too.
            split = data.split(b"\n")
            for n in lines:
                split[n - 1] = split[n - 1].rstrip(b"\r") + b" %d" % case["defaultTime"]
            res["with_time"] = cls.convert_and_write(f"t{i}", b"\n".join(split))
        return res

    @classmethod
    def convert_and_write(cls, db, data):
        path = os.path.join(cls.tmp, db + ".lp")
        with open(path, "wb") as f:
            f.write(data)
        _, out, err = run_perfship(["convert", "-f", "lp", path])
        rejects = re.findall(re.escape(path) + r":(\d+): (.*)", err)
        got = {}
        if out.strip():
            cls.influx.create_db(db)
            status, body = cls.influx.write(db, out)
            if status != 204:
                return {"rejects": rejects, "points": got, "write": body}
            types = {}
            for s in cls.influx.series(db, "SHOW FIELD KEYS"):
                for key, typ in s["values"]:
                    types[(s["name"], key)] = TYPES[typ]
            for s in cls.influx.series(db, "SELECT * FROM /.*/ GROUP BY *"):
                tags = tuple(sorted((k, v) for k, v in (s.get("tags") or {}).items() if v))
                for row in s["values"]:
                    rec = dict(zip(s["columns"], row))
                    fields = {k: (types[(s["name"], k)], v) for k, v in rec.items()
                              if k != "time" and v is not None}
                    got[(s["name"], tags, rec["time"])] = fields
        return {"rejects": rejects, "points": got, "write": None}

    def differs_because(self, case, res):
        """The documented reason this case does not land as the corpus
        says, or None when it does."""
        want, got = expected_points(case), res["points"]
        reasons = [why for _, why in res["rejects"]]
        if any(v[0] == "uint" for fields in want.values() for v in fields.values()):
            return self.unsigned_because(case, res, want, got, reasons)
        if res["write"] is not None:
            return f"InfluxDB refused the write: {res['write']!r}"
        if "error" in case["output"]:
            if not got:
                return None
            later = re.match(r"cannot get metric (\d+)", case["output"]["error"])
            return PER_LINE if later and int(later.group(1)) > 0 and reasons else LENIENT
        if self.same(want, got) and not reasons:
            return None
        if "with_time" in res:
            again = self.differs_because(case, res["with_time"])
            return TIMESTAMP if again is None else again
        if any("backslash before" in r for r in reasons):
            return MEASUREMENT_BS
        if any("named 'time'" in r for r in reasons):
            return TIME_KEY
        if reasons and all("string field not closed on its line" in r for r in reasons):
            return RAW_NEWLINE
        escaped = {k: {fk: (t, v.replace("\r", "\\r").replace("\n", "\\n") if t == "string" else v)
                       for fk, (t, v) in fields.items()} for k, fields in want.items()}
        if escaped != want and self.same(escaped, got) and not reasons:
            return CRLF_STRING
        return f"unexplained: want {want!r} got {got!r} rejects {reasons!r}"

    def unsigned_because(self, case, res, want, got, reasons):
        """A case with unsigned values: each lands as the integer it is, a
        point holding one above 2^63 - 1 is refused with the reason (a
        line without a timestamp is looked at with the corpus's time)."""
        if "with_time" in res:
            res = res["with_time"]
            got, reasons = res["points"], [why for _, why in res["rejects"]]
        fits = {k: {fk: ("int", v) if t == "uint" else (t, v) for fk, (t, v) in fields.items()}
                for k, fields in want.items()
                if all(t != "uint" or int(v) <= INT64_MAX for t, v in fields.values())}
        fits = {k: {fk: (t, int(v) if t == "int" else v) for fk, (t, v) in f.items()}
                for k, f in fits.items()}
        unsigned = [r for r in reasons if "InfluxDB 1.x has no unsigned type" in r]
        if res["write"] is None and self.same(fits, got) and len(unsigned) == len(reasons) and \
                (len(unsigned) > 0) == (len(fits) < len(want)):
            return UNSIGNED
        return f"unsigned, unexplained: want {want!r} got {got!r} rejects {reasons!r}"

    @staticmethod
    def same(want, got):
        if want.keys() != got.keys():
            return False
        for k, fields in want.items():
            g = got[k]
            if fields.keys() != g.keys():
                return False
            for fk, (typ, v) in fields.items():
                gt, gv = g[fk]
                if gt != typ or gv != v:
                    return False
        return True

    def test_every_case_agrees_or_has_its_documented_reason(self):
        tally = {}
        for case in self.cases:
            why = self.differs_because(case, self.results[case["key"]])
            tally.setdefault(why or "agrees", []).append(case["key"])
        for k, v in sorted(tally.items()):
            print(f"{len(v):4d}  {k}")
        counts = {k: len(v) for k, v in tally.items()}
        self.assertEqual(counts, documented_counts())
        self.assertEqual(sum(counts.values()), 789)


def documented_counts():
    """The table of docs/line-protocol.md "The line-protocol corpus":
    reason -> cases."""
    with open(os.path.join(SOURCE_DIR, "docs", "line-protocol.md")) as f:
        text = f.read()
    section = text.split("## The line-protocol corpus", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \|", section, re.M)
    return {reason: int(n) for reason, n in rows}


if __name__ == "__main__":
    unittest.main()
