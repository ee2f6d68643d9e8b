"""The fault matrix: the declared prefix cannot be walked out of (issue 23). A link or a redirect
whose path has dot segments (plain or percent-encoded), a backslash or user info is refused before
any prefix check; every check compares the URL as the client sends it; the URL actually fetched is
stored (``fetches.fetched_url``)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from devtools.mirror_server import Reply
from fetch.http import Fetcher, make_client
from fetch.urls import canonical, refusal
from scrapers.offer_lists.digitalocean import VMS_URL
from tests.helpers import (
    AZURE_ND_FAMILY_PATH,
    LOOPBACK_TIMEOUT,
    MIRROR,
    SHARED_MISSING,
    PerHost,
    fault_refresh,
    no_sleep,
    outcomes,
    query,
)

ARTICLES = (
    "https://raw.githubusercontent.com/MicrosoftDocs/azure-compute-docs/main/articles/virtual-machines/"
)
EVIL = ARTICLES + "../../../../../evil/repo/main/pwn-series.md"
EVIL_PATH = "/raw.githubusercontent.com/evil/repo/main/pwn-series.md"
PWN = b"# pwn series\n\n| Size Name | vCPU |\n| --- | --- |\n| Standard_ND96_pwn | 96 |\n"


@pytest.mark.parametrize(
    "url",
    [
        EVIL,
        ARTICLES + "sizes/./x-series.md",
        ARTICLES + "sizes/%2e%2E/%2E%2e/x-series.md",
        ARTICLES + "sizes\\..\\x-series.md",
        "https://raw.githubusercontent.com@evil.example/MicrosoftDocs/x.md",
        ARTICLES + "sizes/x series.md",
        ARTICLES + "sizes/x\x00-series.md",
        ARTICLES + "a" * 3000,
    ],
)
def test_unsafe_spellings_are_refused_before_the_prefix_check(url):
    assert refusal(url) is not None


def test_the_canonical_form_is_what_httpx_sends():
    assert canonical("HTTPS://Raw.GitHubUserContent.com:443/a/b.md#top") == (
        "https://raw.githubusercontent.com/a/b.md"
    )
    assert refusal(ARTICLES + "sizes/gpu-accelerated/nd-family.md") is None


@pytest.mark.slow
@pytest.mark.skipif(not MIRROR.is_dir(), reason=SHARED_MISSING)
def test_a_dot_segment_link_out_of_the_azure_prefix_is_refused_unfetched(fault_db, mirror_server):
    family = (MIRROR / AZURE_ND_FAMILY_PATH.lstrip("/")).read_bytes()
    mirror_server.script(AZURE_ND_FAMILY_PATH, Reply(200, family + f"\n[pwn]({EVIL})\n".encode()))
    mirror_server.script(EVIL_PATH, Reply(200, PWN))
    report = fault_refresh(fault_db, mirror_server.base_url)
    assert not [p for p, _ in mirror_server.requests if "/evil/" in p]
    refused = query(
        fault_db, f"SELECT error FROM fetches WHERE refresh_id = '{report.refresh_id}' AND url = '{EVIL}'"
    )
    assert refused and refused[0][0].startswith("OffLimits: ") and "dot segments" in refused[0][0]
    assert query(fault_db, "SELECT count(*) FROM instances WHERE instance_type LIKE '%pwn%'") == [(0,)]
    assert outcomes(report)["azure"].outcome == "ok"  # an optional series link: refused, not fatal


def _digitalocean_get(mirror_server) -> object:
    async def go():
        async with make_client(
            transport=PerHost(mirror_server.base_url, {}), timeout=LOOPBACK_TIMEOUT
        ) as client:
            fetcher = Fetcher(client, sleep=no_sleep).for_provider("digitalocean", (VMS_URL,))
            return await fetcher.get(VMS_URL, required=False)

    return asyncio.run(go())


@pytest.mark.slow
def test_a_dot_segment_redirect_out_of_a_skypilot_csv_is_refused(mirror_server):
    mirror_server.scripts.clear()
    mirror_server.requests.clear()
    path = "/" + VMS_URL.split("://", 1)[1]
    mirror_server.script(path, Reply(302, headers={"Location": VMS_URL + "/../../../../../../evil/vms.csv"}))
    mirror_server.script("/raw.githubusercontent.com/evil/vms.csv", Reply(200, b"InstanceType\nevil\n"))
    doc = _digitalocean_get(mirror_server)
    assert not doc.ok and doc.error.startswith("OffLimits: redirected to ") and "dot segments" in doc.error
    assert [p for p, _ in mirror_server.requests] == [path]


@pytest.mark.slow
def test_the_url_actually_fetched_is_stored_after_a_redirect(mirror_server):
    mirror_server.scripts.clear()
    path = "/" + VMS_URL.split("://", 1)[1]
    moved = Reply(302, headers={"Location": "vms.csv?moved=1"})
    mirror_server.script(path, moved, Reply(200, b"InstanceType\nx\n"))  # played in order
    doc = _digitalocean_get(mirror_server)
    assert doc.ok and doc.url == VMS_URL and doc.fetched_url == VMS_URL + "?moved=1"


def test_an_unparseable_url_is_refused_not_raised():
    async def go():
        async with make_client(transport=httpx.MockTransport(lambda r: httpx.Response(200))) as client:
            fetcher = Fetcher(client, sleep=no_sleep).for_provider("t", ("https://a.example/",))
            return await fetcher.get("https://a.example:99999/x.md", required=False)

    doc = asyncio.run(go())
    assert not doc.ok and doc.error.startswith("OffLimits: ")
