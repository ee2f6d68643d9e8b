"""Property tests of every offer list in the registry (scrapers/offer_lists/): its catalog CSV with random
lines in the real file's columns and instance names, and the real file mutated. One suite for the family,
parametrized by the registry: a new offer list is covered the day it is registered."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers import PROVIDER_ENTRIES, REGISTRY
from tests.properties.property_checks import MARKS, run_parser, skypilot_parse
from tests.properties.property_inputs import mutated, skypilot_csv

pytestmark = [*MARKS, pytest.mark.shared]

OFFER_LISTS = sorted(
    name for name, entry in PROVIDER_ENTRIES.items() if entry.startswith("scrapers.offer_lists.")
)


def header_and_names(real: str, at_most: int = 8) -> tuple[list[str], list[str]]:
    """The real file's columns, in order, and up to ``at_most`` of its instance names spread over it."""
    rows = list(csv.reader(io.StringIO(real)))
    header = rows[0]
    names = sorted({row[header.index("InstanceType")] for row in rows[1:] if len(row) == len(header)})
    step = max(1, len(names) // at_most)
    return header, names[::step][:at_most]


@settings(suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("name", OFFER_LISTS)
@given(data=st.data())
def test_random_lines_in_the_real_columns(name, real_document, data):
    scraper = REGISTRY[name]()
    header, names = header_and_names(real_document(scraper.catalog_url))
    text = data.draw(skypilot_csv(header, st.sampled_from(names)))
    run_parser(lambda: skypilot_parse(scraper, text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("name", OFFER_LISTS)
@given(data=st.data())
def test_the_real_file_mutated(name, real_document, data):
    scraper = REGISTRY[name]()
    text = data.draw(mutated(real_document(scraper.catalog_url)))
    run_parser(lambda: skypilot_parse(scraper, text), text)


def test_the_family_is_the_registry():
    assert len(OFFER_LISTS) >= 12 and "vast" in OFFER_LISTS and "aws" not in OFFER_LISTS
