"""Coverage: every instance type the mirrored documents list is a row, or docs/providers.md names it
with the reason it is not (its section "Instance types the documents list that are not rows")."""

from __future__ import annotations

import csv
import io
import re

import pytest

from scrapers.documents import coreweave, oci_offers
from scrapers.documents.aws import AC_URL, _instance_rows
from scrapers.documents.gcp import capture
from scrapers.documents.oci import TEMPLATE
from scrapers.markdown import markdown_tables
from scrapers.tables import find_table
from tests.helpers import MIRROR, ROOT, SHARED, query

pytestmark = pytest.mark.shared
SECTION = "## Instance types the documents list that are not rows"


def mirrored(url: str) -> str:
    return (MIRROR / url.removeprefix("https://")).read_text(encoding="utf-8")


def listed_types() -> dict[str, set[str]]:
    """Provider → the instance types its documents in ../shared list."""
    oci = {
        row["InstanceType"]
        for path in oci_offers.COPIES
        for row in csv.DictReader(io.StringIO((SHARED / path).read_text(encoding="utf-8")))
        if row["AcceleratorName"]
    }
    oci |= set(re.findall(r"'(BM\.GPU[\w.\-]*?\.\d+)' in nhc_node_shape", mirrored(TEMPLATE)))
    index = (SHARED / coreweave.INDEX).read_text(encoding="utf-8")
    performance = find_table(markdown_tables(mirrored(AC_URL)), r"^Instance type$", r"^Accelerators$")
    return {
        "gcp": {
            r.instance_type for r in capture.machine_tables((SHARED / capture.MACHINES_COPY).read_text())
        },
        "oci": oci,
        "coreweave": set(re.findall(r"platform/instances/gpu/([\w.-]+)\.md", index)),
        "aws": {name for _, name, _ in _instance_rows(performance)},
    }


def test_every_listed_type_is_a_row_or_named_with_its_reason(real_catalog_file):
    rows = set(query(real_catalog_file, "SELECT provider, instance_type FROM instances"))
    doc = (ROOT / "docs/providers.md").read_text(encoding="utf-8")
    named = doc[doc.index(SECTION) :]
    absent = {(p, t) for p, types in listed_types().items() for t in types if (p, t) not in rows}
    assert absent, "the documents list non-GPU types too: the test would not notice a missing row"
    unexplained = sorted((p, t) for p, t in absent if f"`{t}`" not in named)
    assert unexplained == []
    for row in ("trn2.48xlarge", "a3-ultragpu-8g", "BM.GPU.B300.8", "b300-8x", "gb300-4x-e", "g4-standard-6"):
        assert any(t == row for _, t in rows), row
