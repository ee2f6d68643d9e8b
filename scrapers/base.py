"""The one small interface every provider module implements.

A scraper does two things, split by verb: ``fetch`` asks its fetcher (bound to the provider, see
``fetch.http.ProviderFetcher``) for every document the provider's facts live in, and the parse
methods turn the stored documents into records without touching the network, so re-parsing needs no
network. ``parse`` gives the instance rows; ``parse_prices`` and ``parse_measurements`` give what the
same documents say about prices and about expected or measured bandwidth (none by default).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from fetch.budget import Budget
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from records.prices import Price

if TYPE_CHECKING:
    from fetch.http import ProviderFetcher


class Scraper(ABC):
    """One provider. Subclasses set ``name`` (the lower-case provider id), ``title`` and
    ``url_prefixes``: the only URLs its fetcher will request (host and path prefix), so a link found
    in a fetched document can never send a refresh anywhere else; ``budget`` bounds what the fetch
    may cost (bytes per document, documents, time).

    ``source_kind`` is "scraped" for providers read from their published documents and "curated"
    for providers whose facts all come from a reviewed data file in this repository
    (``scrapers/curated/<name>.toml``; any provider may also have one, see ``scrapers.curated_facts``).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    # "provider": sells instances, its parse gives rows (and prices); "measurements": a source of
    # expected or measured bandwidth only (a health-check suite, a benchmark archive).
    kind: ClassVar[str] = "provider"
    source_kind: ClassVar[str] = "scraped"
    url_prefixes: ClassVar[tuple[str, ...]] = ()
    # Local copies it may read in an offline refresh (paths under the copies directory): documents
    # with no fetchable URL, e.g. a third-party copy of a newer revision of a provider's page. Each is
    # stored and cited as itself ("copy:<path>"); a live refresh reads the provider's own pages instead.
    copy_paths: ClassVar[tuple[str, ...]] = ()
    # What its fetch may cost: size cap per document, documents, deadlines (fetch.budget).
    budget: ClassVar[Budget] = Budget()
    # What the parser expects of each live page (URL → header texts), recorded in the catalog's
    # source_layouts table so a layout change can be checked against it.
    expected_layout: ClassVar[dict[str, str]] = {}

    @abstractmethod
    async def fetch(self, fetcher: ProviderFetcher) -> None:
        """Fetch every document the parse methods need. Raise FetchError if a required one fails."""

    @abstractmethod
    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        """Extract one RawOffer per GPU instance type. Pure: raises only ProviderError subclasses."""

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        """The prices the documents publish, one per instance type and region. Pure."""
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        """Expected or measured bandwidth the documents publish. Pure."""
        return []


class CuratedOnly(Scraper):
    """A provider with no fetchable page: its rows are its curated facts alone."""

    source_kind = "curated"

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        return None

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []
