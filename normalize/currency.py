"""Currencies: a price keeps the currency it was published in; a comparison in USD converts at one
stated, dated rate per currency, kept in ``normalize/exchange_rates.csv`` (rate, its date, its source)
and written to the catalog's ``exchange_rates`` table beside the prices it converted.

The rule: ``usd = published x usd_per_unit`` with the table's rate, never a rate of the day a refresh
ran, so a snapshot converts the same way wherever it is rebuilt. Changing a rate is a reviewed edit.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from importlib import resources

from normalize.errors import InvalidOffer

USD = "USD"
RATES_TABLE = "normalize/exchange_rates.csv"


@dataclass(frozen=True)
class Rate:
    """How many US dollars one unit of ``currency`` is, on ``rate_date``, per ``source_url``."""

    currency: str
    usd_per_unit: float
    rate_date: date | None
    source_url: str | None
    note: str


def _load() -> dict[str, Rate]:
    text = resources.files("normalize").joinpath("exchange_rates.csv").read_text(encoding="utf-8")
    rates = {}
    for row in csv.DictReader(text.splitlines()):
        rates[row["currency"]] = Rate(
            row["currency"],
            float(row["usd_per_unit"]),
            date.fromisoformat(row["rate_date"]) if row["rate_date"] else None,
            row["source_url"] or None,
            row["note"],
        )
    return rates


RATES = _load()


def rate(currency: str) -> Rate:
    """The catalog's rate for ``currency``; InvalidOffer for a currency it has no rate for."""
    found = RATES.get(currency)
    if found is None:
        raise InvalidOffer(f"no exchange rate for currency {currency!r} in {RATES_TABLE}")
    return found


def to_usd(amount: float | None, currency: str) -> float | None:
    """``amount`` of ``currency`` in US dollars at the catalog's rate (None stays None)."""
    return None if amount is None else amount * rate(currency).usd_per_unit
