"""The agent's HTTP transport (net/http_loop.h, net/http_request.h) against a
real HTTP server on loopback: Python's http.server, started by this test,
records what arrived and answers per path.

tests/tools/http_driver runs the requests of a JSON spec on a libuv loop and
prints what each callback got, plus the result of uv_loop_close(). What is
checked is what a user of ps_http_request() relies on: a 200 and a 500 are
answers with their status and body, a refused connection and a timeout are
errors named as such, closing the transport while requests are in flight
calls each callback once with a cancel status and leaves a loop that closes
cleanly, and a header with a line break never reaches the server.
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

DRIVER = os.path.join(os.path.dirname(harness.PERFSHIP_BIN), "tests", "tools", "http_driver")


class Receiver(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen = []
        self.release = threading.Event()  # /hold waits for it
        self.lock = threading.Lock()

    def start(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def url(self, path):
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with self.server.lock:
            self.server.seen.append({"method": self.command, "path": self.path,
                                     "body": body.decode("utf-8", "replace"),
                                     "headers": dict(self.headers.items())})
        if self.path.startswith("/hold"):
            self.server.release.wait(20)
        code = 500 if self.path.startswith("/fail") else 200
        if self.path.startswith("/big"):
            out = b"x" * 200000
        else:
            out = json.dumps({"method": self.command, "path": self.path,
                              "body": body.decode("utf-8", "replace")}).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except OSError:
            pass  # the client gave up (timeout, cancel)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer


def refused_url():
    # A port that was free a moment ago: nothing listens there.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/"


class HttpLoopTest(unittest.TestCase):
    def setUp(self):
        self.rx = Receiver().start()
        self.tmp = harness.scratch_dir(self, "perfship-http-")

    def tearDown(self):
        self.rx.release.set()
        self.rx.shutdown()
        self.rx.server_close()

    def drive(self, spec, timeout=60):
        path = os.path.join(self.tmp, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        p = subprocess.run([DRIVER, path], capture_output=True, timeout=timeout)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        out = json.loads(p.stdout)
        # Whatever happened, the loop closes cleanly once the transport is closed.
        self.assertEqual(out["loop_close"], 0)
        self.assertEqual(out["closed"], 1)
        self.assertEqual(out["callbacks_after_close"], 0)
        # Exactly one callback per started request.
        started = [i for i, rc in enumerate(out["start"]) if rc == 0]
        self.assertEqual(sorted(r["index"] for r in out["results"]), started)
        out["by_index"] = {r["index"]: r for r in out["results"]}
        return out

    def test_answers_and_errors(self):
        out = self.drive({"requests": [
            {"method": "POST", "url": self.rx.url("/ok"), "body": "hello, server",
             "headers": ["X-Test: one", "Content-Type: text/plain"]},
            {"url": self.rx.url("/fail")},
            {"url": refused_url()},
            {"url": self.rx.url("/hold"), "timeout_ms": 300},
            {"method": "PUT", "url": self.rx.url("/put"), "body": "b"},
        ]})
        r = out["by_index"]
        # 200: an answer, with the server's body
        self.assertEqual((r[0]["status"], r[0]["http_status"]), (0, 200))
        self.assertEqual(json.loads(r[0]["body"])["body"], "hello, server")
        # 500: an answer too; the caller judges the status
        self.assertEqual((r[1]["status"], r[1]["http_status"]), (0, 500))
        self.assertEqual(json.loads(r[1]["body"])["path"], "/fail")
        # nothing listening
        self.assertEqual(r[2]["errno"], "ECONNREFUSED")
        self.assertEqual(r[2]["http_status"], 0)
        self.assertIn("connect", r[2]["error"].lower())
        # the server takes longer than timeout_ms
        self.assertEqual(r[3]["errno"], "ETIMEDOUT")
        self.assertGreaterEqual(r[3]["ms"], 300)
        self.assertEqual(r[4]["http_status"], 200)
        seen = {s["path"]: s for s in self.rx.seen}
        self.assertEqual(seen["/ok"]["method"], "POST")
        self.assertEqual(seen["/ok"]["body"], "hello, server")
        self.assertEqual(seen["/ok"]["headers"].get("X-Test"), "one")
        self.assertEqual(seen["/ok"]["headers"].get("Content-Type"), "text/plain")
        self.assertEqual(seen["/put"]["method"], "PUT")
        self.assertEqual(seen["/put"]["body"], "b")

    def test_close_while_in_flight(self):
        out = self.drive({"requests": [{"url": self.rx.url("/hold")},
                                       {"method": "POST", "url": self.rx.url("/hold"),
                                        "body": "x" * 1000}],
                          "close_after_ms": 300})
        self.assertEqual(len(out["results"]), 2)
        for r in out["results"]:
            self.assertEqual(r["errno"], "ECANCELED")
            self.assertEqual(r["http_status"], 0)
            # cancelled when the transport closed, not when the server let go
            self.assertLess(r["ms"], 10000)

    def test_close_from_a_callback(self):
        # The first answer's callback closes the transport; the request still
        # held by the server is cancelled, after that callback has returned.
        out = self.drive({"requests": [{"url": self.rx.url("/ok")},
                                       {"url": self.rx.url("/hold")}],
                          "close_in_callback": True})
        r = out["by_index"]
        self.assertEqual(r[0]["http_status"], 200)
        self.assertEqual(r[1]["errno"], "ECANCELED")
        self.assertEqual([x["index"] for x in out["results"]], [0, 1])

    def test_bad_requests_are_refused_before_sending(self):
        out = self.drive({"requests": [
            {"url": self.rx.url("/ok"), "headers": ["X-Evil: a\r\nX-Injected: 1"]},
            {"url": self.rx.url("/ok"), "headers": ["no colon"]},
            {"method": "GET", "url": self.rx.url("/ok"), "body": "GET has no body"},
            {"method": "BREW", "url": self.rx.url("/ok")},
            {"url": self.rx.url("/ok"), "headers": ["X-Fine: yes"]},
        ]})
        self.assertEqual(out["start"][:4], [-22, -22, -22, -22])
        self.assertEqual(out["start"][4], 0)
        self.assertEqual(len(self.rx.seen), 1)
        self.assertNotIn("X-Injected", self.rx.seen[0]["headers"])

    def test_answer_is_bounded(self):
        out = self.drive({"requests": [{"url": self.rx.url("/big"), "answer_limit": 1000},
                                       {"url": self.rx.url("/big")}]})
        r = out["by_index"]
        self.assertEqual(r[0]["http_status"], 200)
        self.assertEqual(r[0]["body_len"], 1000)
        self.assertTrue(r[0]["truncated"])
        # default limit 64 KiB
        self.assertEqual(r[1]["body_len"], 65536)
        self.assertTrue(r[1]["truncated"])

    def test_many_requests_share_the_loop(self):
        n = 40
        out = self.drive({"requests": [{"method": "POST", "url": self.rx.url(f"/ok/{i}"),
                                        "body": f"n={i}"} for i in range(n)]})
        self.assertEqual(len(out["results"]), n)
        for i in range(n):
            r = out["by_index"][i]
            self.assertEqual(r["http_status"], 200)
            self.assertEqual(json.loads(r["body"])["body"], f"n={i}")


if __name__ == "__main__":
    unittest.main()
