"""A fault-injecting HTTP/1.1 proxy for perfship's integration tests.

It listens on a free loopback port in front of a REAL server (InfluxDB,
VictoriaMetrics) and forwards requests unchanged, except where a rule says
otherwise. It keeps client connections alive (HTTP/1.1) and uses one
upstream connection per client connection, so the client's keep-alive
behaviour is visible in the record. Python stdlib only, one thread per
client connection.

API
    from faultproxy import FaultProxy

    with FaultProxy(upstream_port=influx.port, seed=7) as proxy:
        proxy.url                      # "http://127.0.0.1:PORT", give it to perfship
        proxy.add_rule("status", code=500, count=2)
        proxy.add_rule("status", code=503, retry_after="2", count=1)
        proxy.add_rule("status", code=413, min_body=4096)  # every body >= 4096 B
        proxy.add_rule("delay", seconds=3, count=1)       # slow, then forward
        proxy.add_rule("drop", prob=0.1)                  # close before answering
        proxy.add_rule("drop", prob=0.1, forward=True)    # server got it; answer lost
        proxy.add_rule("half", prob=0.1)                  # forward, then send the
                                                          # status line + part of the
                                                          # body and close
        proxy.add_rule("delay", seconds=1, contains=b"perfship,")  # hold the
                                                          # agent's own point
        proxy.clear_rules()
        proxy.requests                 # list of Request records (copy)
        proxy.wait_for(lambda reqs: any(r.status == 404 for r in reqs))

Rules are tried in the order added; the first that matches a request acts
on it. A rule matches when its filters hold: `path` (prefix of the request
path), `min_body` (raw body length, i.e. compressed size when gzip, as
InfluxDB measures), `contains` (bytes the body holds, after gunzip),
`prob` (drawn from the proxy's seeded RNG, so a run is
reproducible for a given request order) and `count` (the rule retires after
acting on `count` requests). Without a matching rule a request passes
through. Actions:
    pass      forward unchanged (useful to shield the next `count` requests)
    status    answer `code` with `body` (default an InfluxDB-like JSON error)
              and, when given, a `Retry-After: retry_after` header; the
              request is NOT forwarded unless forward=True
    delay     sleep `seconds`, then forward (the client may have gone);
              forward=True: forward first, then hold the answer (the server
              has the data, the client does not know yet)
    drop      close the connection without answering (forward=True: after
              forwarding, so the server stored the data but the answer is lost)
    pass, delay with close_after=True: close the connection once the answer
              is sent, without a "Connection: close" header (a server's
              idle timeout or request limit on kept-alive connections)
    half      forward, then answer only in part and close: the status line,
              the full Content-Length and half the body (an answer without a
              body, like InfluxDB's 204, becomes a 200 with a short JSON
              body, cut); with cut="headers": the status line and half a
              header (curl resends that by itself on a reused connection)

TLS: FaultProxy(..., tls_cert=PEM, tls_key=PEM) serves https (the upstream
stays plain http); `url` then starts with https://.

Control endpoint (for tests that drive the proxy from another process):
    POST /__faultproxy__/rules     body: JSON list of rule dicts
                                   ({"action": "status", "code": 500, ...});
                                   replaces the rules
    GET  /__faultproxy__/requests  JSON list of the recorded requests
These paths are never forwarded and never recorded.

A request whose body ends before its Content-Length (the client died while
sending it) is recorded with action "cut" and not forwarded.

Each Request records: method, path, query (dict of first values), headers
(dict, lower-case names), body_len (as received), body (bytes, gunzipped
when Content-Encoding is gzip), action (what the proxy did), status (the
status sent to the client, or None), conn (an id per client connection),
t (time.monotonic() when the request was read), done (time.monotonic()
when the answer was sent or the connection given up, None before). A
request whose client hung up before its answer came (a timeout) keeps
status None: no answer reached it.

acked_writes(requests) lists the write requests the client saw answered
2xx: what a client may take as stored. A point in two of them was sent
again after the server had acknowledged it, which InfluxDB's overwrite
hides from any query (see pointset.acked_counts).
"""
import gzip
import http.client
import json
import random
import select
import socket
import socketserver
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

CONTROL = "/__faultproxy__/"


class Request:
    def __init__(self, method, path, query, headers, body_len, body, conn, t):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body_len = body_len
        self.body = body
        self.conn = conn
        self.t = t
        self.action = "pass"
        self.status = None
        self.done = None

    def as_dict(self):
        return {"method": self.method, "path": self.path, "query": self.query,
                "headers": self.headers, "body_len": self.body_len,
                "action": self.action, "status": self.status,
                "conn": self.conn, "t": self.t, "done": self.done,
                "body": self.body.decode("utf-8", "replace")}

    def __repr__(self):
        return (f"<Request {self.method} {self.path} {self.body_len}B "
                f"{self.action} -> {self.status}>")


class Rule:
    def __init__(self, action, count=None, prob=None, path=None, min_body=None,
                 code=500, body=None, retry_after=None, seconds=0.0,
                 forward=False, cut="body", contains=None, close_after=False):
        if action not in ("pass", "status", "delay", "drop", "half"):
            raise ValueError(f"unknown action {action!r}")
        self.action = action
        self.count = count
        self.prob = prob
        self.path = path
        self.min_body = min_body
        self.code = int(code)
        self.body = body
        self.retry_after = retry_after
        self.seconds = float(seconds)
        self.forward = bool(forward)
        if cut not in ("body", "headers"):
            raise ValueError(f"unknown cut {cut!r}")
        self.cut = cut
        if isinstance(contains, str):
            contains = contains.encode()
        self.contains = contains
        self.close_after = bool(close_after)


def acked_writes(requests):
    """The write requests (InfluxDB v1 /write, v2 /api/v2/write) whose
    client got a 2xx answer, in the order they were read."""
    return [r for r in requests
            if r.path in ("/write", "/api/v2/write") and r.status is not None
            and 200 <= r.status < 300]


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client hanging up (or refusing our certificate) is a test case


class FaultProxy:
    def __init__(self, upstream_port, upstream_host="127.0.0.1", seed=0,
                 upstream_timeout=60, tls_cert=None, tls_key=None):
        self.upstream = (upstream_host, upstream_port)
        self.tls = (tls_cert, tls_key) if tls_cert else None
        self.upstream_timeout = upstream_timeout
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self._rules = []
        self._requests = []
        self._conn_ids = 0
        self.server = None
        self.thread = None

    # -- lifecycle ---------------------------------------------------------
    def start(self):
        proxy = self

        class Handler(_Handler):
            pass
        Handler.proxy = proxy
        self.server = _Server(("127.0.0.1", 0), Handler)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self.tls)
            # The handshake runs in the connection's thread (see setup), so
            # a client that refuses the certificate cannot stall accept().
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    # -- rules ---------------------------------------------------------------
    def add_rule(self, action, **kw):
        r = Rule(action, **kw)
        with self.lock:
            self._rules.append(r)
        return r

    def set_rules(self, rules):
        """Replaces the rules with a list of dicts ({"action": ..., ...})."""
        parsed = [Rule(**dict(r)) for r in rules]
        with self.lock:
            self._rules = parsed

    def clear_rules(self):
        with self.lock:
            self._rules = []

    def clear_requests(self):
        with self.lock:
            self._requests = []

    @property
    def requests(self):
        with self.lock:
            return list(self._requests)

    def wait_for(self, pred, timeout=30, what="requests"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred(self.requests):
                return True
            time.sleep(0.02)
        raise AssertionError(f"proxy: timed out waiting for {what}: {self.requests!r}")

    # -- internals -------------------------------------------------------------
    def _next_conn_id(self):
        with self.lock:
            self._conn_ids += 1
            return self._conn_ids

    def _record(self, req):
        with self.lock:
            self._requests.append(req)

    def _pick(self, req):
        with self.lock:
            for r in self._rules:
                if r.path and not req.path.startswith(r.path):
                    continue
                if r.min_body is not None and req.body_len < r.min_body:
                    continue
                if r.contains is not None and r.contains not in req.body:
                    continue
                if r.prob is not None and self.rng.random() >= r.prob:
                    continue
                if r.count is not None:
                    r.count -= 1
                    if r.count <= 0:
                        self._rules.remove(r)
                return r
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    proxy = None

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()
        self.conn_id = self.proxy._next_conn_id()
        self.up = None

    def finish(self):
        try:
            super().finish()
        finally:
            if self.up:
                self.up.close()

    def _upstream(self):
        if self.up is None:
            host, port = self.proxy.upstream
            self.up = http.client.HTTPConnection(host, port,
                                                 timeout=self.proxy.upstream_timeout)
        return self.up

    def _forward(self, method, raw_path, headers, body):
        """Returns (status, reason, headers list, body) from upstream."""
        hop = {"connection", "keep-alive", "proxy-connection", "te",
               "transfer-encoding", "upgrade", "host", "expect"}
        fwd = {k: v for k, v in headers.items() if k.lower() not in hop}
        for attempt in (1, 2):
            try:
                up = self._upstream()
                up.request(method, raw_path, body=body, headers=fwd)
                r = up.getresponse()
                data = r.read()
                return r.status, r.reason, r.getheaders(), data
            except (OSError, http.client.HTTPException):
                if self.up:
                    self.up.close()
                self.up = None
                if attempt == 2:
                    raise

    def _send(self, status, reason, headers, body):
        self.send_response_only(status, reason)
        skip = {"connection", "keep-alive", "transfer-encoding", "content-length"}
        for k, v in headers:
            if k.lower() not in skip:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = b""
        while len(body) < n:
            chunk = self.rfile.read(n - len(body))
            if not chunk:
                break
            body += chunk
        return body

    def _control(self, method, path, body):
        p = self.proxy
        if method == "POST" and path == CONTROL + "rules":
            p.set_rules(json.loads(body or b"[]"))
            self._send(204, "No Content", [], b"")
        elif method == "GET" and path == CONTROL + "requests":
            out = json.dumps([r.as_dict() for r in p.requests]).encode()
            self._send(200, "OK", [("Content-Type", "application/json")], out)
        else:
            self._send(404, "Not Found", [], b"")

    def _handle(self):
        raw_path = self.path
        u = urllib.parse.urlsplit(raw_path)
        body = self._read_body()
        if u.path.startswith(CONTROL):
            return self._control(self.command, u.path, body)
        headers = {k.lower(): v for k, v in self.headers.items()}
        decoded = body
        if headers.get("content-encoding", "").lower() == "gzip":
            try:
                decoded = gzip.decompress(body)
            except (OSError, EOFError):
                decoded = b""
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        req = Request(self.command, u.path, q, headers, len(body), decoded,
                      self.conn_id, time.monotonic())
        self._req = req
        if len(body) < int(self.headers.get("Content-Length") or 0):
            # The client died while sending (kill -9): a server sees the
            # connection end early and stores nothing. Forwarded with its
            # declared length, the body would leave the server waiting for
            # the rest (and this thread for its answer).
            req.action = "cut"
            self.proxy._record(req)
            self.close_connection = True
            return
        rule = self.proxy._pick(req)
        action = rule.action if rule else "pass"
        req.action = action
        self.proxy._record(req)

        if action == "status":
            if rule.forward:
                self._forward(self.command, raw_path, dict(self.headers), body)
            payload = rule.body
            if payload is None:
                payload = json.dumps({"error": f"injected {rule.code}"})
            if isinstance(payload, str):
                payload = payload.encode()
            hdrs = [("Content-Type", "application/json")]
            if rule.retry_after is not None:
                hdrs.append(("Retry-After", str(rule.retry_after)))
            req.status = rule.code
            return self._send(rule.code, None, hdrs, payload)
        if action == "drop":
            if rule.forward:
                self._forward(self.command, raw_path, dict(self.headers), body)
            self.close_connection = True
            self._abort()
            return
        if action == "delay" and not rule.forward:
            time.sleep(rule.seconds)
        st, reason, hdrs, data = self._forward(self.command, raw_path,
                                               dict(self.headers), body)
        if action == "delay" and rule.forward:
            time.sleep(rule.seconds)
        if self._client_gone():
            # It gave up waiting (a timeout, or held by a delay): the server
            # has the data, the client never saw the answer. Recorded
            # without a status, so that its resend is not taken for a
            # duplicate.
            self.close_connection = True
            return
        if action == "half":
            if rule.cut == "headers":
                out = f"HTTP/1.1 {st} {reason}\r\nContent-Ty".encode()
            else:
                if st in (204, 304) or st < 200 or not data:
                    # InfluxDB's 204 has no body to cut: a server dying
                    # while it answers 200 with a body looks like this.
                    st, reason, data = 200, "OK", b'{"results":[{"statement_id":0}]}'
                out = (f"HTTP/1.1 {st} {reason}\r\nContent-Length: {len(data)}\r\n"
                       "Content-Type: application/json\r\n\r\n").encode() + data[: len(data) // 2]
            try:
                self.wfile.write(out)
                self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True
            self._abort()
            return
        req.status = st
        self._send(st, reason, hdrs, data)
        if rule and rule.close_after:
            # A server ending a kept-alive connection after an answer
            # without saying so (an idle timeout, a request limit).
            self.close_connection = True
            self._abort()

    def _client_gone(self):
        """True when the client closed its side of the connection."""
        sock = self.connection
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            if not readable:
                return False
            if isinstance(sock, ssl.SSLSocket):
                return False  # cannot peek through TLS; assume it waits
            return sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _abort(self):
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_POST(self):
        self._req = None
        try:
            self._handle()
        except (OSError, http.client.HTTPException):
            self.close_connection = True
        finally:
            if self._req is not None:
                self._req.done = time.monotonic()

    do_GET = do_POST
    do_HEAD = do_POST
    do_PUT = do_POST
    do_DELETE = do_POST
