"""Security: secrets, TLS verification, least privilege.

- Passwords and tokens come only from files that group and others cannot
  read (else the agent refuses to start, naming the file) or from the
  environment (PERFSHIP_TOKEN), and never show up in the agent's log (at
  debug level), in `status`, in `check`, or in the state file.
- TLS is verified by default: a local TLS endpoint with a self-signed
  certificate (a Python ssl forwarder in front of the real influxd) is
  refused without tls_ca_file (nothing written, the error logged), accepted
  with it, and refused again when the certificate names another host.
- The agent runs as an unprivileged user (setpriv, uid nobody) with only
  read access to the result folder, and leaves that folder untouched.
"""
import hashlib
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (PERFSHIP_BIN, Agent, InfluxServer, free_port,  # noqa: E402
                     run_perfship, wait_until, write_config)
from harness import scratch_dir  # noqa: E402
from pointset import db_points, diff, parse_lp  # noqa: E402

VICTORIA = shutil.which("victoria-metrics")
BASE = 1700000000
PW = "pw-S3cret-v1-7f3a"
TOKEN_FILE_SECRET = "tok-FILE-S3cret-91c2"
TOKEN_ENV_SECRET = "tok-ENV-S3cret-44d0"
SETPRIV = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def lines(n, k="a"):
    return "".join('{"ts": %d, "k": "%s", "n": %d}\n' % (BASE + i, k, i) for i in range(n))


def want_points(n, k="a"):
    return parse_lp("".join(f"m,host=test,k={k} n={i}i {(BASE + i) * 10**9}\n"
                            for i in range(n)))


class TLSForwarder:
    """TLS on a loopback port, plain TCP to the real influxd behind it."""

    def __init__(self, upstream_port, cert, key):
        self.upstream_port = upstream_port
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.handshake_failures = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            tc = self.ctx.wrap_socket(c, server_side=True)
        except (ssl.SSLError, OSError):
            self.handshake_failures += 1
            c.close()
            return
        up = socket.create_connection(("127.0.0.1", self.upstream_port))

        def pump(a, b):
            try:
                while True:
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            finally:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
        t = threading.Thread(target=pump, args=(up, tc), daemon=True)
        t.start()
        pump(tc, up)
        t.join(5)
        tc.close()
        up.close()

    def close(self):
        self.stopped = True
        self.sock.close()


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-sec-")
        os.chmod(self.tmp, 0o755)
        self.src = os.path.join(self.tmp, "src")
        os.mkdir(self.src)
        self.state = os.path.join(self.tmp, "state")
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.kill()

    def config(self, url, influx_extra="", db="perf", name="p.cfg"):
        src = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
               'tag_keys = ["k"]; types = { n = "integer"; }; }' % self.src)
        extra = ("batch = { flush_interval_ms = 100; };\n"
                 "watch = { rescan_interval_ms = 500; settle_ms = 200; };\n"
                 "selfstats = { interval_ms = 600000; };\nlog_level = \"debug\";\n")
        path = write_config(os.path.join(self.tmp, name), url, self.state, sources=src,
                            extra=extra, database=db, influx_extra=influx_extra +
                            " unreachable_deadline_s = 3;")
        os.chmod(path, 0o644)
        return path

    def secret_file(self, name, text, mode):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text + "\n")
        os.chmod(p, mode)
        return p

    def assertNoSecret(self, text, *secrets):
        for s in secrets:
            self.assertNotIn(s, text)
            self.assertNotIn(s[:10], text)  # not even a prefix


class Secrets(Base):
    def test_v1_password_file_permissions_and_no_leak(self):
        with InfluxServer(auth=True) as ix:
            ix.query_raw(f"CREATE USER admin WITH PASSWORD '{PW}' WITH ALL PRIVILEGES")
            with open(os.path.join(self.src, "a.jsonl"), "w") as f:
                f.write(lines(20))
            # Readable by others: refused before anything is read or sent.
            for mode in (0o644, 0o640, 0o604):
                pw = self.secret_file("pw", PW, mode)
                cfg = self.config(ix.url, f'username = "admin"; password_file = "{pw}";')
                for cmd in (["run", "--once"], ["check"]):
                    rc, out, err = run_perfship(["-c", cfg] + cmd, timeout=60)
                    self.assertEqual(rc, 78, f"mode {mode:o} {cmd}: {err}")
                    self.assertIn(pw, err)
                    self.assertNoSecret(out + err, PW)
            # A wrong password: 401 reported, the secret nowhere.
            wrong = "wrong-S3cret-0b9e"
            pw = self.secret_file("pw", wrong, 0o600)
            cfg = self.config(ix.url, f'username = "admin"; password_file = "{pw}";')
            a = Agent(cfg)
            self.agents.append(a)
            a.start()
            wait_until(lambda: "401" in a.output(), 20, what="the 401 reported")
            self.assertEqual(a.stop(), 0)
            self.assertNoSecret(a.output(), wrong)
            # Owner-only: accepted; data lands; no trace of the password.
            pw = self.secret_file("pw", PW, 0o600)
            a = Agent(cfg)
            self.agents.append(a)
            a.start()
            want = want_points(20)
            wait_until(lambda: not diff(want, db_points(_Auth(ix), "perf", ["m"])), 20,
                       what="the points")
            self.assertEqual(a.stop(), 0)
            st = run_perfship(["-c", cfg, "status"])
            ck = run_perfship(["-c", cfg, "check"])
            self.assertEqual(ck[0], 0, ck[2])
            with open(os.path.join(self.state, "state.json")) as f:
                state = f.read()
            for text in (a.output(), st[1] + st[2], ck[1] + ck[2], state):
                self.assertNoSecret(text, PW, wrong)
            self.assertIn("debug", a.output())  # the log was at its most verbose

    @unittest.skipUnless(VICTORIA, "victoria-metrics not installed")
    def test_v2_token_from_file_or_environment_never_shown(self):
        vm_dir = os.path.join(self.tmp, "vm")
        port = free_port()
        log = open(os.path.join(self.tmp, "vm.log"), "wb")
        vm = subprocess.Popen([VICTORIA, f"-httpListenAddr=127.0.0.1:{port}",
                               f"-storageDataPath={vm_dir}", "-loggerLevel=ERROR"],
                              stdout=log, stderr=subprocess.STDOUT)
        try:
            def up():
                try:
                    return urllib.request.urlopen(f"http://127.0.0.1:{port}/health",
                                                  timeout=1).status == 200
                except OSError:
                    return False
            wait_until(up, 20, what="victoria-metrics")
            with FaultProxy(port, seed=3) as proxy:
                with open(os.path.join(self.src, "a.jsonl"), "w") as f:
                    f.write(lines(10))
                tok = self.secret_file("tok", TOKEN_FILE_SECRET, 0o644)
                cfg = self.config(proxy.url, f'api = "v2"; org = "o"; bucket = "b"; '
                                  f'token_file = "{tok}";')
                rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
                self.assertEqual(rc, 78, err)
                self.assertIn(tok, err)
                self.assertNoSecret(out + err, TOKEN_FILE_SECRET)
                os.chmod(tok, 0o600)
                # From the file; the first answer is a 401 (logged, no token).
                proxy.add_rule("status", code=401, count=1,
                               body='{"code":"unauthorized","message":"unauthorized access"}')
                a = Agent(cfg)
                self.agents.append(a)
                a.start()
                proxy.wait_for(lambda rs: any(r.status == 204 for r in rs), 30,
                               what="a write accepted")
                self.assertEqual(a.stop(), 0)
                self.assertIn("401", a.output())
                heads = {r.headers.get("authorization") for r in proxy.requests}
                self.assertEqual(heads, {"Token " + TOKEN_FILE_SECRET})
                logs = a.output()
                # From the environment, which wins over the file.
                proxy.clear_requests()
                with open(os.path.join(self.src, "b.jsonl"), "w") as f:
                    f.write(lines(5, "b"))
                env = {"PERFSHIP_TOKEN": TOKEN_ENV_SECRET}
                rc, out, err = run_perfship(["-c", cfg, "run", "--once"], env=env, timeout=60)
                self.assertEqual(rc, 0, err)
                heads = {r.headers.get("authorization") for r in proxy.requests}
                self.assertEqual(heads, {"Token " + TOKEN_ENV_SECRET})
                st = run_perfship(["-c", cfg, "status"], env=env)
                ck = run_perfship(["-c", cfg, "check"], env=env)
                for text in (logs, out + err, st[1] + st[2], ck[1] + ck[2]):
                    self.assertNoSecret(text, TOKEN_FILE_SECRET, TOKEN_ENV_SECRET)
        finally:
            vm.terminate()
            vm.wait(10)
            log.close()


class _Auth:
    """InfluxServer queries with the admin credentials."""

    def __init__(self, ix):
        self.ix = ix

    def query(self, db, q):
        return self.ix.query(db, q, user="admin", password=PW)


class TLS(Base):
    def make_cert(self, name, san):
        key = os.path.join(self.tmp, name + ".key")
        cert = os.path.join(self.tmp, name + ".pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj",
                        "/CN=perfship-test", "-addext", f"subjectAltName={san}"],
                       check=True, capture_output=True)
        return cert, key

    def test_verification_on_by_default_and_ca_file(self):
        cert, key = self.make_cert("good", "IP:127.0.0.1")
        other, other_key = self.make_cert("other", "DNS:other.example")
        with InfluxServer() as ix:
            with open(os.path.join(self.src, "a.jsonl"), "w") as f:
                f.write(lines(30))
            fwd = TLSForwarder(ix.port, cert, key)
            url = f"https://127.0.0.1:{fwd.port}"
            try:
                # Default: verify against the system's CAs -> refused.
                cfg = self.config(url)
                rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
                self.assertEqual(rc, 69, err)
                self.assertIn("SSL certificate problem", err)
                self.assertIn("set influxdb.tls_ca_file", err)
                self.assertGreater(fwd.handshake_failures, 0)
                self.assertEqual(db_points(ix, "perf", ["m"]), {})
                # With the CA file: accepted, exact.
                cfg = self.config(url, f'tls_ca_file = "{cert}";')
                rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
                self.assertEqual(rc, 0, err)
                self.assertEqual(diff(want_points(30), db_points(ix, "perf", ["m"])), [])
            finally:
                fwd.close()
            # A trusted certificate for another name: refused.
            with open(os.path.join(self.src, "b.jsonl"), "w") as f:
                f.write(lines(5, "b"))
            fwd = TLSForwarder(ix.port, other, other_key)
            try:
                cfg = self.config(f"https://127.0.0.1:{fwd.port}",
                                  f'tls_ca_file = "{other}";')
                rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
                self.assertEqual(rc, 69, err)
                self.assertIn("the certificate was issued for another name", err)
                got = db_points(ix, "perf", ["m"])
                self.assertFalse(any(("k", "b") in k[1] for k in got))
            finally:
                fwd.close()


class LeastPrivilege(Base):
    @unittest.skipUnless(os.geteuid() == 0, "setpriv to nobody needs root (CI runs as root)")
    def test_runs_as_nobody_with_read_only_results(self):
        with open(os.path.join(self.src, "a.jsonl"), "w") as f:
            f.write(lines(50))
        sub = os.path.join(self.src, "run-1")
        os.mkdir(sub)
        with open(os.path.join(sub, "b.jsonl"), "w") as f:
            f.write(lines(7, "b"))

        def snapshot():
            out = {}
            for d, dirs, files in os.walk(self.src):
                st = os.stat(d)
                out[d] = (st.st_mtime_ns, st.st_mode, sorted(dirs + files))
                for n in files:
                    p = os.path.join(d, n)
                    st = os.stat(p)
                    with open(p, "rb") as f:
                        out[p] = (st.st_mtime_ns,
                                  st.st_mode, hashlib.sha256(f.read()).hexdigest())
            return out
        before = snapshot()
        os.mkdir(self.state)
        os.chown(self.state, 65534, 65534)
        with InfluxServer() as ix:
            cfg = self.config(ix.url)
            p = subprocess.run(SETPRIV + [PERFSHIP_BIN, "-c", cfg, "run", "--once"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            want = want_points(50)
            want.update(want_points(7, "b"))
            self.assertEqual(diff(want, db_points(ix, "perf", ["m"])), [])
            # The agent could not have written there, and did not try.
            self.assertEqual(snapshot(), before)
            self.assertNotIn("Permission denied", p.stderr)
            st = os.stat(os.path.join(self.state, "state.json"))
            self.assertEqual((st.st_uid, st.st_mode & 0o077), (65534, 0))
            # `status` as the same user reads its state.
            s = subprocess.run(SETPRIV + [PERFSHIP_BIN, "-c", cfg, "status"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(s.returncode, 0, s.stderr)
            self.assertIn("offset", s.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
