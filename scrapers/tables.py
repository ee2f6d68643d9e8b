"""Tables found by header text, never by position, whatever document they come from.

``Table`` is what every provider parser walks: markdown pipe tables (``scrapers.markdown``) and HTML
tables (``html_tables`` here) both become one. Cells keep their raw text so a claim can quote it;
``clean`` gives the text to parse. ``collect`` is the one row loop every parser shares: build a
record per row, skip a row that cannot be read with a warning naming it, and refuse a page that
yields nothing.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from normalize.errors import LayoutError, ParseError
from records.frozen import direct_init

if TYPE_CHECKING:
    from bs4 import Tag

log = logging.getLogger(__name__)

_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"(?i)<br\s*/?>")
_HEADER_UNIT = re.compile(r"\((?P<unit>[A-Za-z/]+)\)\s*$")

Item = TypeVar("Item")
Record = TypeVar("Record")


def clean(cell: str) -> str:
    """Cell text for parsing: <br> becomes a space, tags and markdown emphasis go, spaces collapse."""
    text = _TAG.sub("", _BREAK.sub(" ", cell)) if "<" in cell else cell  # no tag without its "<"
    text = html.unescape(text).replace("**", "").replace("`", "")
    return " ".join(text.split())


@direct_init
@dataclass(frozen=True)
class Table:
    """One table: header cells, body rows (raw cells), and the heading or caption above it."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    heading: str = ""

    @cached_property
    def clean_headers(self) -> tuple[str, ...]:
        """The headers as text (computed once)."""
        return tuple(clean(h) for h in self.headers)

    @cached_property
    def _columns(self) -> dict[str, int | None]:
        return {}

    def has_column(self, pattern: str) -> bool:
        """Whether some header matches ``pattern`` (a case-insensitive regex)."""
        return self._find(pattern) is not None

    def _find(self, pattern: str) -> int | None:
        if pattern not in self._columns:
            self._columns[pattern] = next(
                (i for i, h in enumerate(self.clean_headers) if re.search(pattern, h, re.IGNORECASE)), None
            )
        return self._columns[pattern]

    def column(self, pattern: str) -> int:
        """Index of the first header matching ``pattern``; LayoutError naming it if none does."""
        index = self._find(pattern)
        if index is None:
            raise LayoutError(
                f"no column matching {pattern!r} in table under {self.heading!r}; "
                f"headers are {list(self.clean_headers)}"
            )
        return index

    def header(self, pattern: str) -> str:
        """The (clean) header of the column matching ``pattern``."""
        return self.clean_headers[self.column(pattern)]

    def header_unit(self, pattern: str) -> str:
        """The unit a column's header prints in parentheses ('Max Bandwidth (Mbps)' → 'Mbps');
        ParseError if it prints none."""
        header = self.header(pattern)
        match = _HEADER_UNIT.search(header)
        if match is None:
            raise ParseError(f"no unit in header {header!r}")
        return match.group("unit")

    def cell(self, row: tuple[str, ...], pattern: str) -> str:
        """The raw cell of ``row`` in the column matching ``pattern`` ('' if the row is short)."""
        index = self.column(pattern)
        return row[index] if index < len(row) else ""


def find_table(tables: list[Table], *patterns: str, where: str = "") -> Table:
    """The first table having a column for every pattern; LayoutError naming them if none has."""
    for table in tables:
        if all(table.has_column(p) for p in patterns):
            return table
    raise LayoutError(f"no table with columns {list(patterns)} {where}".rstrip())


def find_tables(tables: list[Table], *patterns: str) -> list[Table]:
    """Every table having a column for every pattern."""
    return [t for t in tables if all(t.has_column(p) for p in patterns)]


def collect(
    items: Iterable[Item],
    build: Callable[[Item], Record | None],
    *,
    provider: str,
    name: Callable[[Item], str],
    empty: str,
) -> list[Record]:
    """One record per item that ``build`` reads; None means "not a row of interest", quietly.

    A ParseError skips that item with a warning naming it (``name``); when no item yields a record
    the page is not what the parser expects, and ``empty`` becomes the LayoutError's message.
    """
    records = []
    for item in items:
        try:
            record = build(item)
        except ParseError as exc:
            log.warning("Skipping %s row %s: %s", provider, name(item), exc)
            continue
        if record is not None:
            records.append(record)
    if not records:
        raise LayoutError(empty)
    return records


# ---------------------------------------------------------------------------------------------
# HTML


def _segments(cell: Tag) -> list[str]:
    """A cell's text split where the page breaks lines (<br>, <p>, <li>, <div>), spaces collapsed."""
    from bs4 import Comment, NavigableString, Tag

    parts: list[list[str]] = [[]]
    for node in cell.descendants:
        if isinstance(node, Tag) and node.name in ("br", "p", "li", "div"):
            parts.append([])
        elif isinstance(node, NavigableString) and not isinstance(node, Comment):
            parts[-1].append(str(node))
    texts = (" ".join("".join(p).split()) for p in parts)
    return [t for t in texts if t]


def segments(cell: str) -> list[str]:
    """The line-broken parts of an HTML table cell as ``html_tables`` stores it ('8x H100\\n2x 100 Gbps')."""
    return [part for part in cell.split("\n") if part]


def _title(table: Tag) -> str:
    """The table's caption, else its section headings ('Bare Metal Shapes › GPU Shapes')."""
    caption = table.find("caption")
    if caption is not None:
        return " ".join(_segments(caption))
    titles: list[str] = []
    node, levels = table, ["h2", "h3", "h4"]
    while levels and (heading := node.find_previous(levels)) is not None:
        titles.insert(0, " ".join(_segments(heading)))
        levels, node = levels[: levels.index(heading.name)], heading
    return " › ".join(titles)


def html_tables(text: str) -> list[Table]:
    """Every <table> of an HTML page as a Table: the first row with <th> cells is the header, the rows
    with <td> cells after it are the body. A cell's text keeps its line breaks as '\\n' (see
    ``segments``); ``heading`` is the caption or the section headings above the table.

    Read with lxml directly (12x faster than through BeautifulSoup on the same tree); text lxml refuses
    (NUL bytes, an encoding declaration in a str) goes through BeautifulSoup, which gives the same
    tables for every page lxml reads (tests/unit/test_tables.py holds them equal on the mirror)."""
    from lxml import etree  # type: ignore[import-untyped]
    from lxml import html as lxml_html

    try:
        root = lxml_html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return html_tables_soup(text)
    tables = []
    for node in root.iter("table"):
        rows = list(node.iter("tr"))
        if not rows:
            continue
        header_at = next((i for i, row in enumerate(rows) if _has(row, "th")), 0)
        headers = tuple(" ".join(_lxml_segments(c)) for c in _cells(rows[header_at]))
        body = tuple(
            tuple("\n".join(_lxml_segments(c)) for c in _cells(row))
            for row in rows[header_at + 1 :]
            if _has(row, "td")
        )
        tables.append(Table(headers, body, _lxml_title(node)))
    return tables


_BREAKS = frozenset({"br", "p", "li", "div"})


def _has(row: Any, tag: str) -> bool:
    return next(row.iter(tag), None) is not None


def _cells(row: Any) -> list[Any]:
    return [cell for cell in row.iter("th", "td") if cell is not row]


def _lxml_segments(cell: Any) -> list[str]:
    """``_segments`` on an lxml element: text in document order, a new part at each line-breaking tag."""
    if len(cell) == 0:  # most cells: their own text alone, one part
        text = " ".join((cell.text or "").split())
        return [text] if text else []
    parts: list[list[str]] = [[cell.text or ""]]

    def walk(element: Any) -> None:
        for child in element:
            if isinstance(child.tag, str):
                if child.tag in _BREAKS:
                    parts.append([])
                parts[-1].append(child.text or "")
                walk(child)
            parts[-1].append(child.tail or "")  # a comment's text is not the page's, its tail is

    walk(cell)
    texts = (" ".join("".join(p).split()) for p in parts)
    return [t for t in texts if t]


def _lxml_title(table: Any) -> str:
    """``_title`` on an lxml element: the caption, else the nearest h2 › h3 › h4 above the table."""
    caption = next(table.iter("caption"), None)
    if caption is not None:
        return " ".join(_lxml_segments(caption))
    titles: list[str] = []
    node, levels = table, ["h2", "h3", "h4"]
    while levels:
        found = node.xpath("preceding::*[" + " or ".join(f"self::{name}" for name in levels) + "][1]")
        if not found:
            break
        heading = found[0]
        titles.insert(0, " ".join(_lxml_segments(heading)))
        levels, node = levels[: levels.index(heading.tag)], heading
    return " › ".join(titles)


def html_tables_soup(text: str) -> list[Table]:
    """``html_tables`` through BeautifulSoup: the reference it is tested against, and the reader of
    the text lxml refuses."""
    from bs4 import BeautifulSoup

    tables = []
    for node in BeautifulSoup(text, "lxml").find_all("table"):
        rows = node.find_all("tr")
        header_at = next((i for i, row in enumerate(rows) if row.find("th")), 0)
        if not rows:
            continue
        headers = tuple(" ".join(_segments(c)) for c in rows[header_at].find_all(["th", "td"]))
        body = tuple(
            tuple("\n".join(_segments(c)) for c in row.find_all(["td", "th"]))
            for row in rows[header_at + 1 :]
            if row.find("td")
        )
        tables.append(Table(headers, body, _title(node)))
    return tables
