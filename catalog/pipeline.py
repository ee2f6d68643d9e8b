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
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path

import httpx

from catalog import finish
from catalog.carry import Reconciled, reconcile, skipped_rows
from catalog.heap import refresh_heap
from catalog.names import checked_offer, checked_price
from catalog.offers import build_offer, merge_duplicates
from catalog.price_gate import GatedPrices, gate_prices
from catalog.provenance import check_quotes
from catalog.store import CatalogWriter, Previous
from catalog.validate import check, check_kept
from fetch.http import Fetcher
from fetch.slots import within_work_deadline
from normalize.errors import InvalidOffer, NotInMirror, ProviderError, TooSlow, ValidationError
from records.clock import utcnow
from records.documents import COPY_SCHEME, Document, DocumentSet, is_copy
from records.measurements import Measurement
from records.offers import Claim, InstanceOffer
from records.prices import Price
from scrapers import REGISTRY, curated_facts
from scrapers.base import Scraper

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_PROVIDER_FAILED = 1
#: Sources fetched, parsed or waiting to be written at once (a refresh of today's 27 is never held back).
SOURCES_IN_FLIGHT = 32


@dataclass
class ProviderOutcome:
    """How one provider fared in one refresh (a ``provider_refreshes`` row).

    ``outcome``: ok; carried (fresh rows published, but rows or fields the parse lost were carried
    from the last good catalog, or figures that jumped were held back: see ``rows_carried``,
    ``fields_carried``, ``fields_held``); curated (the scrape failed and nothing scraped was kept
    before: the curated facts stand alone); stale (failed, previous rows kept); failed (failed,
    nothing to keep); unchanged (a reparse with no stored documents for it: its rows are left as
    they were). ``failure`` decides the exit code: a provider whose pages are simply absent from a
    mirror and whose curated facts stand in is not a failure; anything carried or held is.
    """

    provider: str
    outcome: str
    documents: int
    rows_before: int
    rows_after: int
    cause: str | None = None
    last_success_at: datetime | None = None
    failure: bool = False
    rows_carried: int = 0
    fields_carried: int = 0
    fields_held: int = 0
    changes_accepted: bool = False  # published with --accept-changes: the new values to hold jumps against

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
    carried_claims: frozenset[tuple[str, Claim]] = frozenset()
    carried_reading_urls: tuple[str, ...] = ()  # documents whose last good readings are kept

    @property
    def fresh(self) -> bool:
        """Whether the provider's rows are written anew (ok, carried or curated) rather than kept."""
        return self.outcome.outcome in ("ok", "carried", "curated")


@dataclass
class RefreshReport:
    """The result of one refresh: its id, mode, times and each provider's outcome."""

    refresh_id: str
    mode: str
    started_at: datetime
    finished_at: datetime
    outcomes: list[ProviderOutcome]
    warnings: list[str] = field(default_factory=list)  # e.g. a corrupt catalog moved aside

    @property
    def exit_code(self) -> int:
        """0 when every provider succeeded (or fell back to curated facts), else 1."""
        return EXIT_PROVIDER_FAILED if any(o.failure for o in self.outcomes) else EXIT_OK


# A cause names the error and the text it choked on; a hostile cell can be 60,000 characters.
MAX_CAUSE_CHARS = 500


def _cause(exc: BaseException) -> str:
    cause = f"{type(exc).__name__}: {exc}"
    return cause if len(cause) <= MAX_CAUSE_CHARS else cause[: MAX_CAUSE_CHARS - 1] + "…"


async def _fetch(scraper: Scraper, fetcher: Fetcher) -> tuple[list[Document], Exception | None]:
    """One provider's documents, and what stopped its fetch (or None), within its deadline."""
    bound = fetcher.for_provider(
        scraper.name, scraper.url_prefixes, scraper.budget, copy_paths=scraper.copy_paths
    )
    deadline = bound.budget.provider_deadline_s
    try:  # its own work: the time all its requests wait for other providers' slots is not charged
        await within_work_deadline(scraper.fetch(bound), bound.work, deadline)
    except TimeoutError:
        return bound.documents, TooSlow(f"{scraper.name}: fetch still running after {deadline:g} s")
    except (ProviderError, httpx.HTTPError) as exc:
        return bound.documents, exc
    except Exception as exc:  # a bug in one provider must not stop the others
        log.exception("%s: unexpected error while fetching", scraper.name)
        return bound.documents, RuntimeError(f"internal error: {_cause(exc)}")
    return bound.documents, None


@dataclass
class Parsed:
    """What one source's documents say: rows, prices, measurements; and what of the last good
    catalog was carried into them (``reconciled``, see catalog.carry)."""

    offers: list[InstanceOffer]
    prices: list[Price]
    measurements: list[Measurement]
    reconciled: Reconciled = field(default_factory=lambda: Reconciled([]))
    price_refusals: list[str] = field(default_factory=list)  # the price parser's skip warnings


def parse_documents(
    scraper: Scraper,
    documents: list[Document],
    now: datetime,
    *,
    scrape: bool = True,
    previous: Previous | None = None,
    accept: bool = False,
) -> Parsed:
    """One source's records: its documents parsed (pure, no network), rows merged with its curated
    facts and, unless ``accept``, held against ``previous`` (rows or fields lost are carried, jumps
    held back); with ``scrape`` False, the curated facts alone. ProviderError if any row is invalid
    or any verbatim quote of the fresh parse is not in the document it cites."""
    stored = DocumentSet(documents)
    with skipped_rows() as skipped:
        raw = [checked_offer(r) for r in scraper.parse(stored)] if scrape else []
    check_quotes(scraper.name, raw, stored)  # the fresh parse; carried claims were checked when read
    raw = merge_duplicates(curated_facts.merge(raw, curated_facts.load(scraper.name)))
    last_good = dict(previous.instances) if previous is not None and scrape and not accept else {}
    accepted = previous.accepted_claims if previous is not None else {}
    reconciled = reconcile(raw, last_good, skipped, now, accepted)
    offers = [reconciled.mark(build_offer(r, scraped_at=now), now, last_good) for r in reconciled.offers]
    try:  # prices have a document of their own: a provider whose pages fail still has them
        with skipped_rows() as refused:
            prices = [checked_price(p) for p in scraper.parse_prices(stored)]
    except ProviderError as exc:
        if scrape:
            raise
        log.warning("%s: curated facts without prices: %s", scraper.name, _cause(exc))
        prices = []
    measurements = scraper.parse_measurements(stored) if scrape else []
    strays = {p.provider for p in prices} - {scraper.name} | {m.source for m in measurements} - {scraper.name}
    if strays:
        raise InvalidOffer(f"{scraper.name}: prices or measurements attributed to {sorted(strays)}")
    return Parsed(offers, prices, measurements, reconciled, list(refused))


def _parse(
    scraper: Scraper,
    documents: list[Document],
    now: datetime,
    previous: Previous,
    *,
    scrape: bool = True,
    accept: bool = False,
) -> tuple[Parsed | None, str | None]:
    """The source's gated records (the gates see the fresh rows, not those carried), or None and why not."""
    try:
        parsed = parse_documents(scraper, documents, now, scrape=scrape, previous=previous, accept=accept)
        if scraper.kind == "provider":
            check(scraper.name, parsed.offers, previous.rows if scrape else 0, accept=accept)
        elif not parsed.measurements:
            raise ValidationError(f"{scraper.name}: the parse yielded no measurements")
        else:
            check_kept(scraper.name, "readings", len(parsed.measurements), previous.measurements)
    except ProviderError as exc:
        return None, _cause(exc)
    except Exception as exc:  # a bug in one parser must not stop the others
        log.exception("%s: unexpected error while parsing", scraper.name)
        return None, f"internal error: {_cause(exc)}"
    return parsed, None


def _gated_prices(
    parsed: Parsed, offers: list[InstanceOffer], previous: Previous, *, accept: bool
) -> GatedPrices:
    """The parse's prices held against the last good ones (catalog.price_gate)."""
    return gate_prices(
        parsed.prices,
        previous.prices,
        gpu_counts={o.instance_type: o.gpu_count for o in offers},
        refused=parsed.price_refusals,
        carried_rows=[o.instance_type for o in parsed.reconciled.carried_rows],
        accepted=previous.accepted_prices,
        accept=accept,
    )


def _fresh(
    scraper: Scraper,
    documents: list[Document],
    parsed: Parsed,
    previous: Previous,
    started: datetime,
    *,
    accept: bool = False,
) -> ProviderResult:
    """A provider whose parse passed: its fresh rows and prices, and what was carried into them
    (outcome carried); with ``accept``, the fresh ones as they are."""
    carried = parsed.reconciled
    offers = [*parsed.offers, *carried.carried_rows]
    gated = _gated_prices(parsed, offers, previous, accept=accept)
    prices = gated.prices
    lost = () if accept else lost_documents(parsed.measurements, previous.reading_urls)
    readings_cause = _lost_readings_cause(lost, previous.reading_urls)
    cause = "; ".join(c for c in (carried.cause(), gated.cause(), readings_cause) if c) or None
    outcome = ProviderOutcome(
        scraper.name,
        "carried" if cause else "ok",
        len(documents),
        previous.rows,
        len(offers),
        cause,
        started,
        failure=cause is not None,
        rows_carried=carried.rows_carried,
        fields_carried=carried.fields_carried,
        fields_held=carried.fields_held,
        changes_accepted=accept,
    )
    if cause:
        log.error("%s: %s", scraper.name, cause)
    claims = frozenset(carried.carried_claims)
    return ProviderResult(outcome, documents, offers, prices, parsed.measurements, claims, lost)


def lost_documents(readings: list[Measurement], before: Mapping[str, int]) -> tuple[str, ...]:
    """The documents that gave readings in the last good catalog and none in this parse (a page
    replaced by garbage, a cell that no longer parses): their readings are carried, never dropped."""
    now = {m.source_url for m in readings}
    return tuple(sorted(url for url in before if url not in now))


def _lost_readings_cause(lost: tuple[str, ...], before: Mapping[str, int]) -> str | None:
    if not lost:
        return None
    count = sum(before[url] for url in lost)
    more = f" (+{len(lost) - 3} more)" if len(lost) > 3 else ""
    return (
        f"{count} readings of {len(lost)} documents not in this parse, carried: {', '.join(lost[:3])}{more}"
    )


def provider_result(
    scraper: Scraper,
    documents: list[Document],
    error: Exception | None,
    previous: Previous,
    started: datetime,
    *,
    accept: bool = False,
) -> ProviderResult:
    """How one provider fares: its fresh rows (scraped, with lost rows and fields carried unless
    ``accept``, or its curated facts alone), or, when both fail, the cause that keeps its previous
    rows (stale)."""
    name = scraper.name
    cause = None if error is None else _cause(error)
    parsed = None
    if cause is None:
        parsed, cause = _parse(scraper, documents, started, previous, accept=accept)
    if parsed is not None:
        return _fresh(scraper, documents, parsed, previous, started, accept=accept)
    if not previous.scraped_rows and curated_facts.curated_file(name) is not None:
        parsed, _ = _parse(scraper, documents, started, previous, scrape=False)  # curated facts alone
    if parsed is not None:
        log.warning("%s: scrape failed (%s); curated facts stand alone", name, cause)
        gated = _gated_prices(parsed, parsed.offers, previous, accept=accept)  # the price file's own gate
        if gated.cause():
            log.error("%s: %s", name, gated.cause())
        outcome = ProviderOutcome(
            name,
            "curated",
            len(documents),
            previous.rows,
            len(parsed.offers),
            "; ".join(c for c in (cause, gated.cause()) if c) or None,
            started,
            failure=not isinstance(error, NotInMirror) or gated.cause() is not None,
            changes_accepted=accept,
        )
        return ProviderResult(outcome, documents, parsed.offers, gated.prices)
    kept = previous.rows if scraper.kind == "provider" else previous.measurements
    what = "rows" if scraper.kind == "provider" else "readings"
    log.error("%s: keeping %d previous %s: %s", name, kept, what, cause)
    outcome = ProviderOutcome(
        name,
        "stale" if kept else "failed",
        len(documents),
        previous.rows,
        previous.rows,
        cause,
        previous.last_success_at,
        failure=True,
    )
    return ProviderResult(outcome, documents)


def _declared(scraper: Scraper, document: Document) -> bool:
    """Whether a stored document is one the source fetches: stored under its name, or under a URL or
    copy it declares. Two sources can read one document (Azure's health checks give the azure rows
    their sizes and the azurehpc source its expectations) and the store keeps the last fetch of a
    URL, under whichever source fetched it: a reparse gives the document to both again."""
    if document.provider == scraper.name:
        return True
    if is_copy(document.url):
        return document.url.removeprefix(COPY_SCHEME) in scraper.copy_paths
    return document.url.startswith(scraper.url_prefixes)


def _as_own(scraper: Scraper, document: Document) -> Document:
    """A stored document given to a source in a reparse: one stored under another source's name is
    optional here (whether this source needs it was that fetch's to say, not this one's)."""
    if document.provider == scraper.name:
        return document
    return replace(document, provider=scraper.name, required=False)


def _reparsable(scraper: Scraper, documents: list[Document]) -> bool:
    """Whether a reparse has what the source's parse reads: a provider's required pages (its price
    document alone is not its rows), a measurement source's documents (all of them optional: a
    health-check file or a run that is absent is simply not read), or nothing at all (curated)."""
    if scraper.source_kind != "scraped":
        return True
    if scraper.kind == "provider":
        return any(d.required for d in documents)
    return any(d.ok for d in documents)


def _unchanged(scraper: Scraper, previous: Previous) -> ProviderResult:
    """A reparse found none of the provider's required documents stored: its rows stay as they were."""
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
    copies: Path | None = None,
    accept_changes: bool = False,
) -> RefreshReport:
    """Refresh ``providers`` (default: all registered) into the catalog at ``db_path``.

    With ``replay`` nothing is fetched: each provider's documents stored by the last refresh are
    parsed again (``catalog reparse``), so a parser fix needs no network. ``copies`` is the
    directory local copies are read from (an offline refresh only). With ``accept_changes`` the
    fresh parse is published as it is: nothing lost is carried, no jump held back (the gates still
    apply). A corrupt catalog is moved aside and rebuilt (a reparse, with nothing to rebuild from,
    raises CorruptCatalog). LockHeld if another refresh or seed is writing the same catalog.
    """
    started = now()
    refresh_id = f"{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    # Classes, not instances: a source's scraper lives while it runs (a parser keeps what it parsed,
    # and at 100x the catalog every finished source's documents and records stayed to the end).
    sources = [REGISTRY[name] for name in providers or REGISTRY]
    with refresh_heap(), CatalogWriter.open(Path(db_path), rebuild_corrupt=not replay) as writer:
        writer.refuse_a_clock_behind(started)
        stored = writer.previous_documents()
        fetcher = Fetcher(
            client, previous=stored, on_document=on_document, copies=copies, **(fetcher_options or {})
        )

        loop = asyncio.get_running_loop()
        # Parsing is CPU work: on the event loop it would stall every fetch still in flight. One
        # worker thread parses, a source at a time (parsers share lazily built tables and the pint
        # registry), while the loop keeps fetching.
        parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parse")

        def parsed(
            scraper: Scraper, documents: list[Document], error: Exception | None, previous: Previous
        ) -> asyncio.Future[ProviderResult]:
            """The source's parse, handed to the parser at once (not when the caller next awaits)."""
            work = partial(
                provider_result, scraper, documents, error, previous, started, accept=accept_changes
            )
            return loop.run_in_executor(parser, work)

        # Each source is written as soon as it and every source before it are parsed (registry order,
        # so the catalog is the same whatever finishes first); after that only its outcome is held. At
        # most SOURCES_IN_FLIGHT sources are fetched, parsed or waiting to be written at once: fetching
        # runs ahead of the one parser, and at 100x the catalog it held every document at once.
        results: list[ProviderResult | None] = [None] * len(sources)
        written = 0
        in_flight = asyncio.Semaphore(SOURCES_IN_FLIGHT)
        unfetched = len(sources)

        def fetched(documents: list[Document]) -> None:
            """Hold a source's bodies; once every source is fetched, write them to the new file while
            the parser still works (the engine's writing then runs beside the parse, not after it)."""
            nonlocal unfetched
            writer.stage_bodies(documents)
            unfetched -= 1
            if unfetched == 0:
                writer.write_bodies()

        def write_ready() -> None:
            nonlocal written
            while written < len(results) and (result := results[written]) is not None:
                _store(writer, refresh_id, result, started, replay=replay)
                results[written] = ProviderResult(result.outcome)
                written += 1
                in_flight.release()

        async def one(index: int, source: type[Scraper]) -> None:
            await in_flight.acquire()  # released when it is written (FIFO: the window moves in order)
            scraper = source()
            previous = writer.previous(scraper.name)
            if not replay:  # parsed as soon as its own documents are in, while the others still fetch
                documents, error = await _fetch(scraper, fetcher)
                parse = parsed(scraper, documents, error, previous)
                fetched(documents)
                results[index] = await parse
            else:
                documents = [_as_own(scraper, d) for d in stored.values() if _declared(scraper, d)]
                if _reparsable(scraper, documents):
                    results[index] = await parsed(scraper, documents, None, previous)
                else:  # e.g. only its optional price document was stored
                    results[index] = _unchanged(scraper, previous)
            write_ready()

        tasks = [asyncio.ensure_future(one(i, s)) for i, s in enumerate(sources)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # e.g. a full disk while writing one: the others stop, nothing is swapped in
            for task in tasks:
                task.cancel()
            raise
        finally:
            parser.shutdown(wait=True, cancel_futures=True)
        outcomes = [r.outcome for r in results if r is not None]
        untouched = [o.provider for o in outcomes if o.outcome == "unchanged"]
        writer.keep_untouched([s.name for s in sources if s.name not in untouched])
        finish.finish_rows(writer, started)  # measurements' claims, fills, conflicts; prices
        writer.write_layouts({name: cls.expected_layout for name, cls in REGISTRY.items()})
        warnings = [writer.moved_aside] if writer.moved_aside else []
        report = RefreshReport(refresh_id, mode, started, now(), outcomes, warnings)
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
        writer.write_fresh(
            name, result.offers, result.prices, result.measurements, fetched_at, now, result.carried_claims
        )
        writer.keep_readings(name, result.carried_reading_urls)
    elif result.outcome.outcome != "unchanged":
        writer.keep_stale(name, result.outcome.cause or "unknown cause", now)
