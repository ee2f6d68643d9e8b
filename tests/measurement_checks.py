"""How the property tests judge a measurement source's parse: readings whose quote is the text of
the document they cite, with a positive finite value in their metric's unit, or a ParseError."""

from __future__ import annotations

import math

from records.documents import DocumentSet
from records.measurements import METRICS, TEXT_METRICS, Measurement
from tests.properties.property_checks import expect, run_parser


def check_source(scraper, documents: DocumentSet, text: str) -> list[Measurement] | None:
    """``scraper.parse_measurements`` judged: any exception but a ParseError fails the test."""
    readings = run_parser(lambda: scraper.parse_measurements(documents), text)
    if readings is None:
        return None
    expect(isinstance(readings, list) and bool(readings), "no readings and no ParseError")
    expect(scraper.parse(documents) == [], "a measurement source gives no instance rows")
    for m in readings:
        expect(isinstance(m, Measurement) and m.metric in METRICS, f"reading {m!r}")
        expect(m.source == scraper.name, f"source {m.source!r}")
        body = documents.optional_text(m.source_url)
        expect(body is not None and m.quote in body, f"quote {m.quote!r} is not in {m.source_url}")
        if m.metric not in TEXT_METRICS:
            expect(
                isinstance(m.value, float) and math.isfinite(m.value) and m.value > 0, f"value {m.value!r}"
            )
    return readings
