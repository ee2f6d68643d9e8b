"""Shared test fixtures: where the real documents live, and a skip when they are absent."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(os.environ.get("INTERCONNECT_SHARED", ROOT.parent / "shared")).resolve()
MIRROR = SHARED / "mirror"

SHARED_MISSING = (
    f"real provider documents not found at {MIRROR} (set INTERCONNECT_SHARED); CI always has them"
)
requires_shared = pytest.mark.skipif(not MIRROR.is_dir(), reason=SHARED_MISSING)


def need_shared() -> None:
    """Skip the calling test or fixture, with the reason, when ../shared is absent."""
    if not MIRROR.is_dir():
        pytest.skip(SHARED_MISSING)


def mirror_text(host_path: str) -> str:
    """The real document published at https://<host_path>, read in place from ../shared/mirror."""
    return (MIRROR / host_path).read_text(encoding="utf-8")


def fetch_from_mirror(scraper) -> list:
    """The documents a scraper fetches from the real mirror, through the real fetch code."""
    from scrapers.http import Fetcher, make_client

    async def fetch() -> list:
        async with make_client(mirror=MIRROR) as client:
            fetcher = Fetcher(client).for_provider(scraper.name, scraper.url_prefixes)
            await scraper.fetch(fetcher)
        return fetcher.documents

    return asyncio.run(fetch())


def url_to_mirror_path(url: str) -> Path:
    return MIRROR / url.split("://", 1)[1]


@pytest.fixture(scope="module")
def real_document():
    """The real documents of ../shared/mirror by URL, read in place and byte for byte; skips when
    ../shared is absent."""
    need_shared()

    @functools.cache
    def read(url: str) -> str:
        return url_to_mirror_path(url).read_bytes().decode("utf-8")

    return read


@pytest.fixture(autouse=True)
def _quiet_parsers(request):
    """Parsers log a warning per skipped row; a property test's thousands of examples would fill the
    captured log."""
    if request.node.get_closest_marker("property") is None:
        yield
        return
    logger = logging.getLogger("scrapers")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


@pytest.fixture
def fixture_text():
    def read(name: str) -> str:
        return (FIXTURES / name).read_text(encoding="utf-8")

    return read


# Hypothesis profiles for the property tests (tests/test_properties_*.py). "default": a modest,
# deterministic run (no .hypothesis database); `HYPOTHESIS_PROFILE=bench` runs 10,000 per test.
from hypothesis import settings  # noqa: E402

settings.register_profile("default", max_examples=40, deadline=None, derandomize=True, database=None)
settings.register_profile("bench", max_examples=10_000, deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "property: hypothesis property tests (HYPOTHESIS_PROFILE=bench for 10,000 examples each)"
    )
