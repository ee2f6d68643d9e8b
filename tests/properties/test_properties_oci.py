"""Property tests of scrapers/documents/oci.py: GPU shape tables with random shape and network cells."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.documents import oci
from tests.properties.property_checks import MARKS, parse_all, run_parser
from tests.properties.property_inputs import (
    COUNT,
    NUMBER,
    OCI_HEADERS,
    SHORT_GPU_NAME,
    TEXT,
    bandwidth_text,
    doc,
    fixtures,
    html_table,
    mutated,
    or_noise,
)

pytestmark = MARKS


@st.composite
def oci_row(draw: st.DrawFn) -> list[str]:
    gpu = draw(SHORT_GPU_NAME)
    suffix = draw(st.one_of(COUNT, st.just("")))
    shape = f"BM.GPU.{gpu}.{suffix}" if suffix else f"BM.GPU.{gpu}"
    if draw(st.booleans()):
        shape += (
            f" ({draw(COUNT)}{draw(st.sampled_from(['x', ' x ', 'X']))}{draw(or_noise(SHORT_GPU_NAME, 2))})"
        )
    parts = draw(st.lists(or_noise(bandwidth_text()), min_size=0, max_size=3))
    network = "<br>".join(p + draw(st.sampled_from(["", " RDMA"])) for p in parts)
    return [draw(or_noise(st.just(shape))), "64", draw(or_noise(NUMBER)), "2048", "NVMe", network, "64", "-"]


OCI_PAGE = st.one_of(
    st.lists(oci_row(), min_size=1, max_size=4).map(
        lambda rows: "<h2>GPU Shapes</h2>" + html_table(OCI_HEADERS, rows)
    ),
    fixtures("oci/*.html").flatmap(mutated),
    TEXT,
)


@given(html=OCI_PAGE)
def test_oci(html):
    run_parser(lambda: parse_all(oci.Oci(), DocumentSet([doc(oci.SHAPES_URL, "oci", html)])), html)
