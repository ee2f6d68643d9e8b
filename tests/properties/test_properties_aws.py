"""Property tests of scrapers/documents/aws.py: random table-shaped pages, fixtures and the real page,
mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet, copy_url
from scrapers.documents import aws, aws_karpenter
from tests.properties.property_checks import MARKS, aws_parse, parse_all, run_parser
from tests.properties.property_inputs import (
    COUNT,
    MEMORY_CELL,
    NUMBER,
    TEXT,
    bandwidth_text,
    doc,
    fixtures,
    html_table,
    md_table,
    mutated,
    or_noise,
)

pytestmark = MARKS

GPU_WORDS = st.sampled_from(
    [
        "NVIDIA H100 GPU",
        "NVIDIA H200 GPU",
        "NVIDIA A100 GPU",
        "NVIDIA A10G GPU",
        "NVIDIA L4 GPU",
        "NVIDIA T4 GPU",
        "NVIDIA B200 GPU",
        "AMD Radeon Pro V520 GPU",
        "AWS Inferentia2 inference accelerator",
        "GPU",
    ]
)


@st.composite
def aws_page(draw: st.DrawFn, html: bool = False) -> str:
    perf, net = [], []
    for _ in range(draw(st.integers(1, 4))):
        family = draw(st.sampled_from(["P5", "P4d", "P3dn", "G5", "G6", "", "**"]))
        if family:
            perf.append([f"**{family}**"])
            net.append([f"**{family}**"])
        name = draw(or_noise(st.sampled_from(["p5.48xlarge", "g5.xlarge", "p4d.24xlarge", "g6f.large 1"])))
        accelerators = draw(or_noise(st.tuples(COUNT, GPU_WORDS).map(" x ".join)))
        perf.append([name, "16.00", "AMD EPYC", "4", accelerators, draw(or_noise(MEMORY_CELL))])
        efa = draw(st.sampled_from(["✓ Yes", "✗ No", "Yes", ""]))
        cards = draw(or_noise(COUNT))
        net.append([name, draw(or_noise(bandwidth_text())), efa, "✓ Yes", cards])
    unit = draw(st.sampled_from(["Gbps", "Mbps", "Tbps", "Gb/s", "GB/s", "Gigabit"]))
    if html:  # the newer revision's layout: HTML tables, group rows of one cell
        perf_headers = [
            "Instance type",
            "Memory (GiB)",
            "Processor",
            "vCPUs",
            "Accelerators",
            "Accelerator memory",
        ]
        net_headers = ["Instance type", f"Baseline / Burst bandwidth ({unit})", "EFA", "ENA", "Network cards"]
        strip = [[cell.strip("*") for cell in row] for row in perf]
        return html_table(perf_headers, strip) + html_table(
            net_headers, [[c.strip("*") for c in r] for r in net]
        )
    return (
        "## Performance specifications\n\n"
        + md_table(
            ["Instance type", "Memory (GiB)", "Processor", "vCPUs", "Accelerators", "Accelerator memory"],
            perf,
        )
        + "\n## Network specifications\n\n"
        + md_table(
            ["Instance type", f"Baseline / Burst bandwidth ({unit})", "EFA", "ENA", "Network cards"], net
        )
    )


@given(text=st.one_of(TEXT, aws_page(), fixtures("aws/*.md").flatmap(mutated)))
def test_aws(text):
    run_parser(lambda: aws_parse(text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_aws_real_page_mutated(real_document, data):
    text = data.draw(mutated(real_document(aws.AC_URL)))
    run_parser(lambda: aws_parse(text), text)


@st.composite
def karpenter_text(draw: st.DrawFn) -> str:
    names = st.sampled_from(["p5.48xlarge", "g5.xlarge", "p4d.24xlarge", "g6f.large", "x"])
    lines = [
        f'\t\t"{draw(or_noise(names))}": {draw(or_noise(st.one_of(NUMBER, st.just("0"))))},'
        for _ in range(draw(st.integers(0, 5)))
    ]
    return "var (\n\tInstanceTypeBandwidthMegabits = map[string]int64{\n" + "\n".join(lines) + "\n\t}\n)\n"


@given(
    page=aws_page(), newer=st.one_of(aws_page(html=True), TEXT), karpenter=st.one_of(karpenter_text(), TEXT)
)
def test_aws_with_the_newer_revision_and_karpenter(page, newer, karpenter):
    documents = DocumentSet(
        [
            doc(aws.AC_URL, "aws", page),
            doc(copy_url(aws.NEWER), "aws", newer),
            doc(aws_karpenter.BANDWIDTH_URL, "aws", karpenter),
        ]
    )
    run_parser(lambda: parse_all(aws.Aws(), documents), page, newer, karpenter)
