"""Property tests of scrapers/offer_lists/digitalocean.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import digitalocean
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
NAMES = st.sampled_from(["gpu-h100x8-640gb", "g-2vcpu-8gb"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_digitalocean(text):
    run_parser(lambda: skypilot_parse(digitalocean.DigitalOcean(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_digitalocean_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(digitalocean.VMS_URL)))
    run_parser(lambda: skypilot_parse(digitalocean.DigitalOcean(), text), text)
