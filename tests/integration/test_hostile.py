"""Hostile and broken input against a running agent and a real InfluxDB.

Each bad record must be refused with a message naming its file and line
(or stored with a documented outcome), the agent must keep running, and
everything else must arrive exactly. Expected values are computed here
from the JSON with Python's own parser, not from perfship's output.

Covered: malformed and truncated JSON, invalid UTF-8, NUL bytes (raw and
\\u0000), 100k-deep nesting, numbers beyond 64 bits, NaN/Infinity/null,
duplicate keys, a 100 MB line above watch.max_line_bytes (bounded memory),
keys and values crafted to inject fields, tags or lines; files that vanish
or lose permission mid-read (agent as an unprivileged user); a corrupt
state file, an unwritable state directory, and a full state disk.
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Agent, InfluxServer, InfluxTestCase, run_perfship, wait_until,  # noqa: E402
                     write_config)
from harness import scratch_dir  # noqa: E402
from pointset import db_points, diff  # noqa: E402
from procstat import RssSampler, agent_is_sanitized  # noqa: E402

BASE = 1700000000
NOBODY = 65534
ROOT = os.geteuid() == 0
NEED_ROOT = "switching to an unprivileged user needs root (CI runs as root)"


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def good(ts, k="a", n=1):
    return ('{"ts": %d, "k": "%s", "n": %d}\n' % (ts, k, n)).encode()


def point(ts, k="a", **fields):
    """A point of measurement m as pointset keys it."""
    tags = [("host", "test")] + ([("k", k)] if k else [])
    f = {}
    for name, v in fields.items():
        if isinstance(v, bool):
            f[name] = ("boolean", v)
        elif isinstance(v, int):
            f[name] = ("integer", v)
        elif isinstance(v, float):
            f[name] = ("float", v)
        else:
            f[name] = ("string", v)
    return ("m", tuple(sorted(tags)), ts * 10**9), f


class Base(InfluxTestCase):
    """One influxd per class (InfluxTestCase); a scratch folder per test."""

    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-hostile-")
        os.chmod(self.tmp, 0o755)
        self.src = os.path.join(self.tmp, "src")
        os.mkdir(self.src)
        self.state = os.path.join(self.tmp, "state")
        self.db = "h_" + self._testMethodName
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.kill()
        res = getattr(self._outcome, "result", None)
        if res and any(t is self for t, _ in res.failures + res.errors):
            for a in self.agents:
                print(f"--- agent log:\n{a.output()[-5000:]}")
        subprocess.run(["umount", "-l", self.state], capture_output=True)

    def config(self, extra_watch="", src_extra=""):
        src = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
               'tag_keys = ["k"]; types = { n = "integer"; }; %s }' % (self.src, src_extra))
        extra = ("batch = { flush_interval_ms = 100; };\n"
                 f"watch = {{ rescan_interval_ms = 500; settle_ms = 200; {extra_watch} }};\n"
                 "selfstats = { interval_ms = 600000; };\n")
        path = write_config(os.path.join(self.tmp, "p.cfg"), self.influx.url, self.state,
                            sources=src, extra=extra, database=self.db)
        os.chmod(path, 0o644)
        return path

    def agent(self, cfg, preexec=None):
        a = Agent(cfg, preexec=preexec)
        self.agents.append(a)
        return a.start()

    def got(self):
        return db_points(self.influx, self.db, ["m"])

    def wait_exact(self, want, timeout=20):
        last = {}

        def same():
            last["d"] = diff(want, self.got())
            return not last["d"]
        try:
            wait_until(same, timeout, interval=0.3, what="exact point set")
        except AssertionError:
            self.fail("point sets differ:\n" + "\n".join(last.get("d", ["?"])))

    def write(self, name, data, mode="ab"):
        path = os.path.join(self.src, name)
        with open(path, mode) as f:
            f.write(data)
        return path


class BadRecords(Base):
    # (name, the bad line, what happens: a message, or the point stored)
    CASES = [
        ("malformed", b'{not json}', "malformed JSON"),
        ("truncated", b'{"ts": %d, "k": "a", "n": ', "malformed JSON"),
        ("utf8_tag", b'{"ts": %d, "k": "\xff\xfe", "n": 2}', "invalid UTF-8 in tag value"),
        ("utf8_field", b'{"ts": %d, "k": "a", "n": 2, "s": "x\xc3\x28"}',
         "invalid UTF-8 in string field"),
        ("utf8_key", b'{"ts": %d, "k": "a", "b\xffd": 1}', "invalid UTF-8 in field key"),
        ("nul_raw", b'{"ts": %d, "k": "a\x00b", "n": 2}', "NUL byte"),
        ("nul_escaped", b'{"ts": %d, "k": "a", "n": 2, "s": "x\\u0000y"}',
         "\\u0000"),
        ("deep_array", b'[' * 100000, "not a JSON object"),
        ("deep_object", b'{"ts": %d, "d": ' + b'{"a": ' * 100000 + b'1' + b'}' * 100001,
         "malformed JSON"),
        ("int_65_bits", b'{"ts": %d, "k": "a", "n": 36893488147419103232}',
         "does not fit a 64-bit integer"),
        ("dup_tag", b'{"ts": %d, "k": "a", "k": "b", "n": 2}', "duplicate tag key"),
        ("lf_in_tag", b'{"ts": %d, "k": "a\\nm2,k=b n=9i 1", "n": 2}',
         "CR or LF in tag value"),
        ("cr_in_tag", b'{"ts": %d, "k": "a\\r", "n": 2}', "CR or LF in tag value"),
        ("tag_backslash", b'{"ts": %d, "k": "C:\\\\", "n": 2}', "ends in a backslash"),
        ("time_range", b'{"ts": 1e30, "k": "a", "n": 2}', "outside InfluxDB's time range"),
        ("time_field", b'{"ts": %d, "k": "a", "time": 5}', "field key named 'time'"),
        ("huge_series", b'{"ts": %d, "k": "' + b'x' * 70000 + b'", "n": 2}',
         "longer than 65535 bytes"),
        ("no_field", b'{"ts": %d, "k": "a"}', "point has no field"),
        ("fraction", b'{"ts": %d, "k": "a", "n": 2.5}', "declared integer but its value has"),
        # Stored, with the documented outcome (docs/schema.md, docs/reliability.md):
        ("null", b'{"ts": %d, "k": "a", "n": 2, "x": null}', {"n": 2}),
        ("overflow_float", b'{"ts": %d, "k": "a", "n": 2, "x": 1e400}',
         "number too large for a double"),
        # Python's json.dumps writes these tokens; they mean "absent"
        # (docs/line-protocol.md), like null.
        ("nan", b'{"ts": %d, "k": "a", "n": 2, "x": NaN}', {"n": 2}),
        ("infinity", b'{"ts": %d, "k": "a", "n": 2, "x": -Infinity}', {"n": 2}),
        ("dup_field", b'{"ts": %d, "k": "a", "n": 2, "n": 3}', {"n": 3}),
        ("big_float", b'{"ts": %d, "k": "a", "n": 2, "x": 123456789012345678901234567890}',
         {"n": 2, "x": 1.2345678901234568e+29}),
        ("int_min", b'{"ts": %d, "k": "a", "n": -9223372036854775808}',
         {"n": -9223372036854775808}),
    ]

    def test_each_bad_record_is_named_and_the_rest_arrives(self):
        cfg = self.config()
        a = self.agent(cfg)
        want = {}
        paths = {}
        for i, (name, bad, outcome) in enumerate(self.CASES):
            ts = BASE + i * 10
            line2 = bad % (ts + 1) if b"%d" in bad else bad
            paths[name] = self.write(f"{name}.jsonl", good(ts, n=1) + line2 + b"\n" +
                                     good(ts + 2, n=3))
            for k, v in (point(ts, n=1), point(ts + 2, n=3)):
                want[k] = v
            if isinstance(outcome, dict):
                k, v = point(ts + 1, **outcome)
                want[k] = v
        self.wait_exact(want, 30)
        out = a.output()
        for name, bad, outcome in self.CASES:
            if isinstance(outcome, str):
                self.assertIn(f"{paths[name]}:2: ", out, name)
                line = [ln for ln in out.splitlines() if f"{paths[name]}:2: " in ln][0]
                self.assertIn(outcome, line, name)
        # Still running, still reading.
        self.assertIsNone(a.proc.poll())
        self.write("malformed.jsonl", good(BASE + 999, n=7))
        k, v = point(BASE + 999, n=7)
        want[k] = v
        self.wait_exact(want, 10)
        # No second measurement or tag came out of the LF case.
        names = {r["name"] for r in self.influx.query(self.db, "SHOW MEASUREMENTS")}
        self.assertEqual(names - {"perfship"}, {"m"})
        rejected = sum(1 for _, _, o in self.CASES if isinstance(o, str))
        self.assertEqual(a.stop(), 0)
        print(f"\n{len(self.CASES)} hostile records: {rejected} refused with FILE:LINE, "
              f"{len(self.CASES) - rejected} stored as documented; "
              f"{len(want)} points exact")

    def test_100mb_line_refused_with_bounded_memory(self):
        cfg = self.config()
        a = self.agent(cfg)
        path = os.path.join(self.src, "huge.jsonl")
        with RssSampler(a.proc.pid) as rss:
            with open(path, "wb") as f:
                f.write(good(BASE, n=1))
                f.write(b'{"ts": %d, "k": "a", "pad": "' % (BASE + 1))
                chunk = b"x" * (1 << 20)
                for _ in range(100):
                    f.write(chunk)
                f.write(b'"}\n')
                f.write(good(BASE + 2, n=3))
            want = dict([point(BASE, n=1), point(BASE + 2, n=3)])
            self.wait_exact(want, 30)
            wait_until(lambda: f"{path}:2: line longer than watch.max_line_bytes"
                       in a.output(), 10, what="the refusal naming file and line")
        hwm = a.rss_kb()  # VmHWM: the true peak, which sampling may miss
        print(f"\n100 MB line: refused; agent VmHWM {hwm / 1024:.1f} MB (sampled VmRSS "
              f"peak {rss.peak_kb / 1024:.1f} MB over {rss.samples} samples)")
        if agent_is_sanitized():
            print("memory bound not checked: the agent is an ASan build")
        else:
            self.assertLess(max(hwm, rss.peak_kb), 100 * 1024)
        self.assertIsNone(a.proc.poll())


class Injection(Base):
    # A backslash before a separator is carried in a tag: 1.x reads `a\\ b`
    # as a backslash and an escaped space (docs/line-protocol.md).
    TAGS = ["a,b=c", "a b", "a=b", "x\\y", '"quoted"', "k2=v2,k3=v3", "ü ñ 😀",
            "#comment", " lead", "trail ", "\\a", "a\\ b", "a\\,b", "a\\=b"]
    # Line protocol has no way to carry these in a tag (#5407): refused
    # with a message, never sent half-escaped.
    REFUSED_TAGS = {"z\nevil,k=x n=5i 1": "CR or LF in tag value",
                    "end\\": "ends in a backslash"}
    FIELD_KEYS = ["f,g=h i", "x=1", " sp", '"q"', "a\\b", "é"]
    STRINGS = ['v" x=2', "back\\", "C:\\path\\", ",k=evil", "two\\\\", '"',
               'end"\nm,k=evil n=1i 1', "cr\rlf\ntab\t"]

    def test_crafted_keys_and_values_stay_inside_their_point(self):
        cfg = self.config()
        a = self.agent(cfg)
        want, rows, ts = {}, [], BASE
        for tag in self.TAGS:
            rows.append({"ts": ts, "k": tag, "n": 1})
            ts += 1
        for key in self.FIELD_KEYS:
            rows.append({"ts": ts, "k": "fk", "n": 1, key: 2.5})
            ts += 1
        for s in self.STRINGS:
            rows.append({"ts": ts, "k": "sv", "n": 1, "s": s})
            ts += 1
        for r in rows:
            fields = {k: v for k, v in r.items() if k not in ("ts", "k")}
            if "s" in fields:  # the documented newline policy (include/influx/lp_encode.h)
                fields["s"] = fields["s"].replace("\r", "\\r").replace("\n", "\\n")
            k, v = point(r["ts"], k=r["k"].strip() and r["k"], **fields)
            want[k] = v
        # A tag value with a newline would start a new point: refused, as
        # are the tags line protocol cannot carry. One file each, since the
        # log names the first bad line of a file per 10 s.
        for i, (tag, why) in enumerate(self.REFUSED_TAGS.items()):
            bad = {"ts": ts + i, "k": tag, "n": 1}
            self.write(f"refused{i}.jsonl", (json.dumps(bad) + "\n").encode())
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        self.write("inj.jsonl", text.encode())
        self.wait_exact(want, 20)
        for i, (tag, why) in enumerate(self.REFUSED_TAGS.items()):
            p = os.path.join(self.src, f"refused{i}.jsonl")
            wait_until(lambda: f"{p}:1: " in a.output(), 5,
                       what=f"tag {tag!r} refused")
            line = [ln for ln in a.output().splitlines() if f"{p}:1: " in ln][0]
            self.assertIn(why, line)
        # Exactly one tag key besides host, one series per tag value, one
        # point per row, no stray measurement.
        tag_keys = {r["tagKey"] for r in self.influx.query(self.db, "SHOW TAG KEYS FROM m")}
        self.assertEqual(tag_keys, {"host", "k"})
        series = self.influx.query(self.db, "SHOW SERIES FROM m")
        self.assertEqual(len(series), len({r["k"] for r in rows}))
        self.assertEqual(self.influx.count(self.db, "m", "n"), len(rows))
        names = {r["name"] for r in self.influx.query(self.db, "SHOW MEASUREMENTS")}
        self.assertEqual(names - {"perfship"}, {"m"})
        fkeys = {r["fieldKey"] for r in self.influx.query(self.db, "SHOW FIELD KEYS FROM m")}
        self.assertEqual(fkeys, {"n", "s"} | set(self.FIELD_KEYS))
        print(f"\ninjection: {len(rows)} crafted rows stored exactly, "
              f"{len(self.REFUSED_TAGS)} refused with FILE:LINE; "
              f"{len(series)} series, tag keys {sorted(tag_keys)}")


class Files(Base):
    @unittest.skipUnless(ROOT, NEED_ROOT)
    def test_vanish_and_permission_loss_as_unprivileged_user(self):
        os.mkdir(self.state)
        os.chown(self.state, NOBODY, NOBODY)
        cfg = self.config()
        a = self.agent(cfg, preexec=as_nobody)
        want = {}

        def add(ts, n, k):
            key, v = point(ts, k=k, n=n)
            want[key] = v
        gone = self.write("gone.jsonl", good(BASE, "g", n=0))
        locked = self.write("locked.jsonl", good(BASE, "l", n=0))
        add(BASE, 0, "g")
        add(BASE, 0, "l")
        self.wait_exact(want, 15)
        # The agent has both open. More lines, then the file is deleted or
        # loses its permissions: what it holds open is read to the end.
        with open(gone, "ab") as f:
            f.write(b"".join(good(BASE + i, "g", n=i) for i in range(1, 500)))
        os.unlink(gone)
        with open(locked, "ab") as f:
            f.write(b"".join(good(BASE + i, "l", n=i) for i in range(1, 500)))
        os.chmod(locked, 0)
        for i in range(1, 500):
            add(BASE + i, i, "g")
            add(BASE + i, i, "l")
        # A file it may not open, and a folder it may not list.
        closed = os.path.join(self.src, "closed.jsonl")
        fd = os.open(closed, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0)  # never readable
        os.write(fd, good(BASE, "c", n=1))
        os.close(fd)
        sub = os.path.join(self.src, "private")
        os.mkdir(sub, 0o700)
        with open(os.path.join(sub, "p.jsonl"), "wb") as f:
            f.write(good(BASE, "p", n=1))
        self.wait_exact(want, 15)
        wait_until(lambda: f"{closed}: cannot open (Permission denied)" in a.output(), 10,
                   what="the unreadable file reported")
        wait_until(lambda: f"{sub}: cannot watch (permission denied)" in a.output(), 10,
                   what="the unreadable folder reported")
        self.assertIn("give perfship's user read and search permission", a.output())
        self.assertIsNone(a.proc.poll())
        # Access given back: both arrive (the rescan finds them).
        os.chmod(closed, 0o644)
        os.chmod(sub, 0o755)
        add(BASE, 1, "c")
        add(BASE, 1, "p")
        self.wait_exact(want, 15)
        self.assertEqual(a.stop(), 0)
        st = os.stat(os.path.join(self.state, "state.json"))
        self.assertEqual(st.st_uid, NOBODY)
        print(f"\nas uid {NOBODY}: deleted and chmod-000 files drained from the open "
              f"descriptor; unreadable file and folder reported, read once allowed; "
              f"{len(want)} points exact")


class StateFile(Base):
    def test_corrupt_state_is_reported_and_reading_restarts(self):
        os.mkdir(self.state)
        with open(os.path.join(self.state, "state.json"), "wb") as f:
            f.write(b'{"version": 1, "files": [{"path": "\x00\xff garbage')
        self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(100)))
        a = self.agent(self.config())
        self.wait_exact(dict(point(BASE + i, n=i) for i in range(100)))
        self.assertIn("the state file is corrupt", a.output())
        self.assertTrue(os.path.exists(os.path.join(self.state, "state.json.corrupt")))
        self.assertIsNone(a.proc.poll())
        self.assertEqual(a.stop(), 0)

    def test_damaged_sections_are_said_and_the_rest_kept(self):
        # damage inside the verdicts or slogs sections, or a wrong type for
        # them or for errors, was dropped without a word (issue 32); each
        # damaged section is one warning line, and a damaged entry costs
        # that entry, not the section
        os.mkdir(self.state)
        good_run = {"name": "r1", "host": "h", "start_ns": "1700000000000000000",
                    "status": "success", "judged": True, "values": {}}
        state = {
            "version": 1, "files": [],
            "errors": ["kept", 5, {"x": 1}],
            "verdicts": {"history": [
                {"source": "loadgen", "series": 5, "runs": [good_run]},
                {"source": "loadgen", "series": "daily", "host": "h",
                 "runs": [good_run, {"name": "r2"}]}],
                "growth": "oops", "triage": [{"id": "x"}]},
            "slogs": {"done": [{"path": "/a", "size": 1, "mtime_ns": "2"},
                               {"path": 7, "size": 1, "mtime_ns": "2"}],
                      "cycles": [{"folder": "", "counts": []}]},
        }
        with open(os.path.join(self.state, "state.json"), "w") as f:
            json.dump(state, f)
        rc, out, err = run_perfship(["-c", self.config(), "run", "--once"], timeout=60)
        self.assertIn("damaged sections ignored (neither an object nor a list, or entries of "
                      "the wrong type): 2 entries of 'errors' that are not text", err)
        self.assertIn("the state file's verdicts section was not read whole; 2 damaged "
                      "entries of 'history' left out; 'growth' is not a list (left out); "
                      "1 damaged entry of 'triage' left out", err)
        self.assertIn("the state file's slogs section was not read whole; 1 damaged entry of "
                      "'done' and 1 of 'cycles' left out", err)
        # what was whole is kept: the next save still has the good series
        # and its run, the good slog stage and the error that was text
        with open(os.path.join(self.state, "state.json")) as f:
            saved = json.load(f)
        self.assertEqual(saved["errors"][:1], ["kept"])
        series = [x for x in saved["verdicts"]["history"] if x.get("series") == "daily"]
        self.assertEqual([r["name"] for r in series[0]["runs"]], ["r1"])
        self.assertEqual([d["path"] for d in saved["slogs"]["done"]], ["/a"])
        # a section of the wrong type: said, not a silent reset
        state["verdicts"], state["slogs"] = [], "x"
        with open(os.path.join(self.state, "state.json"), "w") as f:
            json.dump(state, f)
        rc, out, err = run_perfship(["-c", self.config(), "run", "--once"], timeout=60)
        self.assertIn("the state file's verdicts section is not an object (ignored)", err)
        self.assertIn("'slogs' (a string)", err)

    @unittest.skipUnless(ROOT, NEED_ROOT)
    def test_unwritable_state_dir_keeps_shipping_then_recovers(self):
        os.mkdir(self.state)
        os.chown(self.state, NOBODY, NOBODY)
        cfg = self.config()
        a = self.agent(cfg, preexec=as_nobody)
        path = self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(10)))
        want = dict(point(BASE + i, n=i) for i in range(10))
        self.wait_exact(want)
        os.chmod(self.state, 0o555)
        self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(10, 20)))
        want.update(point(BASE + i, n=i) for i in range(10, 20))
        self.wait_exact(want)
        wait_until(lambda: "cannot save the state (Permission denied)" in a.output(), 10,
                   what="the failed save reported")
        self.assertIn("error state:", a.output())
        self.assertIsNone(a.proc.poll())
        os.chmod(self.state, 0o755)
        self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(20, 30)))
        want.update(point(BASE + i, n=i) for i in range(20, 30))
        self.wait_exact(want)
        size = os.path.getsize(path)
        wait_until(lambda: f"offset {size} of {size}" in
                   run_perfship(["-c", cfg, "status"])[1], 10, what="state saved again")
        self.assertEqual(a.stop(), 0)

    def test_full_state_disk_reported_no_loss_recovers(self):
        os.mkdir(self.state)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", self.state],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.skipTest(f"cannot mount a small tmpfs here (needs root): {r.stderr.strip()}")
        cfg = self.config()
        a = self.agent(cfg)
        path = self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(10)))
        want = dict(point(BASE + i, n=i) for i in range(10))
        self.wait_exact(want)
        filler = os.path.join(self.state, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(10, 20)))
        want.update(point(BASE + i, n=i) for i in range(10, 20))
        self.wait_exact(want)
        wait_until(lambda: "cannot save the state (No space left on device)" in a.output(),
                   10, what="the full disk reported")
        self.assertIsNone(a.proc.poll())
        os.unlink(filler)
        self.write("a.jsonl", b"".join(good(BASE + i, n=i) for i in range(20, 30)))
        want.update(point(BASE + i, n=i) for i in range(20, 30))
        self.wait_exact(want)
        size = os.path.getsize(path)
        wait_until(lambda: f"offset {size} of {size}" in
                   run_perfship(["-c", cfg, "status"])[1], 10, what="state saved again")
        self.assertEqual(a.stop(), 0)
        # Restarted, it resumes at the saved offset: nothing is sent again.
        self.influx.query_raw("DROP MEASUREMENT m", db=self.db)
        rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.got(), {})


if __name__ == "__main__":
    unittest.main(verbosity=2)
