"""scrapers.markdown on small tables written for the test, with each provider quirk."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError
from scrapers.markdown import body, markdown_tables, sentences, title
from scrapers.tables import clean, find_table

PADDED = """\
## Instance families

| Instance family | Available instance types |
| --------------- | ------------------------ | ------ | ------ |
| P5              | `p5.4xlarge`             | `p5.48xlarge` |

## Network specifications

| Instance type | Baseline / Burst bandwidth (Gbps) | EFA |
| ------------- | --------------------------------- | --- |
| **P5**        |
| p5.48xlarge   | 3200 Gigabit                      | ✓ Yes |
| g5.xlarge 1   | 2.5 / 10.0                        | ✗ No |
"""


def test_padded_header_and_group_rows():
    family, network = markdown_tables(PADDED)
    assert family.headers == ("Instance family", "Available instance types")
    assert family.rows[0][2] == "`p5.48xlarge`"
    assert network.heading == "Network specifications"
    assert network.rows[0] == ("**P5**",)
    assert network.cell(network.rows[1], r"bandwidth") == "3200 Gigabit"
    assert network.cell(network.rows[0], r"^EFA$") == ""


def test_loose_azure_rows_and_cells():
    text = (
        "| Part | Quantity <br><sup>Count Units</sup> | Specs |\n"
        "|---|---|---|\n"
        "| Network | 2 - 4 NICs | 40,000 - 80,000 Mbps <br>Interfaces: NetVSC, ConnectX |\n"
        "| Local | 4 | 16\n"
        "| Escaped | a \\| b | x |\n"
    )
    (table,) = markdown_tables(text)
    assert table.clean_headers == ("Part", "Quantity Count Units", "Specs")
    assert clean(table.rows[0][2]) == "40,000 - 80,000 Mbps Interfaces: NetVSC, ConnectX"
    assert table.rows[1] == ("Local", "4", "16")
    assert table.rows[2][1] == "a | b"


def test_find_table_names_the_missing_columns():
    tables = markdown_tables(PADDED)
    assert find_table(tables, r"^EFA$").heading == "Network specifications"
    with pytest.raises(LayoutError, match="Accelerators"):
        find_table(tables, r"^Accelerators$")
    with pytest.raises(LayoutError, match="no column matching 'Network cards'"):
        tables[1].column("Network cards")


def test_front_matter_comments_are_not_headings():
    text = "---\ntitle: x\n# Customer intent: not a heading\n---\n\n# ND-H200-v5 size series\n\nText."
    assert title(text) == "ND-H200-v5 size series"
    assert body(text).startswith("\n# ND-H200")


def test_sentences_keep_decimals_and_abbreviations():
    text = "It has 3.2 Tbps per VM. Each GPU has 400 Gbps (800Gbps vs. 400 Gbps). Done."
    assert sentences(text) == [
        "It has 3.2 Tbps per VM.",
        "Each GPU has 400 Gbps (800Gbps vs. 400 Gbps).",
        "Done.",
    ]
