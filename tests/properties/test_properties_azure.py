"""Property tests of scrapers/documents/azure/__init__.py and azure_prose.py: series pages, includes,
summary prose, links."""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normalize import vocab
from records.documents import DocumentSet
from scrapers.documents import azure
from scrapers.documents.azure import prose as azure_prose
from tests.helpers import MIRROR
from tests.properties.property_checks import MARKS, check_claim, expect, parse_all, run_parser
from tests.properties.property_inputs import (
    AZ_PAGE,
    AZ_SPECS,
    AZ_SUMMARY,
    AZURE_FIXTURE,
    COUNT,
    GPU_NAME,
    NUMBER,
    TEXT,
    bandwidth_text,
    doc,
    document_set,
    md_table,
    mutated,
    noise,
    or_noise,
)

pytestmark = MARKS

GENERATIONS = st.sampled_from(sorted(vocab.INFINIBAND_RATE_GBITS))
SERIES_NAMES = st.sampled_from(["ND-Test-v9", "NDv2", "HBv4", "N-series", "NCv3", "ND A100 v4"])
RDMA_PAGE = st.lists(
    st.tuples(GENERATIONS, st.lists(or_noise(SERIES_NAMES, 2), min_size=1, max_size=3).map(", ".join)).map(
        " rates for ".join
    ),
    max_size=3,
).map(lambda parts: "RDMA-capable instances run at " + ", and ".join(parts) + ".\n")
SUMMARY_SENTENCE = st.tuples(
    st.sampled_from(["Each GPU", "The VM", "Deployments", "The series", "A rack"]),
    st.sampled_from([" has ", " is interconnected with ", " scales with ", " features ", " provides "]),
    bandwidth_text(),
    st.sampled_from(
        [
            " NVLink",
            " NVLINK 4.0 connectivity",
            " of interconnect bandwidth per VM",
            " NVIDIA HDR InfiniBand connection",
            " dedicated InfiniBand per GPU",
            " of aggregate NVLink bandwidth",
            " memory bandwidth",
            " PCIe",
            " Infinity Fabric",
            " of cross sectional NVLink bandwidth",
            "",
        ]
    ),
    st.sampled_from([" with eight NVIDIA H100 GPUs", " (80GB)", " AMD MI300X", "", " vs 400 Gbps"]),
).map(lambda t: "".join(t) + ". ")
SUMMARY = st.lists(or_noise(SUMMARY_SENTENCE), max_size=5).map("".join)


@st.composite
def azure_page(draw: st.DrawFn) -> str:
    """A series page with random network (incl. GB200 scale-up/out columns) and accelerator rows."""
    sizes = draw(
        st.lists(
            or_noise(
                st.sampled_from(["Standard_ND96isr_T9_v9", "Standard_ND48is_T9_v9", "Standard_NC4as_T4_v3"])
            ),
            min_size=1,
            max_size=3,
        )
    )
    unit = st.sampled_from(["Mbps", "Gbps", "TBps", "GB/s", "Mbit/s", "furlongs"])
    net_headers = ["Size Name", "Max NICs (Qty.)", f"Max Bandwidth ({draw(unit)})"]
    scale = draw(st.booleans())
    if scale:
        net_headers += [
            f"Scale-Up Bandwidth ({draw(unit)})",
            "Scale-up NICS",
            f"Scale-Out Bandwidth ({draw(unit)})",
            "Scale-out NICS",
        ]
    net, acc = [], []
    for size in sizes:
        row = [size, draw(or_noise(COUNT)), draw(or_noise(NUMBER))]
        if scale:
            row += [
                draw(or_noise(NUMBER)),
                draw(or_noise(COUNT)),
                draw(or_noise(NUMBER)),
                draw(or_noise(COUNT)),
            ]
        net.append(row)
        acc.append([size, draw(or_noise(COUNT)), draw(or_noise(NUMBER))])
    memory_header = draw(
        st.sampled_from(["Accelerator-Memory (GB)", "Accelerator Memory (GiB)", "Accelerator Memory"])
    )
    return (
        f"# {draw(or_noise(SERIES_NAMES))} sizes series\n\n"
        "[!INCLUDE [summary](./includes/nd-test-v9-series-summary.md)]\n"
        "[!INCLUDE [specs](./includes/nd-test-v9-series-specs.md)]\n\n"
        + md_table(net_headers, net)
        + "\n"
        + md_table(["Size Name", "Accelerators (Qty.)", memory_header], acc)
    )


SPECS = st.tuples(
    or_noise(st.tuples(COUNT, st.just(" - "), COUNT, st.just(" NICs")).map("".join)),
    or_noise(bandwidth_text()),
    or_noise(st.tuples(COUNT, st.sampled_from([" GPUs", " GPU", ""])).map("".join)),
    or_noise(st.tuples(GPU_NAME, st.just(" ("), NUMBER, st.just("GB)")).map("".join)),
).map(
    lambda t: md_table(
        ["Part", "Quantity <br><sup>Count Units</sup>", "Specs <br><sup>SKU ID</sup>"],
        [["Network", t[0], t[1]], ["Accelerators", t[2], t[3]]],
    )
)


@st.composite
def azure_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        documents, text = draw(document_set(AZURE_FIXTURE, "azure"))
        docs = list(documents.values())
    else:
        bodies = {AZ_PAGE: draw(azure_page()), AZ_SPECS: draw(SPECS), AZ_SUMMARY: draw(SUMMARY)}
        docs = [doc(url, "azure", body) for url, body in bodies.items()]
        text = "\n".join(bodies.values())
    if draw(st.booleans()):
        rdma = draw(or_noise(RDMA_PAGE))
        docs.append(doc(azure.INFINIBAND_PAGE, "azure", rdma))
        text += "\n" + rdma
    return DocumentSet(docs), text


@given(case=azure_documents())
def test_azure(case):
    documents, text = case
    run_parser(lambda: parse_all(azure.Azure(), documents), text)


@given(
    summary=st.one_of(SUMMARY, TEXT, mutated(AZURE_FIXTURE[AZ_SUMMARY])),
    count=st.one_of(st.none(), st.sampled_from([0.125, 0.5, 1.0, 2.0, 8.0]), st.floats(0.01, 64)),
)
def test_azure_prose(summary, count):
    def check():
        for claim in azure_prose.claims(summary, AZ_SUMMARY, count):
            check_claim(claim)
        rates = azure_prose.rdma_generations(summary)
        for claim in azure_prose.rdma_claims("ND-Test-v9", rates, azure.INFINIBAND_PAGE):
            check_claim(claim)

    run_parser(check, summary)


@functools.cache
def _azure_real_series() -> dict[str, list[str]]:
    """Series page URL → the URLs of the documents its parse reads (page, includes, InfiniBand page)."""
    root = MIRROR / azure.SIZES.split("://", 1)[1]
    series = {}
    for path in sorted(root.glob("*-series.md")):
        url = azure.SIZES + path.name
        text = path.read_text(encoding="utf-8")
        includes = [u for u in azure.include_urls(url, text) if (MIRROR / u.split("://", 1)[1]).is_file()]
        series[url] = [url, *includes, azure.INFINIBAND_PAGE]
    return series


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_azure_real_series_mutated(real_document, data):
    series = _azure_real_series()
    urls = series[data.draw(st.sampled_from(sorted(series)), label="series")]
    documents, text = data.draw(document_set({url: real_document(url) for url in urls}, "azure"))
    run_parser(lambda: parse_all(azure.Azure(), documents), text)


HREF = st.tuples(
    st.sampled_from(["", "./", "./includes/", "../", "https://example.test/", "http://[", "//", "mailto:"]),
    st.text(max_size=4),
    st.sampled_from(["-series.md", "-summary.md", "-specs.md", ".md"]),
).map("".join)
LINK_TEXT = st.lists(
    st.one_of(
        HREF.map(lambda href: f"[!INCLUDE [x]({href})]"),
        HREF.map(lambda href: f"[View]({href})"),
        noise(3),
    ),
    max_size=4,
).map("\n".join)


@given(text=st.one_of(TEXT, LINK_TEXT, *map(mutated, AZURE_FIXTURE.values())))
def test_azure_links(text):
    """The series links of a family page and the includes of a series page, as URLs."""

    def check():
        for urls in (azure.series_urls([(azure.FAMILY_PAGES[1], text)]), azure.include_urls(AZ_PAGE, text)):
            expect(isinstance(urls, list) and all(isinstance(u, str) for u in urls), f"{urls!r}")

    run_parser(check, text)
