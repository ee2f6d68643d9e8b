"""The refresh: fetch every provider's documents, parse, validate, write, swap.

Read top to bottom: ``refresh`` opens a ``CatalogWriter`` (which holds the lock and builds the new
file), fetches all providers concurrently through one ``Fetcher``, and parses each provider as soon
as its own documents are in, while the others still fetch. Each provider ends as one
``ProviderResult``: fresh rows, or the cause that keeps its previous rows (stale). The writer stores
the documents, the rows and the history; the new file replaces the old one only when complete.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from catalog import expectations
from catalog.offers import build_offer
from catalog.store import CatalogWriter, Previous
from catalog.validate import check
from normalize.errors import InvalidOffer, NotInMirror, ProviderError, ValidationError
from records.clock import utcnow
from records.documents import Document, DocumentSet
from records.measurements import Measurement
from records.offers import InstanceOffer
from records.prices import Price
from scrapers import REGISTRY, curated_facts
from scrapers.base import Scraper
from scrapers.http import Fetcher

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_PROVIDER_FAILED = 1


@dataclass
class ProviderOutcome:
    """How one provider fared in one refresh (a ``provider_refreshes`` row).

    ``outcome``: ok; curated (the scrape failed and nothing scraped was kept before: the curated
    facts stand alone); stale (failed, previous rows kept); failed (failed, nothing to keep);
    unchanged (a reparse with no stored documents for it: its rows are left as they were).
    ``failure`` decides the exit code: a provider whose pages are simply absent from a mirror and
    whose curated facts stand in is not a failure.
    """

    provider: str
    outcome: str
    documents: int
    rows_before: int
    rows_after: int
    cause: str | None = None
    last_success_at: datetime | None = None
    failure: bool = False

    def as_row(self) -> dict:
        """The outcome as a ``provider_refreshes`` row."""
        row = self.__dict__.copy()
        del row["failure"]
        return row


@dataclass
class ProviderResult:
    """Everything one provider's refresh produced: what to store, and how it fared."""

    outcome: ProviderOutcome
    documents: list[Document] = field(default_factory=list)
    offers: list[InstanceOffer] = field(default_factory=list)
    prices: list[Price] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)

    @property
    def fresh(self) -> bool:
        """Whether the provider's rows are new (ok or curated) rather than kept from before."""
        return self.outcome.outcome in ("ok", "curated")


@dataclass
class RefreshReport:
    """The result of one refresh: its id, mode, times and each provider's outcome."""

    refresh_id: str
    mode: str
    started_at: datetime
    finished_at: datetime
    outcomes: list[ProviderOutcome]

    @property
    def exit_code(self) -> int:
        """0 when every provider succeeded (or fell back to curated facts), else 1."""
        return EXIT_PROVIDER_FAILED if any(o.failure for o in self.outcomes) else EXIT_OK


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _fetch(scraper: Scraper, fetcher: Fetcher) -> tuple[list[Document], Exception | None]:
    """One provider's documents, and what stopped its fetch (or None)."""
    bound = fetcher.for_provider(scraper.name, scraper.url_prefixes, max_documents=scraper.max_documents)
    try:
        await scraper.fetch(bound)
    except (ProviderError, httpx.HTTPError) as exc:
        return bound.documents, exc
    except Exception as exc:  # a bug in one provider must not stop the others
        log.exception("%s: unexpected error while fetching", scraper.name)
        return bound.documents, RuntimeError(f"internal error: {_cause(exc)}")
    return bound.documents, None


@dataclass
class Parsed:
    """What one source's documents say: rows, prices, measurements."""

    offers: list[InstanceOffer]
    prices: list[Price]
    measurements: list[Measurement]


def parse_documents(
    scraper: Scraper, documents: list[Document], now: datetime, *, scrape: bool = True
) -> Parsed:
    """One source's records: its documents parsed (pure, no network), rows merged with its curated
    facts; with ``scrape`` False, the curated facts alone. ProviderError if any row is invalid."""
    stored = DocumentSet(documents)
    raw = scraper.parse(stored) if scrape else []
    raw = curated_facts.merge(raw, curated_facts.load(scraper.name))
    offers = [build_offer(r, scraped_at=now) for r in raw]
    seen = set()
    for offer in offers:
        if offer.instance_type in seen:
            raise InvalidOffer(f"{scraper.name}: instance type {offer.instance_type} listed twice")
        seen.add(offer.instance_type)
    if not scrape:
        return Parsed(offers, [], [])
    prices, measurements = scraper.parse_prices(stored), scraper.parse_measurements(stored)
    strays = {p.provider for p in prices} - {scraper.name} | {m.source for m in measurements} - {scraper.name}
    if strays:
        raise InvalidOffer(f"{scraper.name}: prices or measurements attributed to {sorted(strays)}")
    return Parsed(offers, prices, measurements)


def _parse(
    scraper: Scraper, documents: list[Document], now: datetime, rows_before: int, *, scrape: bool = True
) -> tuple[Parsed | None, str | None]:
    """The source's gated records, or None and why not."""
    try:
        parsed = parse_documents(scraper, documents, now, scrape=scrape)
        if scraper.kind == "provider":
            check(scraper.name, parsed.offers, rows_before)
        elif not parsed.measurements:
            raise ValidationError(f"{scraper.name}: the parse yielded no measurements")
    except ProviderError as exc:
        return None, _cause(exc)
    except Exception as exc:  # a bug in one parser must not stop the others
        log.exception("%s: unexpected error while parsing", scraper.name)
        return None, f"internal error: {_cause(exc)}"
    return parsed, None


def provider_result(
    scraper: Scraper,
    documents: list[Document],
    error: Exception | None,
    previous: Previous,
    started: datetime,
) -> ProviderResult:
    """How one provider fares: its fresh rows (scraped, or its curated facts alone), or, when both
    fail, the cause that keeps its previous rows (stale)."""
    name = scraper.name
    cause = None if error is None else _cause(error)
    parsed = None
    if cause is None:
        parsed, cause = _parse(scraper, documents, started, previous.rows)
    if parsed is not None:
        outcome = ProviderOutcome(
            name, "ok", len(documents), previous.rows, len(parsed.offers), None, started
        )
        return ProviderResult(outcome, documents, parsed.offers, parsed.prices, parsed.measurements)
    if not previous.scraped_rows and curated_facts.curated_file(name) is not None:
        parsed, _ = _parse(scraper, documents, started, 0, scrape=False)  # curated facts alone
    if parsed is not None:
        log.warning("%s: scrape failed (%s); curated facts stand alone", name, cause)
        outcome = ProviderOutcome(
            name,
            "curated",
            len(documents),
            previous.rows,
            len(parsed.offers),
            cause,
            started,
            failure=not isinstance(error, NotInMirror),
        )
        return ProviderResult(outcome, documents, parsed.offers)
    log.error("%s: keeping %d previous rows: %s", name, previous.rows, cause)
    outcome = ProviderOutcome(
        name,
        "stale" if previous.rows else "failed",
        len(documents),
        previous.rows,
        previous.rows,
        cause,
        previous.last_success_at,
        failure=True,
    )
    return ProviderResult(outcome, documents)


def _unchanged(scraper: Scraper, previous: Previous) -> ProviderResult:
    """A reparse found no stored documents for the provider: its rows stay as they were."""
    outcome = ProviderOutcome(
        scraper.name, "unchanged", 0, previous.rows, previous.rows, None, previous.last_success_at
    )
    return ProviderResult(outcome)


async def refresh(
    db_path: Path,
    client: httpx.AsyncClient,
    *,
    providers: list[str] | None = None,
    mode: str = "live",
    now: Callable[[], datetime] = utcnow,
    on_document: Callable[[Document], None] | None = None,
    fetcher_options: dict | None = None,
    replay: bool = False,
) -> RefreshReport:
    """Refresh ``providers`` (default: all registered) into the catalog at ``db_path``.

    With ``replay`` nothing is fetched: each provider's documents stored by the last refresh are
    parsed again (``catalog reparse``), so a parser fix needs no network. LockHeld if another
    refresh or seed is writing the same catalog.
    """
    started = now()
    refresh_id = f"{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    scrapers = [REGISTRY[name]() for name in providers or REGISTRY]
    with CatalogWriter.open(Path(db_path)) as writer:
        stored = writer.previous_documents()
        fetcher = Fetcher(client, previous=stored, on_document=on_document, **(fetcher_options or {}))

        async def one(scraper: Scraper) -> ProviderResult:
            previous = writer.previous(scraper.name)
            if not replay:  # parsed as soon as its own documents are in, while the others still fetch
                documents, error = await _fetch(scraper, fetcher)
                return provider_result(scraper, documents, error, previous, started)
            documents = [d for d in stored.values() if d.provider == scraper.name]
            if not documents and scraper.source_kind == "scraped":
                return _unchanged(scraper, previous)
            return provider_result(scraper, documents, None, previous, started)

        results = await asyncio.gather(*(one(s) for s in scrapers))
        untouched = [r.outcome.provider for r in results if r.outcome.outcome == "unchanged"]
        for result in results:
            _store(writer, refresh_id, result, started, replay=replay)
        writer.keep_untouched([s.name for s in scrapers if s.name not in untouched])
        expectations.apply(writer.con, started)  # measurements' claims, fills and conflicts
        writer.write_layouts({name: cls.expected_layout for name, cls in REGISTRY.items()})
        report = RefreshReport(refresh_id, mode, started, now(), [r.outcome for r in results])
        writer.write_refresh(
            refresh_id,
            started,
            report.finished_at,
            mode,
            report.exit_code,
            [o.as_row() for o in report.outcomes],
        )
    return report


def _store(
    writer: CatalogWriter, refresh_id: str, result: ProviderResult, now: datetime, *, replay: bool
) -> None:
    """Hand one provider's result to the writer: documents fetched, then fresh or stale rows."""
    name = result.outcome.provider
    if not replay:
        writer.save_documents(refresh_id, result.documents)
    if result.fresh:
        fetched_at = {d.url: d.fetched_at for d in result.documents if d.ok}
        writer.write_fresh(name, result.offers, result.prices, result.measurements, fetched_at, now)
    elif result.outcome.outcome != "unchanged":
        writer.keep_stale(name, result.outcome.cause or "unknown cause", now)
