"""Real Locust `--csv` outputs (tests/data/corpus/locust/, eight projects'
files; provenance in tests/data/corpus/SOURCES.md) through `perfship run
--once` into a real InfluxDB: every row of every file lands, counted per
file against what Python's csv module (which Locust writes with) reads, or
is refused with a reason the docs give. The files hold what synthetic ones
lacked: histories with two rows of one name in one second (the last sample
and the final row), and CSVs written on Windows whose lines end in
\\r\\r\\n."""
import csv
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, Agent, InfluxTestCase, write_config  # noqa: E402

CORPUS = os.path.join(DATA_DIR, "corpus", "locust")
MEASUREMENT = {"_stats.csv": "locust_stats", "_failures.csv": "locust_failures",
               "_stats_history.csv": "locust_history"}
# Rows refused with a reason docs/line-protocol.md gives: (folder, file,
# line) -> the reason. The Name cell of this row is GBK ("接口" as written
# on a Chinese Windows), not UTF-8, and InfluxDB would store it mangled.
REFUSED = {("zhajiangmian2342__20200823", "locust_stats.csv", 2): "invalid UTF-8 in tag value"}


def kind(name):
    for suffix in ("_stats_history.csv", "_stats.csv", "_failures.csv"):
        if name.endswith(suffix):
            return suffix, name[:-len(suffix)]
    return None, None


def csv_rows(path):
    """The data rows as Python's csv module reads them (blank records, which
    \\r\\r\\n makes of every line end, are none)."""
    with open(path, newline="", encoding="latin-1") as f:
        return [r for r in csv.reader(f) if r][1:]


def history_times(path):
    """Each history row's time as docs/schema.md gives it: its Timestamp
    plus its line number in ns."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    out = []
    for number, line in enumerate(lines[1:], start=2):
        cell = line.strip(b"\r").split(b",")[0].strip(b'"')
        if cell:
            out.append(int(cell) * 10**9 + number)
    return sorted(out)


class LocustCorpus(InfluxTestCase):
    tmp_prefix = "perfship-locustcorpus-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folders = sorted(os.listdir(CORPUS))
        cls.logs = {}
        for i, folder in enumerate(cls.folders):
            src = os.path.join(cls.tmp, f"src{i}")
            shutil.copytree(os.path.join(CORPUS, folder), src)
            db = f"locust{i}"
            cfg = write_config(os.path.join(cls.tmp, f"{db}.cfg"), cls.influx.url,
                               os.path.join(cls.tmp, f"state{i}"), database=db,
                               sources='{ path = "%s"; format = "locust"; }' % src)
            a = Agent(cfg, args=["--once"]).start()
            rc = a.wait(120)
            cls.logs[folder] = (rc, a.output(), src, db)

    def rows_in(self, db, measurement, run):
        rows = self.influx.query(db, f"SELECT * FROM \"{measurement}\" WHERE run = '{run}' GROUP BY *")
        return rows

    def test_every_row_of_every_file_lands_or_is_refused_with_its_reason(self):
        total = landed = 0
        for folder in self.folders:
            rc, log, src, db = self.logs[folder]
            for name in sorted(os.listdir(src)):
                suffix, run = kind(name)
                if not suffix:
                    continue
                with self.subTest(folder=folder, file=name):
                    want = len(csv_rows(os.path.join(src, name)))
                    refused = [(line, why) for (fo, fi, line), why in REFUSED.items()
                               if fo == folder and fi == name]
                    for line, why in refused:
                        self.assertIn(f"{os.path.join(src, name)}:{line}: point refused: {why}", log)
                    got = len(self.rows_in(db, MEASUREMENT[suffix], run))
                    self.assertEqual(got, want - len(refused), log[-2000:])
                    total += want
                    landed += got
        print(f"\n{landed} of {total} rows landed, {total - landed} refused with their reason")

    def test_history_rows_of_one_second_all_land(self):
        seen_same_second = 0
        for folder in self.folders:
            rc, log, src, db = self.logs[folder]
            for name in sorted(os.listdir(src)):
                if not name.endswith("_stats_history.csv"):
                    continue
                _, run = kind(name)
                with self.subTest(folder=folder):
                    want = history_times(os.path.join(src, name))
                    got = sorted(r["time"] for r in self.rows_in(db, "locust_history", run))
                    # (no list diff: difflib is quadratic in 2,000 rows)
                    missing = sorted(set(want) - set(got))
                    self.assertTrue(got == want, f"{len(got)} of {len(want)} rows; "
                                    f"missing times {missing[:5]}")
                    rows = csv_rows(os.path.join(src, name))
                    keys = [(r[0], r[2], r[3]) for r in rows]
                    seen_same_second += len(keys) - len(set(keys))
        # the corpus has them (ConnectFourPro: 153, odoo-locust: 54)
        self.assertGreater(seen_same_second, 150)

    def test_windows_line_ends_read_like_unix_ones(self):
        crcrlf = 0
        for folder in self.folders:
            rc, log, src, db = self.logs[folder]
            for name in sorted(os.listdir(src)):
                with open(os.path.join(src, name), "rb") as f:
                    if b"\r\r\n" not in f.read():
                        continue
                crcrlf += 1
                refused = [line for (fo, fi, line) in REFUSED if (fo, fi) == (folder, name)]
                named = [ln for ln in log.splitlines() if f"{os.path.join(src, name)}:" in ln
                         and not any(f"{name}:{line}: " in ln for line in refused)]
                self.assertEqual(named, [])
        self.assertGreaterEqual(crcrlf, 8)


if __name__ == "__main__":
    unittest.main()
