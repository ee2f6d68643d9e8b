"""How the property tests judge a parser: any text in, well-formed records or a ParseError out.

The rule (scrapers.base.Scraper.parse, normalize.errors.ParseError): on bad input a parser may raise
only ParseError or a subclass (LayoutError). Anything else escaping is a bug, and so is a result
that is not well-formed: a non-finite figure, a claim value of the wrong kind, or a RawOffer that
``catalog.offers.build_offer`` rejects (InvalidOffer is a ValueError, not a ParseError).

The tests are tests/properties/test_properties_*.py; their inputs come from
tests/properties/property_inputs.py.
Profiles (tests/conftest.py): "default" runs a few dozen examples per test, derandomized;
``HYPOTHESIS_PROFILE=bench`` (``make fuzz``) runs 10,000 per test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from typing import Any, TypeVar

import pytest
from hypothesis import event, settings

from catalog.offers import build_offer
from normalize import gpus, units
from normalize.errors import ParseError
from normalize.vocab import Basis, Fabric, Link
from records.documents import DocumentSet
from records.offers import FIELD_UNITS, TEXT_FIELDS, Claim, InstanceOffer, RawOffer
from records.prices import MAX_USD_PER_HOUR, Price
from scrapers import curated_facts
from scrapers.documents import aws
from tests.properties.property_inputs import NOW, doc

T = TypeVar("T")

# A long run (the bench profile) outlasts the suite's 120 s per-test timeout (pyproject): scale it.
_EXAMPLES = settings.default.max_examples
MARKS = [
    pytest.mark.property,
    pytest.mark.filterwarnings("ignore::bs4.MarkupResemblesLocatorWarning"),  # noise that looks like a URL
    pytest.mark.timeout(120 if _EXAMPLES <= 200 else max(600, _EXAMPLES // 4)),
]


# ------------------------------------------------------------------------------------------------
# How a parser's outcome is judged.


class Malformed(AssertionError):
    """A parser returned a result that breaks the well-formedness rules."""


def run_parser(call: Callable[[], T], *inputs: str) -> T | None:
    """call()'s result; None when it raised a ParseError. Any other exception (and any Malformed from
    the checks inside ``call``) fails the test."""
    try:
        return call()
    except ParseError as exc:
        event(f"ParseError ({type(exc).__name__})")
        return None


def strict(call: Callable[[], T]) -> T | None:
    """call()'s result, or None for a ParseError: what the regression tests hold the parsers to."""
    try:
        return call()
    except ParseError:
        return None


# ------------------------------------------------------------------------------------------------
# Well-formedness checks. Each raises Malformed.


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Malformed(message)


def finite_non_negative(value: Any, what: str) -> None:
    expect(isinstance(value, float) and not isinstance(value, bool), f"{what} is not a float: {value!r}")
    expect(math.isfinite(value), f"{what} is non-finite: {value!r}")
    expect(value >= 0, f"{what} is negative: {value!r}")


RATE = units.Quantity(1, units.GBIT_PER_S).dimensionality
PER_WORDS = {None, "gpu", "node", "nic"}
DIRECTIONS = {None, "bidirectional", "unidirectional"}


def check_bandwidth(bw: units.Bandwidth, text: str) -> units.Bandwidth:
    expect(isinstance(bw, units.Bandwidth), f"not a Bandwidth: {bw!r}")
    expect(bw.text == text, "Bandwidth.text is not the parsed text")
    expect(bw.each.dimensionality == RATE, f"unit {bw.each.units} is not a rate")
    expect(isinstance(bw.count, int) and bw.count >= 1, f"link count {bw.count!r}")
    gbits, gbytes = bw.gbits_per_s, bw.gbytes_per_s
    finite_non_negative(gbits, "gbits_per_s")
    finite_non_negative(gbytes, "gbytes_per_s")
    expect(
        math.isclose(gbits, gbytes * 8, rel_tol=1e-9, abs_tol=1e-12), f"{gbits} Gbit/s != 8 x {gbytes} GB/s"
    )
    finite_non_negative(bw.each_gbits_per_s, "each_gbits_per_s")
    expect(
        math.isclose(bw.each_gbits_per_s * bw.count, gbits, rel_tol=1e-9, abs_tol=1e-12),
        "total is not each x count",
    )
    if bw.burst is not None:
        expect(bw.burst.dimensionality == RATE, "burst is not a rate")
        finite_non_negative(bw.burst_gbits_per_s, "burst_gbits_per_s")
    expect(bw.per in PER_WORDS and bw.direction in DIRECTIONS, f"qualifiers {bw.per!r} {bw.direction!r}")
    expect(isinstance(bw.up_to, bool), "up_to is not a bool")
    start, end = bw.span
    expect(0 <= start < end <= len(text), f"span {bw.span} outside the text")
    expect(any(ch.isdigit() for ch in text[start:end]), f"span {text[start:end]!r} holds no figure")
    expect(isinstance(bw.qualifiers, str), "qualifiers is not text")
    return bw


FAMILIES = {family for family, _ in gpus.FAMILY_PATTERNS}
LINKS = {link.value for link in Link}
FABRICS = {fabric.value for fabric in Fabric}


# Fields whose zero is no fact and breaks the row invariants: a 0-GPU instance, a 0 Gbit/s link.
POSITIVE_FIELDS = frozenset({"gpu_count", *(f for f in FIELD_UNITS if f.endswith("_per_s"))})
NUMERIC_ROW_FIELDS = (
    "gpu_count",
    "gpu_memory_gb",
    "gpu_memory_gbytes_per_s",
    "intra_node_gbytes_per_s",
    "inter_node_gbits_per_s",
    "inter_node_gbytes_per_s",
    "frontend_gbits_per_s",
)


def check_gpu_id(gpu_id: Any) -> None:
    expect(isinstance(gpu_id, str) and bool(gpu_id), f"gpu id {gpu_id!r}")
    family_level = any(gpu_id == f or gpu_id.startswith(f + "-") for f in FAMILIES)
    expect(gpu_id in gpus.BY_ID or family_level, f"gpu id {gpu_id!r} is neither a part nor a family")


def check_claim(claim: Claim) -> None:
    expect(isinstance(claim, Claim), f"not a Claim: {claim!r}")
    expect(claim.field in FIELD_UNITS, f"unknown field {claim.field!r}")
    if claim.field in TEXT_FIELDS:
        expect(isinstance(claim.value, str), f"{claim.field} value {claim.value!r} is not text")
        if claim.field == "gpu_model":
            check_gpu_id(claim.value)
        elif claim.field == "intra_node_link":
            expect(claim.value in LINKS, f"intra_node_link {claim.value!r}")
        else:
            expect(claim.value in FABRICS, f"inter_node_fabric {claim.value!r}")
    else:
        finite_non_negative(claim.value, f"{claim.field} claim value")
        if claim.field in POSITIVE_FIELDS:
            expect(claim.value > 0, f"{claim.field} claim value is zero")
    expect(isinstance(claim.quote, str) and bool(claim.quote.strip()), "empty quote")
    expect(isinstance(claim.source_url, str) and bool(claim.source_url), "no source_url")
    expect(isinstance(claim.context, str) and isinstance(claim.qualifiers, str), "context/qualifiers")
    expect(isinstance(claim.basis, Basis) and isinstance(claim.unit_suspect, bool), "basis/unit_suspect")


def check_row(row: InstanceOffer) -> None:
    expect(isinstance(row, InstanceOffer), f"not an InstanceOffer: {row!r}")
    for name in NUMERIC_ROW_FIELDS:
        value = getattr(row, name)
        if value is not None:
            expect(math.isfinite(value) and value >= 0, f"row {name} = {value!r}")
    if row.gpu_model is not None:
        check_gpu_id(row.gpu_model)


def check_offers(offers: list[RawOffer], provider: str, *, kind: str = "scraped") -> list[RawOffer]:
    """Every RawOffer well-formed and accepted by build_offer (InvalidOffer propagates)."""
    expect(isinstance(offers, list), f"parse returned {type(offers).__name__}, not a list")
    for raw in offers:
        expect(isinstance(raw, RawOffer), f"not a RawOffer: {raw!r}")
        expect(raw.provider == provider, f"provider {raw.provider!r}")
        expect(isinstance(raw.instance_type, str) and bool(raw.instance_type.strip()), "no instance type")
        expect(raw.source_kind == kind, f"source_kind {raw.source_kind!r}")
        expect(isinstance(raw.claims, tuple) and isinstance(raw.notes, tuple), "claims/notes not tuples")
        expect(all(isinstance(n, str) for n in raw.notes), "a note is not text")
        for claim in raw.claims:
            check_claim(claim)
        check_row(build_offer(raw, scraped_at=NOW))
    return offers


# ------------------------------------------------------------------------------------------------
# Parsers run with every result checked.


def aws_parse(text: str) -> list[RawOffer]:
    """The AWS parser on ``text`` as the instance-types page."""
    return check_offers(aws.Aws().parse(DocumentSet([doc(aws.AC_URL, "aws", text)])), "aws")


def parse_all(scraper, documents: DocumentSet) -> list[RawOffer]:
    """``scraper`` on a document set."""
    return check_offers(scraper.parse(documents), scraper.name)


def curated_parse(text: str, provider: str) -> list[RawOffer]:
    """Every claim well-formed; build_offer over the rows the pipeline builds from them: a curated
    offer naming no GPU only supplements a scraped row (curated_facts.merge drops it when alone)."""
    offers = curated_facts.parse_curated(text, provider)
    expect(isinstance(offers, list), "not a list")
    for raw in offers:
        expect(isinstance(raw, RawOffer) and raw.provider == provider, f"{raw!r}")
        for claim in raw.claims:
            check_claim(claim)
            expect(isinstance(claim.read_on, date), f"curated claim without read_on date: {claim!r}")
    return check_offers(curated_facts.merge([], offers), provider, kind="curated")


def check_prices(prices: list[Price], provider: str, rows: set[str], documents: DocumentSet) -> list[Price]:
    """Every price well-formed, about a row the parse returned, and quoting its document."""
    expect(isinstance(prices, list), f"parse_prices returned {type(prices).__name__}, not a list")
    for price in prices:
        expect(isinstance(price, Price) and price.provider == provider, f"{price!r}")
        expect(price.instance_type in rows, f"a price for {price.instance_type!r}, which is no row")
        expect(price.usd_per_hour is not None or price.spot_usd_per_hour is not None, "a price with no price")
        for value in (price.usd_per_hour, price.spot_usd_per_hour):
            if value is not None:
                finite_non_negative(value, "price")
                expect(0 < value <= MAX_USD_PER_HOUR, f"implausible price {value}")
        expect(bool(price.region.strip()), "a price with no region")
        expect(
            price.quote in (documents.optional_text(price.source_url) or ""),
            "price quote not in its document",
        )
    return prices


def catalog_parse(scraper, documents: DocumentSet) -> list[RawOffer]:
    """An offer-list provider on a document set: rows, prices, and every quote found in its document."""
    offers = check_offers(scraper.parse(documents), scraper.name)
    for offer in offers:
        for claim in offer.claims:
            body = documents.optional_text(claim.source_url)
            expect(
                body is None or claim.quote in body,
                f"{offer.instance_type} {claim.field}: quote not in its document",
            )
        expect(
            offer.identity.seller_kind == scraper.seller_kind, f"seller_kind {offer.identity.seller_kind!r}"
        )
    check_prices(scraper.parse_prices(documents), scraper.name, {o.instance_type for o in offers}, documents)
    return offers


def skypilot_parse(scraper, text: str) -> list[RawOffer]:
    """An offer-list provider on ``text`` as its catalog CSV (its other documents absent)."""
    return catalog_parse(scraper, DocumentSet([doc(scraper.catalog_url, scraper.name, text)]))
