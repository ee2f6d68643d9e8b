"""Fixtures and hooks: the skip for tests that need ../shared, hypothesis profiles, quiet parsers."""

from __future__ import annotations

import functools
import logging
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import (
    FIXTURES,
    MIRROR,
    SHARED,
    SHARED_MISSING,
    SMALL,
    T0,
    build_mirror,
    cli_refresh,
    fault_refresh,
    url_to_mirror_path,
)


# The one way to say "needs ../shared": mark the test `@pytest.mark.shared` (or the module with
# `pytestmark`), or read ../shared only in fixtures declared with `@shared_fixture`: every test that
# uses one is marked for it. Marked tests are skipped, with the reason, when ../shared is absent.
def shared_fixture(*args, **kwargs):
    """``pytest.fixture`` for a fixture that reads ../shared: the tests using it are marked ``shared``."""

    def declare(function):
        function.reads_shared = True
        return pytest.fixture(*args, **kwargs)(function)

    return declare


#: The test tiers are folders; a tier's marker comes from its folder, so `-m` selects tiers (the
#: Makefile's test-fast is unit + providers). docs/contributing.md says what each tier costs.
TIER_MARKERS = {
    "unit": (),
    "providers": (),
    "properties": ("property",),
    "pipeline": ("slow",),
    "faults": ("slow",),
    "app": ("slow",),
    "e2e": ("e2e", "slow"),
}


def tier_of(path: Path) -> str | None:
    """The tier folder a test file sits in (tests/<tier>/...), or None for a file outside them."""
    parts = path.resolve().relative_to(Path(__file__).resolve().parent).parts
    return parts[0] if len(parts) > 1 and parts[0] in TIER_MARKERS else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        tier = tier_of(Path(item.fspath))
        if tier is None:
            raise pytest.UsageError(
                f"{item.nodeid}: a test file lives in a tier folder ({', '.join(TIER_MARKERS)})"
            )
        for marker in TIER_MARKERS[tier]:
            item.add_marker(getattr(pytest.mark, marker))
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        if any(getattr(d.func, "reads_shared", False) for defs in definitions for d in defs):
            item.add_marker(pytest.mark.shared)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("shared") is not None and not MIRROR.is_dir():
        pytest.skip(SHARED_MISSING)
    if item.get_closest_marker("e2e") is not None:
        from devtools.browser import missing_requirement

        reason = missing_requirement()
        if reason:
            pytest.skip(f"end-to-end test needs a browser: {reason}")


@shared_fixture(scope="module")
def real_document():
    """The real documents of ../shared/mirror by URL, read in place and byte for byte."""

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


# Hypothesis profiles for the property tests (tests/properties/test_properties_*.py). "default": a modest,
# deterministic run (no .hypothesis database); `HYPOTHESIS_PROFILE=bench` runs 10,000 per test.
from hypothesis import settings  # noqa: E402

settings.register_profile("default", max_examples=40, deadline=None, derandomize=True, database=None)
settings.register_profile("bench", max_examples=10_000, deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def small_catalog_file(tmp_path_factory) -> Path:
    """The small catalog (AWS p5.48xlarge, g5.xlarge, g5.12xlarge; Azure Standard_ND96isr_T9_v9,
    Standard_ND48is_T9_v9), refreshed once per test session from the small mirror. Read it only;
    a test that changes it takes ``small_catalog``."""
    root = tmp_path_factory.mktemp("small")
    db = root / "c.duckdb"
    assert cli_refresh(build_mirror(root / "m"), db, *SMALL) == 0
    return db


@pytest.fixture
def small_catalog(small_catalog_file, tmp_path) -> tuple[Path, Path]:
    """A private copy of the small catalog and of its mirror: (mirror, db), free to change."""
    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    return build_mirror(tmp_path / "m"), db


@shared_fixture(scope="session")
def real_catalog_file(tmp_path_factory) -> Path:
    """The catalog refreshed from ../shared/mirror and the local copies in ../shared, once per test
    session (as `make snapshot` builds it). Read it only."""
    db = tmp_path_factory.mktemp("real") / "c.duckdb"
    assert cli_refresh(MIRROR, db, "--copies", str(SHARED)) == 0
    return db


# The fault matrix (tests/faults/test_faults*.py): one loopback server and one baseline catalog per module.
@shared_fixture(scope="module")
def mirror_server():
    """The real mirror served over loopback HTTP; tests script faults per path."""
    from devtools.mirror_server import MirrorServer

    with MirrorServer(MIRROR) as running:
        yield running


@pytest.fixture(scope="module")
def fault_baseline(mirror_server, tmp_path_factory) -> Path:
    """The fault providers refreshed once, at T0, with no fault. Read it only."""
    db = tmp_path_factory.mktemp("baseline") / "catalog.duckdb"
    mirror_server.scripts.clear()  # built when first needed: maybe after a test scripted a fault
    report = fault_refresh(db, mirror_server.base_url, now=T0)
    assert report.exit_code == 0, [(o.provider, o.cause) for o in report.outcomes]
    return db


@pytest.fixture
def fault_db(fault_baseline, tmp_path, mirror_server) -> Path:
    """A private copy of the baseline catalog, with the server's scripts and request log cleared."""
    copy = tmp_path / "catalog.duckdb"
    shutil.copy(fault_baseline, copy)
    mirror_server.scripts.clear()
    mirror_server.requests.clear()
    return copy
