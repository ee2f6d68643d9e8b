"""The fetch layer: retries, Retry-After, conditional GET, errors; mirror mode; recorded exchanges.

Behaviour is driven two ways: httpx transports (deterministic, covers timeouts which cannot be
recorded) and vcrpy cassettes recorded against the scripted loopback server in catalog/mirror_server.py
(``make record`` re-records them; CI replays with record mode "none", so no socket is opened).
"""

from __future__ import annotations

import asyncio
import os
from datetime import datetime
from pathlib import Path

import httpx
import pytest
import vcr

from devtools.mirror_server import MirrorServer, Reply
from fetch.http import USER_AGENT, Fetcher, make_client, retry_after_s
from fetch.transports import MirrorTransport, PublicOnly
from normalize.errors import FetchError
from records.documents import Document

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes" / "http"
ANYWHERE = ("http://", "https://")  # these tests are about HTTP, not about declared sources
RECORD_MODE = os.environ.get("VCR_RECORD_MODE", "none")
T0 = datetime(2026, 12, 1)


class Sleeps:
    """An injected sleep that records how long the fetcher asked to wait and never waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def scripted(*responses):
    """A MockTransport answering each request with the next of ``responses`` (exceptions raise)."""
    queue = list(responses)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, Exception):
            raise item
        return item

    return httpx.MockTransport(handler), seen


def fetch(transport, url="https://example.test/a.md", *, previous=None, required=True, **kw):
    sleeps = Sleeps()
    stored: list[Document] = []

    async def run():
        async with make_client(transport=transport) as client:
            fetcher = Fetcher(client, previous=previous, sleep=sleeps, **kw).for_provider("test", ANYWHERE)
            try:
                return await fetcher.get(url, required=required)
            finally:
                stored.extend(fetcher.documents)

    return asyncio.run(run()), sleeps.waits, stored


def test_client_is_configured():
    client = make_client()
    assert client.headers["User-Agent"] == USER_AGENT
    assert client.timeout.connect == 10.0 and client.timeout.read == 30.0
    assert not client.follow_redirects  # the Fetcher follows them, one checked hop at a time
    assert isinstance(client._transport, PublicOnly)  # live mode: public addresses only
    asyncio.run(client.aclose())


def test_retries_5xx_with_exponential_backoff_then_succeeds():
    transport, seen = scripted(httpx.Response(500), httpx.Response(502), httpx.Response(200, text="ok"))
    doc, waits, stored = fetch(transport)
    assert (doc.status, doc.body, doc.attempts) == (200, "ok", 3)
    assert waits == [0.5, 1.0]
    assert stored == [doc]  # stored once, after the last attempt
    assert len(seen) == 3


def test_honours_retry_after_seconds_and_caps_it():
    transport, _ = scripted(httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(200, text="x"))
    _, waits, _ = fetch(transport)
    assert waits == [7.0]
    transport, _ = scripted(
        httpx.Response(503, headers={"Retry-After": "3600"}), httpx.Response(200, text="x")
    )
    _, waits, _ = fetch(transport, max_wait_s=60)
    assert waits == [60]


def test_retry_after_http_date():
    response = httpx.Response(429, headers={"Retry-After": "Wed, 02 Dec 2026 12:00:30 GMT"})
    now = datetime.fromisoformat("2026-12-02T12:00:00+00:00")
    assert retry_after_s(response, now=now) == 30


def test_timeouts_are_retried_then_reported():
    transport, seen = scripted(httpx.ReadTimeout("slow"))
    with pytest.raises(FetchError, match="ReadTimeout"):
        fetch(transport, max_attempts=3)
    assert len(seen) == 3
    doc, waits, stored = fetch(transport, max_attempts=2, required=False)
    assert (doc.status, doc.ok, doc.attempts) == (0, False, 2)
    assert stored == [doc] and waits == [0.5]


def test_connection_refused_is_a_fetch_error():
    transport, _ = scripted(httpx.ConnectError("Connection refused"))
    with pytest.raises(FetchError, match="Connection refused"):
        fetch(transport, max_attempts=1)


def test_404_is_not_retried():
    transport, seen = scripted(httpx.Response(404))
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch(transport)
    assert len(seen) == 1
    doc, _, stored = fetch(transport, required=False)
    assert (doc.status, doc.body, doc.error) == (404, None, "HTTP 404")
    assert stored == [doc]


def test_conditional_get_sends_validators_and_304_reuses_the_stored_body():
    previous = Document(
        url="https://example.test/a.md",
        provider="test",
        status=200,
        fetched_at=T0,
        body="stored",
        sha256="abc",
        etag='"v1"',
        last_modified="Tue, 01 Dec 2026 00:00:00 GMT",
    )
    transport, seen = scripted(httpx.Response(304, headers={"ETag": '"v1"'}))
    doc, _, _ = fetch(transport, previous={previous.url: previous})
    assert seen[0].headers["If-None-Match"] == '"v1"'
    assert seen[0].headers["If-Modified-Since"] == previous.last_modified
    assert (doc.status, doc.body, doc.sha256, doc.from_cache, doc.bytes_received) == (
        304,
        "stored",
        "abc",
        True,
        0,
    )


def test_sha256_and_size_of_a_fresh_body():
    transport, _ = scripted(httpx.Response(200, text="hello", headers={"ETag": '"e"'}))
    doc, _, _ = fetch(transport)
    assert doc.sha256 == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    assert (doc.bytes_received, doc.etag) == (5, '"e"')


def test_mirror_transport_maps_urls_to_files(tmp_path):
    page = tmp_path / "docs.example.com" / "a" / "b.md"
    page.parent.mkdir(parents=True)
    page.write_text("# page")
    transport = MirrorTransport(tmp_path)
    doc, _, _ = fetch(transport, "https://docs.example.com/a/b.md")
    assert (doc.status, doc.body) == (200, "# page")
    missing, _, _ = fetch(transport, "https://docs.example.com/a/none.md", required=False)
    assert missing.status == 404
    outside, _, _ = fetch(transport, "https://docs.example.com/../../etc/passwd", required=False)
    assert outside.status in (400, 404) and not outside.ok


def test_mirror_transport_refuses_symlinks_that_leave_the_mirror(tmp_path):
    mirror, outside = tmp_path / "mirror", tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("secret")
    host = mirror / "docs.example.com"
    host.mkdir(parents=True)
    (host / "inside.md").write_text("# inside")
    (host / "file-link.md").symlink_to(outside / "key.txt")
    (host / "dir-link").symlink_to(outside)
    (host / "same-link.md").symlink_to(host / "inside.md")
    transport = MirrorTransport(mirror)
    for _ in range(2):  # the second time from the transport's resolved directories
        assert transport.path_for("https://docs.example.com/same-link.md") == host / "inside.md"
        for url in ("https://docs.example.com/file-link.md", "https://docs.example.com/dir-link/key.txt"):
            with pytest.raises(ValueError, match="maps outside the mirror"):
                transport.path_for(url)


# Recorded exchanges with a real HTTP server on loopback.
def cassette(name: str):
    recorder = vcr.VCR(
        cassette_library_dir=str(CASSETTES),
        record_mode=RECORD_MODE,
        match_on=["method", "path", "query"],
        filter_headers=["authorization", "cookie", "set-cookie"],
        decode_compressed_response=True,
    )
    return recorder.use_cassette(f"{name}.yaml", allow_playback_repeats=False)


def run_recorded(name: str, script: dict[str, list[Reply]], paths: list[str], stored=None):
    """Fetch ``paths`` inside cassette ``name``; the server runs only when recording.

    ``stored`` maps a path to the (body, etag) a previous refresh left for it.
    """
    recording = RECORD_MODE != "none"
    server = MirrorServer()
    for path, replies in script.items():
        server.script(path, *replies)
    base = server.base_url if recording else "http://127.0.0.1:9"
    previous = {
        base + path: Document(
            url=base + path, provider="test", status=200, fetched_at=T0, body=body, sha256="stored", etag=etag
        )
        for path, (body, etag) in (stored or {}).items()
    }
    sleeps = Sleeps()

    async def go():
        # The plain network transport: these exchanges are with loopback, which live mode's
        # PublicOnly guard refuses (tests/test_faults_fetch.py tests that guard).
        async with make_client(transport=httpx.AsyncHTTPTransport(retries=2)) as client:
            fetcher = Fetcher(client, previous=previous, sleep=sleeps).for_provider("test", ANYWHERE)
            return [await fetcher.get(base + p, required=False) for p in paths]

    if recording:
        server.__enter__()
    try:
        with cassette(name):
            docs = asyncio.run(go())
    finally:
        if recording:
            server.__exit__()
    return docs, sleeps.waits


def test_cassette_503_then_success():
    docs, waits = run_recorded(
        "retry_503_then_200", {"/p.md": [Reply(503), Reply(200, b"# page")]}, ["/p.md"]
    )
    assert (docs[0].status, docs[0].body, docs[0].attempts) == (200, "# page", 2)
    assert waits == [0.5]


def test_cassette_429_retry_after():
    script = {"/p.md": [Reply(429, headers={"Retry-After": "2"}), Reply(200, b"ok")]}
    docs, waits = run_recorded("rate_limited_429", script, ["/p.md"])
    assert docs[0].body == "ok" and waits == [2.0]


def test_cassette_404_and_500():
    script = {"/gone.md": [Reply(404)], "/broken.md": [Reply(500)]}
    docs, waits = run_recorded("not_found_and_server_error", script, ["/gone.md", "/broken.md"])
    assert [d.status for d in docs] == [404, 500]
    assert docs[1].attempts == 4 and waits == [0.5, 1.0, 2.0]


def test_cassette_304_reuses_body():
    script = {"/p.md": [Reply(304, headers={"ETag": '"v7"'})]}
    docs, _ = run_recorded("not_modified_304", script, ["/p.md"], stored={"/p.md": ("kept", '"v7"')})
    assert (docs[0].status, docs[0].body, docs[0].from_cache) == (304, "kept", True)
