"""Where the documents and the rows meet: every verbatim quote must be in the document it cites.

A scraper builds each claim from a stored document and marks its quote ``verbatim``; this module
checks, before a provider's rows can be published, that each such quote really is a substring of the
stored document at its ``source_url``. The comparison ignores whitespace (a table cell's text and the
page's line breaks differ only in spacing) and, for an HTML document, reads the page's text, since a
cell's text is not a substring of its markup. A quote that fails is a parser bug, never a property of
the document: the provider is not published (ValidationError naming the claim), keeps its previous
rows as stale, and the refresh exits 1, rather than publishing a claim that misstates its source.
Paraphrases and datasheet claims cite no stored document and are not checked here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from normalize.errors import ValidationError
from normalize.vocab import Evidence
from records.documents import DocumentSet
from records.offers import InstanceOffer, RawOffer


def squash(text: str) -> str:
    """``text`` with every whitespace character removed: what the check compares."""
    return "".join(text.split())


@lru_cache(maxsize=16)
def _squashed(body: str) -> str:
    """``squash`` of a whole document, kept for the next quote that cites the same one."""
    return squash(body)


@lru_cache(maxsize=16)
def _html_text(body: str) -> str:
    from bs4 import BeautifulSoup

    return squash(BeautifulSoup(body, "lxml").get_text(""))


def quote_in(quote: str, body: str) -> bool:
    """Whether ``quote`` occurs in a document ``body``, whitespace aside (in its text, for HTML)."""
    if quote in body:  # as written, so whitespace aside too: most quotes, and no document squashed
        return True
    wanted = squash(quote)
    if wanted in _squashed(body):
        return True
    return "<" in body and wanted in _html_text(body)


def unverified_quotes(offers: Iterable[InstanceOffer | RawOffer], documents: DocumentSet) -> list[str]:
    """One line per verbatim claim whose quote is not in the stored document it cites."""
    found = []
    checked: dict[tuple[str, str], str | None] = {}  # a quote is searched for once per document it cites
    for offer in offers:
        for claim in offer.claims:
            if claim.evidence != Evidence.VERBATIM:
                continue
            key = (claim.quote, claim.source_url)
            if key not in checked:
                checked[key] = _why_unverified(claim.quote, documents.optional_text(claim.source_url))
            if (why := checked[key]) is None:
                continue
            found.append(
                f"{offer.instance_type} {claim.field}: {why} {claim.source_url}: {claim.quote[:80]!r}"
            )
    return found


def _why_unverified(quote: str, body: str | None) -> str | None:
    if body is None:
        return "cites a document that was not stored"
    return None if quote_in(quote, body) else "quote not found in"


def check_quotes(provider: str, offers: Iterable[InstanceOffer | RawOffer], documents: DocumentSet) -> None:
    """Raise ValidationError if any verbatim quote of ``provider``'s rows is not in its document."""
    bad = unverified_quotes(offers, documents)
    if bad:
        shown = "; ".join(bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
        raise ValidationError(f"{provider}: verbatim quotes not in their documents: {shown}")
