"""Shared harness for perfship's integration tests.

Real parts only: InfluxDB is Debian's influxd, started on free loopback ports
in a throw-away directory and stopped at the end; perfship is the binary the
build produced (PERFSHIP_BIN). Nothing here mocks the server. A fault proxy
(faultproxy.py) may sit in front of the real server.

Typical use:

    with InfluxServer() as influx:
        influx.create_db("perf")
        rc, out, err = run_perfship(["convert", "-f", "jsonl", path])
        influx.write("perf", out)
        rows = influx.query("perf", "SELECT * FROM m")

Every test script is a plain unittest module run by ctest; it must print
the unittest summary and exit non-zero on failure (unittest.main does).
"""
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

SOURCE_DIR = os.environ.get(
    "PERFSHIP_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
DATA_DIR = os.path.join(SOURCE_DIR, "tests", "data")
PERFSHIP_BIN = os.environ.get(
    "PERFSHIP_BIN", os.path.join(SOURCE_DIR, "build", "perfship"))
INFLUXD = os.environ.get("PERFSHIP_INFLUXD", shutil.which("influxd") or "/usr/bin/influxd")


# Measurements the agent writes of its own, from what it read (its
# counters, its verdicts, its alerts): `convert` never writes them, so a
# comparison of an agent's database with convert's leaves them out.
AGENT_OWN = frozenset({"perfship", "perfship_verdict", "perfship_alert"})


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class QueryError(RuntimeError):
    """InfluxDB refused or failed a query (HTTP status other than 200, or
    an error in a statement's result)."""


class DatabaseNotFound(QueryError):
    """The query named a database that does not exist (yet): the one
    failure a test may read as "nothing stored". Any other failure (401, a
    parse error, a server gone) must stay a failure, or a check that
    nothing was stored passes because the check itself failed."""


def or_empty(fn, *args, **kw):
    """fn(*args, **kw), or [] when the database does not exist yet."""
    try:
        return fn(*args, **kw)
    except DatabaseNotFound:
        return []


class InfluxServer:
    """A real influxd (1.6.7 from Debian) in a temporary directory."""

    def __init__(self, auth=False, max_body_size=None, keep_dir=None):
        self.auth = auth
        self.max_body_size = max_body_size
        self.dir = keep_dir or tempfile.mkdtemp(prefix="perfship-influx-")
        self.own_dir = keep_dir is None
        self.port = None
        self.rpc_port = None
        self.proc = None
        self.served = False  # answered a /ping once: its ports are known to the test
        self.log_path = os.path.join(self.dir, "influxd.log")

    # -- lifecycle -------------------------------------------------------
    def _write_config(self):
        self.port = self.port or free_port()
        self.rpc_port = self.rpc_port or free_port()
        conf = f"""
reporting-disabled = true
bind-address = "127.0.0.1:{self.rpc_port}"
[meta]
  dir = "{self.dir}/meta"
[data]
  dir = "{self.dir}/data"
  wal-dir = "{self.dir}/wal"
  query-log-enabled = false
  trace-logging-enabled = false
[coordinator]
[retention]
  enabled = false
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:{self.port}"
  auth-enabled = {"true" if self.auth else "false"}
  log-enabled = false
  {f"max-body-size = {self.max_body_size}" if self.max_body_size else ""}
[continuous_queries]
  enabled = false
[logging]
  level = "warn"
"""
        path = os.path.join(self.dir, "influxdb.conf")
        with open(path, "w") as f:
            f.write(conf)
        return path

    def start(self, timeout=30):
        # free_port() lets a port go before influxd binds it, and tests run
        # side by side: on its first start a server whose port was taken in
        # between tries fresh ones. A restart keeps its ports (the agent
        # under test knows the URL).
        for tries_left in (2, 1, 0):
            try:
                return self._start(timeout)
            except RuntimeError as e:
                if self.served or tries_left == 0 or "address already in use" not in str(e):
                    raise
                self.port = self.rpc_port = None

    def _start(self, timeout):
        conf = self._write_config()
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([INFLUXD, "-config", conf],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                raise RuntimeError("influxd exited: " + self.tail_log())
            try:
                st, _, _ = self.request("GET", "/ping")
                if st == 204:
                    self.served = True
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("influxd did not answer /ping: " + self.tail_log())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def crash(self):
        """SIGKILL: the server dies mid-request, without a goodbye; its data
        directory stays for start()."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stop()

    def restart(self):
        self.stop()
        return self.start()

    def close(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def tail_log(self, n=2000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    # -- HTTP --------------------------------------------------------------
    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None, headers=None, timeout=30):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def _auth_params(self, params, user, password):
        if user is not None:
            params["u"] = user
            params["p"] = password or ""
        return params

    def query_raw(self, q, db=None, user=None, password=None, method=None):
        params = {"q": q, "epoch": "ns"}
        if db:
            params["db"] = db
        self._auth_params(params, user, password)
        method = method or ("GET" if q.lstrip().upper().startswith(("SELECT", "SHOW")) else "POST")
        st, _, body = self.request(method, "/query?" + urllib.parse.urlencode(params))
        data = json.loads(body) if body else {}
        if st != 200:
            raise QueryError(f"query {q!r} -> {st}: {body[:500]!r}")
        for res in data.get("results", []):
            if "error" in res:
                # InfluxDB 1.x words it "database not found: NAME"
                cls = (DatabaseNotFound if res["error"].startswith("database not found")
                       else QueryError)
                raise cls(f"query {q!r} -> {res['error']}")
        return data

    def query(self, db, q, **kw):
        """Rows of every series as dicts: column -> value, plus the series'
        tags under their own names and '_measurement'."""
        data = self.query_raw(q, db=db, **kw)
        rows = []
        for res in data.get("results", []):
            for s in res.get("series", []) or []:
                cols = s["columns"]
                for v in s.get("values", []):
                    row = dict(zip(cols, v))
                    row.update(s.get("tags") or {})
                    row["_measurement"] = s.get("name")
                    rows.append(row)
        return rows

    def series(self, db, q, **kw):
        data = self.query_raw(q, db=db, **kw)
        out = []
        for res in data.get("results", []):
            out.extend(res.get("series", []) or [])
        return out

    def create_db(self, db, **kw):
        self.query_raw(f'CREATE DATABASE "{db}"', **kw)

    def write(self, db, body, precision="n", user=None, password=None):
        if isinstance(body, str):
            body = body.encode()
        params = {"db": db, "precision": precision}
        self._auth_params(params, user, password)
        st, _, resp = self.request("POST", "/write?" + urllib.parse.urlencode(params), body=body)
        return st, resp

    def count(self, db, measurement, field="*"):
        """Points of `measurement` (0 when it has none); raises
        DatabaseNotFound when `db` does not exist."""
        rows = self.query(db, f'SELECT count({field}) FROM "{measurement}"')
        if not rows:
            return 0
        return max(v for k, v in rows[0].items() if k.startswith("count") and isinstance(v, int))


def scratch_dir(case, prefix="perfship-test-"):
    """A new temporary directory, removed with everything in it after the
    test (`case` a TestCase) or after its class (`case` a TestCase class)."""
    path = tempfile.mkdtemp(prefix=prefix)
    if isinstance(case, type):
        case.addClassCleanup(shutil.rmtree, path, ignore_errors=True)
    else:
        case.addCleanup(shutil.rmtree, path, ignore_errors=True)
    return path


class WebhookReceiver:
    """A webhook receiver on loopback (alerts.webhook). Records every POST
    (path, headers, JSON body, the status it answered); answers 500 while
    `fail_count` (requests still to refuse) or `fail_until` (a time.time())
    says so, else 200. `url` ends in `path`."""

    def __init__(self, path="/hook"):
        self.path = path
        self.requests = []
        self.lock = threading.Lock()
        self.fail_count = 0
        self.fail_until = 0.0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.lock:
                    refuse = outer.fail_count > 0 or time.time() < outer.fail_until
                    if outer.fail_count > 0:
                        outer.fail_count -= 1
                    outer.requests.append({
                        "path": self.path, "headers": dict(self.headers),
                        "body": json.loads(body), "status": 500 if refuse else 200})
                self.send_response(500 if refuse else 200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"try later\n" if refuse else b"ok\n")

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{self.path}"

    def delivered(self):
        """The event objects answered 200, in order."""
        with self.lock:
            return [r["body"] for r in self.requests if r["status"] == 200]

    @property
    def events(self):
        return self.delivered()

    def regressions(self):
        return [e for e in self.delivered() if e["event"] == "regression"]

    def all(self):
        with self.lock:
            return list(self.requests)

    def reset(self):
        with self.lock:
            self.requests.clear()
            self.fail_count = 0
            self.fail_until = 0.0

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class InfluxTestCase(unittest.TestCase):
    """A test class sharing one real influxd (cls.influx) and one scratch
    directory (cls.tmp) among its tests. Both go away after the class, also
    when a subclass's setUpClass fails after calling this one's."""

    influx_options = {}          # InfluxServer(**influx_options), e.g. auth=True
    tmp_prefix = "perfship-test-"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix=cls.tmp_prefix)
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.influx = InfluxServer(**cls.influx_options).start()
        cls.addClassCleanup(cls.influx.close)


# A JSON Lines source of measurement "m" (tag k, integer field n) and its
# i-th line: the smallest data an agent test can count back from InfluxDB.
JSONL_SOURCE = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
                'tag_keys = ["k"]; types = { n = "integer"; }; }')


def jsonl_line(i):
    return '{"ts": %d, "k": "a", "n": %d}\n' % (1700000000 + i, i)


class AgentTestCase(InfluxTestCase):
    """InfluxTestCase whose tests each get a directory (self.dir) with a
    data folder (self.data), a database named after the test (self.db), and
    agents started with self.agent(cfg), killed when the test ends."""

    def setUp(self):
        name = self.id().rsplit(".", 1)[-1]
        self.dir = os.path.join(self.tmp, name)
        os.makedirs(self.dir)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data)
        self.db = "db_" + name

    def agent(self, cfg):
        a = Agent(cfg).start()
        self.addCleanup(a.kill)
        return a

    def append(self, i):
        """Line i of JSONL_SOURCE's file data/a.jsonl."""
        with open(os.path.join(self.data, "a.jsonl"), "a") as f:
            f.write(jsonl_line(i))

    def count(self):
        rows = or_empty(self.influx.query, self.db, 'SELECT count("n") FROM "m"')
        return rows[0]["count"] if rows else 0


class VictoriaMetrics:
    """Debian's victoria-metrics on a free loopback port in `datadir`: a
    real server for the v2 write path (it accepts /api/v2/write, ignores
    token, org and bucket, and keeps milliseconds)."""

    BIN = shutil.which("victoria-metrics") or (
        "/usr/bin/victoria-metrics" if os.path.exists("/usr/bin/victoria-metrics") else None)

    def __init__(self, datadir):
        self.dir = datadir
        self.port = free_port()
        self.proc = None

    def start(self, timeout=20):
        os.makedirs(self.dir, exist_ok=True)
        self.log = open(os.path.join(self.dir, "vm.log"), "wb")
        self.proc = subprocess.Popen(
            [self.BIN, f"-httpListenAddr=127.0.0.1:{self.port}",
             f"-storageDataPath={self.dir}/data", "-loggerLevel=ERROR"],
            stdout=self.log, stderr=subprocess.STDOUT)

        def up():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health",
                                              timeout=1).status == 200
            except OSError:
                return False
        wait_until(up, timeout=timeout, what="victoria-metrics")
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.log:
            self.log.close()
            self.log = None


# -- perfship ---------------------------------------------------------------

def run_perfship(args, input=None, timeout=120, env=None, check=False):
    """Runs the perfship binary; returns (returncode, stdout, stderr) as text."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([PERFSHIP_BIN] + list(args), input=input,
                       capture_output=True, timeout=timeout, env=e)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise RuntimeError(f"perfship {args} -> {p.returncode}\n{err}")
    return p.returncode, out, err


def convert(fmt, paths, timeout=120):
    """`perfship convert -f FMT PATH...`; returns (returncode, stdout, stderr)."""
    return run_perfship(["convert", "-f", fmt] + list(paths), timeout=timeout)


def write_lines(influx, db, body):
    """Writes line protocol through InfluxDB's /write; anything but 204 fails
    the caller with InfluxDB's answer, since the test's data never landed."""
    st, resp = influx.write(db, body)
    if st != 204:
        raise AssertionError(f"write to {db}: HTTP {st}: {resp[:500]!r}")


def convert_into(influx, db, fmt, paths, ok=None, timeout=120):
    """Converts `paths` with `perfship convert -f FMT` and writes what it
    printed into `db` (created if missing), the way a user backfills.
    `ok`: exit codes the caller accepts (None: the caller checks rc itself).
    Returns (returncode, stdout, stderr)."""
    rc, out, err = convert(fmt, paths, timeout=timeout)
    if ok is not None and rc not in ok:
        raise AssertionError(f"convert -f {fmt} {' '.join(paths)}: exit {rc}: {err[-500:]}")
    influx.create_db(db)
    write_lines(influx, db, out)
    return rc, out, err


def write_config(path, influx_url, state_dir, sources="", extra="", database="perf",
                 influx_extra="", host="test"):
    """Writes a perfship configuration for a test. `sources` is the libconfig
    list body, e.g. '{ path = "/x"; format = "jsonl"; time_key = "ts"; }'."""
    text = f"""
influxdb = {{
  url = "{influx_url}";
  database = "{database}";
  {influx_extra}
}};
state_dir = "{state_dir}";
tags = {{ host = "{host}"; }};
sources = ( {sources} );
{extra}
"""
    with open(path, "w") as f:
        f.write(text)
    return path


class Agent:
    """perfship run as a child process (service mode, or --once)."""

    def __init__(self, config, args=(), env=None, log_path=None, preexec=None):
        self.config = config
        self.args = list(args)
        self.env = env
        self.log_path = log_path or (config + ".log")
        self.proc = None
        self.preexec = preexec

    def start(self):
        e = dict(os.environ)
        if self.env:
            e.update(self.env)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([PERFSHIP_BIN, "-c", self.config, "run"] + self.args,
                                     stdout=self.log, stderr=subprocess.STDOUT, env=e,
                                     preexec_fn=self.preexec)
        return self

    def wait(self, timeout=120):
        rc = self.proc.wait(timeout)
        self.log.close()
        return rc

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)
        if self.log:
            self.log.close()

    def stop(self, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout)
            finally:
                self.log.close()
        return self.proc.returncode if self.proc else None

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def rss_kb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            return None


def wait_until(pred, timeout=30, interval=0.1, what="condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
