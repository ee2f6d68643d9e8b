"""One document's parse shared by two readers of the same scraper, as if each had parsed it.

Azure reads its price table twice in a refresh: ``parse`` for the sizes the table names, then
``parse_prices`` for the prices (the pipeline runs them apart, each collecting the parser's "Skipping"
warnings as its own: catalog.carry.skipped_rows). The table is 3 MB and parsing it was most of
Azure's parse; ``SharedParse`` parses it once. The second reader gets the same result, or the same
ParseError, and what the parse logged under ``scrapers`` is logged again, so each reader's collector
sees what it saw when each parsed the table itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from normalize.errors import ParseError

T = TypeVar("T")


class _Records(logging.Handler):
    """Every record the ``scrapers`` loggers emit in this thread while it is attached (the fetches
    another thread runs meanwhile log their own)."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)


class SharedParse(Generic[T]):
    """``parse`` of a document's text, once per text (one stored body: compared by identity, as a
    scraper lives for one refresh). Pure parsers only: their only effect is what they log."""

    def __init__(self, parse: Callable[[str], T]) -> None:
        self._parse = parse
        self._last: tuple[str, T | None, ParseError | None, list[logging.LogRecord]] | None = None

    def __call__(self, text: str) -> T:
        if self._last is not None and self._last[0] is text:
            _, result, error, records = self._last
            for record in records:
                logging.getLogger(record.name).handle(record)
        else:
            handler = _Records()
            logger = logging.getLogger("scrapers")
            logger.addHandler(handler)
            try:
                result, error = self._parse(text), None
            except ParseError as exc:
                result, error = None, exc
            finally:
                logger.removeHandler(handler)
            self._last = (text, result, error, handler.records)
        if error is not None:
            raise error
        return result  # type: ignore[return-value]  # None only beside an error
