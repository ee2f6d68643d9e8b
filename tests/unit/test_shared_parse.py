"""scrapers.shared_parse: the second reader of a document gets what parsing it would have given it."""

from __future__ import annotations

import logging

import pytest

from catalog.carry import skipped_rows
from normalize.errors import LayoutError
from scrapers.shared_parse import SharedParse

log = logging.getLogger("scrapers.test_shared_parse")


def _counting(calls: list[str]):
    def parse(text: str) -> list[str]:
        calls.append(text)
        log.warning("Skipping row %s: unreadable", text[:3])
        if text.startswith("bad"):
            raise LayoutError("no rows")
        return text.split()

    return parse


def test_the_second_reader_gets_the_result_and_the_warnings_of_one_parse() -> None:
    calls: list[str] = []
    shared = SharedParse(_counting(calls))
    text = "abc def"
    with skipped_rows() as first:
        assert shared(text) == ["abc", "def"]
    with skipped_rows() as second:
        assert shared(text) == ["abc", "def"]
    assert len(calls) == 1
    assert first == second == ["Skipping row abc: unreadable"]


def test_another_document_is_parsed_anew() -> None:
    calls: list[str] = []
    shared = SharedParse(_counting(calls))
    shared("abc def")
    shared("".join(["abc", " ghi"]))  # another body, even of the same length
    shared("".join(["abc", " ghi"]))  # equal text, but not the stored body parsed last
    assert len(calls) == 3


def test_a_parse_error_is_raised_to_both_readers() -> None:
    calls: list[str] = []
    shared = SharedParse(_counting(calls))
    text = "bad table"
    for _ in range(2):
        with skipped_rows() as skipped, pytest.raises(LayoutError, match="no rows"):
            shared(text)
        assert skipped == ["Skipping row bad: unreadable"]
    assert len(calls) == 1
