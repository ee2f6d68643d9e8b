"""The refresh: fetch every provider's documents, store them raw, parse, validate, write, swap.

Read top to bottom: ``refresh`` fetches all providers concurrently through one Fetcher whose sink
stores each document in the new catalog file; then each provider is parsed from its stored
documents, built into rows and gated. A provider that fails anywhere keeps its previous rows,
marked stale with the cause; the others still refresh. The new file replaces the old one only
when it is complete.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx
import pandas as pd

from catalog.models import InstanceOffer, InvalidOffer
from catalog.offers import build_offer
from catalog.store import (
    INSTANCE_COLUMNS,
    CatalogWriter,
    PreviousCatalog,
    carried_claims,
    claim_row,
    offer_row,
    read_previous,
)
from catalog.validate import ValidationError, check
from normalize.errors import ParseError
from scrapers import REGISTRY, curated
from scrapers.base import Document, DocumentSet, NotInMirror, Scraper, ScraperError
from scrapers.http import Fetcher, utcnow

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_PROVIDER_FAILED = 1


@dataclass
class ProviderOutcome:
    """How one provider fared in one refresh.

    ``outcome``: ok; curated (the scrape failed and nothing scraped was kept before: the curated
    facts stand alone); stale (failed, previous rows kept); failed (failed, nothing to keep).
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


@dataclass
class _Parsed:
    offers: list[InstanceOffer]
    fetched_at: dict[str, datetime]


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _fetch(scraper: Scraper, fetcher: Fetcher) -> Exception | None:
    """Fetch one provider's documents; what stopped it, or None."""
    try:
        await scraper.fetch(fetcher)
    except (ScraperError, httpx.HTTPError) as exc:
        return exc
    except Exception as exc:  # a bug in one provider must not stop the others
        log.exception("%s: unexpected error while fetching", scraper.name)
        return RuntimeError(f"internal error: {_cause(exc)}")
    return None


def _replay(previous: PreviousCatalog, scraper: Scraper, sink: Callable[[Document], None]):
    documents = previous.documents_of(scraper.name)
    for doc in documents:
        sink(doc)
    if documents or scraper.source_kind == "curated":
        return None
    return ScraperError("no stored documents to reparse")


def parse_documents(
    scraper: Scraper, documents: list[Document], now: datetime, *, scrape: bool = True
) -> _Parsed:
    """One provider's rows: its stored documents parsed (pure, no network) and merged with its
    curated facts; with ``scrape`` False, the curated facts alone."""
    raw = scraper.parse(DocumentSet(documents)) if scrape else []
    raw = curated.merge(raw, curated.load(scraper.name))
    offers = [build_offer(r, scraped_at=now) for r in raw]
    seen = set()
    for offer in offers:
        if offer.instance_type in seen:
            raise InvalidOffer(f"{scraper.name}: instance type {offer.instance_type} listed twice")
        seen.add(offer.instance_type)
    return _Parsed(offers, {d.url: d.fetched_at for d in documents if d.ok})


def _parse(
    scraper: Scraper, documents: list[Document], now: datetime, rows_before: int, *, scrape: bool = True
):
    try:
        parsed = parse_documents(scraper, documents, now, scrape=scrape)
        check(scraper.name, parsed.offers, rows_before)
    except (ParseError, ValidationError, InvalidOffer) as exc:
        return None, _cause(exc)
    except Exception as exc:  # a bug in one parser must not stop the others
        log.exception("%s: unexpected error while parsing", scraper.name)
        return None, f"internal error: {_cause(exc)}"
    return parsed, None


def _stale_rows(previous: PreviousCatalog, provider: str, cause: str, now: datetime) -> pd.DataFrame:
    rows = previous.rows(provider).copy()
    if rows.empty:
        return rows
    rows["stale_since"] = rows["stale_since"].where(rows["stale"].astype(bool), now)
    rows["stale"] = True
    rows["stale_cause"] = cause
    return rows


def _has_scraped_rows(previous: PreviousCatalog, provider: str) -> bool:
    return bool((previous.rows(provider)["source_kind"] == "scraped").any())


def _last_success(previous: PreviousCatalog, provider: str) -> datetime | None:
    rows = previous.rows(provider)
    fresh = rows[~rows["stale"].astype(bool)]
    return None if fresh.empty else fresh["scraped_at"].max()


async def refresh(
    db_path,
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
    parsed again (``catalog reparse``), so a parser fix needs no network.
    """
    started = now()
    refresh_id = f"{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    names = providers or list(REGISTRY)
    scrapers = [REGISTRY[name]() for name in names]
    previous = read_previous(db_path)
    writer = CatalogWriter(db_path)
    try:
        writer.carry_history(previous)

        def sink(doc: Document) -> None:
            writer.save_document(refresh_id, doc)
            if on_document is not None:
                on_document(doc)

        fetcher = Fetcher(client, previous=previous.documents, sink=sink, **(fetcher_options or {}))

        async def fetch_and_parse(scraper: Scraper):
            error = await _fetch(scraper, fetcher)
            return _provider(writer, previous, scraper, error, refresh_id, started)

        if replay:
            results = [
                _provider(writer, previous, s, _replay(previous, s, sink), refresh_id, started)
                for s in scrapers
            ]
        else:  # a provider is parsed as soon as its own documents are in, while the others still fetch
            results = await asyncio.gather(*(fetch_and_parse(s) for s in scrapers))
        _write_rows(writer, previous, [s.name for s in scrapers], results)
        report = RefreshReport(refresh_id, mode, started, now(), [outcome for _, _, outcome in results])
        writer.write_refresh(
            refresh_id,
            started,
            report.finished_at,
            mode,
            report.exit_code,
            [o.as_row() for o in report.outcomes],
        )
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    return report


def _write_rows(writer: CatalogWriter, previous: PreviousCatalog, refreshed: list[str], results) -> None:
    """Write each refreshed provider's rows and claims (fresh, curated or stale) and carry the rows of
    providers this refresh left alone."""
    instances = [rows for rows, _, _ in results]
    claims = [provider_claims for _, provider_claims, _ in results]
    instances.append(previous.instances[~previous.instances["provider"].isin(refreshed)])
    claims.append(previous.claims[~previous.claims["provider"].isin(refreshed)])
    writer.write_rows(_concat(instances), _concat(claims))
    writer.write_layouts({name: cls.expected_layout for name, cls in REGISTRY.items()})


def _provider(writer, previous, scraper, error, refresh_id, started):
    """One provider's rows, claims and outcome for this refresh."""
    name = scraper.name
    documents = writer.stored_documents(refresh_id, name)
    rows_before = previous.row_count(name)
    cause = None if error is None else _cause(error)
    parsed = None
    if cause is None:
        parsed, cause = _parse(scraper, documents, started, rows_before)
    outcome = "ok"
    if parsed is None and not _has_scraped_rows(previous, name):
        parsed, _ = _parse(scraper, documents, started, 0, scrape=False)  # curated facts alone
        outcome = "curated"
    if parsed is None:
        return _kept(previous, name, len(documents), cause, started)
    if outcome == "curated":
        log.warning("%s: scrape failed (%s); curated facts stand alone", name, cause)
    failure = outcome == "curated" and not isinstance(error, NotInMirror)
    result = ProviderOutcome(
        name, outcome, len(documents), rows_before, len(parsed.offers), cause, started, failure=failure
    )
    return _fresh(previous, name, parsed, started, result)


def _kept(previous: PreviousCatalog, name: str, documents: int, cause: str, started: datetime):
    """The provider failed: its previous rows, marked stale with the cause, and its claims as they were."""
    rows_before = previous.row_count(name)
    log.error("%s: keeping %d previous rows: %s", name, rows_before, cause)
    outcome = ProviderOutcome(
        name,
        "stale" if rows_before else "failed",
        documents,
        rows_before,
        rows_before,
        cause,
        _last_success(previous, name),
        failure=True,
    )
    claims = previous.claims[previous.claims["provider"] == name]
    return _stale_rows(previous, name, cause, started), claims, outcome


def _fresh(previous: PreviousCatalog, name: str, parsed: _Parsed, started: datetime, outcome):
    """The provider's new rows, and its claims with their history carried over."""
    rows = pd.DataFrame([offer_row(o) for o in parsed.offers], columns=list(INSTANCE_COLUMNS))
    fresh = [
        claim_row(name, o.instance_type, c, parsed.fetched_at.get(c.source_url), started)
        for o in parsed.offers
        for c in o.claims
    ]
    previous_claims = previous.claims[previous.claims["provider"] == name]
    return rows, carried_claims(previous_claims, fresh, started), outcome


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
