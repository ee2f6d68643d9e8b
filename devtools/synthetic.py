"""A catalog N times the size of the real one, built from the real documents, for benchmarks.

Every scraped source with documents in the mirror is registered N-1 more times under its own name
(``aws2``, ``aws3``, ...). Copy ``k`` fetches the same paths from its own hosts (``c2.docs.aws...``)
and the transport serves them from the real mirror, so a refresh fetches, stores, parses and writes N
times the documents, rows, claims, prices and measurements. Bodies are identical across copies and
content-addressed, so the ``documents`` table holds them once; everything else is N times. Nothing
here is written to disk: the registry entries live for one ``with`` block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import httpx

from fetch.http import MirrorTransport, ProviderFetcher
from records.documents import Document, DocumentSet
from records.offers import Claim
from scrapers import REGISTRY
from scrapers.base import Scraper

_COPY_HOST = re.compile(r"^(https?://)c\d+\.")


def _rewrite(url: str, copy: int) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://c{copy}.{rest}"


def _original(url: str) -> str:
    return _COPY_HOST.sub(r"\1", url)


class CopyTransport(MirrorTransport):
    """The mirror, also under ``c<k>.<host>`` for every copy ``k``."""

    def file_for(self, url: httpx.URL | str) -> str:
        return super().file_for(_original(str(url)))


class _Rewriting:
    """What a copy's scraper is given: its ProviderFetcher, with every URL moved to the copy's host."""

    def __init__(self, fetcher: ProviderFetcher, copy: int) -> None:
        self.fetcher, self.copy = fetcher, copy

    async def get(self, url: str, *, required: bool = True) -> Document:
        doc = await self.fetcher.get(_rewrite(url, self.copy), required=required)
        return replace(doc, url=url)

    async def get_all(self, urls: list[str], *, required: bool = True) -> list[Document]:
        docs = await self.fetcher.get_all([_rewrite(u, self.copy) for u in urls], required=required)
        return [replace(d, url=u) for d, u in zip(docs, urls, strict=True)]

    def get_copy(self, path: str) -> Document:
        return self.fetcher.get_copy(path)


def _cited_on_copy(claim: Claim, copy: int) -> Claim:
    """A claim read from copy ``copy`` cites the document actually read: the copy's host."""
    if "://" not in claim.source_url:  # a local copy (copy:...) is read as itself by every copy
        return claim
    return replace(claim, source_url=_rewrite(claim.source_url, copy))


def copy_of(base: type[Scraper], copy: int) -> type[Scraper]:
    """A source that reads what ``base`` reads, from copy ``copy``'s hosts, under its own name."""
    name = f"{base.name}{copy}"

    def originals(documents: DocumentSet) -> DocumentSet:
        return DocumentSet(replace(d, url=_original(d.url)) for d in documents.values())

    class Copy(base):  # type: ignore[valid-type, misc]  # mypy takes no base class from a variable
        async def fetch(self, fetcher: ProviderFetcher) -> None:
            await super().fetch(_Rewriting(fetcher, copy))

        def parse(self, documents):
            return [
                replace(o, provider=name, claims=tuple(_cited_on_copy(c, copy) for c in o.claims))
                for o in super().parse(originals(documents))
            ]

        def parse_prices(self, documents):
            return [replace(p, provider=name) for p in super().parse_prices(originals(documents))]

        def parse_measurements(self, documents):
            return [
                replace(m, source=name, provider=m.provider)
                for m in super().parse_measurements(originals(documents))
            ]

    Copy.name = name
    Copy.url_prefixes = tuple(_rewrite(p, copy) for p in base.url_prefixes)
    Copy.__name__ = Copy.__qualname__ = f"{base.__name__}Copy{copy}"
    return Copy


def scaled_sources(mirror: Path) -> list[str]:
    """The registered scraped sources with at least one document in ``mirror`` (the ones copied)."""
    return [
        name
        for name, cls in REGISTRY.items()
        if cls.source_kind == "scraped"
        and any((mirror / p.split("://", 1)[1]).exists() for p in cls.url_prefixes)
    ]


@contextmanager
def scaled(mirror: Path, factor: int) -> Iterator[list[str]]:
    """REGISTRY with ``factor - 1`` copies of every scaled source for the ``with`` block; yields the
    names of every source a refresh should run (the originals and their copies)."""
    bases = scaled_sources(mirror)
    added = {f"{name}{k}": copy_of(REGISTRY[name], k) for name in bases for k in range(2, factor + 1)}
    REGISTRY.update(added)
    try:
        yield [*REGISTRY.keys()]
    finally:
        for name in added:
            del REGISTRY[name]
