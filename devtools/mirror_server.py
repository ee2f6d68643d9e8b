"""A local HTTP server for a mirror directory, with scriptable faults and latency.

``python -m devtools serve-mirror DIR`` serves ``DIR/<host>/<path>`` at ``/<host>/<path>`` with ETags
and 304s, so ``refresh --mirror http://127.0.0.1:PORT`` exercises real HTTP end to end. Tests and
benchmarks script faults per path (a list of replies played in order) and add latency.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from fetch.transports import MIRROR_MISSING_HEADER, NOT_IN_MIRROR


@dataclass
class Reply:
    """One scripted response. ``truncate_to`` sends fewer body bytes than Content-Length says;
    ``drip_s`` sleeps before each ``chunk_bytes`` of the body (a slow server); ``close`` drops the
    connection unanswered; ``stream`` sends the chunks it yields (an endless body, a huge one) until
    it ends or the client hangs up, in chunked framing unless ``headers`` declare a Content-Length."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drip_s: float = 0.0
    chunk_bytes: int = 256
    truncate_to: int | None = None
    close: bool = False
    stream: Callable[[], Iterable[bytes]] | None = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The fetcher opens up to 32 connections at once. socketserver's default backlog of 5 drops the
    # rest of the SYNs, and the kernel retries them a second later: one-second stalls in the bench.
    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that hung up (a capped or timed-out fetch): nothing to report
        super().handle_error(request, client_address)


class MirrorServer:
    """``server.script(path, Reply(...), Reply(...))``; the last reply repeats. Unscripted paths are
    served from ``mirror_root/<host>/<path>`` when given (with ETag and 304 support), else 404."""

    def __init__(self, mirror_root: Path | None = None, *, port: int = 0, latency_s: float = 0.0) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.mirror_root = mirror_root
        self.default_delay_s = latency_s
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self.server = _Server(("127.0.0.1", port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def script(self, path: str, *replies: Reply) -> None:
        self.scripts[path] = list(replies)

    def __enter__(self) -> MirrorServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self, path: str) -> Reply | None:
        with self._lock:
            replies = self.scripts.get(path)
            if not replies:
                return None
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def _from_mirror(self, raw_path: str, headers: dict[str, str]) -> Reply:
        # Mirror layout: /<host>/<path> on this server is https://<host>/<path> upstream.
        missing = Reply(
            404, NOT_IN_MIRROR.encode(), {MIRROR_MISSING_HEADER: "1"}, delay_s=self.default_delay_s
        )
        if self.mirror_root is None:
            return missing
        file = (self.mirror_root / raw_path.lstrip("/")).resolve()
        if not file.is_relative_to(self.mirror_root.resolve()) or not file.is_file():
            return missing
        body = file.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if headers.get("if-none-match") == etag:
            return Reply(304, b"", {"ETag": etag}, delay_s=self.default_delay_s)
        return Reply(200, body, {"ETag": etag}, delay_s=self.default_delay_s)

    def _handler(self) -> Callable:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                headers = {k.lower(): v for k, v in self.headers.items()}
                with outer._lock:
                    outer.requests.append((path, headers))
                reply = outer._next(path) or outer._from_mirror(path, headers)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.close:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.stream is not None:
                    self._send_stream(reply, reply.stream)
                    return
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                body = reply.body if reply.truncate_to is None else reply.body[: reply.truncate_to]
                size = reply.chunk_bytes
                chunks = [body[i : i + size] for i in range(0, len(body), size)] if reply.drip_s else [body]
                try:
                    for chunk in chunks:
                        if reply.drip_s:
                            time.sleep(reply.drip_s)
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a deadline): nothing to finish
                    return
                with outer._lock:
                    outer.bytes_sent += len(body)
                if reply.truncate_to is not None:
                    self.close_connection = True

            def _send_stream(self, reply: Reply, stream: Callable[[], Iterable[bytes]]) -> None:
                # With a scripted Content-Length the chunks go out as they are (a huge declared body);
                # without one, in chunked framing (a body of unknown, maybe endless, length).
                framed = "Content-Length" not in reply.headers
                if framed:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.close_connection = True
                try:
                    for chunk in stream():
                        if reply.drip_s:
                            time.sleep(reply.drip_s)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if framed else chunk)
                        with outer._lock:
                            outer.bytes_sent += len(chunk)
                    if framed:
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: what a capped fetch does

        return Handler
