"""AWS's sample GPU-cluster health check (``aws-samples/awsome-distributed-training``,
``4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf``): one line per EC2
instance type, ``INSTANCE_TYPE|GPU_COUNT|EFA_COUNT|NVLINK_EXPECTED|EFA_PROVIDER``, the hardware counts
its scripts fail a node on.

Every figure is ``expected``: an EFA interface count per instance type (``nic_count``, with the GPU
count beside it), and whether NVLink between the GPUs is expected (``nvlink_status``: ``active`` or
``not expected``). It covers p5e, p5en and p6-b200, which the aws-ofi-nccl topology files lack.

Traps (tested on the real file): the section comment above g6 says "NVIDIA L40S Instances" although
g6 carries L4 GPUs (g6e has the L40S), so a comment is never read as a GPU model; a type with
``EFA_COUNT`` 0 (g6.xlarge) gives no count reading (a count is positive) but its NVLink line still
stands; the file ends without a newline.
"""

from __future__ import annotations

import re

from fetch.http import ProviderFetcher
from measure.common import Origin, measurement
from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from scrapers.base import Scraper

REPO = "https://raw.githubusercontent.com/aws-samples/awsome-distributed-training/main/"
PROFILES = REPO + "4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf"
TOOL = "AWS gpu-cluster-healthcheck instance profile"
FORMAT = "INSTANCE_TYPE|GPU_COUNT|EFA_COUNT|NVLINK_EXPECTED|EFA_PROVIDER"
_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
_FLAGS = {"true": True, "false": False}


class AwsHealth(Scraper):
    name = "awshealth"
    title = "AWS awsome-distributed-training GPU health-check profiles (expected EFA count, NVLink per type)"
    kind = "measurements"
    url_prefixes = (REPO + "4.validation_and_observability/2.gpu-cluster-healthcheck/",)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(PROFILES)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        return profile_readings(documents.text(PROFILES), PROFILES, self.name)


def profile_readings(text: str, url: str, source: str) -> list[Measurement]:
    """Per profile line, its EFA count and NVLink expectation. ParseError naming the line for a
    malformed one; LayoutError when the file declares another format or holds no profile."""
    if FORMAT not in text:
        raise LayoutError(f"instance-profiles.conf: the format line {FORMAT!r} is gone")
    readings: list[Measurement] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            readings.extend(_profile(number, line, url, source))
    if not readings:
        raise LayoutError("instance-profiles.conf: no instance profile line")
    return readings


def _profile(number: int, line: str, url: str, source: str) -> list[Measurement]:
    where = f"line {number}"
    cells = [cell.strip() for cell in line.strip().split("|")]
    if len(cells) != 5:
        raise ParseError(f"{where}: {len(cells)} fields, the format has 5 ({FORMAT})")
    instance_type, gpus_text, efa_text, nvlink_text, _provider = cells
    if not _TYPE.match(instance_type):
        raise ParseError(f"{where}: {instance_type!r} is not an EC2 instance type")
    gpus, efa = _count(gpus_text, where, "GPU_COUNT"), _count(efa_text, where, "EFA_COUNT")
    nvlink = _FLAGS.get(nvlink_text.lower())
    if nvlink is None:
        raise ParseError(f"{where}: NVLINK_EXPECTED {nvlink_text!r} is neither true nor false")
    origin = Origin(source, url, "expected", "aws", instance_type)
    found = []
    if efa > 0:
        found.append(
            measurement(
                origin,
                "nic_count",
                float(efa),
                locator=where,
                quote=line,
                tool=TOOL,
                gpus=gpus or None,
                notes=f"{efa} EFA interfaces expected on {gpus} GPUs (EFA_COUNT)",
            )
        )
    if gpus >= 2:
        found.append(
            measurement(
                origin,
                "nvlink_status",
                None,
                value_text="active" if nvlink else "not expected",
                locator=where,
                quote=line,
                tool=TOOL,
                gpus=gpus,
                notes=(
                    "NVLINK_EXPECTED true: the check expects the GPUs NVLink-joined"
                    if nvlink
                    else "NVLINK_EXPECTED false: the check expects no NVLink between the GPUs"
                ),
            )
        )
    return found


def _count(text: str, where: str, column: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 4:
        raise ParseError(f"{where}: {column} {text!r} is not a count")
    return int(text)
