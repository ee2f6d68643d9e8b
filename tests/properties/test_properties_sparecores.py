"""Property tests of scrapers/measurements/sparecores.py: nvbandwidth JSON and meta.json, random and
mutated."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.sparecores import SpareCores, meta_url, stdout_url
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
RUN = "gcp/a3-highgpu-8g"
CELL = st.one_of(NUMBER, st.just("N/A"), st.none(), st.integers(), st.floats())
CASE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(
            [
                "host_to_device_memcpy_ce",
                "device_to_device_memcpy_read_ce",
                "device_to_device_bidirectional_memcpy_read_sm",
                "x",
            ]
        ),
        "status": st.sampled_from(["Passed", "Waived", "Failed"]),
        "bandwidth_description": st.sampled_from(
            ["memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "Total bandwidth (GB/s)", ""]
        ),
        "bandwidth_matrix": st.lists(st.lists(CELL, max_size=3), max_size=9),
    }
)
STDOUT = st.lists(CASE, max_size=4).map(
    lambda cases: json.dumps({"nvbandwidth": {"version": "v0.8", "testcases": cases}})
)
META = st.one_of(st.just('{"outputs": ["stdout"], "version": "v0.5", "start": "2024-09-26T06:33:44"}'), TEXT)


def documents(stdout: str, meta: str) -> DocumentSet:
    return DocumentSet([doc(meta_url(RUN), "sparecores", meta), doc(stdout_url(RUN), "sparecores", stdout)])


@given(stdout=st.one_of(STDOUT, TEXT), meta=META)
def test_sparecores(stdout, meta):
    check_source(SpareCores(), documents(stdout, meta), stdout)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sparecores_real_mutated(real_document, data):
    stdout = data.draw(mutated(real_document(stdout_url(RUN))))
    check_source(SpareCores(), documents(stdout, real_document(meta_url(RUN))), stdout)


SMI_RUN, SMI = "gcp/a3-megagpu-8g", "nvidia_smi"
SMI_FIELD = st.sampled_from(
    [
        "<product_name>{}</product_name>",
        "<pci><pci_gpu_link_info><pcie_gen><max_link_gen>{}</max_link_gen></pcie_gen>"
        "<link_widths><max_link_width>{}x</max_link_width></link_widths></pci_gpu_link_info></pci>",
        "<fabric><state>{}</state><status>{}</status></fabric>",
    ]
)
SMI_GPU = st.tuples(
    st.lists(st.tuples(SMI_FIELD, NUMBER, TEXT), max_size=3), st.sampled_from(["0", "1:2"])
).map(
    lambda t: (
        f'<gpu id="{t[1]}">\n'
        + "\n".join(f.format(n, n).replace("{}", "") for f, n, _ in t[0]).replace("{}", "")
        + "\n</gpu>"
    )
)
SMI_XML = st.tuples(st.lists(SMI_GPU, max_size=3), NUMBER).map(
    lambda t: (
        f'<?xml version="1.0" ?>\n<nvidia_smi_log>\n<timestamp>{t[1]}</timestamp>\n'
        + "\n".join(t[0])
        + "\n</nvidia_smi_log>"
    )
)


def smi_documents(stdout: str, meta: str) -> DocumentSet:
    return DocumentSet(
        [doc(meta_url(SMI_RUN, SMI), "sparecores", meta), doc(stdout_url(SMI_RUN, SMI), "sparecores", stdout)]
    )


@given(stdout=st.one_of(SMI_XML, TEXT), meta=META)
def test_sparecores_nvidia_smi(stdout, meta):
    check_source(SpareCores(), smi_documents(stdout, meta), stdout)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sparecores_nvidia_smi_real_mutated(real_document, data):
    run = data.draw(st.sampled_from(["gcp/a3-megagpu-8g", "ovh/h100-760", "aws/p4d.24xlarge"]))
    stdout = data.draw(mutated(real_document(stdout_url(run, SMI))))
    meta = real_document(meta_url(run, SMI))
    documents = DocumentSet(
        [doc(meta_url(run, SMI), "sparecores", meta), doc(stdout_url(run, SMI), "sparecores", stdout)]
    )
    check_source(SpareCores(), documents, stdout)
