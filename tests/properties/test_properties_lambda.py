"""Property tests of scrapers/documents/lambdalabs.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real documents mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.documents import lambdalabs
from tests.properties.property_checks import MARKS, catalog_parse, run_parser, skypilot_parse
from tests.properties.property_inputs import document_set, skypilot_csv

pytestmark = MARKS

HEADER = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "Region",
    "GpuInfo",
    "SpotPrice",
]
NAMES = st.sampled_from(
    ["gpu_8x_h100_sxm5", "gpu_1x_gh200", "gpu_8x_a100", "gpu_1x_h100_pcie", "cpu_4x_general"]
)


@given(text=skypilot_csv(HEADER, NAMES))
def test_lambda(text):
    run_parser(lambda: skypilot_parse(lambdalabs.LambdaCloud(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_lambda_real_mutated(real_document, data):
    documents, text = data.draw(
        document_set(
            {
                url: real_document(url)
                for url in [lambdalabs.VMS_URL, lambdalabs.CLUSTERS_URL, lambdalabs.ON_DEMAND_URL]
            },
            "lambda",
        )
    )
    run_parser(lambda: catalog_parse(lambdalabs.LambdaCloud(), documents), text)
