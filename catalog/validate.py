"""Gates a provider's fresh rows must pass before they replace its previous ones."""

from __future__ import annotations

import math

from normalize.bounds import FABRIC_MAX_GBITS_PER_S, INTRA_MAX_GBYTES_PER_S
from normalize.errors import ValidationError
from normalize.gpus import BY_ID
from normalize.vocab import PROVIDER_BASES, Link
from records.offers import InstanceOffer

# NVLink 1 (P100) already gave 160 GB/s per GPU; a smaller "NVLink" figure is a unit error.
NVLINK_MIN_GBYTES_PER_S = 100.0


def _datasheet_eighth(offer: InstanceOffer) -> float | None:
    """The datasheet GPU-to-GPU GB/s when a provider's figure is exactly an eighth of it (Gb/s for GB/s)."""
    spec = BY_ID.get(offer.gpu_model or "")
    stated = offer.intra_node_gbytes_per_s
    if (
        spec is None
        or spec.link_gbytes_per_s is None
        or stated is None
        or offer.intra_node_basis not in PROVIDER_BASES
    ):
        return None
    return spec.link_gbytes_per_s if math.isclose(stated * 8, spec.link_gbytes_per_s, rel_tol=0.01) else None


def problems(offer: InstanceOffer) -> list[str]:
    """Values outside physical bounds, for one row."""
    found = []
    if (datasheet := _datasheet_eighth(offer)) is not None:
        found.append(
            f"stated GPU-to-GPU {offer.intra_node_gbytes_per_s:g} GB/s is an eighth of the {offer.gpu_model} "
            f"datasheet's {datasheet:g} GB/s: a Gbit/s figure printed as GB/s"
        )
    intra = offer.intra_node_gbytes_per_s
    if intra is not None and intra > INTRA_MAX_GBYTES_PER_S:
        found.append(f"intra-node {intra:g} GB/s per GPU exceeds {INTRA_MAX_GBYTES_PER_S:g}")
    if (
        intra is not None
        and offer.intra_node_link in (Link.NVLINK, Link.NVSWITCH)
        and intra < NVLINK_MIN_GBYTES_PER_S
    ):
        found.append(f"NVLink at {intra:g} GB/s per GPU only makes sense as Gbit/s")
    for name in ("inter_node_gbits_per_s", "frontend_gbits_per_s"):
        value = getattr(offer, name)
        if value is not None and value > FABRIC_MAX_GBITS_PER_S:
            found.append(f"{name} {value:g} exceeds {FABRIC_MAX_GBITS_PER_S:g} Gbit/s per node")
    return found


def check(provider: str, offers: list[InstanceOffer], rows_before: int) -> None:
    """Raise ValidationError if the fresh rows must not replace the previous ones."""
    if not offers:
        raise ValidationError(f"{provider}: the parse yielded no rows")
    if rows_before and len(offers) < rows_before / 2:
        raise ValidationError(
            f"{provider}: {len(offers)} rows against {rows_before} before (more than half lost)"
        )
    bad = [f"{o.instance_type}: {p}" for o in offers for p in problems(o)]
    if bad:
        shown = "; ".join(bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
        raise ValidationError(f"{provider}: values outside physical bounds: {shown}")
