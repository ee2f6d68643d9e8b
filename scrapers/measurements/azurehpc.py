"""Microsoft's own expectations per Azure VM size: the AzureHPC Node Health Check configurations
(``Azure/azurehpc-health-checks/main/conf/<size>.conf``) and the NCCL topology files of the HPC images
(``Azure/azhpc-images/master/topology``). Every figure is ``expected``: what a healthy VM must reach.

From a conf: ``check_hw_ib <rate>`` per InfiniBand port (Gbit/s, NHC's unit), ``check_nccl_allreduce
<GB/s> <repeats> <size>`` (NCCL all_reduce bus bandwidth on one VM: its NVLink),
``check_nccl_allreduce_ib_loopback`` (the same with NVLink and shared memory off: through the NICs),
``check_ib_bw_gdr`` / ``check_ib_bw_non_gdr <rate>`` (ib_write_bw per IB device, with and without
GPUDirect) and, on NVIDIA sizes, ``check_gpu_bw <h2d/d2h GB/s> [<p2p GB/s>]`` (nvbandwidth
host_to_device / device_to_host and device_to_device_memcpy_read_ce, every GPU and pair; the second
argument is checked only where NVLink is up). The azurehpc-health-checks README prints the IB
figures as "GB/s" (check_ib_bw_gdr "380 GB/s" on a 400 Gbit/s port): the trap is in the README only;
the checks compare ib_write_bw's --report_gbits output, so they are Gbit/s and stored as such.

GitHub's raw host has no directory listing, so the files are listed here; each maps to the VM size it
is named after. ``ncv4-graph.xml`` is an NCCL graph (search results, no NIC or GPU inventory) and is
not read. HB/HC/HX sizes are CPU-only HPC VMs: kept, unmatched to the GPU catalog.
"""

from __future__ import annotations

import logging
from functools import partial

from fetch.http import ProviderFetcher
from measure.common import Origin, binary_size_bytes, measurement
from normalize.errors import LayoutError, ParseError
from normalize.units import to_number
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.measurements import nhc
from scrapers.measurements.nccl_topology import topology_readings

log = logging.getLogger(__name__)

RAW = "https://raw.githubusercontent.com/Azure/"
CONF = RAW + "azurehpc-health-checks/main/conf/"
GB200_CONF = (
    RAW + "azurehpc-health-checks/215c6445753ba08f3000b5b4e0ae4b5af0e91783/conf/nd128isr_ndr_gb200_v6.conf"
)
TOPOLOGY = RAW + "azhpc-images/master/topology/"
# conf file stem → the Azure VM size it configures (exact catalog spelling).
# fmt: off
SIZES = {
    "hb120-16rs_v3": "Standard_HB120-16rs_v3", "hb120-32rs_v3": "Standard_HB120-32rs_v3",
    "hb120-64rs_v3": "Standard_HB120-64rs_v3", "hb120-96rs_v3": "Standard_HB120-96rs_v3",
    "hb120rs_v2": "Standard_HB120rs_v2", "hb120rs_v3": "Standard_HB120rs_v3",
    "hb176-144rs_v4": "Standard_HB176-144rs_v4", "hb176-24rs_v4": "Standard_HB176-24rs_v4",
    "hb176-48rs_v4": "Standard_HB176-48rs_v4", "hb176-96rs_v4": "Standard_HB176-96rs_v4",
    "hb176rs_v4": "Standard_HB176rs_v4", "hc44-16rs": "Standard_HC44-16rs", "hc44-32rs": "Standard_HC44-32rs",
    "hc44rs": "Standard_HC44rs", "hx176-144rs": "Standard_HX176-144rs", "hx176-24rs": "Standard_HX176-24rs",
    "hx176-48rs": "Standard_HX176-48rs", "hx176-96rs": "Standard_HX176-96rs", "hx176rs": "Standard_HX176rs",
    "nc12s_v3": "Standard_NC12s_v3", "nc24ads_a100_v4": "Standard_NC24ads_A100_v4",
    "nc24rs_v3": "Standard_NC24rs_v3", "nc24s_v3": "Standard_NC24s_v3",
    "nc40ads_h100_v5": "Standard_NC40ads_H100_v5", "nc48ads_a100_v4": "Standard_NC48ads_A100_v4",
    "nc6s_v3": "Standard_NC6s_v3", "nc80adis_h100_v5": "Standard_NC80adis_H100_v5",
    "nc96ads_a100_v4": "Standard_NC96ads_A100_v4", "nd40rs_v2": "Standard_ND40rs_v2",
    "nd96amsr_a100_v4": "Standard_ND96amsr_A100_v4", "nd96asr_mi200_v4": "Standard_ND96asr_MI200_v4",
    "nd96asr_v4": "Standard_ND96asr_v4", "nd96is_h100_v5": "Standard_ND96is_H100_v5",
    "nd96is_h200_v5": "Standard_ND96is_H200_v5", "nd96isr_h100_v5": "Standard_ND96isr_H100_v5",
    "nd96isr_h200_v5": "Standard_ND96isr_H200_v5", "nd96isr_mi300x_v5": "Standard_ND96isr_MI300X_v5",
    "nd96isrf_h200_v5": "Standard_ND96isrf_H200_v5",
    "nd128isr_ndr_gb200_v6": "Standard_ND128isr_NDR_GB200_v6",
}
# fmt: on
CONFS = {
    **{CONF + stem + ".conf": size for stem, size in SIZES.items() if stem != "nd128isr_ndr_gb200_v6"},
    GB200_CONF: SIZES["nd128isr_ndr_gb200_v6"],
}
# NCCL topology file → the VM sizes Microsoft's health checks use it for (check_nccl_allreduce's
# topofile argument: ndv4 on nd96asr_v4 and nd96amsr_a100_v4, ndv5 on the H100/H200 v5 sizes).
TOPOLOGIES = {
    TOPOLOGY + "ndv2-topo.xml": ("Standard_ND40rs_v2",),
    TOPOLOGY + "ndv4-topo.xml": ("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"),
    TOPOLOGY + "ndv5-topo.xml": ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"),
    TOPOLOGY + "ncv4-topo.xml": ("Standard_NC96ads_A100_v4",),
}


class AzureHpc(Scraper):
    name = "azurehpc"
    title = "Azure HPC health checks and NCCL topology files (expected bandwidth per VM size)"
    kind = "measurements"
    url_prefixes = (RAW + "azurehpc-health-checks/", TOPOLOGY)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get_all([*CONFS, *TOPOLOGIES], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings: list[Measurement] = []
        for url, size in CONFS.items():
            text = documents.optional_text(url)
            if text is not None:
                readings.extend(conf_readings(text, self._origin(url, size)))
        for url, sizes in TOPOLOGIES.items():
            text = documents.optional_text(url)
            if text is None:
                continue
            for size in sizes:
                readings.extend(
                    topology_readings(text, self._origin(url, size), tool="azhpc-images topology")
                )
        if not readings:
            raise LayoutError("no Azure health-check conf or topology file gave an expected figure")
        return readings

    def _origin(self, url: str, size: str) -> Origin:
        return Origin(self.name, url, "expected", "azure", size)


def conf_readings(text: str, origin: Origin) -> list[Measurement]:
    """The expected figures of one NHC conf (ParseError naming the line of a malformed check)."""
    found = nhc.checks(text)
    count = nhc.first(found, "check_gpu_count")
    gpus = int(to_number(count.args[0])) if count and count.args else None
    rocm = bool(count and "rocm" in count.args)
    readings = [_ports(origin, group) for group in nhc.port_groups(found, text)]
    for check in found:
        reader = _READERS.get(check.name)
        if reader is not None and not (rocm and check.name == "check_gpu_bw"):
            readings.extend(reader(origin, check, gpus))
    return readings


def _ports(origin: Origin, group: nhc.PortGroup) -> Measurement:
    count = len(group.checks)
    notes = f"{count} InfiniBand ports must be up at {group.gbits_per_s:g} Gbit/s each"
    if group.frontend:
        notes = f"front-end NIC (mlx5_an, accelerated networking), {group.gbits_per_s:g} Gbit/s; no RDMA"
    return measurement(
        origin,
        "nic_gbits_per_s" if group.frontend else "ib_port_gbits_per_s",
        group.gbits_per_s,
        locator=group.locator,
        quote=group.quote,
        tool="AzureHPC NHC check_hw_ib",
        port_count=count,
        notes=notes,
    )


def _value(check: nhc.Check, index: int = 0) -> float:
    if len(check.args) <= index:
        raise ParseError(f"line {check.number}: {check.name} without a figure")
    try:
        return to_number(check.args[index])
    except ParseError:
        raise ParseError(
            f"line {check.number}: {check.name} figure {check.args[index]!r} is not a number"
        ) from None


def _size(check: nhc.Check) -> int | None:
    sizes = [a for a in check.args[1:] if a[:1].isdigit() and a[-1:] in "KMGT"]
    return binary_size_bytes(sizes[0], f"line {check.number}") if sizes else None


def _allreduce(origin: Origin, check: nhc.Check, gpus: int | None) -> list[Measurement]:
    loopback = check.name.endswith("_ib_loopback")
    how = (
        "all_reduce on one VM, NCCL_P2P_DISABLE and NCCL_SHM_DISABLE: every byte loops through the IB NICs"
        if loopback
        else "all_reduce_perf on one VM, one rank per GPU (its NVLink): the 'Avg bus bandwidth' must reach it"
    )
    if check.name == "check_rccl_allreduce":  # AMD's NCCL (RCCL): the same test over Infinity Fabric
        how = "rccl-tests all_reduce_perf on one VM, one rank per GPU (Infinity Fabric): 'Avg bus bandwidth'"
    metric = (
        "nccl_allreduce_ib_loopback_busbw_gbytes_per_s" if loopback else "nccl_allreduce_busbw_gbytes_per_s"
    )
    return [
        measurement(
            origin,
            metric,
            _value(check),
            locator=f"line {check.number}",
            quote=check.text,
            tool=f"AzureHPC NHC {check.name}",
            nodes=1,
            gpus=gpus,
            message_bytes=_size(check),
            notes=f"{how}; GB/s (nccl-tests' unit)",
        )
    ]


def _ib_write(origin: Origin, check: nhc.Check, gpus: int | None) -> list[Measurement]:
    gdr = check.name == "check_ib_bw_gdr"
    return [
        measurement(
            origin,
            "ib_write_gbits_per_s",
            _value(check),
            locator=f"line {check.number}",
            quote=check.text,
            tool=f"AzureHPC NHC {check.name}",
            port_count=1,
            notes=(
                "ib_write_bw per IB device, GPU memory (GPUDirect RDMA)"
                if gdr
                else "ib_write_bw per IB device, host memory"
            )
            + "; Gbit/s (ib_write_bw --report_gbits): the README's 'GB/s' label for it is wrong",
        )
    ]


def _gpu_bw(origin: Origin, check: nhc.Check, gpus: int | None) -> list[Measurement]:
    at_check = partial(
        measurement,
        origin,
        locator=f"line {check.number}",
        quote=check.text,
        tool="AzureHPC NHC check_gpu_bw",
        gpus=gpus,
    )
    h2d = _value(check)
    readings = [
        at_check(metric, h2d, direction="one-way", notes=f"nvbandwidth {test} on every GPU")
        for metric, test in (
            ("host_to_gpu_gbytes_per_s", "host_to_device_memcpy_ce"),
            ("gpu_to_host_gbytes_per_s", "device_to_host_memcpy_ce"),
        )
    ]
    if len(check.args) > 1 and (gpus is None or gpus >= 2):  # one GPU has no pair to copy between
        readings.append(
            at_check(
                "gpu_to_gpu_gbytes_per_s",
                _value(check, 1),
                direction="one-way",
                notes="nvbandwidth device_to_device_memcpy_read_ce, every GPU pair (if NVLink is up)",
            )
        )
    return readings


def _nvlink_status(origin: Origin, check: nhc.Check, gpus: int | None) -> list[Measurement]:
    """``check_nvlink_status`` on a size with two or more GPUs: the check expects their NVLinks up
    (on one GPU it checks nothing between GPUs, and gives no reading)."""
    if gpus is None or gpus < 2:
        return []
    reading = measurement(
        origin,
        "nvlink_status",
        None,
        value_text="active",
        locator=f"line {check.number}",
        quote=check.text,
        tool="AzureHPC NHC check_nvlink_status",
        gpus=gpus,
        notes="the check fails a node whose GPUs' NVLinks are not all active: the GPUs are NVLink-joined",
    )
    return [reading]


_READERS = {
    "check_nccl_allreduce": _allreduce,
    "check_nccl_allreduce_ib_loopback": _allreduce,
    "check_rccl_allreduce": _allreduce,
    "check_ib_bw_gdr": _ib_write,
    "check_ib_bw_non_gdr": _ib_write,
    "check_gpu_bw": _gpu_bw,
    "check_nvlink_status": _nvlink_status,
}
