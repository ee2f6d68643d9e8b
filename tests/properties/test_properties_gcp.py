"""Property tests of scrapers/documents/gcp/__init__.py: both network-page revisions and the
machine-types page."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.documents import gcp
from tests.properties.property_checks import MARKS, check_claim, expect, parse_all, run_parser, strict
from tests.properties.property_inputs import (
    COUNT,
    GPU_NAME,
    TEXT,
    bandwidth_text,
    doc,
    document_set,
    fixture,
    html_table,
    mutated,
    or_noise,
)

pytestmark = MARKS

GCP_FIXTURE = {
    gcp.NETWORK_URLS[0]: fixture("gcp/gpu-network-bandwidth.html"),
    gcp.NETWORK_URLS[1]: fixture("gcp/gpu-network-bandwidth-newer.html"),
    gcp.MACHINES_URL: fixture("gcp/accelerator-optimized-machines.html"),
}
GCP_SERIES = st.sampled_from(sorted(gcp.SERIES_PREFIXES))


@st.composite
def gcp_network_page(draw: st.DrawFn) -> str:
    if draw(st.booleans()):  # the list revision
        items = draw(st.lists(st.tuples(or_noise(GCP_SERIES, 2), or_noise(bandwidth_text())), max_size=4))
        return "<ul>" + "".join(f"<li><strong>{s}</strong>: {b}</li>\n" for s, b in items) + "</ul>"
    rows = draw(
        st.lists(
            st.tuples(
                or_noise(st.one_of(GCP_SERIES, st.just("A2 Standard and A2 Ultra")), 2),
                or_noise(GPU_NAME),
                or_noise(bandwidth_text()),
                or_noise(st.sampled_from(sorted(gcp.FABRIC_BY_TECHNOLOGY)), 2),
            ).map(list),
            max_size=4,
        )
    )
    sections = draw(
        st.lists(
            st.tuples(
                or_noise(GCP_SERIES, 2),
                st.lists(
                    or_noise(
                        st.tuples(
                            st.sampled_from(["", "eight ", "two ", "4 ", "0 ", "²"]),
                            st.sampled_from(["NICs deliver ", "NIC adds ", "gVNIC NICs add "]),
                            bandwidth_text(),
                            st.sampled_from(
                                [" for GPU-to-GPU traffic", " for general networking", " RDMA", ""]
                            ),
                            st.sampled_from([". ", ". All to all NVLink. "]),
                        ).map("".join)
                    ),
                    max_size=3,
                ).map("".join),
            ),
            max_size=3,
        )
    )
    return html_table(list(gcp.OVERVIEW_HEADERS), rows) + "".join(
        f"<h3>{heading}</h3>\n<p>{prose}</p>\n" for heading, prose in sections
    )


MACHINE_TYPE = st.sampled_from(
    ["a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4x-highgpu-4g", "g2-standard-96", "a2-ultragpu-1g"]
)


@st.composite
def gcp_machines_page(draw: st.DrawFn) -> str:
    rows = draw(
        st.lists(
            st.tuples(or_noise(MACHINE_TYPE, 2), or_noise(COUNT, 2), st.just("26")).map(list), max_size=5
        )
    )
    return html_table(["Machine type", "GPU count", "vCPU count"], rows)


@st.composite
def gcp_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        return draw(document_set(GCP_FIXTURE, "gcp"))
    bodies = {
        gcp.NETWORK_URLS[0]: draw(gcp_network_page()),
        gcp.NETWORK_URLS[1]: draw(st.one_of(st.none(), gcp_network_page())),
        gcp.MACHINES_URL: draw(gcp_machines_page()),
    }
    return DocumentSet(doc(u, "gcp", b) for u, b in bodies.items()), "\n".join(
        b or "" for b in bodies.values()
    )


@given(case=gcp_documents())
def test_gcp(case):
    documents, text = case
    run_parser(lambda: parse_all(gcp.Gcp(), documents), text)


@given(html=st.one_of(TEXT, gcp_network_page(), gcp_machines_page(), *map(mutated, GCP_FIXTURE.values())))
def test_gcp_page_parsers(html):
    def check():
        for facts in strict(lambda: gcp.parse_network_page(html, gcp.NETWORK_URLS[0])) or []:
            expect(facts.series in gcp.SERIES_PREFIXES, f"series {facts.series!r}")
            for claim in facts.claims:
                check_claim(claim)
        for machine in gcp.parse_machine_types(html, gcp.MACHINES_URL):
            expect(isinstance(machine.instance_type, str), f"{machine!r}")
            count = machine.gpu_count
            expect(isinstance(count, int) and count > 0, f"machine type with GPU count {count}: {machine!r}")

    run_parser(check, html)
