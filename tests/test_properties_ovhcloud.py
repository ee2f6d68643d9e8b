"""Property tests of scrapers/offer_lists/ovhcloud.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import ovhcloud
from tests.property_checks import MARKS, run_parser, skypilot_parse
from tests.property_inputs import mutated, skypilot_csv

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
    "AvailabilityZone",
]
NAMES = st.sampled_from(["a100-180", "t2-le-90"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_ovhcloud(text):
    run_parser(lambda: skypilot_parse(ovhcloud.OvhCloud(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_ovhcloud_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(ovhcloud.VMS_URL)))
    run_parser(lambda: skypilot_parse(ovhcloud.OvhCloud(), text), text)
