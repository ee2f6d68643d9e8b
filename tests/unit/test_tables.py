"""The shared table reader: HTML tables as the same Table as markdown ones, header units, the row loop."""

from __future__ import annotations

import logging

import pytest

from normalize.errors import LayoutError, ParseError
from scrapers.markdown import markdown_tables
from scrapers.tables import Table, collect, find_table, html_tables, segments
from tests.helpers import FIXTURES


def test_html_tables_keep_line_breaks_and_the_section_headings():
    tables = html_tables((FIXTURES / "oci/computeshapes-gpu.html").read_text())
    table = find_table(tables, r"^Shape$", r"^GPU Memory")
    assert table.heading == "Bare Metal Shapes › GPU Shapes"
    assert table.clean_headers[:3] == ("Shape", "OCPU", "GPU Memory (GB)")
    a100 = next(row for row in table.rows if row[0] == "BM.GPU4.8 (8xA100)")
    network = table.cell(a100, r"^Max Network Bandwidth$")
    assert segments(network) == ["1 x 50 Gbps", "8 x 200 Gbps RDMA"]
    assert table.header_unit(r"^GPU Memory") == "GB"


def test_html_table_without_header_row_reads_its_first_row_as_header():
    (table,) = html_tables("<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>")
    assert table.headers == ("a", "b") and table.rows == (("1", "2"),) and table.heading == ""


def test_header_unit_names_the_header_that_prints_none():
    (table,) = markdown_tables("| Size | Max Bandwidth (Mbps) | Memory |\n|---|---|---|\n| x | 1 | 2 |\n")
    assert table.header_unit(r"Bandwidth") == "Mbps"
    with pytest.raises(ParseError, match="no unit in header 'Memory'"):
        table.header_unit(r"^Memory$")
    with pytest.raises(LayoutError, match="no column matching 'GPU'"):
        table.header(r"GPU")


def test_collect_skips_unreadable_rows_with_a_warning_and_refuses_an_empty_page(caplog):
    def build(cell: str) -> int | None:
        if cell == "-":
            return None  # not a row of interest: skipped quietly
        if not cell.isdigit():
            raise ParseError(f"not a count: {cell!r}")
        return int(cell)

    with caplog.at_level(logging.WARNING, logger="scrapers.tables"):
        assert collect(["8", "-", "x", "4"], build, provider="test", name=str, empty="none") == [8, 4]
    assert [r.getMessage() for r in caplog.records] == ["Skipping test row x: not a count: 'x'"]
    with pytest.raises(LayoutError, match=r"^nothing here$"):
        collect(["-", "x"], build, provider="test", name=str, empty="nothing here")


def test_cleaned_headers_are_computed_once():
    table = Table(("**Size**", "GPU<br>count"), (("a", "1"),))
    assert table.clean_headers is table.clean_headers
    assert table.clean_headers == ("Size", "GPU count") and table.column("count") == 1
