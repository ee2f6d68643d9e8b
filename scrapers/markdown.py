"""Markdown documents: front matter, sentences, and pipe tables (as ``scrapers.tables.Table``).

Provider markdown is looser than GFM: AWS pads header rows with extra delimiter cells and writes
group rows of one cell ("| **P5** |"); Azure leaves trailing pipes off and puts <br> and <sup> in
cells. ``markdown_tables`` accepts all of it. Cells keep their raw text (so a claim can quote it
exactly); ``scrapers.tables.clean`` gives the text to parse.
"""

from __future__ import annotations

import functools
import re

from scrapers.tables import Table, clean

_DELIMITER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_PIPE = re.compile(r"(?<!\\)\|")  # a cell separator: a pipe not escaped


_FRONT_MATTER = re.compile(r"\A\ufeff?---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!vs\.)(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z0-9\"'“])")


def body(text: str) -> str:
    """The document without its YAML front matter (whose '# comments' are not headings)."""
    return _FRONT_MATTER.sub("", text, count=1)


def title(text: str) -> str:
    """The first level-1 heading of the body, or ''."""
    for line in body(text).splitlines():
        if line.startswith("# "):
            return clean(line[2:])
    return ""


def sentences(text: str) -> list[str]:
    """Prose split into sentences; each is a verbatim slice of the text, stripped."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=256)
def _sentences(text: str) -> tuple[str, ...]:
    parts: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=[-*] )", text):
        parts.extend(s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip())
    return tuple(parts)


def split_row(line: str) -> list[str]:
    """The raw cells of one table line, split on unescaped pipes."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _PIPE.split(body)]


def markdown_tables(text: str) -> list[Table]:
    """Every pipe table in a markdown document, in order."""
    lines = text.splitlines()
    tables: list[Table] = []
    heading = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _HEADING.match(line) if "#" in line else None  # no heading without its '#'
        if match:
            heading = clean(match.group(1))
        is_table_start = (
            line.lstrip().startswith("|")
            and i + 1 < len(lines)
            and _DELIMITER.match(lines[i + 1]) is not None
        )
        if not is_table_start:
            i += 1
            continue
        headers = tuple(split_row(line))
        rows = []
        i += 2
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            rows.append(tuple(split_row(lines[i])))
            i += 1
        tables.append(Table(headers, tuple(rows), heading))
    return tables
