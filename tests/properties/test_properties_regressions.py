"""Regression tests: one per bug the property tests found, the @example being its minimal failing
input. Each must end in a well-formed result or a ParseError, nothing else."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from normalize import units
from records.documents import DocumentSet
from scrapers.documents import azure, gcp, oci, runpod
from scrapers.offer_lists import nebius, skypilot
from tests.properties.property_checks import (
    MARKS,
    aws_parse,
    check_bandwidth,
    curated_parse,
    expect,
    finite_non_negative,
    parse_all,
    skypilot_parse,
    strict,
)
from tests.properties.property_inputs import (
    AZ_PAGE,
    AZ_SPECS,
    AZ_SUMMARY,
    AZURE_FIXTURE,
    OCI_HEADERS,
    RUNPOD_FIXTURE,
    csv_text,
    doc,
    html_table,
    md_table,
    toml_document,
)

pytestmark = MARKS


def aws_doc(
    *,
    accelerators: str = "8 x NVIDIA H100 GPU",
    memory: str = "640 GiB (8 x 80 GiB)",
    bandwidth: str = "3200 Gigabit",
    efa: str = "✓ Yes",
    cards: str = "32",
) -> str:
    """The AWS page with one instance type, p5.48xlarge, whose cells are the arguments."""
    return (
        "## Performance specifications\n\n"
        + md_table(
            ["Instance type", "Memory (GiB)", "Processor", "vCPUs", "Accelerators", "Accelerator memory"],
            [["p5.48xlarge", "2048.00", "AMD EPYC 7R13", "192", accelerators, memory]],
        )
        + "\n## Network specifications\n\n"
        + md_table(
            ["Instance type", "Baseline / Burst bandwidth (Gbps)", "EFA", "ENA", "Network cards"],
            [["p5.48xlarge", bandwidth, efa, "✓ Yes", cards]],
        )
    )


def oci_doc(
    *, shape: str = "BM.GPU.H100.8 (8xH100)", network: str = "1 x 100 Gbps<br>8 x 2 x 200 Gbps RDMA"
) -> DocumentSet:
    """The OCI page with one GPU shape."""
    row = [shape, "112", "640", "2048", "NVMe", network, "256", "-"]
    return DocumentSet([doc(oci.SHAPES_URL, "oci", "<h3>GPU Shapes</h3>" + html_table(OCI_HEADERS, [row]))])


def gcp_docs(
    *, count: str = "8", total: str = "1,000 Gbps", technology: str = "GPUDirect-TCPX"
) -> DocumentSet:
    """The GCP network page with one series (A3 High) and the machine page with one machine type."""
    network = html_table(list(gcp.OVERVIEW_HEADERS), [["A3 High", "NVIDIA H100 80GB", total, technology]])
    machines = html_table(["Machine type", "GPU count"], [["a3-highgpu-8g", count]])
    return DocumentSet([doc(gcp.NETWORK_URLS[0], "gcp", network), doc(gcp.MACHINES_URL, "gcp", machines)])


def runpod_docs(
    *, speed: str = "3200 Gbps", nodes: str = "2-8 nodes (16-64 GPUs)", last_interface: str = "8"
) -> DocumentSet:
    """The RunPod Instant Clusters page with one row (B200), and the GPU types fixture."""
    clusters = md_table(["GPU", "Network speed", "Nodes"], [["B200", speed, nodes]])
    clusters += f"\nThe interfaces (`ens1`-`ens{last_interface}`) handle inter-node communication.\n"
    return DocumentSet(
        [
            doc(runpod.CLUSTERS_URL, "runpod", clusters),
            doc(runpod.GPU_TYPES_URL, "runpod", RUNPOD_FIXTURE[runpod.GPU_TYPES_URL]),
        ]
    )


def azure_docs(
    *,
    count: str = "8",
    memory: str = "640",
    specs_count: str = "4 - 8 GPUs",
    accelerator_spec: list[str] | None = None,
    nics: str = "8",
    frontend: str = "80000",
    scale_out: tuple[str, str] | None = None,
    summary: str = AZURE_FIXTURE[AZ_SUMMARY],
) -> DocumentSet:
    """An Azure series page with one RDMA size, Standard_ND96isr_T9_v9, and its two includes
    (``accelerator_spec``: the Accelerators row of the specs include, cells as given)."""
    headers, row = ["Size Name", "Max NICs (Qty.)", "Max Bandwidth (Mbps)"], [nics, frontend]
    if scale_out is not None:
        headers += ["Scale-Out Bandwidth (Gbps)", "Scale-out NICS"]
        row += list(scale_out)
    page = (
        "# ND-Test-v9 sizes series\n\n"
        "[!INCLUDE [summary](./includes/nd-test-v9-series-summary.md)]\n"
        "[!INCLUDE [specs](./includes/nd-test-v9-series-specs.md)]\n\n"
        + md_table(headers, [["Standard_ND96isr_T9_v9", *row]])
        + "\n"
        + md_table(
            ["Size Name", "Accelerators (Qty.)", "Accelerator-Memory (GB)"],
            [["Standard_ND96isr_T9_v9", count, memory]],
        )
    )
    specs = md_table(
        ["Part", "Quantity", "Specs"],
        [
            ["Network", "4 - 8 NICs", "40,000 - 80,000 Mbps"],
            accelerator_spec or ["Accelerators", specs_count, "Nvidia H100 GPU (80GB)"],
        ],
    )
    return DocumentSet(
        [doc(AZ_PAGE, "azure", page), doc(AZ_SPECS, "azure", specs), doc(AZ_SUMMARY, "azure", summary)]
    )


H100_GPU_INFO = (
    "{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, "
    "'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}"
)


def nebius_docs(*, count: str = "8", gpu_info: str = H100_GPU_INFO) -> DocumentSet:
    """The Nebius vms.csv with one GPU row."""
    row = [
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",
        "H100",
        count,
        "128",
        "1600",
        "20.00",
        "eu-north1",
        gpu_info,
        "",
    ]
    return DocumentSet([doc(nebius.VMS_URL, "nebius", csv_text([row]))])


NINES = "9" * 309  # 1e309: past the largest float


# Was: normalize.units: to_number reads 'nan'/'inf' and >308-digit numbers as non-finite floats, so
# parse_bandwidth and parse_memory_gb return inf and a link count past 1.8e308 raises
# OverflowError
@given(
    number=st.one_of(
        st.sampled_from(["nan", "NaN", "inf", "Infinity"]), st.integers(309, 400).map("9".__mul__)
    )
)
@example(number="nan")
@example(number=NINES)
def test_regression_units_accept_non_finite_numbers(number):
    def finite_number() -> None:
        expect(math.isfinite(units.to_number(number)), f"to_number({number!r}) is non-finite")

    for text in (f"{number} Gbps", f"{number} x 1 Gbps", "99999 x " * 62 + "1 Gbps"):
        strict(lambda text=text: check_bandwidth(units.parse_bandwidth(text), text))
    strict(lambda: finite_non_negative(units.parse_memory_gb(f"{number} GB"), "memory"))
    strict(finite_number)
    strict(lambda: parse_all(azure.Azure(), azure_docs(scale_out=("400", number))))


# Was: GPU and NIC counts are unbounded ints: past 1.8e308 float() overflows (OverflowError in
# azure/nebius/oci/runpod/aws parsers) and past 4,300 digits parse_gpu_count raises ValueError
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(
            lambda n: units.parse_gpu_count(n) and float(units.parse_gpu_count(n)), id="parse_gpu_count"
        ),
        pytest.param(lambda n: parse_all(azure.Azure(), azure_docs(count=n)), id="azure-count"),
        pytest.param(lambda n: parse_all(azure.Azure(), azure_docs(nics=n)), id="azure-nics"),
        pytest.param(lambda n: parse_all(nebius.Nebius(), nebius_docs(count=n)), id="nebius-count"),
        pytest.param(lambda n: parse_all(oci.Oci(), oci_doc(shape=f"BM.GPU.H100.{n}")), id="oci-shape"),
        pytest.param(
            lambda n: parse_all(runpod.RunPod(), runpod_docs(nodes=f"1 node ({n} GPUs)")), id="runpod"
        ),
        pytest.param(lambda n: aws_parse(aws_doc(cards=n)), id="aws-cards"),
        pytest.param(lambda n: parse_all(runpod.RunPod(), runpod_docs(last_interface=n)), id="runpod-ens"),
    ],
)
@given(digits=st.integers(309, 400))
@example(digits=309)
@example(digits=4301)
def test_regression_huge_counts_overflow(parse, digits):
    strict(lambda: parse("9" * digits))


# Was: a GPU count of 0 is accepted: ZeroDivisionError (oci) or a gpu_count 0 claim that build_offer
# rejects (aws, gcp, runpod, azure)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(
            lambda z: aws_parse(aws_doc(accelerators=f"{z} x NVIDIA H100 GPU", memory="80 GiB")), id="aws"
        ),
        pytest.param(lambda z: parse_all(oci.Oci(), oci_doc(shape=f"BM.GPU.H100.{z}")), id="oci"),
        pytest.param(lambda z: parse_all(gcp.Gcp(), gcp_docs(count=z)), id="gcp"),
        pytest.param(
            lambda z: parse_all(runpod.RunPod(), runpod_docs(nodes=f"1 node ({z} GPUs)")), id="runpod"
        ),
        pytest.param(
            lambda z: parse_all(azure.Azure(), azure_docs(count="", specs_count=f"{z} GPUs")), id="azure"
        ),
    ],
)
@given(zero=st.sampled_from(["0", "00", "000"]))
@example(zero="0")
def test_regression_zero_gpu_count_accepted(parse, zero):
    strict(lambda: parse(zero))


# Was: parse_bandwidth accepts '0 Gbps' and parsers emit 0 Gbit/s claims; as the inter-node figure
# build_offer rejects the row (InvalidOffer: inter_node_gbits_per_s must be positive)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda bw: aws_parse(aws_doc(bandwidth=bw)), id="aws"),
        pytest.param(lambda bw: parse_all(oci.Oci(), oci_doc(network=bw)), id="oci"),
        pytest.param(lambda bw: parse_all(gcp.Gcp(), gcp_docs(total=bw)), id="gcp"),
        pytest.param(lambda bw: parse_all(runpod.RunPod(), runpod_docs(speed=bw)), id="runpod"),
        pytest.param(lambda bw: parse_all(azure.Azure(), azure_docs(frontend=bw.split()[0])), id="azure"),
    ],
)
@given(figure=st.sampled_from(["0 Gbps", "0.0 Gbps", "0 x 0 Gbps", "up to 0 Gbps"]))
@example(figure="0 Gbps")
def test_regression_zero_bandwidth_accepted(parse, figure):
    strict(lambda: parse(figure))


# Was: an empty cell becomes a claim's quote: Claim() raises InvalidOffer ('claim has no quote')
# inside the parser (aws EFA cell, gcp networking-technology cell)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda cell: aws_parse(aws_doc(efa=cell)), id="aws-efa"),
        pytest.param(lambda cell: parse_all(gcp.Gcp(), gcp_docs(technology=cell)), id="gcp-technology"),
    ],
)
@given(cell=st.sampled_from(["", " ", "<br>"]))
@example(cell="")
def test_regression_empty_cell_becomes_a_quote(parse, cell):
    strict(lambda: parse(cell))


# Was: str.isdigit() accepts '²' (and other non-decimal digits) that int() rejects: ValueError
# escapes gcp.parse_machine_types, aws._network_claims and azure._frontend_claims
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda digit: parse_all(gcp.Gcp(), gcp_docs(count=digit)), id="gcp-gpu-count"),
        pytest.param(lambda digit: aws_parse(aws_doc(cards=digit)), id="aws-network-cards"),
        pytest.param(lambda digit: parse_all(azure.Azure(), azure_docs(nics=digit)), id="azure-nics"),
    ],
)
@given(digit=st.sampled_from(["²", "³", "¹", "8²", "①"]))
@example(digit="²")
def test_regression_isdigit_accepts_non_decimal_digits(parse, digit):
    strict(lambda: parse(digit))


def _gpu_info(size_mib: str, total_mib: str = "655360") -> str:
    return H100_GPU_INFO.replace("81920", size_mib).replace("655360", total_mib)


# Was: nebius.gpu_info lets TypeError out of ast.literal_eval (an unhashable dict key or set item),
# and a >308-digit SizeInMiB / TotalGpuMemoryInMiB raises OverflowError
@given(gpu_info=st.sampled_from(["{[]: 1}", "{[]}", "{{}: 0}", _gpu_info(NINES), _gpu_info("81920", NINES)]))
@example(gpu_info="{[]: 1}")
@example(gpu_info=_gpu_info(NINES))
def test_regression_nebius_gpu_info_errors_escape(gpu_info):
    strict(lambda: parse_all(nebius.Nebius(), nebius_docs(gpu_info=gpu_info)))


FRACTIONAL_SUMMARY = (
    "Each GPU within the VM is provided with its own dedicated 200 Gb/s NVIDIA HDR InfiniBand connection."
)


# Was: azure_prose._fabric_claims truncates a fractional GPU count (int(0.5) == 0): a per-GPU
# InfiniBand figure becomes 0 Gbit/s and 0 NICs per VM, and build_offer rejects the row
@given(count=st.sampled_from(["1/2", "0.5", "1/8", "0.25"]))
@example(count="1/2")
def test_regression_azure_fractional_gpu_count_zeroes_the_fabric(count):
    documents = azure_docs(count=count, memory="40", summary=FRACTIONAL_SUMMARY)  # 80 GB per GPU
    strict(lambda: parse_all(azure.Azure(), documents))


# Was: gbits_to_gbytes rounds to 12 significant digits while InstanceOffer requires gbits / 8 ==
# gbytes within an absolute 1e-6: build_offer rejects a stated figure like 8,000,000,009 Gbit/s
@given(gbits=st.integers(8 * 10**9, 10**12).filter(lambda n: n % 8))
@example(gbits=8_000_000_009)
def test_regression_huge_bandwidth_breaks_the_gbytes_invariant(gbits):
    strict(lambda: aws_parse(aws_doc(bandwidth=f"{gbits} Gigabit")))


GOOD_FACT = {
    "field": "gpu_count",
    "text": "8",
    "quote": "8x H100",
    "url": "https://example.test/specs",
    "read_on": date(2026, 12, 1),
}


def curated_toml(fact: dict[str, Any] | None = None, **top: Any) -> str:
    """A curated file of provider 'test' with one instance holding ``fact``, and ``top`` keys."""
    instance: dict[str, Any] = {"instance_type": "big.8x", "source_url": "https://example.test/specs"}
    if fact is not None:
        instance["fact"] = [fact]
    return toml_document({"provider": "test", "instance": [instance], **top})


TOML_VALUE = st.one_of(
    st.text(max_size=6), st.integers(), st.floats(allow_nan=False), st.booleans(), st.dates(), st.just([1])
)


@st.composite
def confused_curated(draw: st.DrawFn) -> str:
    """A valid file with one value replaced by a value of any type, or one fact key dropped."""
    fact = dict(GOOD_FACT)
    key = draw(st.sampled_from([*GOOD_FACT, "basis", "qualifiers", "context", "note", "form_factor"]))
    if draw(st.booleans()) and key in fact:
        del fact[key]
    else:
        fact[key] = draw(TOML_VALUE)
    if draw(st.booleans()):
        fact["field"] = draw(
            st.sampled_from(["gpu_memory_gb", "inter_node_gbits_per_s", "bogus_gbits_per_s"])
        )
    return curated_toml(fact)


# Was: parse_curated does not validate the values of a well-formed TOML file: an unknown basis, an
# unknown *_gbits_per_s field, a gpu_memory_gb fact without text, a bad read_on, an empty or
# non-text quote, or a non-table defaults/instance escape as ValueError, InvalidOffer, KeyError,
# TypeError or AttributeError
@given(text=confused_curated())
@example(text=curated_toml({**GOOD_FACT, "basis": "guessed"}))  # ValueError: not a valid Basis
@example(text=curated_toml({**GOOD_FACT, "field": "bogus_gbits_per_s", "text": "8 Gbps"}))  # InvalidOffer
@example(text=curated_toml({k: v for k, v in GOOD_FACT.items() if k != "text"} | {"field": "gpu_memory_gb"}))
@example(text=curated_toml({**GOOD_FACT, "read_on": "yesterday"}))  # ValueError: Invalid isoformat
@example(text=curated_toml({**GOOD_FACT, "quote": ""}))  # InvalidOffer: claim has no quote
@example(
    text=curated_toml({**GOOD_FACT, "quote": 5})
)  # AttributeError: 'int' object has no attribute 'strip'
@example(text=curated_toml(GOOD_FACT, defaults=1))  # TypeError: 'int' object is not a mapping
@example(text=curated_toml({**GOOD_FACT, "url": ""}))  # a claim citing no source
def test_regression_curated_values_not_validated(text):
    strict(lambda: curated_parse(text, "test"))


# Was: an include or series link that urllib cannot parse ('http://[' is an unclosed IPv6 host)
# raises ValueError from urljoin in azure.include_urls (so Azure.parse) and azure.series_urls
@given(href=st.sampled_from(["http://[", "https://[::1", "//[x", "http://[-"]))
@example(href="http://[")
def test_regression_azure_malformed_include_link(href):
    page = AZURE_FIXTURE[AZ_PAGE] + f"\n[!INCLUDE [x]({href}-summary.md)]\n"
    documents = DocumentSet([doc(AZ_PAGE, "azure", page), doc(AZ_SPECS, "azure", AZURE_FIXTURE[AZ_SPECS])])
    strict(lambda: parse_all(azure.Azure(), documents))
    strict(lambda: azure.series_urls([(azure.FAMILY_PAGES[1], f"[ND]({href}-series.md)")]))


# Was (found by `make fuzz`, 10,000 examples): a host-specifications row cut short ('| Accelerators |',
# no quantity or specs cell) raises IndexError in azure._gpu_claims when the size table's GPU count is
# empty, so the count is looked up in that row
@given(row=st.sampled_from([["Accelerators"], ["Accelerators", ""], ["Accelerators", "8 GPUs"]]))
@example(row=["Accelerators"])
def test_regression_azure_short_specs_row(row):
    offers = strict(lambda: parse_all(azure.Azure(), azure_docs(count="", accelerator_spec=row)))
    assert offers is not None and [o.instance_type for o in offers] == ["Standard_ND96isr_T9_v9"]
    count = next((c.value for c in offers[0].claims if c.field == "gpu_count"), None)
    assert count == (8.0 if row[1:] == ["8 GPUs"] else None)  # the size stays; its count only if printed


# Was (found by the offer-list property tests): a GpuInfo count or size past 1.8e308 as an integer
# ('count': 999...9) raises OverflowError from math.isfinite in skypilot._number
@given(digits=st.integers(309, 400))
@example(digits=309)
def test_regression_skypilot_gpu_info_huge_integer(digits):
    huge = "9" * digits
    cell = f"{{'gpus': [{{'name': 'H100', 'count': {huge}, 'memoryinfo': {{'sizeinmib': {huge}}}}}]}}"
    info = strict(lambda: skypilot.gpu_info(cell))
    assert info is not None and (info.count, info.size) == (None, None)
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
    text = f'{header}\ngpu-h100-sxm_8gpu-128vcpu-1600gb,H100,8,128,1600,23.60,eu-north1,"{cell}",\n'
    offers = strict(lambda: skypilot_parse(nebius.Nebius(), text))
    assert offers is not None and offers[0].instance_type == "gpu-h100-sxm_8gpu-128vcpu-1600gb"
