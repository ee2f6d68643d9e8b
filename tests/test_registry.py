"""Contract: every provider module is registered once, and every registered provider is tested on
real documents (or, for curated providers, on their reviewed data file) and by property tests."""

from __future__ import annotations

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


def test_every_provider_has_tests_on_real_documents():
    for name, _cls in REGISTRY.items():
        test_file = ROOT / "tests" / f"test_{name}.py"
        assert test_file.is_file(), f"{name} has no tests/test_{name}.py"
        text = test_file.read_text()
        real = "shared_fixture" in text or "mark.shared" in text or "curated" in text
        assert real, f"tests/test_{name}.py never reads a real document (marked shared) or curated file"
        assert re.search(r"^def test_real", text, re.M), f"tests/test_{name}.py has no test_real_* test"


def test_every_provider_parser_is_property_tested():
    """Scraped providers have their own property-test module; curated ones share the curated one."""
    for name, cls in REGISTRY.items():
        module = name if cls.source_kind == "scraped" else "curated"
        test_file = ROOT / "tests" / f"test_properties_{module}.py"
        assert test_file.is_file(), f"{name} ({cls.source_kind}) has no tests/test_properties_{module}.py"
        assert "@given" in test_file.read_text(), f"tests/test_properties_{module}.py has no @given test"
