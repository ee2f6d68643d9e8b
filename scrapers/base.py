"""The one small interface every provider module implements, and the records it passes around.

A scraper does two things, split by verb: ``fetch`` asks the fetcher for every document the
provider's facts live in (the fetcher stores each one raw), and ``parse`` turns the stored
documents into RawOffers without touching the network. Re-parsing needs no network.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from catalog.models import RawOffer
from normalize.errors import ParseError

if TYPE_CHECKING:
    from scrapers.http import Fetcher


class ScraperError(Exception):
    """A provider could not be refreshed; the message names the cause."""


class FetchError(ScraperError):
    """A document the parser needs could not be fetched (HTTP error, timeout, refused)."""


class NotInMirror(FetchError):
    """A mirror refresh asked for a document the mirror has no copy of."""


class LayoutError(ParseError):
    """A page's shape is not what the parser expects: a table or header is missing, or no rows."""


@dataclass(frozen=True)
class Document:
    """One fetch of one URL, stored raw before anything parses it.

    ``status`` is the HTTP status (0 when no response arrived). A 304 carries the body stored by
    the previous refresh and ``from_cache`` is set.
    """

    url: str
    provider: str
    status: int
    fetched_at: datetime
    body: str | None = None
    sha256: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    from_cache: bool = False
    error: str | None = None
    attempts: int = 1
    bytes_received: int = 0

    @property
    def ok(self) -> bool:
        return self.status in (200, 304) and self.body is not None


class DocumentSet(Mapping[str, Document]):
    """The stored documents of one provider's refresh, by URL: the only input a parser reads."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self._by_url = {doc.url: doc for doc in documents}

    def __getitem__(self, url: str) -> Document:
        return self._by_url[url]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_url)

    def __len__(self) -> int:
        return len(self._by_url)

    def text(self, url: str) -> str:
        """The body of a document the parser cannot do without; LayoutError if it is absent."""
        doc = self._by_url.get(url)
        if doc is None or not doc.ok:
            status = "not fetched" if doc is None else f"status {doc.status} {doc.error or ''}"
            raise LayoutError(f"required document {url} is unavailable ({status.strip()})")
        assert doc.body is not None
        return doc.body

    def optional_text(self, url: str) -> str | None:
        """The body of a document the parser can do without, or None."""
        doc = self._by_url.get(url)
        return doc.body if doc is not None and doc.ok else None

    def fetched_at(self, url: str) -> datetime | None:
        doc = self._by_url.get(url)
        return None if doc is None else doc.fetched_at


class Scraper(ABC):
    """One provider. Subclasses set ``name`` (the lower-case provider id) and ``title``.

    ``source_kind`` is "scraped" for providers read from their published documents and "curated"
    for providers whose facts all come from a reviewed data file in this repository
    (``scrapers/curated/<name>.toml``; any provider may also have one, see scrapers.curated).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    source_kind: ClassVar[str] = "scraped"
    # What the parser expects of each live page (URL → header texts), recorded in the catalog's
    # source_layouts table so a layout change can be checked against it.
    expected_layout: ClassVar[dict[str, str]] = {}

    @abstractmethod
    async def fetch(self, fetcher: Fetcher) -> None:
        """Fetch every document ``parse`` needs. Raise FetchError if a required one fails."""

    @abstractmethod
    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        """Extract one RawOffer per GPU instance type. Pure: raises only ParseError subclasses."""


class CuratedOnly(Scraper):
    """A provider with no fetchable page: its rows are its curated facts alone."""

    source_kind = "curated"

    async def fetch(self, fetcher: Fetcher) -> None:
        return None

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []
