"""What the price parsers share: the price document fetched beside a provider's own pages, the reader of
Go map literals (the Karpenter providers' generated price tables), and the check every price passes.

A price document is optional: when it cannot be fetched the provider's rows still refresh, and the
parse gives no prices (a warning says so; the ``fetches`` table keeps the cause). A price document
that was fetched but cannot be read is a ``LayoutError``: the provider keeps its last good rows and
prices. One entry that cannot be read is skipped with a warning naming it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from records.frozen import direct_init
from records.prices import MAX_USD_PER_HOUR, Price
from scrapers.tables import collect

if TYPE_CHECKING:
    from fetch.http import ProviderFetcher

log = logging.getLogger(__name__)

S = TypeVar("S")
Fetch = Callable[[S, "ProviderFetcher"], Coroutine[Any, Any, None]]

_NUMBER = re.compile(r"^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")


def fetches_also(url: str) -> Callable[[Fetch[S]], Fetch[S]]:
    """Decorate a ``Scraper.fetch``: the optional document at ``url`` is fetched concurrently with the
    provider's own documents, and stored whatever happens to them (a provider whose pages are absent
    from a mirror still has its prices). The provider's own fetch error is raised after both end."""

    def wrap(fetch: Fetch[S]) -> Fetch[S]:
        @functools.wraps(fetch)
        async def fetch_both(self: S, fetcher: ProviderFetcher) -> None:
            pages, price = await asyncio.gather(
                fetch(self, fetcher), fetcher.get(url, required=False), return_exceptions=True
            )
            for outcome in (pages, price):
                if isinstance(outcome, BaseException):
                    raise outcome

        return fetch_both

    return wrap


def price_text(documents: DocumentSet, url: str, provider: str) -> str | None:
    """The price document's body, or None (with a warning) when it could not be fetched."""
    text = documents.optional_text(url)
    if text is None and url in documents:
        cause = documents[url].error or documents[url].status
        log.warning("%s: no prices this refresh: %s is unavailable (%s)", provider, url, cause)
    return text


def usd_per_hour(text: str) -> float:
    """An hourly price as a source prints it ("55.040000"); ParseError naming the text and the bound
    unless it is a plausible price. "0.000000" is a placeholder for a price the source does not have
    (``is_placeholder``)."""
    if text.startswith("-") and _NUMBER.match(text[1:]):
        raise ParseError(f"price {text!r} is negative")
    if not _NUMBER.match(text):
        raise ParseError(f"price {text!r} is not a number")
    value = float(text)
    if value == 0:
        raise ParseError(f"price {text!r} is a placeholder, not a price")
    if not (math.isfinite(value) and value <= MAX_USD_PER_HOUR):
        raise ParseError(
            f"price {text!r} is above {MAX_USD_PER_HOUR:,.0f} USD/h: not a plausible hourly price"
        )
    return value


def is_placeholder(text: str) -> bool:
    """Whether a price cell is the tables' placeholder for a price they do not have ("0.000000")."""
    return bool(_NUMBER.match(text)) and float(text) == 0


@direct_init
@dataclass(frozen=True)
class MapEntry:
    """One ``"KEY": VALUE`` entry of a Go map literal, in the region block that holds it."""

    region: str
    key: str
    value: str
    quote: str  # the entry exactly as printed
    line: int = 0  # where it is printed (1-based)


def go_map_entries(text: str, url: str, *, region: re.Pattern[str], key: str) -> list[MapEntry]:
    """The entries of a Go price map whose keys match ``key`` (a regex), in one pass over the text.

    Each entry belongs to the region named by the nearest ``region`` match above it (its first group).
    LayoutError if no region block is found.
    """
    markers = [(m.start(), m.group(1)) for m in region.finditer(text)]
    if not markers:
        raise LayoutError(f"no region block matching {region.pattern!r} in the price map {url}")
    starts = [start for start, _ in markers]
    entries = []
    line, counted = 1, 0
    for m in re.finditer(rf'"(?P<key>{key})":[ \t]*(?P<value>[^,}}\n]*)', text):
        at = bisect_right(starts, m.start()) - 1
        line += text.count("\n", counted, m.start())
        counted = m.start()
        if at >= 0:
            value = m.group("value").strip()
            entries.append(MapEntry(markers[at][1], m.group("key"), value, m.group(0), line))
    return entries


def map_prices(
    entries: list[MapEntry], *, provider: str, url: str, context: str, notes: str = ""
) -> list[Price]:
    """One on-demand Price per (region, instance type) entry, ``context`` naming where it stands
    ("{region}" is filled in); unreadable entries are skipped with a warning, placeholders quietly. A
    key listed more than once in a region is refused, every entry of it, with their lines: neither
    the first nor the last is the price. LayoutError if no entry gives a price."""
    listed: dict[tuple[str, str], list[MapEntry]] = {}
    for entry in entries:
        listed.setdefault((entry.region, entry.key.strip()), []).append(entry)

    def build(entry: MapEntry) -> Price | None:
        name = entry.key.strip()
        repeated = listed[entry.region, name]
        if len(repeated) > 1:
            if entry is not repeated[0]:
                return None  # refused once, with every line
            shown = ", ".join(str(e.line) for e in repeated)
            raise ParseError(f"{name} is listed {len(repeated)} times in {entry.region} (lines {shown})")
        if is_placeholder(entry.value):
            log.debug("%s: %s in %s is a placeholder, no price", provider, name, entry.region)
            return None
        value = usd_per_hour(entry.value)
        note = notes if name == entry.key else f"{notes}; name printed as {entry.key!r}".lstrip("; ")
        where = context.format(region=entry.region)
        return Price(provider, name, entry.region, value, None, url, entry.quote, where, note)

    return collect(
        entries,
        build,
        provider=f"{provider} price",
        name=lambda e: f"{e.key} in {e.region}",
        empty=f"no GPU instance prices in {url}",
    )
