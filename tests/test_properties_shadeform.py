"""Property tests of scrapers/offer_lists/shadeform.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import shadeform
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
]
NAMES = st.sampled_from(["lambdalabs_H100-sxm5x8", "crusoe_A100-80G-sxm4x8", "denvr_Gaudi2x8", "vultr_A16x2"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_shadeform(text):
    run_parser(lambda: skypilot_parse(shadeform.Shadeform(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_shadeform_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(shadeform.VMS_URL)))
    run_parser(lambda: skypilot_parse(shadeform.Shadeform(), text), text)
