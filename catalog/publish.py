"""The last gate: every row about to be published, as written (after expectations, conflicts and prices
were joined in), passes the same invariants a fresh row passes, or the refresh aborts and the old
catalog stays."""

from __future__ import annotations

import math

import duckdb

from catalog.previous import row_offer
from catalog.validate import problems
from normalize.errors import InvalidOffer, Unpublishable
from normalize.factors import BITS_PER_BYTE
from records.offers import InstanceOffer

MAX_NAMED = 3

# (value column, basis column, the bases under which the value may be NULL)
_VALUE_BASIS = (
    ("intra_node_gbytes_per_s", "intra_node_basis", {"missing", "not-applicable"}),
    ("inter_node_gbits_per_s", "inter_node_basis", {"missing"}),
    ("gpu_memory_gbytes_per_s", "gpu_memory_bw_basis", {"missing"}),
)


def _consistency(row: dict, offer: InstanceOffer) -> list[str]:
    """What the columns of one row say about each other: a value and its basis, bits and bytes, prices."""
    found = []
    for value, basis, may_be_null in _VALUE_BASIS:
        if (row[value] is None) != (row[basis] in may_be_null):
            found.append(f"{value} {row[value]} with basis {row[basis]}")
    gbits, gbytes = offer.inter_node_gbits_per_s, offer.inter_node_gbytes_per_s
    if (gbits is None) != (gbytes is None) or (
        gbits is not None and gbytes is not None and not math.isclose(gbits / BITS_PER_BYTE, gbytes)
    ):
        found.append(f"inter_node_gbytes_per_s {gbytes} is not inter_node_gbits_per_s {gbits} / 8")
    price, per_gpu, gpus = offer.min_usd_per_hour, offer.usd_per_gpu_hour, offer.gpu_count
    if price is not None and per_gpu is not None and gpus and not math.isclose(price / gpus, per_gpu):
        found.append(f"usd_per_gpu_hour {per_gpu} is not min_usd_per_hour {price} / gpu_count {gpus}")
    return found


def published_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every invariant a published row breaks, as "provider/instance_type: what"."""
    cursor = con.execute("SELECT * FROM instances ORDER BY provider, instance_type")
    names = [d[0] for d in cursor.description]
    found = []
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        where = f"{row['provider']}/{row['instance_type']}"
        try:
            offer = row_offer(row, ())
        except (InvalidOffer, ValueError) as exc:
            found.append(f"{where}: unreadable: {exc}")
            continue
        found += [f"{where}: {p}" for p in (*problems(offer), *_consistency(row, offer))]
    return found


def check_published(con: duckdb.DuckDBPyConnection) -> None:
    """Raise Unpublishable, naming the first rows, if any row about to be published breaks an invariant."""
    found = published_problems(con)
    if found:
        shown = "; ".join(found[:MAX_NAMED]) + (
            f" (+{len(found) - MAX_NAMED} more)" if len(found) > MAX_NAMED else ""
        )
        raise Unpublishable(f"the catalog about to be published breaks its invariants: {shown}")
