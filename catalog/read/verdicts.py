"""How a measured or expected figure compares with what the page claims, in one sentence a user can
act on, and the ratio behind it (pure: a row in, a ratio and a sentence out).

Directions are matched before dividing: a claimed GPU-to-GPU figure is bidirectional per GPU, so a
one-way (or each-way) reading is compared with half of it. A pair of GPUs measures the links
between those two GPUs; on an NVSwitch board (or a bridged pair, or PCIe) that is the GPU's link,
on an NVLink mesh (V100 hybrid cube-mesh, AMD Infinity Fabric) it is only a share of the GPU's
links, so no ratio is given there. An NCCL bus bandwidth is not a link rate (a multi-node
all_reduce keeps part of its traffic on NVLink and can exceed the NICs): it is compared only with
the same collective's expected floor, never with a claimed fabric.
"""

from __future__ import annotations

from catalog.read.text import fmt, known

PAIR_IS_THE_LINK = frozenset({"nvswitch", "nvlink-bridge", "pcie"})
MESH_WORDS: dict[str | None, str] = {
    "nvlink": "an NVLink mesh (no NVSwitch)",
    "infinity-fabric": "an Infinity Fabric mesh",
    "unknown": "a link the page does not name",
}
RDMA_WORDS = ("IB", "OFI", "Libfabric", "FasTrak", "GPUDirect", "TCPX", "gIB", "RoCE", "EFA")


def percent(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.0%}"


def figure(value: float) -> str:
    """A reading in a sentence: '3,200', '388.8', '48.5', '9.83'."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}".removesuffix(".0") if value >= 100 else fmt(value)


def _tool(row: dict) -> str:
    version = f" {row['tool_version']}" if known(row.get("tool_version")) else ""
    return f"{row['tool']}{version}"


def _gpu_convention(row: dict) -> tuple[str, bool]:
    """The reading's direction in words, and whether it is the bidirectional total the claim is."""
    if row["metric"] == "gpu_to_gpu_gbytes_per_s" and row.get("direction") == "two-way":
        return "two-way", True
    if row["metric"] == "gpu_to_gpu_each_way_gbytes_per_s":
        return "each way of a two-way copy", False
    return "one-way", False


def gpu_pair(row: dict) -> tuple[float | None, str]:
    """A GPU-to-GPU reading (nvbandwidth, p2pBandwidthLatencyTest, an expected floor) vs the claim."""
    how, whole = _gpu_convention(row)
    what = f"{_tool(row)} {how} {figure(row['value'])} GB/s"
    if row["kind"] == "expected":
        what = f"health check expects ≥ {figure(row['value'])} GB/s {how} per GPU pair"
    claimed = row.get("claimed")
    if not known(claimed):
        return None, f"{what}; the page states no GPU-to-GPU figure"
    basis = f", {row['claimed_basis']}" if row.get("claimed_basis") not in (None, "stated") else ""
    if row.get("link") not in PAIR_IS_THE_LINK:
        return None, (
            f"{what} between one pair; on {MESH_WORDS.get(row.get('link'), row.get('link'))} a pair uses "
            f"only the links it shares: not comparable with the GPU's {figure(claimed)} GB/s{basis}"
        )
    same = claimed if whole else claimed / 2
    against = f"{figure(same)} GB/s claimed" + (
        "" if whole else f" per direction ({figure(claimed)} bidirectional{basis})"
    )
    if whole and basis:
        against += f" ({basis.removeprefix(', ')})"
    ratio = row["value"] / same
    return ratio, f"{what} of {against}: {percent(ratio)}"


def nvlink_links(row: dict) -> tuple[float | None, str]:
    """nvidia-smi's per-link rate x links (per direction) vs half the bidirectional claim."""
    links = int(row["port_count"]) if known(row.get("port_count")) else 1
    total = row["value"] * links
    what = f"nvidia-smi: {links} NVLinks x {figure(row['value'])} GB/s = {figure(total)} GB/s per direction"
    claimed = row.get("claimed")
    if not known(claimed):
        return None, f"{what}; the page states no GPU-to-GPU figure"
    ratio = total / (claimed / 2)
    return (
        ratio,
        f"{what} vs {figure(claimed / 2)} GB/s claimed per direction ({figure(claimed)} bidirectional): "
        f"{percent(ratio)}",
    )


def fabric_ports(row: dict) -> tuple[float | None, str]:
    """Expected port rate x ports vs the claimed fabric per node (both Gbit/s)."""
    ports = int(row["port_count"]) if known(row.get("port_count")) else 1
    total = row["value"] * ports
    what = f"{row['tool']} expects {ports} x {figure(row['value'])} Gbit/s ports"
    claimed, basis = row.get("claimed"), row.get("claimed_basis")
    if not known(claimed) or basis == "expected":
        return None, (
            f"{what} = {figure(total)} Gbit/s; the page states no fabric figure (the catalog shows this one, "
            "marked expected)"
        )
    ratio = total / claimed
    if abs(ratio - 1) < 1e-6:
        return ratio, f"{what} = the {figure(claimed)} Gbit/s the page claims"
    return ratio, f"{what} = {figure(total)} Gbit/s; the page claims {figure(claimed)} Gbit/s: conflict"


def port_bandwidth(row: dict) -> tuple[float | None, str]:
    """An ib_*_bw reading (or an expected floor) vs one port's expected or claimed rate."""
    test = row["metric"].removesuffix("_gbits_per_s") + "_bw"
    what = f"{row['tool']} {figure(row['value'])} Gbit/s"
    if row["kind"] == "expected":
        what = f"health check expects {test} ≥ {figure(row['value'])} Gbit/s per port"
    port, where = row.get("port_gbits_per_s"), row.get("port_source")
    if not known(port):
        return None, f"{what}; no port rate to compare with"
    ratio = row["value"] / port
    return ratio, f"{what} of a {figure(port)} Gbit/s port ({where}): {percent(ratio)}"


def collective(row: dict) -> tuple[float | None, str]:
    """An NCCL bus bandwidth vs the same collective's expected floor (same node count)."""
    name = row["metric"].removeprefix("nccl_").removesuffix("_busbw_gbytes_per_s")
    count = int(row["nodes"]) if known(row.get("nodes")) else None
    nodes = "nodes not stated" if count is None else f"{count} node" + ("s" if count > 1 else "")
    what = f"{_tool(row)} {name} busbw {figure(row['value'])} GB/s ({nodes})"
    if row["kind"] == "expected":
        return None, f"health check floor: {name} busbw ≥ {figure(row['value'])} GB/s ({nodes})"
    floor = row.get("floor")
    caveat = "busbw is not a link rate: compare it with the same test, not with the NICs"
    if not known(floor):
        return None, f"{what}; no expected floor for this test; {caveat}"
    ratio = row["value"] / floor
    floor_nodes = row.get("floor_nodes")
    if count is None and known(floor_nodes):
        return ratio, (
            f"{what} vs the provider's floor {figure(floor)} GB/s for {int(floor_nodes)} nodes "
            f"(the log does not say its node count): {percent(ratio)}"
        )
    return ratio, f"{what} vs the provider's floor {figure(floor)} GB/s: {percent(ratio)}"


def transport(row: dict) -> tuple[None, str]:
    """The transport NCCL used, and what it means for RDMA."""
    used = row["value_text"]
    notes = row.get("notes") or ""
    if row["metric"] == "nccl_intra_node_transport":
        return None, f"NCCL used {used} between GPUs of a node"
    if used == "NET/Socket":
        return None, "NCCL used NET/Socket: no RDMA (plain TCP through the host)"
    if "no GPUDirect RDMA" in notes:
        return None, f"NCCL used {used} without GPUDirect RDMA (no GDRDMA on its channels)"
    if "GDRDMA" in notes:
        return None, f"NCCL used {used} with GPUDirect RDMA"
    return None, f"NCCL used {used}"


def link_state(row: dict) -> tuple[None, str]:
    if row["metric"] == "nvlink_status":
        if row["kind"] == "expected":  # a health check's expectation, not a node's state
            return None, f"NVLink {row['value_text']} expected: {row.get('notes') or ''}"
        return None, f"NVLink {row['value_text']}: {row.get('notes') or ''} (a degraded node)"
    if row["metric"] == "gpu_p2p_status":
        return None, f"GPU peer-to-peer status {row['value_text']} ({row.get('notes') or ''})"
    return None, f"GPU pair link {row['value_text']} ({row.get('notes') or ''})"
