"""A rewriting HTTP proxy in front of a live server: the "newer server" a generated client meets.

It forwards every request to ``upstream`` and rewrites two kinds of answer:

- every event list it forwards (``events`` of a ``POST .../actions`` answer, of each
  ``GET .../log`` entry) gets an event of a kind no client was generated with
  (:data:`FUTURE_EVENT`), first in the list;
- the ``refuse_act``-th ``POST .../actions`` is not forwarded: it is answered with a 422 problem
  whose ``code`` no client was generated with (:data:`FUTURE_PROBLEM`), once. Nothing reaches
  the server, as with any refusal, so a client that re-reads and retries loses nothing.

``injected`` counts what was added (``act_events``, ``log_events``, ``problems``), for the
test to compare with what the client program says it saw. Plain request/response only (no
server-sent events streaming).

    with RewritingProxy(live_serve) as proxy:
        run_client(proxy.url)
    assert proxy.injected["problems"] == 1
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import httpx

FUTURE_KIND = "future_kind"
FUTURE_EVENT: dict[str, Any] = {
    "kind": FUTURE_KIND,
    "data": {"seat": 0, "note": "an event kind added after this client was generated"},
    "text": "Something this client was not generated with happened.",
}
FUTURE_CODE = "future_code"
FUTURE_PROBLEM: dict[str, Any] = {
    "type": f"urn:skyline:problem:{FUTURE_CODE}",
    "title": "A refusal this client does not know",
    "status": 422,
    "detail": "Injected by the test proxy; nothing was written. Re-read and retry.",
    "code": FUTURE_CODE,
    "futureField": {"hint": "problems may carry members a client does not know"},
}

ACT = re.compile(r"^/v1/matches/[^/?]+/actions$")
LOG = re.compile(r"^/v1/matches/[^/?]+/log$")
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
    "upgrade", "content-length", "content-encoding", "host", "accept-encoding", "date",
    "server",
})


class RewritingProxy:
    def __init__(self, upstream: str, *, refuse_act: int = 3) -> None:
        self.upstream = upstream.rstrip("/")
        self.refuse_act = refuse_act
        self.injected: Counter[str] = Counter()
        self.acts = 0
        self._lock = threading.Lock()
        self._http = httpx.Client(base_url=self.upstream, timeout=30)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RewritingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._http.close()

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        path = target.split("?", 1)[0]
        if method == "POST" and ACT.match(path):
            with self._lock:
                self.acts += 1
                refuse = self.acts == self.refuse_act
                if refuse:
                    self.injected["problems"] += 1
            if refuse:
                problem = json.dumps(FUTURE_PROBLEM).encode()
                return 422, [("Content-Type", "application/problem+json")], problem
        sent = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        answer = self._http.request(method, target, headers=sent, content=body)
        out = [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        content = answer.content
        if answer.status_code == 200 and method == "POST" and ACT.match(path):
            content = self._rewrite(content, "act_events", lambda doc: [doc["events"]])
        elif answer.status_code == 200 and method == "GET" and LOG.match(path):
            content = self._rewrite(
                content, "log_events", lambda doc: [e["events"] for e in doc["entries"]]
            )
        return answer.status_code, out, content

    def _rewrite(self, content: bytes, counter: str, lists: Any) -> bytes:
        document = json.loads(content)
        found = lists(document)
        for events in found:
            events.insert(0, dict(FUTURE_EVENT))
        with self._lock:
            self.injected[counter] += len(found)
        return json.dumps(document).encode()


def _handler(proxy: RewritingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as clients expect

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle's algorithm and the
            # client's delayed ACK hold every keep-alive answer back ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                status, headers, content = proxy.handle(
                    self.command, self.path, list(self.headers.items()), body
                )
            except Exception as error:  # report it to the client and the test, never hang
                status, headers = 502, [("Content-Type", "text/plain")]
                content = f"proxy error: {error!r}".encode()
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
