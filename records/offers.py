"""Offers: a Claim is one number with its quote; an InstanceOffer is one catalog row.

Scrapers emit ``RawOffer``s, each a bag of claims. ``catalog.offers.build_offer`` turns one into an
``InstanceOffer``, so every stated number in a row has a claim behind it by construction. Every
numeric field carries its unit in its name.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime

from normalize.errors import InvalidOffer
from normalize.factors import BITS_PER_BYTE
from normalize.vocab import VALUE_BASES, Basis, Evidence, Fabric, Link, PeerAccess, SellerKind
from records.columns import FIELD_UNITS, TEXT_FIELDS
from records.frozen import direct_init

#: Qualifiers of a claim its own source contradicts (AWS's "1 x NVIDIA L4 GPU" beside "2 GiB") start
#: with this: it is kept, and a claim of the same field that nothing contradicts is shown before it.
CONTRADICTED = "contradicted by its own source: "


@direct_init
@dataclass(frozen=True)
class Claim:
    """One fact as a source states it (or, with basis inferred, as a datasheet or a name implies it).

    ``value`` is in the unit of the field's name (Gbit/s for ``*_gbits_per_s``); ``context`` says where
    on the page (table and column, or section). ``evidence`` says what ``quote`` is: the source's own
    words (verbatim: a substring of the document at ``source_url``), a curated restatement
    (paraphrase: ``source_url`` is where a person read it, on ``read_on``) or the GPU table row of an
    inferred value (datasheet). ``source_url`` always names the document actually read; for a
    third-party copy, ``original_url`` is the page it copies.
    """

    field: str
    value: float | str
    quote: str
    source_url: str
    context: str = ""
    basis: Basis = Basis.STATED
    qualifiers: str = ""
    unit_suspect: bool = False
    read_on: date | None = None  # curated facts: the day a person read the source
    evidence: Evidence = Evidence.VERBATIM
    original_url: str | None = None  # a copy's original, when source_url names the copy

    def __post_init__(self) -> None:
        if self.field not in FIELD_UNITS:
            raise InvalidOffer(f"unknown claim field {self.field!r}")
        if (self.field in TEXT_FIELDS) != isinstance(self.value, str):
            raise InvalidOffer(f"{self.field} claim has a value of the wrong kind: {self.value!r}")
        if not self.quote.strip():
            raise InvalidOffer(f"{self.field} claim has no quote")
        if self.basis is Basis.STATED and self.evidence is Evidence.VERBATIM:
            return  # the commonest claim, which _evidence_problem passes
        problem = _evidence_problem(self.basis, self.evidence, self.read_on)
        if problem:
            raise InvalidOffer(f"{self.field} claim: {problem}")

    @property
    def unit(self) -> str | None:
        return FIELD_UNITS[self.field]


def _evidence_problem(basis: Basis, evidence: Evidence, read_on: date | None) -> str | None:
    """Why a basis and an evidence cannot go together, or None: a stated figure is held in the
    source's own words, a paraphrased one in ours (read on a known day), a datasheet one is inferred."""
    if basis == Basis.STATED and evidence != Evidence.VERBATIM:
        return f"a stated figure needs verbatim evidence, not {evidence}"
    if basis == Basis.PARAPHRASED and evidence != Evidence.PARAPHRASE:
        return f"a paraphrased figure needs paraphrase evidence, not {evidence}"
    if evidence == Evidence.PARAPHRASE and read_on is None:
        return "a paraphrase needs the day it was read (read_on)"
    if evidence == Evidence.DATASHEET and basis != Basis.INFERRED:
        return f"datasheet evidence backs inferred figures only, not {basis}"
    return None


@direct_init
@dataclass(frozen=True)
class OfferIdentity:
    """Who sells an offer and under which names, beside its ``instance_type``.

    ``seller_kind`` says whether the provider runs the hardware (cloud) or resells it (marketplace,
    aggregator); ``upstream_provider`` is the cloud a resold offer runs on, where the seller states it
    (a provider id of this catalog when the cloud is one, else the seller's own spelling), and
    ``upstream_instance_type`` that cloud's own name for it. ``platform`` and ``preset`` are the two
    halves of a name that combines a hardware platform and a size (Nebius
    ``gpu-h100-sxm_8gpu-128vcpu-1600gb``), kept apart so either finds the row.
    """

    seller_kind: SellerKind = SellerKind.CLOUD
    upstream_provider: str | None = None
    upstream_instance_type: str | None = None
    platform: str | None = None
    preset: str | None = None

    def problems(self) -> Iterator[str]:
        """What breaks the identity's own rules (empty when nothing does)."""
        if not isinstance(self.seller_kind, SellerKind):
            yield f"unknown seller_kind {self.seller_kind!r}"
        if self.seller_kind == SellerKind.CLOUD and (self.upstream_provider or self.upstream_instance_type):
            yield "a cloud's own offer has no upstream provider"
        if self.upstream_instance_type and not self.upstream_provider:
            yield "upstream_instance_type without upstream_provider"
        if self.preset and not self.platform:
            yield "preset without platform"
        for name in ("upstream_provider", "upstream_instance_type", "platform", "preset"):
            value = getattr(self, name)
            if value is not None and not value.strip():
                yield f"{name} is blank"


@direct_init
@dataclass(frozen=True)
class RawOffer:
    """What a scraper extracts for one instance type: its claims, before inference."""

    provider: str
    instance_type: str
    source_url: str
    claims: tuple[Claim, ...]
    notes: tuple[str, ...] = ()
    fabric_shares_frontend: bool = False
    source_kind: str = "scraped"
    identity: OfferIdentity = OfferIdentity()
    name_escaped: bool = False  # catalog.names wrote the name's control characters as escapes


@direct_init
@dataclass(frozen=True)
class InstanceOffer:
    """One row of the ``instances`` table. See docs/schema.md for every column's meaning."""

    provider: str
    instance_type: str
    gpu_model: str | None
    gpu_count: float | None
    gpu_memory_gb: float | None
    gpu_memory_gbytes_per_s: float | None
    gpu_memory_bw_basis: Basis
    intra_node_link: Link
    intra_node_gbytes_per_s: float | None
    intra_node_basis: Basis
    scale_up_domain_gpus: int | None
    inter_node_fabric: Fabric
    inter_node_gbits_per_s: float | None
    inter_node_gbytes_per_s: float | None
    inter_node_basis: Basis
    nic_count: int | None
    frontend_gbits_per_s: float | None
    frontend_nic_count: int | None
    fabric_shares_frontend: bool
    missing_intra_bw: bool
    missing_inter_bw: bool
    unit_suspect: bool
    conflict: bool
    notes: tuple[str, ...]  # each a sentence a reader should know, in the order they were found
    source_kind: str
    source_url: str
    scraped_at: datetime
    stale: bool = False
    stale_since: datetime | None = None
    stale_cause: str | None = None
    identity: OfferIdentity = OfferIdentity()
    name_escaped: bool = False  # the source's name held control characters, stored as escapes
    # GPU memory in one unit (the datasheet's nominal size when the stated figure fits it), and why not.
    gpu_memory_nominal_gb: float | None = None
    gpu_memory_flag: str | None = None
    # Whether the GPUs reach each other's memory directly (catalog.peer_access), its basis and evidence.
    gpu_peer_access: PeerAccess = PeerAccess.UNKNOWN
    gpu_peer_access_basis: Basis = Basis.MISSING
    gpu_peer_access_evidence: str | None = None
    # Joined from the current prices when the rows are finished (catalog.finish): on-demand only.
    min_usd_per_hour: float | None = None
    usd_per_gpu_hour: float | None = None
    regions: int = 0
    price_region: str | None = None
    price_flag: str | None = None  # the cheapest price's flag: why it looks like a placeholder
    claims: tuple[Claim, ...] = field(default=(), compare=False, repr=False)

    @property
    def notes_text(self) -> str:
        """The notes as one line, joined as a CSV cell writes them (normalize.safe_text.LIST_SEPARATOR)."""
        return "; ".join(self.notes)

    @property
    def seller_kind(self) -> SellerKind:
        return self.identity.seller_kind

    @property
    def upstream_provider(self) -> str | None:
        return self.identity.upstream_provider

    @property
    def upstream_instance_type(self) -> str | None:
        return self.identity.upstream_instance_type

    @property
    def platform(self) -> str | None:
        return self.identity.platform

    @property
    def preset(self) -> str | None:
        return self.identity.preset

    def __post_init__(self) -> None:
        problems = list(self._problems())
        if problems:
            raise InvalidOffer(f"{self.provider}/{self.instance_type}: " + "; ".join(problems))

    def _problems(self) -> Iterator[str]:
        if not self.provider or self.provider != self.provider.lower():
            yield f"provider id must be lower-case, got {self.provider!r}"
        if not self.instance_type:
            yield "empty instance_type"
        if self.gpu_count is not None and self.gpu_count <= 0:
            yield f"gpu_count must be positive, got {self.gpu_count}"
        if self.gpu_count is not None and not self.gpu_model:
            yield "gpu_count set without gpu_model"
        for name, value, basis in (
            ("intra_node_gbytes_per_s", self.intra_node_gbytes_per_s, self.intra_node_basis),
            ("inter_node_gbits_per_s", self.inter_node_gbits_per_s, self.inter_node_basis),
            ("gpu_memory_gbytes_per_s", self.gpu_memory_gbytes_per_s, self.gpu_memory_bw_basis),
        ):
            has_value = value is not None
            if has_value != (basis in VALUE_BASES):
                yield f"{name}={value} disagrees with its basis {basis}"
            if value is not None and value <= 0:
                yield f"{name} must be positive, got {value}"
        if (self.inter_node_gbits_per_s is None) != (self.inter_node_gbytes_per_s is None):
            yield "inter_node_gbits_per_s and inter_node_gbytes_per_s must both be set or unset"
        elif self.inter_node_gbits_per_s is not None:
            assert self.inter_node_gbytes_per_s is not None
            gbytes = self.inter_node_gbits_per_s / BITS_PER_BYTE
            if not math.isclose(gbytes, self.inter_node_gbytes_per_s, rel_tol=1e-9):
                yield "inter_node_gbytes_per_s is not inter_node_gbits_per_s / 8"
        if self.missing_intra_bw != (self.intra_node_basis == Basis.MISSING):
            yield "missing_intra_bw disagrees with intra_node_basis"
        if self.missing_inter_bw != (self.inter_node_basis == Basis.MISSING):
            yield "missing_inter_bw disagrees with inter_node_basis"
        if (self.gpu_peer_access_evidence is None) != (
            self.gpu_peer_access_basis in (Basis.MISSING, Basis.NOT_APPLICABLE)
        ):
            yield f"gpu_peer_access_evidence disagrees with its basis {self.gpu_peer_access_basis}"
        if self.source_kind not in ("scraped", "curated"):
            yield f"unknown source_kind {self.source_kind!r}"
        yield from self.identity.problems()
        yield from self._price_problems()

    def _price_problems(self) -> Iterator[str]:
        price = self.min_usd_per_hour
        if price is not None and not (math.isfinite(price) and price > 0):
            yield f"min_usd_per_hour must be a positive price, got {price}"
        if self.regions < 0:
            yield f"regions must not be negative, got {self.regions}"
        priced = price is not None
        if (self.regions > 0) != priced or (self.price_region is not None) != priced:
            yield "min_usd_per_hour, regions and price_region must be all set or all unset"
        expected = None if price is None or self.gpu_count is None else price / self.gpu_count
        if (expected is None) != (self.usd_per_gpu_hour is None) or (
            expected is not None and not math.isclose(expected, self.usd_per_gpu_hour or 0.0, rel_tol=1e-9)
        ):
            yield f"usd_per_gpu_hour {self.usd_per_gpu_hour} is not min_usd_per_hour / gpu_count"
