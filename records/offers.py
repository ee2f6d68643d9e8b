"""Offers: a Claim is one number with its quote; an InstanceOffer is one catalog row.

Scrapers emit ``RawOffer``s, each a bag of claims. ``catalog.offers.build_offer`` turns one into an
``InstanceOffer``, so every stated number in a row has a claim behind it by construction. Every
numeric field carries its unit in its name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime

from normalize.errors import InvalidOffer
from normalize.vocab import VALUED_BASES, Basis, Fabric, Link

FIELD_UNITS: dict[str, str | None] = {
    "gpu_model": None,
    "gpu_count": "GPUs",
    "gpu_memory_gb": "GB",
    "gpu_memory_gbytes_per_s": "GB/s",
    "intra_node_link": None,
    "intra_node_gbytes_per_s": "GB/s",
    "scale_up_domain_gpus": "GPUs",
    "inter_node_fabric": None,
    "inter_node_gbits_per_s": "Gbit/s",
    "nic_count": "NICs",
    "frontend_gbits_per_s": "Gbit/s",
    "frontend_nic_count": "NICs",
}
TEXT_FIELDS = frozenset({"gpu_model", "intra_node_link", "inter_node_fabric"})


@dataclass(frozen=True)
class Claim:
    """One fact as a source states it (or, with basis inferred, as a datasheet implies it).

    ``value`` is in the unit of the field's name (Gbit/s for ``*_gbits_per_s``); ``quote`` is the
    exact text it came from and ``context`` where on the page (table and column, or section).
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

    def __post_init__(self) -> None:
        if self.field not in FIELD_UNITS:
            raise InvalidOffer(f"unknown claim field {self.field!r}")
        if (self.field in TEXT_FIELDS) != isinstance(self.value, str):
            raise InvalidOffer(f"{self.field} claim has a value of the wrong kind: {self.value!r}")
        if not self.quote.strip():
            raise InvalidOffer(f"{self.field} claim has no quote")

    @property
    def unit(self) -> str | None:
        return FIELD_UNITS[self.field]


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


@dataclass(frozen=True)
class InstanceOffer:
    """One row of the ``instances`` table. See the README for every column's meaning."""

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
    notes: str
    source_kind: str
    source_url: str
    scraped_at: datetime
    stale: bool = False
    stale_since: datetime | None = None
    stale_cause: str | None = None
    claims: tuple[Claim, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        problems = list(self._problems())
        if problems:
            raise InvalidOffer(f"{self.provider}/{self.instance_type}: " + "; ".join(problems))

    def _problems(self):
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
            if has_value != (basis in VALUED_BASES):
                yield f"{name}={value} disagrees with its basis {basis}"
            if has_value and value <= 0:
                yield f"{name} must be positive, got {value}"
        if (self.inter_node_gbits_per_s is None) != (self.inter_node_gbytes_per_s is None):
            yield "inter_node_gbits_per_s and inter_node_gbytes_per_s must both be set or unset"
        elif self.inter_node_gbits_per_s is not None:
            assert self.inter_node_gbytes_per_s is not None
            if not math.isclose(self.inter_node_gbits_per_s / 8, self.inter_node_gbytes_per_s, rel_tol=1e-9):
                yield "inter_node_gbytes_per_s is not inter_node_gbits_per_s / 8"
        if self.missing_intra_bw != (self.intra_node_basis == Basis.MISSING):
            yield "missing_intra_bw disagrees with intra_node_basis"
        if self.missing_inter_bw != (self.inter_node_basis == Basis.MISSING):
            yield "missing_inter_bw disagrees with inter_node_basis"
        if self.source_kind not in ("scraped", "curated"):
            yield f"unknown source_kind {self.source_kind!r}"
