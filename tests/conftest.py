"""Shared test fixtures: where the real documents live, and a skip when they are absent."""

from __future__ import annotations

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


def url_to_mirror_path(url: str) -> Path:
    return MIRROR / url.split("://", 1)[1]


@pytest.fixture
def fixture_text():
    def read(name: str) -> str:
        return (FIXTURES / name).read_text(encoding="utf-8")

    return read
