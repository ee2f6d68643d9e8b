"""Documents: one fetch of one URL, stored raw before anything parses it, and the set a parser reads."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from normalize.errors import LayoutError
from records.frozen import direct_init

# A local copy of a document that is not at a fetchable URL (a third-party copy of a provider's page)
# is stored under "copy:<path>", its path in the copies directory: the identifier cites it as itself.
COPY_SCHEME = "copy:"


def copy_url(path: str) -> str:
    """The identifier a local copy is stored and cited under: ``copy:<path>``."""
    return COPY_SCHEME + path


def is_copy(url: str) -> bool:
    """Whether ``url`` names a local copy rather than a fetched URL."""
    return url.startswith(COPY_SCHEME)


def body_sha256(body: str) -> str:
    """The content address of a stored body: the SHA-256 of exactly the text stored (UTF-8)."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@direct_init
@dataclass(frozen=True)
class Document:
    """One fetch of one URL, stored raw before anything parses it.

    ``status`` is the HTTP status (0 when no response arrived). A 304 carries the body stored by
    the previous refresh and ``from_cache`` is set. ``sha256`` addresses ``body`` as stored.
    ``required`` is False for a document its parser can do without (an optional include).
    ``fetched_url`` is the URL actually fetched: ``url`` as the client sent it, or the last hop of
    a redirect within the provider's declared sources.
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
    required: bool = True
    fetched_url: str | None = None  # the URL the body came from, after any redirect (as sent)

    @property
    def ok(self) -> bool:
        """Whether the document has a body a parser may read."""
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
        if doc is None or not doc.ok or doc.body is None:
            status = "not fetched" if doc is None else f"status {doc.status} {doc.error or ''}"
            raise LayoutError(f"required document {url} is unavailable ({status.strip()})")
        return doc.body

    def optional_text(self, url: str) -> str | None:
        """The body of a document the parser can do without, or None."""
        doc = self._by_url.get(url)
        return doc.body if doc is not None and doc.ok else None
