"""Contract: every provider module is registered once, and every registered provider is tested on
real documents (or, for curated providers, on their reviewed data file) and by property tests."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys

import scrapers
from scrapers import REGISTRY
from scrapers.base import Scraper
from tests.helpers import ROOT


def provider_classes() -> set[type[Scraper]]:
    found = set()
    for module in pkgutil.walk_packages(scrapers.__path__, "scrapers."):
        loaded = importlib.import_module(module.name)
        for _, obj in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(obj, Scraper) and "name" in vars(obj) and not inspect.isabstract(obj):
                found.add(obj)
    return found


def test_every_provider_class_is_registered_under_its_name():
    classes = provider_classes()
    assert classes, "no provider modules found"
    assert classes == set(REGISTRY.values())
    for name, cls in REGISTRY.items():
        assert name == cls.name and re.fullmatch(r"[a-z][a-z0-9]*", name)
        assert cls.title and cls.source_kind in ("scraped", "curated")


def test_importing_the_registry_or_the_fetch_floor_loads_no_parser():
    """`import scrapers` and `import fetch.http` stay light: no provider module, no pint."""
    code = (
        "import sys, scrapers, fetch.http; "
        "print(' '.join(m for m in sys.modules if m.startswith(('scrapers.', 'pint', 'measure', 'bs4'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.split() == [], loaded.stdout


def collected(tier: str) -> list[str]:
    """The ids pytest collects in tests/<tier> (providers or properties)."""
    return [test_id for test_id in _collected() if test_id.startswith(f"tests/{tier}/")]


@functools.cache
def _collected() -> tuple[str, ...]:
    """The ids pytest collects in tests/providers and tests/properties: one collection, in a
    subprocess, shared by the tests that read it."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/providers",
            "tests/properties",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return tuple(line for line in out.splitlines() if "::" in line)


def belongs(test_id: str, name: str) -> bool:
    """A test id is about a source when its file is named for it or it is parametrized by its name."""
    path, _, test = test_id.partition("::")
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    params = re.split(r"[\[\]\-]", test.partition("[")[2])
    return stem in (f"test_{name}", f"test_properties_{name}") or name in params


def test_every_provider_has_tests_on_real_documents():
    """Tests follow the registry: each source has a collected test_real_* test in tests/providers."""
    ids = [i for i in collected("providers") if "::test_real" in i]
    assert ids
    for name in REGISTRY:
        assert any(belongs(i, name) for i in ids), (
            f"{name}: no test_real_* test in tests/providers is about it"
        )


def test_every_provider_parser_is_property_tested():
    """Scraped sources have property tests of their own or a family suite parametrized by their name;
    curated ones share the curated suite."""
    ids = collected("properties")
    for name, cls in REGISTRY.items():
        key = name if cls.source_kind == "scraped" else "curated"
        assert any(belongs(i, key) for i in ids), (
            f"{name} ({cls.source_kind}): no property test in tests/properties"
        )
