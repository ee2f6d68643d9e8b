"""Property tests of scrapers/offer_lists/primeintellect.py: its catalog CSV (columns in the real file's
order)
with random lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import primeintellect
from tests.property_checks import MARKS, run_parser, skypilot_parse
from tests.property_inputs import mutated, skypilot_csv

pytestmark = MARKS

HEADER = [
    "InstanceType",
    "UpstreamCloudId",
    "vCPUs",
    "MemoryGiB",
    "AcceleratorName",
    "AcceleratorCount",
    "GpuInfo",
    "Region",
    "AvailabilityZone",
    "Price",
    "SpotPrice",
]
NAMES = st.sampled_from(
    [
        "lambdalabs__8xH100_80GB__208__1800",
        "datacrunch__1xH200_141GB__44__182__SPOT",
        "hyperstack__8xA100_80GB__252__1920__NVLINK",
        "latitude__CPU_NODE__4__32",
    ]
)


@given(text=skypilot_csv(HEADER, NAMES))
def test_primeintellect(text):
    run_parser(lambda: skypilot_parse(primeintellect.PrimeIntellect(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_primeintellect_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(primeintellect.VMS_URL)))
    run_parser(lambda: skypilot_parse(primeintellect.PrimeIntellect(), text), text)
