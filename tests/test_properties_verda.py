"""Property tests of scrapers/offer_lists/verda.py: its catalog CSV (columns in the real file's order)
with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import verda
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
    "Price",
    "SpotPrice",
]
NAMES = st.sampled_from(["8B200.240V", "1H200.141S.44V", "CPU.4V.16G"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_verda(text):
    run_parser(lambda: skypilot_parse(verda.Verda(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_verda_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(verda.VMS_URL)))
    run_parser(lambda: skypilot_parse(verda.Verda(), text), text)
