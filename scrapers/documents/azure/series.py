"""An Azure series page with its ``[!INCLUDE]`` directives resolved: the one record the Azure
modules share (``scrapers.documents.azure`` reads the size tables, ``scrapers.documents.azure.network``
the network)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import urljoin

from records.documents import DocumentSet
from scrapers.markdown import body, markdown_tables, title
from scrapers.tables import Table, clean, find_table

log = logging.getLogger(__name__)

_INCLUDE = re.compile(r"\[!INCLUDE\s*\[[^\]]*\]\((?P<href>[^)\s]+)\)\]")
_USED_INCLUDE = re.compile(r"-(?:summary|specs)\.md$")


def join_url(base: str, href: str) -> str | None:
    """``href`` resolved against ``base``; None (and a warning) for a link urllib cannot parse."""
    try:
        return urljoin(base, href)
    except ValueError:
        log.warning("Skipping azure link %r on %s: not a URL", href, base)
        return None


def is_series_page(url: str) -> bool:
    """Whether ``url`` is a series page (not a family page or an include)."""
    return url.endswith("-series.md") and "/includes/" not in url


def include_urls(page_url: str, text: str) -> list[str]:
    """The summary and specs includes a series page pulls in, resolved against the page."""
    links = [
        join_url(page_url, m.group("href"))
        for m in _INCLUDE.finditer(text)
        if _USED_INCLUDE.search(m.group("href"))
    ]
    return [link for link in links if link is not None]


@dataclass(frozen=True)
class Series:
    """One series page with its includes resolved."""

    url: str
    name: str
    tables: list[Table]
    summary_url: str | None
    summary: str
    specs_url: str | None
    specs: Table | None
    missing_includes: tuple[str, ...]

    def spec_cell(self, part: str, column: int) -> str:
        """The raw cell of the host-specifications row ``part`` in ``column``; '' if the specs
        include, the row or the cell is absent (a row may be cut short)."""
        row = self._spec_rows.get(part.lower())
        if row is None:
            return ""
        return row[column] if column < len(row) else ""

    @cached_property
    def _spec_rows(self) -> dict[str, tuple[str, ...]]:
        """The first host-specifications row of each part (its first cell's text, lower-case)."""
        rows: dict[str, tuple[str, ...]] = {}
        for row in self.specs.rows if self.specs is not None else ():
            rows.setdefault(clean(row[0]).lower(), row)
        return rows


def load_series(url: str, text: str, documents: DocumentSet) -> Series:
    """Read a series page and its summary/specs includes out of the stored documents."""
    name = re.sub(r"\s+sizes? series$", "", title(text), flags=re.IGNORECASE)
    return _with_includes(url, name, markdown_tables(body(text)), include_urls(url, text), documents)


@dataclass(frozen=True)
class FamilySection:
    """A family page's section for one series: its name, full-page link and the includes it shows."""

    name: str
    series_url: str | None
    includes: tuple[str, ...]


_SECTION = re.compile(r"^###\s+(?P<name>.+?)\s*$", re.MULTILINE)
_FULL_PAGE = re.compile(r"\[View the full [^\]]*\]\((?P<href>[^)\s]+-series\.md)\)")


def family_sections(url: str, text: str) -> list[FamilySection]:
    """The ``### <series>`` sections of a family page, each with its series link and includes."""
    matches = list(_SECTION.finditer(text))
    sections = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        chunk = text[match.end() : end]
        link = _FULL_PAGE.search(chunk)
        series_url = join_url(url, link.group("href")) if link else None
        sections.append(FamilySection(match.group("name"), series_url, tuple(include_urls(url, chunk))))
    return sections


def load_section(url: str, section: FamilySection, documents: DocumentSet) -> Series:
    """A family page's section read as a series with no size tables (its page being unavailable)."""
    return _with_includes(url, section.name, [], list(section.includes), documents)


def _with_includes(
    url: str, name: str, tables: list[Table], includes: list[str], documents: DocumentSet
) -> Series:
    summary_url = specs_url = None
    summary, specs, missing = "", None, []
    for include in includes:
        included = documents.optional_text(include)
        if included is None:
            missing.append(include.rsplit("/", 1)[-1])
        elif include.endswith("-summary.md"):
            summary_url, summary = include, body(included)
        else:
            specs_url = include
            specs = find_table(markdown_tables(included), r"^Part$", r"^Quantity", r"^Specs")
    return Series(url, name, tables, summary_url, summary, specs_url, specs, tuple(missing))
