"""Measurements: what an instance is expected to deliver (the provider's own health checks and
topology files) and what it was measured to deliver (tool outputs), kept apart from claims.

Every metric carries its unit in its name, like the catalog's columns. ``METRICS`` is the one list
of them; a record with any other metric is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from normalize.errors import InvalidOffer
from records.frozen import direct_init

KINDS = ("expected", "measured")
#: Measurements imported by a user (``catalog measurements import``) carry this source.
USER_SOURCE = "user"
DIRECTIONS = ("one-way", "two-way")

#: metric → what it is. Numeric metrics are in the unit their name ends with; ``_count`` metrics are
#: counts; ``value_text`` metrics (no unit) carry a word, e.g. the NCCL transport seen.
METRICS: dict[str, str] = {
    "gpu_to_gpu_gbytes_per_s": (
        "GPU-to-GPU copy bandwidth between two GPUs: one-way (one direction copies) or two-way (both "
        "directions copy at once; the total of both)"
    ),
    "gpu_to_gpu_each_way_gbytes_per_s": (
        "GPU-to-GPU bandwidth of ONE direction while both directions copy (nvbandwidth v0.5 reports its "
        "bidirectional tests this way; v0.8 reports the total, stored as gpu_to_gpu two-way)"
    ),
    "host_to_gpu_gbytes_per_s": (
        "host memory to GPU copy bandwidth: one-way (only this direction copies) or two-way (this "
        "direction's bandwidth while both directions copy)"
    ),
    "gpu_to_host_gbytes_per_s": "GPU to host memory copy bandwidth, one-way or two-way as host_to_gpu",
    "nccl_allreduce_busbw_gbytes_per_s": "nccl-tests all_reduce bus bandwidth (nodes, gpus, message_bytes)",
    "nccl_allgather_busbw_gbytes_per_s": "nccl-tests all_gather bus bandwidth",
    "nccl_reducescatter_busbw_gbytes_per_s": "nccl-tests reduce_scatter bus bandwidth",
    "nccl_alltoall_busbw_gbytes_per_s": "nccl-tests alltoall bus bandwidth",
    "nccl_sendrecv_busbw_gbytes_per_s": "nccl-tests sendrecv bus bandwidth",
    "nccl_allreduce_ib_loopback_busbw_gbytes_per_s": (
        "all_reduce bus bandwidth on one node with NVLink and shared memory disabled, so every byte "
        "loops through the InfiniBand NICs (Azure's check_nccl_allreduce_ib_loopback)"
    ),
    "ib_port_gbits_per_s": "InfiniBand / RDMA (incl. EFA) port rate, per port (port_count says how many)",
    "ib_write_gbits_per_s": "ib_write_bw average bandwidth between two ports",
    "ib_read_gbits_per_s": "ib_read_bw average bandwidth between two ports",
    "ib_send_gbits_per_s": "ib_send_bw average bandwidth between two ports",
    "nic_gbits_per_s": "network interface link speed, per NIC (port_count says how many), no RDMA implied",
    "nic_count": "RDMA / EFA network devices of the GPU fabric per node (a count)",
    "nvlink_gbytes_per_s": "one NVLink's rate per direction as nvidia-smi reports it (port_count = links)",
    "nvlink_count": "NVLinks between one GPU pair (nvidia-smi topo -m NV#)",
    "nvlink_status": "the NVLink state nvidia-smi reports when it gives no rate (value_text, e.g. inactive)",
    "nccl_transport": "the inter-node transport NCCL used (value_text: NET/IB, NET/Socket, NET/OFI ...)",
    "nccl_intra_node_transport": "the transport NCCL used between GPUs of one node (value_text: P2P/IPC ...)",
    "gpu_link": "the link between a GPU pair (value_text: NV18, PIX, PHB, NODE, SYS ...)",
    "gpu_p2p_status": "peer-to-peer capability of a GPU pair (nvidia-smi topo -p2p; value_text: OK, CNS ...)",
    "gpu_product_name": "the product name the GPUs report (nvidia-smi -q; value_text; gpus: how many)",
    "gpu_fabric_state": "NVLink-fabric registration of the GPUs (nvidia-smi -q; value_text: Completed ...)",
    "node_fabric": "the node fabric a system description names (value_text: infiniband, roce, unreliable)",
    "gpu_interconnect": "the scale-up link a system description names (value_text: nvswitch, nvlink)",
    "gpu_nvlink_gbytes_per_s": "a GPU's NVLink bandwidth a system description states (per GPU, two-way)",
    "pcie_link_gbytes_per_s": (
        "the host-GPU PCIe link's nominal rate per GPU, both directions together, from the link generation "
        "and width the GPU reports (nvidia-smi -q: Gen4 x16 = 64)"
    ),
}
TEXT_METRICS = frozenset(
    {
        "nccl_transport",
        "nccl_intra_node_transport",
        "gpu_link",
        "gpu_p2p_status",
        "nvlink_status",
        "gpu_product_name",
        "gpu_fabric_state",
        "node_fabric",
        "gpu_interconnect",
    }
)
#: The collective each nccl-tests metric measures (the binary is ``<collective>_perf``).
NCCL_METRICS = {
    "all_reduce": "nccl_allreduce_busbw_gbytes_per_s",
    "all_gather": "nccl_allgather_busbw_gbytes_per_s",
    "reduce_scatter": "nccl_reducescatter_busbw_gbytes_per_s",
    "alltoall": "nccl_alltoall_busbw_gbytes_per_s",
    "sendrecv": "nccl_sendrecv_busbw_gbytes_per_s",
}
#: Notes of an expected figure that holds only under a condition (a Jinja branch) start with this.
CONDITIONAL = "only when "
# A measured or expected figure past these is noise, not a reading.
MAX_GBYTES_PER_S = 100_000.0
MAX_GBITS_PER_S = 100_000.0


class MeasurementDetails(TypedDict, total=False):
    """Measurement's optional fields, as keywords that code passes along to it."""

    value_text: str | None
    tool: str | None
    tool_version: str | None
    run_at: datetime | None
    direction: str | None
    nodes: int | None
    gpus: int | None
    message_bytes: int | None
    port_count: int | None
    notes: str


@direct_init
@dataclass(frozen=True)
class Measurement:
    """One expected or measured figure, with where in its source it stands.

    ``provider``/``instance_type`` name the catalog row it is about when the source says so (None
    when it does not: such a record is kept and listed as unmatched). ``source`` is the registered
    source that read it (a ``scrapers.REGISTRY`` name) or "user" for an imported file; ``locator``
    says where in the source ("line 42", "$.testcases[3].bandwidth_matrix") and ``quote`` is the
    source's text there.
    """

    provider: str | None
    instance_type: str | None
    kind: str
    metric: str
    value: float | None
    source: str
    source_url: str
    locator: str
    quote: str
    value_text: str | None = None
    tool: str | None = None
    tool_version: str | None = None
    run_at: datetime | None = None
    direction: str | None = None
    nodes: int | None = None
    gpus: int | None = None
    message_bytes: int | None = None
    port_count: int | None = None
    notes: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise self._refused(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.metric not in METRICS:
            raise self._refused(f"unknown metric {self.metric!r}")
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise self._refused(f"direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.metric in TEXT_METRICS:
            if not self.value_text or self.value is not None:
                raise self._refused(f"{self.metric} carries text, not a number")
        elif self.value is None or not math.isfinite(self.value) or self.value <= 0:
            raise self._refused(f"{self.metric} needs a positive finite value, got {self.value!r}")
        elif self.value > (MAX_GBITS_PER_S if self.metric.endswith("_gbits_per_s") else MAX_GBYTES_PER_S):
            raise self._refused(f"{self.metric} {self.value:g} is beyond any real link")
        if not self.quote.strip() or not self.locator.strip():
            raise self._refused("a measurement needs the source text and where it stands")
        if self.provider is not None and self.provider != self.provider.lower():
            raise self._refused(f"provider id must be lower-case, got {self.provider!r}")

    def _refused(self, why: str) -> InvalidOffer:
        """The refusal of this record, named where it stands (made only then)."""
        return InvalidOffer(f"{self.source} {self.locator}: {why}")
