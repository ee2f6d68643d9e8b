"""The fault matrix, part two: hostile responses and links. Bounded memory and time (gzip bombs,
endless and huge bodies, huge mirror files, slow drips), links and redirects kept within each
provider's declared sources and public addresses, an optional document's failure isolated.

Each runs the real pipeline against the real mirror served over loopback, with small caps and
deadlines (a ``Budget`` cap) so that nothing waits long: the defaults are in fetch/budget.py.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import itertools
import time
import tracemalloc
from pathlib import Path

import httpx
import pytest

from catalog import pipeline
from devtools.mirror_server import Reply
from fetch.budget import Budget, read_capped
from fetch.http import Fetcher, make_client
from fetch.transports import PublicOnly
from normalize.errors import OffLimits, TooLarge
from tests.helpers import (
    AWS_PAGE,
    AWS_PATH,
    AZURE_DIR,
    AZURE_H100_PATH,
    AZURE_ND_FAMILY_PATH,
    AZURE_SUMMARY_PATH,
    MIRROR,
    assert_others_fresh,
    assert_stale,
    fault_refresh,
    no_sleep,
    outcomes,
    query,
)

pytestmark = pytest.mark.slow  # refreshes over loopback HTTP

CAP_BYTES = 1_000_000
SMALL = Budget(max_document_bytes=CAP_BYTES, document_deadline_s=5.0, provider_deadline_s=30.0)
AZURE_PREFIX = "/" + AZURE_DIR.split("/sizes/")[0]  # .../articles/virtual-machines


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """64 MiB of zeros in one gzip member: 65 kB on the wire (the issue's was 2 MB → 2 GiB)."""
    return gzip.compress(bytes(64 * 1024 * 1024), compresslevel=9)


def page(path: str) -> bytes:
    return (MIRROR / path.lstrip("/")).read_bytes()


def fetch_row(db: Path, report: pipeline.RefreshReport, url_path: str) -> tuple[int, str | None]:
    """(status, error) of the fetch of https:/<url_path> in this refresh."""
    this = f"url = 'https:/{url_path}' AND refresh_id = '{report.refresh_id}'"
    return query(db, f"SELECT status, error FROM fetches WHERE {this}")[0]


# -- bounded memory -----------------------------------------------------------------------------


def test_gzip_bomb_is_cut_off_at_the_cap(fault_db, mirror_server, bomb):
    mirror_server.script(AWS_PATH, Reply(200, bomb, headers={"Content-Encoding": "gzip"}))
    report = fault_refresh(fault_db, mirror_server.base_url, budget=SMALL)
    assert_stale(fault_db, report, "aws", "TooLarge")
    assert "over the 1,000,000-byte cap for one document (decoded)" in outcomes(report)["aws"].cause
    status, error = fetch_row(fault_db, report, AWS_PATH)
    assert status == 0 and error.startswith("TooLarge: body over the 1,000,000-byte cap")


def test_reading_a_gzip_bomb_allocates_about_the_cap_not_the_bomb(bomb):
    async def read() -> None:
        chunks = [bomb[i : i + 65536] for i in range(0, len(bomb), 65536)]
        response = httpx.Response(200, headers={"Content-Encoding": "gzip"}, stream=Stream(chunks))
        await read_capped(response, CAP_BYTES)

    tracemalloc.start()
    try:
        with pytest.raises(TooLarge, match="1,000,000-byte cap"):
            asyncio.run(read())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP_BYTES  # 64 MiB unpacked; httpx's own decoder would inflate each chunk whole


class Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


def test_a_second_gzip_layer_is_refused_not_inflated(fault_db, mirror_server, bomb):
    mirror_server.script(
        AWS_PATH, Reply(200, gzip.compress(bomb), headers={"Content-Encoding": "gzip, gzip"})
    )
    report = fault_refresh(fault_db, mirror_server.base_url, budget=SMALL)
    assert_stale(fault_db, report, "aws", "FetchError")
    assert "unsupported Content-Encoding 'gzip, gzip'" in outcomes(report)["aws"].cause


def test_endless_chunked_stream_is_cut_off_at_the_cap(fault_db, mirror_server):
    mirror_server.script(AWS_PATH, Reply(200, stream=lambda: itertools.repeat(b"x" * 65536)))
    started = time.monotonic()
    report = fault_refresh(fault_db, mirror_server.base_url, budget=SMALL)
    assert time.monotonic() - started < 20
    assert_stale(fault_db, report, "aws", "TooLarge")


def test_a_declared_1_gib_body_is_refused_before_reading_it(fault_db, mirror_server):
    declared = {"Content-Length": str(2**30)}
    mirror_server.script(
        AWS_PATH, Reply(200, headers=declared, stream=lambda: itertools.repeat(bytes(65536)))
    )
    report = fault_refresh(fault_db, mirror_server.base_url, budget=SMALL)
    assert_stale(fault_db, report, "aws", "TooLarge")


def test_a_200_mb_mirror_file_is_cut_off_at_the_cap_like_a_response(tmp_path):
    huge = tmp_path / "mirror" / AWS_PAGE
    huge.parent.mkdir(parents=True)
    with open(huge, "wb") as handle:
        handle.truncate(200_000_000)  # sparse: 200 MB of zeros that take no disk

    async def go():
        async with make_client(mirror=tmp_path / "mirror") as client:
            options = {"sleep": no_sleep, "budget_cap": SMALL}
            return await pipeline.refresh(
                tmp_path / "c.duckdb", client, providers=["aws"], mode="mirror", fetcher_options=options
            )

    tracemalloc.start()
    try:
        report = asyncio.run(go())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcomes(report)["aws"].outcome == "failed"  # no earlier rows to keep
    assert outcomes(report)["aws"].cause.startswith("TooLarge: https://docs.aws.amazon.com/")
    assert peak < 40_000_000  # the whole refresh, with the catalog writer; the file was read 1 MB deep


# -- bounded time -------------------------------------------------------------------------------


def test_slow_drip_under_the_read_timeout_passes_the_document_deadline(fault_db, mirror_server):
    # One byte every 50 ms: each read arrives well inside the 0.3 s read timeout, forever.
    mirror_server.script(AWS_PATH, Reply(200, page(AWS_PATH), drip_s=0.05, chunk_bytes=1))
    budget = Budget(document_deadline_s=1.0, provider_deadline_s=30.0)
    started = time.monotonic()
    report = fault_refresh(fault_db, mirror_server.base_url, budget=budget)
    # the page drips for over half an hour; a bound far below that, with room for a loaded machine
    assert time.monotonic() - started < 60
    assert_stale(fault_db, report, "aws", "TooSlow")
    assert "still arriving after 1 s (per-document deadline)" in outcomes(report)["aws"].cause
    mirror_server.scripts.clear()
    again = fault_refresh(fault_db, mirror_server.base_url)  # the lock was released
    assert again.exit_code == 0


def test_slow_provider_passes_its_deadline_and_keeps_what_it_fetched(fault_db, mirror_server):
    mirror_server.script(AZURE_H100_PATH, Reply(200, page(AZURE_H100_PATH), drip_s=0.05, chunk_bytes=1))
    budget = Budget(document_deadline_s=30.0, provider_deadline_s=3.0)
    report = fault_refresh(fault_db, mirror_server.base_url, budget=budget)
    assert_stale(fault_db, report, "azure", "TooSlow: azure: fetch still running after 3 s")
    this_refresh = f"provider = 'azure' AND refresh_id = '{report.refresh_id}'"
    errors = dict(
        query(fault_db, f"SELECT url, error FROM fetches WHERE {this_refresh} AND error IS NOT NULL")
    )
    assert errors["https:/" + AZURE_H100_PATH] == "cancelled: provider deadline"
    fetched = query(fault_db, f"SELECT count(*) FROM fetches WHERE {this_refresh} AND status IN (200, 304)")
    assert fetched[0][0] >= 5  # the family pages and what else came in before the deadline


# -- links and redirects ------------------------------------------------------------------------


def test_crafted_family_page_fetches_only_declared_sources_and_at_most_its_budget(fault_db, mirror_server):
    links = [
        "[meta](http://169.254.169.254/latest/meta-data/a-series.md)",
        "[loop](http://127.0.0.1:1/b-series.md)",
        "[lan](http://10.0.0.1/c-series.md)",
        "[far](https://evil.example/d-series.md)",
        *(f"[s{i}](./s{i}-series.md)" for i in range(5009)),
    ]
    mirror_server.script(AZURE_ND_FAMILY_PATH, Reply(200, "\n".join(links).encode()))
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert_stale(fault_db, report, "azure", "OffLimits: more than 200 documents for azure (its budget)")
    paths = [path for path, _ in mirror_server.requests]
    azure = [p for p in paths if p.startswith("/raw.githubusercontent.com/MicrosoftDocs/")]
    assert all(p.startswith(AZURE_PREFIX) for p in azure)
    assert 190 <= len(azure) <= 200
    assert not [p for p in paths if p.startswith(("/169.254.", "/127.0.0.1", "/10.0.0.1", "/evil.example"))]
    refused = query(
        fault_db,
        "SELECT count(*) FROM fetches WHERE error LIKE 'OffLimits: http%not under%' "
        f"AND refresh_id = '{report.refresh_id}'",
    )
    assert refused == [(4,)]


def test_redirect_off_the_declared_sources_is_refused_unfetched(fault_db, mirror_server):
    mirror_server.script(
        AWS_PATH, Reply(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
    )
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert_stale(fault_db, report, "aws", "OffLimits")
    assert "redirected to http://169.254.169.254/latest/meta-data/" in outcomes(report)["aws"].cause
    assert not [p for p, _ in mirror_server.requests if p.startswith("/169.254.")]
    assert [p for p, _ in mirror_server.requests].count(AWS_PATH) == 1  # refused, not retried


def test_redirect_outside_the_declared_path_on_the_same_host_is_refused(fault_db, mirror_server):
    mirror_server.script(AWS_PATH, Reply(301, headers={"Location": "/AWSEC2/latest/UserGuide/secret.md"}))
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert_stale(fault_db, report, "aws", "redirected to https://docs.aws.amazon.com/AWSEC2/latest/UserGuide")


def test_redirect_within_the_declared_sources_is_followed(fault_db, mirror_server):
    moved = AWS_PATH.replace("ac.md", "ac-moved.md")
    mirror_server.script(AWS_PATH, Reply(302, headers={"Location": "ac-moved.md"}))
    mirror_server.script(moved, Reply(200, page(AWS_PATH)))
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert report.exit_code == 0 and outcomes(report)["aws"].outcome == "ok"
    assert [p for p, _ in mirror_server.requests if p.startswith("/docs.aws")] == [AWS_PATH, moved]


def test_redirect_loop_in_an_optional_include_is_recorded_and_isolated(fault_db, mirror_server):
    mirror_server.script(
        AZURE_SUMMARY_PATH, Reply(302, headers={"Location": AZURE_SUMMARY_PATH.rsplit("/")[-1]})
    )
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert outcomes(report)["azure"].outcome != "stale"
    status, error = fetch_row(fault_db, report, AZURE_SUMMARY_PATH)
    assert status == 0 and error.startswith("FetchError: more than 5 redirects")
    assert_others_fresh(fault_db, "azure")


def test_bad_gzip_in_an_optional_include_is_recorded_and_isolated(fault_db, mirror_server):
    mirror_server.script(
        AZURE_SUMMARY_PATH, Reply(200, b"not gzip at all", headers={"Content-Encoding": "gzip"})
    )
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert outcomes(report)["azure"].outcome != "stale"
    status, error = fetch_row(fault_db, report, AZURE_SUMMARY_PATH)
    assert status == 0 and error.startswith("DecodingError: not valid gzip")


# -- live mode: public addresses only -----------------------------------------------------------


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, text="public page", request=request)


def live_get(url: str, addresses: list[str]) -> tuple[object, Recorder]:
    inner = Recorder()

    async def resolver(host: str, port: int) -> list[str]:
        return addresses

    async def go():
        async with make_client(transport=PublicOnly(inner, resolver=resolver)) as client:
            fetcher = Fetcher(client, sleep=no_sleep).for_provider("test", ("http://", "https://"))
            return await fetcher.get(url, required=False)

    return asyncio.run(go()), inner


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://169.254.169.254/latest/meta-data/", []),
        ("https://127.0.0.1/a.md", []),
        ("https://[::1]/a.md", []),
        ("https://10.0.0.1/a.md", []),
        ("https://[::ffff:127.0.0.1]/a.md", []),
        ("https://docs.example.test/a.md", ["10.1.2.3"]),
        ("https://docs.example.test/a.md", ["93.184.215.14", "192.168.0.7"]),
        ("https://docs.example.test/a.md", ["fe80::1%eth0"]),
    ],
)
def test_live_mode_refuses_non_public_addresses(url, addresses):
    doc, inner = live_get(url, addresses)
    assert not doc.ok and doc.error.startswith("OffLimits: ") and "non-public address" in doc.error
    assert doc.attempts == 1 and inner.requests == []


def test_live_mode_connects_to_the_address_it_checked():
    doc, inner = live_get("https://docs.example.test/a.md", ["93.184.215.14"])
    assert doc.ok and doc.body == "public page"
    (request,) = inner.requests
    assert request.url.host == "93.184.215.14"
    assert request.headers["Host"] == "docs.example.test"
    assert request.extensions["sni_hostname"] == "docs.example.test"


def test_off_limits_refusal_raises_for_a_required_document():
    async def go():
        async with make_client(transport=Recorder()) as client:
            fetcher = Fetcher(client, sleep=no_sleep).for_provider(
                "aws", ("https://docs.aws.amazon.com/ec2/",)
            )
            await fetcher.get("https://docs.aws.amazon.com.evil.example/ec2/x.md")

    with pytest.raises(OffLimits, match="is not under aws's declared sources"):
        asyncio.run(go())


# -- what is stored -----------------------------------------------------------------------------


def test_invalid_utf8_is_stored_as_text_whose_hash_is_the_stored_hash(fault_db, mirror_server):
    broken = page(AWS_PATH).replace(b"Accelerated computing instances", b"Accelerated \xff\xfe computing", 1)
    mirror_server.script(AWS_PATH, Reply(200, broken))
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert outcomes(report)["aws"].outcome == "ok"
    sha, body = query(
        fault_db,
        "SELECT f.sha256, d.body FROM fetches f JOIN documents d USING (sha256) "
        f"WHERE f.url = 'https:/{AWS_PATH}' ORDER BY f.fetched_at DESC LIMIT 1",
    )[0]
    assert "Accelerated \ufffd\ufffd computing" in body
    assert hashlib.sha256(body.encode("utf-8")).hexdigest() == sha
