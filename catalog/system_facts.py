"""What GPUs' self-reports and clouds' own system descriptions add to a row (pure; run by
``catalog.expectations``): claims with their basis, quote and URL, one fill, and conflicts.

- A measured ``gpu_product_name`` (nvidia-smi) that names a part (``measure.nvidia_smi_xml``) is a
  ``gpu_model`` claim with basis ``measured``. It confirms the row's part, or it contradicts it (the
  row is flagged conflict), or it settles a form factor the row leaves open (a family-level model such
  as ``H100-80GB``): that is said in the row's notes; the row's own fields are left as its sources
  gave them, since the figures that follow a form factor are computed when the row is built.
- An MLPerf system description's fabric (``node_fabric``), link (``gpu_interconnect`` naming
  NVSwitch) and per-GPU NVLink figure are claims with basis ``expected`` (the submitter describes the
  cluster it benchmarked): a row that disagrees is flagged conflict, never changed. An "unreliable"
  reading (DataCrunch's "100GbE InfiniBand") gives nothing. Its RDMA ports become the fabric's
  figure through the health checks' rule (``expectations._fabric_claims``).
- Its front-end NIC (``nic_gbits_per_s`` from a system description) fills a row that states no
  front end, as that NIC's rate; its RDMA NICs ("8x ConnectX-7") a row that states no NIC count.
  Health checks' front-end ports do not: a port's speed is not the bandwidth a VM is allowed (Azure's
  H200 VMs: a 100 Gbit/s port, 80 Gbps stated), and they count ports, not NICs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from measure.nvidia_smi_xml import product_gpu
from normalize.gpus import BY_ID
from normalize.vocab import Basis
from records.offers import Claim
from scrapers.measurements.sparecores import LICENCE as SPARE_CORES_LICENCE

#: Sources that describe a node's NICs (a cloud's system description), not a health check's ports: their
#: ``nic_gbits_per_s`` is a front-end NIC and their RDMA port count a NIC count ("8x ConnectX-7").
FRONTEND_SOURCES = ("mlperf",)
NOTE = "from measurements: "
#: A reading under a share-alike licence says so in its notes; a claim derived from it says so too.
SHARE_ALIKE = SPARE_CORES_LICENCE


@dataclass
class Facts:
    """What one row's readings add: claims (with when they were fetched), fills, notes, conflicts."""

    claims: list[tuple[Claim, Any]] = field(default_factory=list)
    frontend: tuple[Claim, str] | None = None  # a fill of frontend_gbits_per_s, with its note
    nics: tuple[Claim, str] | None = None  # a fill of nic_count, with its note
    notes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def row_facts(group: list[dict], row: dict) -> Facts:
    """Claims, fills, notes and conflicts from one row's product names and system descriptions."""
    facts = Facts()
    for reading in sorted(group, key=_reading_order):
        metric = reading["metric"]
        if metric == "gpu_product_name" and reading["kind"] == "measured":
            _product(facts, reading, row)
        elif metric == "node_fabric" and reading["value_text"] in ("infiniband", "roce"):
            _text_claim(facts, reading, row, "inter_node_fabric", str(reading["value_text"]))
        elif metric == "gpu_interconnect" and reading["value_text"] == "nvswitch":
            _text_claim(facts, reading, row, "intra_node_link", "nvswitch")
        elif metric == "gpu_nvlink_gbytes_per_s":
            _figure_claim(facts, reading, row, "intra_node_gbytes_per_s", float(reading["value"]))
        elif metric == "ib_port_gbits_per_s" and reading["source"] in FRONTEND_SOURCES:
            _nic_count(facts, reading, row)
        elif metric == "nic_gbits_per_s" and reading["source"] in FRONTEND_SOURCES:
            ports = int(reading["port_count"]) if _known(reading.get("port_count")) else 1
            _frontend(facts, reading, row, float(reading["value"]) * ports)
    return facts


def _claim(reading: dict, field_name: str, value: float | str, basis: Basis, qualifiers: str) -> Claim:
    version = f" {reading['tool_version']}" if _known(reading.get("tool_version")) else ""
    return Claim(
        field=field_name,
        value=value,
        quote=str(reading["quote"]),
        source_url=str(reading["source_url"]),
        context=f"{reading['tool']}{version} › {reading['locator']}",
        basis=basis,
        qualifiers=qualifiers,
    )


def _product(facts: Facts, reading: dict, row: dict) -> None:
    name = str(reading["value_text"])
    part = product_gpu(name)
    if part is None or not part.settled:
        return
    gpus = int(reading["gpus"]) if _known(reading.get("gpus")) else None
    said = f"{gpus} GPUs report {name!r}" if gpus else f"the GPUs report {name!r}"
    licence = f"; {SHARE_ALIKE}" if SHARE_ALIKE in str(reading.get("notes") or "") else ""
    claim = _claim(reading, "gpu_model", part.id, Basis.MEASURED, f"{said}: {part.how}{licence}")
    facts.claims.append((claim, reading.get("fetched_at")))
    model = str(row.get("gpu_model") or "")
    where = f"nvidia-smi on a real instance ({reading['source_url']})"
    if model == part.id:
        return
    if model not in BY_ID and BY_ID[part.id].family == _family(model):
        facts.notes.append(
            f"{NOTE}gpu_model {model} leaves the form factor open; {said} = {part.id}, {where}"
        )
    else:
        facts.conflicts.append(
            f"conflicting claims for gpu_model: {model} vs {part.id} measured ({said}, {where})"
        )


def _family(model: str) -> str:
    return model.rsplit("-", 1)[0] if model.endswith("GB") else model


def _text_claim(facts: Facts, reading: dict, row: dict, field_name: str, value: str) -> None:
    qualifiers = f"{reading['tool']}: {reading['notes']}"
    facts.claims.append(
        (_claim(reading, field_name, value, Basis.EXPECTED, qualifiers), reading.get("fetched_at"))
    )
    shown = row.get(field_name)
    if shown not in (None, "unknown", value):
        where = f"{reading['tool']}, {reading['source_url']}"
        facts.conflicts.append(f"conflicting claims for {field_name}: {shown} vs {value} expected ({where})")


def _figure_claim(facts: Facts, reading: dict, row: dict, field_name: str, value: float) -> None:
    qualifiers = f"{reading['tool']}: {reading['notes']}"
    facts.claims.append(
        (_claim(reading, field_name, value, Basis.EXPECTED, qualifiers), reading.get("fetched_at"))
    )
    shown = row.get(field_name)
    if shown is not None and _known(shown) and not math.isclose(float(shown), value, rel_tol=1e-6):
        where = f"{reading['tool']}, {reading['source_url']}"
        facts.conflicts.append(
            f"conflicting claims for {field_name}: {float(shown):g} vs {value:g} expected ({where})"
        )


def _frontend(facts: Facts, reading: dict, row: dict, gbits: float) -> None:
    qualifiers = f"{reading['tool']}: {reading['notes']} (the NIC's rate; no allowance is stated)"
    claim = _claim(reading, "frontend_gbits_per_s", gbits, Basis.EXPECTED, qualifiers)
    facts.claims.append((claim, reading.get("fetched_at")))
    if not _known(row.get("frontend_gbits_per_s")) and facts.frontend is None:
        said = f"{reading['tool']}, {str(reading['notes']).split(';', 1)[0]}"
        note = f"{NOTE}frontend_gbits_per_s {gbits:g} expected: {said} ({reading['source_url']})"
        facts.frontend = (claim, note)


def _nic_count(facts: Facts, reading: dict, row: dict) -> None:
    if not _known(reading.get("port_count")):
        return
    count = float(reading["port_count"])
    qualifiers = f"{reading['tool']}: {str(reading['notes']).split(';', 1)[0]}"
    claim = _claim(reading, "nic_count", count, Basis.EXPECTED, qualifiers)
    facts.claims.append((claim, reading.get("fetched_at")))
    shown = row.get("nic_count")
    if shown is not None and _known(shown):
        if not math.isclose(float(shown), count):
            where = f"{reading['tool']}, {reading['source_url']}"
            facts.conflicts.append(
                f"conflicting claims for nic_count: {float(shown):g} vs {count:g} expected ({where})"
            )
    elif facts.nics is None:
        facts.nics = (claim, f"{NOTE}nic_count {count:g} expected: {qualifiers} ({reading['source_url']})")


def _reading_order(reading: dict) -> tuple:
    """By source URL, locator and metric, a missing one last (as pandas sorts NaN)."""
    return tuple((reading[k] is None, reading[k] or "") for k in ("source_url", "locator", "metric"))


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))
