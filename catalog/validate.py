"""Gates a provider's fresh rows must pass before they replace its previous ones."""

from __future__ import annotations

import math

from normalize.bounds import (
    DATASHEET_RATIO_MAX,
    FABRIC_MAX_GBITS_PER_S,
    FRONTEND_MIN_GBITS_PER_S,
    INTRA_MAX_GBYTES_PER_S,
    MEASURED_RATIO_MAX,
    NETWORK_PER_GPU_MAX_GBITS_PER_S,
    NIC_MAX_GBITS_PER_S,
)
from normalize.errors import ValidationError
from normalize.factors import BITS_PER_BYTE
from normalize.gpus import BY_ID
from normalize.vocab import PROVIDER_BASES, Link
from records.offers import InstanceOffer

# NVLink 1 (P100) already gave 160 GB/s per GPU; a smaller "NVLink" figure is a unit error.
NVLINK_MIN_GBYTES_PER_S = 100.0


def _against_datasheet(offer: InstanceOffer) -> list[str]:
    """A provider's per-GPU figures DATASHEET_RATIO_MAX or more times off the GPU's datasheet (either way)."""
    spec = BY_ID.get(offer.gpu_model or "")
    if spec is None:
        return []
    found = []
    for what, stated, basis, datasheet in (
        ("GPU-to-GPU", offer.intra_node_gbytes_per_s, offer.intra_node_basis, spec.link_gbytes_per_s),
        (
            "memory bandwidth",
            offer.gpu_memory_gbytes_per_s,
            offer.gpu_memory_bw_basis,
            spec.memory_gbytes_per_s,
        ),
    ):
        if stated is None or datasheet is None or basis not in PROVIDER_BASES:
            continue
        if what == "GPU-to-GPU" and math.isclose(stated * BITS_PER_BYTE, datasheet, rel_tol=0.01):
            found.append(
                f"stated GPU-to-GPU {stated:g} GB/s is an eighth of the {offer.gpu_model} datasheet's "
                f"{datasheet:g} GB/s: a Gbit/s figure printed as GB/s"
            )
        elif max(stated / datasheet, datasheet / stated) >= DATASHEET_RATIO_MAX:
            ratio = stated / datasheet
            found.append(
                f"stated {what} {stated:g} GB/s is {ratio:.3g}x the {offer.gpu_model} datasheet's "
                f"{datasheet:g} GB/s: a unit or prefix error"
            )
    return found


def _network(offer: InstanceOffer) -> list[str]:
    """Network figures outside what a node, or a GPU, can have."""
    found = []
    gpus = None if offer.gpu_count is None else max(offer.gpu_count, 1.0)  # a GPU slice has a whole NIC
    for name in ("inter_node_gbits_per_s", "frontend_gbits_per_s"):
        value = getattr(offer, name)
        if value is None:
            continue
        if value > FABRIC_MAX_GBITS_PER_S:
            found.append(f"{name} {value:g} exceeds {FABRIC_MAX_GBITS_PER_S:g} Gbit/s per node")
        elif gpus is not None and value / gpus > NETWORK_PER_GPU_MAX_GBITS_PER_S:
            per_gpu = value / gpus
            found.append(
                f"{name} {value:g} is {per_gpu:g} Gbit/s per GPU, above {NETWORK_PER_GPU_MAX_GBITS_PER_S:g}"
            )
        if value < FRONTEND_MIN_GBITS_PER_S:
            found.append(f"{name} {value:g} is below {FRONTEND_MIN_GBITS_PER_S:g} Gbit/s per node")
    return found


def problems(offer: InstanceOffer) -> list[str]:
    """Values outside physical bounds, or implausible for the GPU's datasheet, for one row."""
    found = _against_datasheet(offer)
    intra = offer.intra_node_gbytes_per_s
    if intra is not None and intra > INTRA_MAX_GBYTES_PER_S:
        found.append(f"intra-node {intra:g} GB/s per GPU exceeds {INTRA_MAX_GBYTES_PER_S:g}")
    if (
        intra is not None
        and offer.intra_node_link in (Link.NVLINK, Link.NVSWITCH)
        and intra < NVLINK_MIN_GBYTES_PER_S
    ):
        found.append(f"NVLink at {intra:g} GB/s per GPU only makes sense as Gbit/s")
    return found + _network(offer)


# Readings held to the same physical bounds as a page's figures (normalize.bounds): GB/s readings are
# per GPU or per GPU pair (scale-up links, bus bandwidth, host copies), Gbit/s readings per port.
_READING_BOUNDS = {
    "_gbytes_per_s": (INTRA_MAX_GBYTES_PER_S, "GB/s per GPU (the scale-up bound)"),
    "_gbits_per_s": (NIC_MAX_GBITS_PER_S, "Gbit/s per port (the fastest NIC)"),
}


def reading_problem(metric: str, value: float | None, port_count: float | None = None) -> str | None:
    """Why a measured or expected reading is outside physical bounds, or None (text metrics, counts)."""
    if value is None:
        return None
    for suffix, (bound, what) in _READING_BOUNDS.items():
        if metric.endswith(suffix):
            if value > bound:
                return f"{metric} {value:g} exceeds {bound:g} {what}"
            ports = port_count if port_count is not None and math.isfinite(port_count) else 1
            if suffix == "_gbits_per_s" and value * max(ports, 1) > FABRIC_MAX_GBITS_PER_S:
                return (
                    f"{metric} {value:g} x {ports:g} ports exceeds {FABRIC_MAX_GBITS_PER_S:g} Gbit/s per node"
                )
    return None


def measured_against_datasheet(gpu_model: str | None, gbytes_per_s: float) -> str | None:
    """Why a measured GPU-to-GPU figure cannot be the row's GPU's (above MEASURED_RATIO_MAX times
    its datasheet link: a copy never beats its link), or None. Far below is no error: a pair may
    copy over PCIe."""
    spec = BY_ID.get(gpu_model or "")
    if spec is None or spec.link_gbytes_per_s is None or gbytes_per_s <= 0:
        return None
    ratio = gbytes_per_s / spec.link_gbytes_per_s
    if ratio > MEASURED_RATIO_MAX:
        return (
            f"measured GPU-to-GPU {gbytes_per_s:g} GB/s is {ratio:.3g}x the {gpu_model} datasheet's "
            f"{spec.link_gbytes_per_s:g} GB/s"
        )
    return None


def check_kept(provider: str, what: str, fresh: int, before: int) -> None:
    """Raise ValidationError if a source lost more than half of its ``what`` (rows, prices, readings)."""
    if before and fresh < before / 2:
        raise ValidationError(f"{provider}: {fresh} {what} against {before} before (more than half lost)")


# No provider lists more than a few hundred GPU instance types (the largest, 85): past this a file
# is not a list of offers, accepted or not.
MAX_ROWS_PER_PROVIDER = 5_000
# A provider's rows growing this many times over (and by more than MIN_GROWTH_ROWS) in one refresh is
# held like a figure that jumped: 60,000 new rows from one CSV are a fault until a person accepts them.
ROW_GROWTH_FACTOR = 8.0
MIN_GROWTH_ROWS = 20


def check_growth(provider: str, fresh: int, before: int, *, accept: bool = False) -> None:
    """Raise ValidationError if a provider's rows are past the cap, or grew ROW_GROWTH_FACTOR times
    over since the last good catalog (unless ``accept``)."""
    if fresh > MAX_ROWS_PER_PROVIDER:
        raise ValidationError(f"{provider}: {fresh:,} rows, over the cap of {MAX_ROWS_PER_PROVIDER:,}")
    if not accept and before and fresh >= ROW_GROWTH_FACTOR * before and fresh - before > MIN_GROWTH_ROWS:
        raise ValidationError(
            f"{provider}: {fresh:,} rows against {before:,} before ({fresh / before:.3g}x, "
            f"{ROW_GROWTH_FACTOR:g}x or more): held back; --accept-changes takes them"
        )


def check(provider: str, offers: list[InstanceOffer], rows_before: int, *, accept: bool = False) -> None:
    """Raise ValidationError if the fresh rows must not replace the previous ones."""
    if not offers:
        raise ValidationError(f"{provider}: the parse yielded no rows")
    check_kept(provider, "rows", len(offers), rows_before)
    check_growth(provider, len(offers), rows_before, accept=accept)
    bad = [f"{o.instance_type}: {p}" for o in offers for p in problems(o)]
    if bad:
        shown = "; ".join(bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
        raise ValidationError(f"{provider}: values outside physical bounds: {shown}")
