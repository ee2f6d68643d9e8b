"""MLPerf Training v5.1 system descriptions (``mlcommons/training_results_v5.1``,
``<Submitter>/systems/<system>.json``): what a cloud that submitted results says about the nodes it
ran them on, in its own words (``host_networking``, ``accelerator_interconnect``).

Every figure is ``expected``: the submitter describes the cluster it benchmarked, not every rentable
instance of the type, so its figures stand beside the provider's pages and never override them. Each
file is attributed to the catalog row it describes in ``SYSTEMS``, with how (Oracle's ``system_name``
is the shape; Nebius names none, so its preset is matched on GPU, GPUs per node and host memory);
a system no catalog row is (Lambda's GB300 rack, DataCrunch's Instant Cluster) stays unmatched.

What is read from the two fields:

- ``8x ConnectX-7 IB NDR 400Gb/s``: ``ib_port_gbits_per_s`` 400 x 8 ports (the fabric's figure);
- ``200Gb/s Ethernet NIC``: ``nic_gbits_per_s`` 200 on one port, the front-end network;
- ``ROCE2``, ``Infiniband``: ``node_fabric`` (text) roce / infiniband;
- ``NVLINK Gen5 1800 GB/s + NVSWITCH Gen4``: ``gpu_interconnect`` nvswitch and ``gpu_nvlink_gbytes_per_s``
  1800 per GPU; ``18x 5th Gen NVLink, 14.4 TB/s aggregated``: nvlink, and 14.4 TB/s over the node's
  GPUs when that is the GPU's datasheet figure per GPU (8 x 1,800 GB/s on Nebius's 8 B200s).

Traps, each tested on the real file: Lambda's GB300 node has 4 GPUs, yet its "14.4 TB/s aggregated"
is the 8-GPU HGX figure (4 x 1,800 is 7.2 TB/s): no per-GPU figure is read from it, and the reading
says why. DataCrunch's "100GbE InfiniBand" names an Ethernet rate on an InfiniBand fabric, which
contradicts itself: it is kept as an ``unreliable`` reading, never as a fabric or a figure. "Data
bandwidth for GPU-PCIe: 504 GB/s; PCIe-NIC: 500 GB/s" (Oracle, Lambda) are per-node PCIe sums whose
direction is unsaid: not read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from fetch.http import ProviderFetcher
from measure.common import Origin, measurement
from normalize.errors import LayoutError, ParseError
from normalize.gpus import GpuSpec, identify_gpu
from normalize.units import GBIT_PER_S, GBYTE_PER_S, Quantity, parse_bandwidth
from normalize.vocab import Fabric, fabric_from_text
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from scrapers.base import Scraper

REPO = "https://raw.githubusercontent.com/mlcommons/training_results_v5.1/main/"
TOOL = "MLPerf Training v5.1 system description"


@dataclass(frozen=True)
class System:
    """One system description and the catalog row it describes (None: no row is that system)."""

    provider: str
    instance_type: str | None
    why: str


SYSTEMS: dict[str, System] = {
    REPO + "Oracle/systems/2xBM.GPU.B200.8.json": System(
        "oci", "BM.GPU.B200.8", 'its system_name is the shape: "BM.GPU.B200.8" (2 nodes)'
    ),
    REPO + "Nebius/systems/nebius_b200_n2.json": System(
        "nebius",
        "gpu-b200-sxm_8gpu-160vcpu-1792gb",
        "names no preset; matched on 8 B200-SXM-180GB per node and 1.8 TB host memory (preset 1792gb)",
    ),
    REPO + "Nebius/systems/nebius_h200_n64.json": System(
        "nebius",
        "gpu-h200-sxm_8gpu-128vcpu-1600gb",
        "names no preset; matched on 8 H200-SXM-141GB per node, 1.6 TB host memory (preset 1600gb) "
        "and 2 x 32 cores, 128 vCPUs",
    ),
    REPO + "Lambda/systems/gb300_n18_ngc25.04_nemo.json": System(
        "lambda", None, "an 18-node GB300 NVL72 rack: no Lambda offer list in the catalog names a GB300 type"
    ),
    REPO + "Datacrunch/systems/b200_8x8_ngc25.09.json": System(
        "verda",
        None,
        "an 8-node Instant Cluster (DataCrunch is now Verda): not the 8B200.240V VM of Verda's offer list",
    ),
}
_PORTS = re.compile(r"^(?P<count>\d{1,3})\s*x\s+(?P<what>.*)$", re.IGNORECASE)
_ROCE = re.compile(r"\bRoCE(?:v?2)?\b", re.IGNORECASE)
_GBE = re.compile(r"\d\s*GbE\b", re.IGNORECASE)
_PCIE_SUM = re.compile(r"data bandwidth|pcie", re.IGNORECASE)
_AGGREGATE = re.compile(r"aggregat", re.IGNORECASE)


class MlPerf(Scraper):
    name = "mlperf"
    title = "MLPerf Training v5.1 system descriptions (a cloud's own words on the nodes it benchmarked)"
    kind = "measurements"
    url_prefixes = (REPO,)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get_all(list(SYSTEMS), required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings = []
        for url, system in SYSTEMS.items():
            text = documents.optional_text(url)
            if text is not None:
                readings.extend(system_readings(text, url, system, self.name))
        if not readings:
            raise LayoutError("no MLPerf system description gave a reading")
        return readings


def system_readings(text: str, url: str, system: System, source: str) -> list[Measurement]:
    """The networking and interconnect one system description states. ParseError when it is not a
    system description."""
    try:
        fields = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"line 1: not a system description: {exc}") from None
    if not isinstance(fields, dict) or not isinstance(fields.get("system_name"), str):
        raise ParseError("line 1: no system_name: not an MLPerf system description")
    origin = Origin(source, url, "expected", system.provider, system.instance_type)
    gpus = _count(fields.get("accelerators_per_node"))
    matched = f"{fields['system_name']!r}: {system.why}"
    readings = _networking(text, fields, origin, matched)
    readings += _interconnect(text, fields, origin, gpus, matched)
    return readings


def _field_line(text: str, key: str) -> tuple[str, str]:
    """(locator, the source's whole line) for a top-level field."""
    at = text.find(f'"{key}"')
    if at < 0:
        raise ParseError(f"{key}: not found in the text")
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    line = text[start : len(text) if end < 0 else end].rstrip("\r")
    return f"line {text.count(chr(10), 0, at) + 1} ({key})", line


@dataclass(frozen=True)
class _Field:
    """Where one field of a description stands: its readings share the line as locator and quote."""

    origin: Origin
    locator: str
    quote: str
    gpus: int | None

    def read(
        self,
        metric: str,
        value: float | None,
        *,
        notes: str,
        value_text: str | None = None,
        port_count: int | None = None,
        direction: str | None = None,
    ) -> Measurement:
        return measurement(
            self.origin,
            metric,
            value,
            locator=self.locator,
            quote=self.quote,
            tool=TOOL,
            gpus=self.gpus,
            notes=notes,
            value_text=value_text,
            port_count=port_count,
            direction=direction,
        )


def _networking(text: str, fields: dict, origin: Origin, matched: str) -> list[Measurement]:
    value = fields.get("host_networking")
    if not isinstance(value, str) or not value.strip():
        return []
    locator, quote = _field_line(text, "host_networking")
    at = _Field(origin, locator, quote, None)
    readings = []
    for segment in (s.strip() for s in re.split(r"[+;]", value)):
        if not segment or _PCIE_SUM.search(segment):
            continue  # per-node PCIe sums, direction unsaid
        fabric = Fabric.ROCE if _ROCE.search(segment) else fabric_from_text(segment)
        if fabric == Fabric.INFINIBAND and _GBE.search(segment):
            readings.append(
                at.read(
                    "node_fabric",
                    None,
                    value_text="unreliable",
                    notes=f"{segment!r} names an Ethernet rate (GbE) on InfiniBand: self-contradictory, "
                    f"read as neither a fabric nor a figure; {matched}",
                )
            )
            continue
        rate = _rate_gbits(segment)
        ports = _PORTS.match(segment)
        if fabric in (Fabric.INFINIBAND, Fabric.ROCE) and rate is not None:
            count = int(ports.group("count")) if ports else 1
            readings.append(
                at.read(
                    "ib_port_gbits_per_s",
                    rate,
                    port_count=count,
                    notes=f"{count} x {rate:g} Gbit/s {fabric.value} ports ({segment!r}); {matched}",
                )
            )
        elif fabric == Fabric.ETHERNET and rate is not None:
            readings.append(
                at.read(
                    "nic_gbits_per_s",
                    rate,
                    port_count=int(ports.group("count")) if ports else 1,
                    notes=f"front-end NIC: {segment!r}, beside the GPU fabric; {matched}",
                )
            )
        if fabric in (Fabric.INFINIBAND, Fabric.ROCE):
            readings.append(
                at.read(
                    "node_fabric",
                    None,
                    value_text=fabric.value,
                    notes=f"{segment!r} names {fabric.value}; {matched}",
                )
            )
    return readings


def _interconnect(
    text: str, fields: dict, origin: Origin, gpus: int | None, matched: str
) -> list[Measurement]:
    value = fields.get("accelerator_interconnect")
    if not isinstance(value, str) or not value.strip():
        return []
    locator, quote = _field_line(text, "accelerator_interconnect")
    at = _Field(origin, locator, quote, gpus)
    switched = "nvswitch" in value.lower()
    if not switched and "nvlink" not in value.lower():
        return []
    readings = [
        at.read(
            "gpu_interconnect",
            None,
            value_text="nvswitch" if switched else "nvlink",
            notes=f"{value!r} names {'NVSwitch' if switched else 'NVLink, no switch'}; {matched}",
        )
    ]
    per_gpu, why = _per_gpu_gbytes(value, fields, gpus)
    if per_gpu is not None:
        readings.append(
            at.read("gpu_nvlink_gbytes_per_s", per_gpu, direction="two-way", notes=f"{why}; {matched}")
        )
    elif why:
        readings[0] = replace(readings[0], notes=f"{readings[0].notes}; {why}")
    return readings


def _per_gpu_gbytes(value: str, fields: dict, gpus: int | None) -> tuple[float | None, str]:
    """A per-GPU NVLink figure, or None and why not. An aggregate is divided by the node's GPUs only
    when that gives the GPU's datasheet figure: otherwise it is some other set of GPUs' total."""
    try:
        figure = parse_bandwidth(value)
    except ParseError:
        return None, ""
    gbytes = Quantity(figure.magnitude, figure.unit).to(GBYTE_PER_S).magnitude
    said = value[figure.span[0] : figure.span[1]]
    if not _AGGREGATE.search(value):
        return gbytes, f"{said} per GPU as stated (direction unsaid; NVIDIA quotes both directions together)"
    spec = _spec(fields)
    if not gpus or spec is None or spec.link_gbytes_per_s is None:
        return None, f"{said} aggregated over GPUs it does not name: no per-GPU figure read"
    share = float(f"{gbytes / gpus:.12g}")
    if abs(share - spec.link_gbytes_per_s) <= 1e-6 * spec.link_gbytes_per_s:
        return share, f"{said} aggregated over the node's {gpus} GPUs = {share:g} GB/s per GPU"
    groups = float(f"{gbytes / spec.link_gbytes_per_s:.12g}")
    return None, (
        f"{said} aggregated is {groups:g} x the {spec.id}'s {spec.link_gbytes_per_s:g} GB/s, not "
        f"{gpus} x (the node has {gpus} GPUs): a figure for another node size, no per-GPU figure read"
    )


def _spec(fields: dict) -> GpuSpec | None:
    name = fields.get("accelerator_model_name")
    if not isinstance(name, str):
        return None
    try:
        return identify_gpu(name).spec
    except ParseError:
        return None


def _rate_gbits(segment: str) -> float | None:
    try:
        figure = parse_bandwidth(segment)
    except ParseError:
        return None
    return float(f"{Quantity(figure.magnitude, figure.unit).to(GBIT_PER_S).magnitude:.12g}")


def _count(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isascii() and text.isdigit() and 0 < len(text) <= 3 else None
