"""Turn a scraper's RawOffer into a catalog row.

Each field is taken from its claims; what the provider leaves unsaid is inferred from the GPU's
datasheet (and marked inferred, with the datasheet as its claim) or left missing and flagged.
Two claims that disagree are both kept and the row is marked ``conflict``: never silently pick one.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from catalog import peer_access
from normalize.gpus import BY_ID, GPU_TABLE, GPUS, PCIE_OR_BRIDGE, GpuSpec, memory_fits
from normalize.units import gbits_to_gbytes
from normalize.vocab import SCALE_UP_LINKS, VALUE_BASES, Basis, Evidence, Fabric, Link, SellerKind
from records.columns import INSTANCES
from records.frozen import direct_init
from records.offers import CONTRADICTED, Claim, InstanceOffer, RawOffer


@direct_init
@dataclass(frozen=True)
class _Intra:
    link: Link
    gbytes_per_s: float | None
    basis: Basis
    scale_up_domain_gpus: int | None
    claims: tuple[Claim, ...] = ()
    note: str | None = None


def _same(a: float | str, b: float | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(a, b, rel_tol=1e-6)


# Which claim of a field a row shows first: the source's words, then our restatement, then inference.
_BASIS_ORDER = {Basis.STATED: 0, Basis.PARAPHRASED: 1, Basis.INFERRED: 2}


def _by_field(claims: Iterable[Claim]) -> dict[str, list[Claim]]:
    """Claims grouped by field, stated before paraphrased before inferred, a claim its own source
    contradicts last, each in the order the scraper found them."""
    ranked: dict[int, list[Claim]] = {}  # a stable sort on (contradicted, basis order), as buckets
    for claim in claims:
        rank = _BASIS_ORDER.get(claim.basis, 3) + (4 if claim.qualifiers.startswith(CONTRADICTED) else 0)
        ranked.setdefault(rank, []).append(claim)
    grouped: dict[str, list[Claim]] = defaultdict(list)
    for rank in sorted(ranked):
        for claim in ranked[rank]:
            grouped[claim.field].append(claim)
    return grouped


def _conflicts(grouped: dict[str, list[Claim]]) -> list[str]:
    notes = []
    for field_name, claims in grouped.items():
        if len(claims) < 2:  # most fields: one claim, nothing to disagree with
            continue
        values: list[float | str] = []
        for claim in claims:
            if not any(_same(claim.value, seen) for seen in values):
                values.append(claim.value)
        if len(values) > 1:
            shown = " vs ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
            notes.append(f"conflicting claims for {field_name}: {shown}")
    return notes


def _inferred(field_name: str, value: float, spec: GpuSpec, *columns: str) -> Claim:
    """A value the GPU's datasheet implies: the quote is the cells of the GPU table row it came from."""
    return Claim(
        field=field_name,
        value=float(value),
        quote=spec.quote_cells(*columns),
        source_url=spec.datasheet_url,
        context=f"GPU table row {spec.id} ({GPU_TABLE})",
        basis=Basis.INFERRED,
        evidence=Evidence.DATASHEET,
    )


def _refine(stated: Link | None, spec: GpuSpec | None) -> Link | None:
    """A stated 'NVLink' on an NVSwitch board is nvswitch; on a bridged PCIe card, the bridge."""
    if spec is None or stated is None:
        return stated
    if stated == Link.NVLINK and spec.link == Link.NVSWITCH:
        return Link.NVSWITCH
    if stated == Link.NVLINK and spec.link == PCIE_OR_BRIDGE:
        return Link.NVLINK_BRIDGE
    return stated


def _domain(link: Link, spec: GpuSpec | None, gpu_count: float | None) -> int | None:
    if link == Link.SINGLE_GPU or link == Link.PCIE:
        return 1
    if spec is not None and spec.rack_scale:
        return spec.scale_up_domain_gpus
    if gpu_count is None:
        return None
    if link in SCALE_UP_LINKS:  # every GPU on the board shares the NVSwitch/NVLink/IF fabric
        return int(gpu_count)
    if link == Link.NVLINK_BRIDGE:  # bridges join pairs (or quads of H200 NVL)
        cap = spec.scale_up_domain_gpus if spec and spec.scale_up_domain_gpus else 2
        return int(min(gpu_count, cap))
    return None


def _board_slice(spec: GpuSpec | None, gpu_count: float | None) -> bool:
    """Whether a count is part of one NVSwitch board (2 of an 8-GPU HGX), not the whole board."""
    return (
        spec is not None
        and spec.link == Link.NVSWITCH
        and not spec.rack_scale
        and gpu_count is not None
        and spec.scale_up_domain_gpus is not None
        and gpu_count < spec.scale_up_domain_gpus
    )


def infer_intra(
    spec: GpuSpec | None,
    gpu_count: float | None,
    stated_link: Link | None,
    stated_gbytes: Claim | None,
    *,
    resold: bool = False,
) -> _Intra:
    """GPU-to-GPU link and GB/s per GPU: the source's figure if it gives one (with that claim's basis:
    stated, or inferred where a series' figure is carried to a size), else from the datasheet. One GPU
    (or a slice of one, as the source or its name says) has no GPU peer: not applicable. Two things
    are never inferred: a resold slice of an NVSwitch board (``resold``: 2 of 8 SXM GPUs from a
    marketplace or aggregator) is not NVSwitch by assumption, and a GeForce card has no PCIe P2P figure
    (its driver gives no peer access)."""
    single = gpu_count is not None and gpu_count <= 1 and not (spec and spec.rack_scale)
    if single or stated_link == Link.SINGLE_GPU:
        return _Intra(Link.SINGLE_GPU, None, Basis.NOT_APPLICABLE, 1)
    link = _refine(stated_link, spec)
    if stated_gbytes is not None:
        link = link or (Link(spec.link) if spec and spec.link != PCIE_OR_BRIDGE else Link.UNKNOWN)
        basis = stated_gbytes.basis if stated_gbytes.basis in VALUE_BASES else Basis.STATED
        return _Intra(link, float(stated_gbytes.value), basis, _domain(link, spec, gpu_count))
    if spec is None:
        return _Intra(link or Link.UNKNOWN, None, Basis.MISSING, None)
    if link is None and resold and _board_slice(spec, gpu_count):
        note = (
            f"{gpu_count:g} of the {spec.scale_up_domain_gpus} GPUs of an {spec.id} board, resold: whether "
            "they reach each other over NVSwitch the seller does not say (not inferred)"
        )
        return _Intra(Link.UNKNOWN, None, Basis.MISSING, None, note=note)
    if (link or spec.link) == Link.PCIE and peer_access.is_geforce(spec):
        note = f"{spec.id} is a GeForce card: no PCIe peer-to-peer path, so no PCIe GPU-to-GPU figure"
        return _Intra(Link.PCIE, None, Basis.MISSING, 1, note=note)
    if spec.link == PCIE_OR_BRIDGE and link not in (Link.NVLINK_BRIDGE, Link.PCIE):
        note = (
            f"{spec.id} pairs may use an NVLink bridge ({spec.link_gbytes_per_s:g} GB/s) or PCIe "
            f"Gen{spec.pcie_gen} ({spec.pcie_gbytes_per_s:g} GB/s); the source states neither"
        )
        return _Intra(Link.UNKNOWN, None, Basis.MISSING, None, note=note)
    if link is None:
        link = Link(spec.link)
    column = ""
    if link == Link.PCIE:
        gbytes, column = spec.pcie_gbytes_per_s, "pcie_gen"
    elif link in SCALE_UP_LINKS or link == Link.NVLINK_BRIDGE:
        gbytes, column = spec.link_gbytes_per_s, "link_gbytes_per_s"
    else:
        gbytes = None
    domain = _domain(link, spec, gpu_count)
    if gbytes is None:
        return _Intra(link, None, Basis.MISSING, domain)
    claim = _inferred("intra_node_gbytes_per_s", gbytes, spec, "link", column)
    return _Intra(link, gbytes, Basis.INFERRED, domain, (claim,))


def nominal_memory(
    stated_gb: float | None, spec: GpuSpec | None, gpu_count: float | None, model: str | None = None
) -> tuple[float | None, str | None]:
    """(memory per GPU in one unit, why the stated figure disagrees with the datasheet or None): the
    datasheet's nominal size when the stated figure fits it as GB or as GiB ("80 GB" and "80 GiB"
    are both an 80 GB H100), a fractional GPU's stated slice scaled to a whole GPU first; the stated
    figure when it fits neither (flagged) or no datasheet is known. A family-level model whose form
    factor is open (``H100-80GB``) is named by the size every part it can be shares (80): the same rule."""
    nominal = spec.memory_gb if spec is not None else family_nominal_gb(model)
    if nominal is None:
        return stated_gb, None
    if stated_gb is None:
        return nominal, None
    whole_gb = stated_gb / gpu_count if gpu_count is not None and 0 < gpu_count < 1 else stated_gb
    if memory_fits(whole_gb, nominal):
        return nominal, None
    named = spec.id if spec is not None else model
    flag = f"stated {whole_gb:.4g} GB per GPU fits neither {nominal:g} GB nor {nominal:g} GiB of the {named} "
    flag += "datasheet"
    return whole_gb, flag


def fitting_first(claims: list[Claim], spec: GpuSpec | None, gpu_count: float | None) -> list[Claim]:
    """Memory claims with those that fit the GPU's datasheet first (each group in its order): where two
    sources disagree and only one fits the part, the row keeps that one and the other stays a claim in
    conflict (AWS's instance-type page gives trn2.48xlarge "16 x 512 GiB"; its Neuron page 1,536 GiB for
    16 Trainium2 chips, the chip's 96 GiB)."""
    if spec is None or len(claims) < 2:
        return claims

    def fits(claim: Claim) -> bool:
        whole = float(claim.value)
        if gpu_count is not None and 0 < gpu_count < 1:
            whole /= gpu_count
        return memory_fits(whole, spec.memory_gb)

    return [c for c in claims if fits(c)] + [c for c in claims if not fits(c)]


@functools.lru_cache(maxsize=1024)  # a scan of the GPU table, the same for every row of a model
def family_nominal_gb(model: str | None) -> float | None:
    """The nominal size of a family-level model ('H100-80GB' → 80) when every part it can be is sold
    by that size; None for a model with no size ('H100') or one the GPU table does not know."""
    sizes = {s.memory_gb for s in GPUS if model and f"{s.family}-{s.memory_gb:g}GB" == model}
    return sizes.pop() if len(sizes) == 1 else None


def build_offer(raw: RawOffer, *, scraped_at: datetime) -> InstanceOffer:
    """The catalog row for one RawOffer, with inferred claims added to its claims."""
    grouped = _by_field(raw.claims)
    firsts = {name: claims[0] for name, claims in grouped.items()}
    first = firsts.get

    def number(field_name: str) -> float | None:
        return _number(firsts.get(field_name))

    def text(field_name: str) -> str | None:
        return _text(firsts.get(field_name))

    model = text("gpu_model")
    spec = BY_ID.get(model) if isinstance(model, str) else None
    gpu_count = number("gpu_count")
    if "gpu_memory_gb" in grouped:
        grouped["gpu_memory_gb"] = fitting_first(grouped["gpu_memory_gb"], spec, gpu_count)
        firsts["gpu_memory_gb"] = grouped["gpu_memory_gb"][0]
    stated_link = text("intra_node_link")
    intra = infer_intra(
        spec,
        gpu_count,
        Link(stated_link) if stated_link else None,
        first("intra_node_gbytes_per_s"),
        resold=raw.identity.seller_kind != SellerKind.CLOUD,
    )
    peer = peer_access.at_build(
        intra.link, spec, first("intra_node_link") or first("intra_node_gbytes_per_s")
    )
    extra_claims = list(intra.claims)
    nominal_gb, memory_flag = nominal_memory(
        number("gpu_memory_gb"), spec, gpu_count, model if isinstance(model, str) else None
    )

    memory_bw = number("gpu_memory_gbytes_per_s")
    memory_bw_basis = Basis.STATED if memory_bw is not None else Basis.MISSING
    if memory_bw is None and spec is not None and spec.memory_gbytes_per_s is not None:
        memory_bw, memory_bw_basis = spec.memory_gbytes_per_s, Basis.INFERRED
        extra_claims.append(_inferred("gpu_memory_gbytes_per_s", memory_bw, spec, "memory_gbytes_per_s"))

    inter_claim = first("inter_node_gbits_per_s")
    inter_gbits = None if inter_claim is None else float(inter_claim.value)
    inter_basis = Basis.MISSING if inter_claim is None else inter_claim.basis
    stated_domain = number("scale_up_domain_gpus")
    conflicts = _conflicts(grouped)
    notes = [*raw.notes, *conflicts]
    if intra.note:
        notes.append(intra.note)
    fabric = text("inter_node_fabric")
    return InstanceOffer(
        provider=raw.provider,
        instance_type=raw.instance_type,
        gpu_model=model,
        gpu_count=None if gpu_count is None else float(gpu_count),
        gpu_memory_gb=number("gpu_memory_gb"),
        gpu_memory_gbytes_per_s=memory_bw,
        gpu_memory_bw_basis=memory_bw_basis,
        gpu_memory_nominal_gb=nominal_gb,
        gpu_memory_flag=memory_flag,
        intra_node_link=intra.link,
        intra_node_gbytes_per_s=intra.gbytes_per_s,
        intra_node_basis=intra.basis,
        gpu_peer_access=peer.access,
        gpu_peer_access_basis=peer.basis,
        gpu_peer_access_evidence=peer.evidence,
        scale_up_domain_gpus=int(stated_domain) if stated_domain else intra.scale_up_domain_gpus,
        inter_node_fabric=Fabric(fabric) if fabric else Fabric.UNKNOWN,
        inter_node_gbits_per_s=inter_gbits,
        inter_node_gbytes_per_s=None if inter_gbits is None else gbits_to_gbytes(inter_gbits),
        inter_node_basis=inter_basis,
        nic_count=_int_or_none(number("nic_count")),
        frontend_gbits_per_s=number("frontend_gbits_per_s"),
        frontend_nic_count=_int_or_none(number("frontend_nic_count")),
        fabric_shares_frontend=raw.fabric_shares_frontend,
        missing_intra_bw=intra.basis == Basis.MISSING,
        missing_inter_bw=inter_basis == Basis.MISSING,
        unit_suspect=any(c.unit_suspect for c in raw.claims),
        conflict=bool(conflicts),  # from the claims themselves, not from a note's wording
        notes=tuple(dict.fromkeys(notes)),
        source_kind=raw.source_kind,
        source_url=raw.source_url,
        scraped_at=scraped_at,
        identity=raw.identity,
        name_escaped=raw.name_escaped,
        claims=(*raw.claims, *extra_claims),
        **_copied_fields(firsts),
    )


#: Claim fields build_offer derives by rules of its own (above); every other claim field of the column
#: table is copied from its first claim, so a new field needs no code here.
_DERIVED_FIELDS = frozenset(
    {
        "gpu_model",
        "gpu_count",
        "gpu_memory_gb",
        "gpu_memory_gbytes_per_s",
        "intra_node_link",
        "intra_node_gbytes_per_s",
        "scale_up_domain_gpus",
        "inter_node_fabric",
        "inter_node_gbits_per_s",
        "nic_count",
        "frontend_gbits_per_s",
        "frontend_nic_count",
    }
)


#: The claim fields ``_copied_fields`` copies, in the column table's order.
_COPIED_FIELDS = tuple(c.name for c in INSTANCES if c.claim and c.name not in _DERIVED_FIELDS)


def _copied_fields(firsts: dict[str, Claim]) -> dict[str, Any]:
    """The value of every claim field with no rule of its own: its first claim's, or None (typed Any:
    the field's type is the column table's, which mypy cannot see)."""
    return {name: claim.value if (claim := firsts.get(name)) else None for name in _COPIED_FIELDS}


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def _number(claim: Claim | None) -> float | None:
    """A numeric field's value (a Claim holds a number in every field outside TEXT_FIELDS)."""
    if claim is None:
        return None
    assert not isinstance(claim.value, str), f"{claim.field} claim holds text"
    return claim.value


def _text(claim: Claim | None) -> str | None:
    """A text field's value (a Claim holds text in every field of TEXT_FIELDS)."""
    if claim is None:
        return None
    assert isinstance(claim.value, str), f"{claim.field} claim holds a number"
    return claim.value


def merge_duplicates(raws: list[RawOffer]) -> list[RawOffer]:
    """One RawOffer per instance type: a type listed twice (two rows of a table, two pages) keeps the
    claims of both, so figures that differ become a conflict and never a silent last-one-wins."""
    merged: dict[str, RawOffer] = {}
    for raw in raws:
        seen = merged.get(raw.instance_type)
        if seen is None:
            merged[raw.instance_type] = raw
            continue
        merged[raw.instance_type] = replace(
            seen,
            claims=tuple(dict.fromkeys((*seen.claims, *raw.claims))),
            notes=tuple(dict.fromkeys((*seen.notes, *raw.notes, "listed more than once by its source"))),
            fabric_shares_frontend=seen.fabric_shares_frontend or raw.fabric_shares_frontend,
        )
    return list(merged.values())
