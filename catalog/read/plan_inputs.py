"""Catalog rows → planner inputs: an ``instances`` row, its cheapest on-demand price and its
measurements become a ``planner.hardware.Node``.

Which figure each link gets, best first (the plan says which it used):

- GPU-to-GPU (the NVLink domain, or the PCIe host of a PCIe-only node):
  1. measured ``gpu_to_gpu_gbytes_per_s`` (nvbandwidth): the median, as is when one-way, halved when
     two-way (records without a direction are not used), marked ``achieved="copy"``: one pair's
     achieved rate, which ``planner.comms`` turns back into the line rate it implies (so a pair's
     copy is never taken as the ring's rate for every group size);
  2. measured ``nccl_allreduce_busbw_gbytes_per_s`` from a run on one node over all its GPUs
     (``nodes`` = 1, ``gpus`` = the instance's GPUs): the largest busbw, marked ``achieved="busbw"``;
  3. expected ``gpu_to_gpu_gbytes_per_s`` (as 1., an achieved copy too: the rate a health check
     wants nvbandwidth to reach), or expected/measured ``nvlink_gbytes_per_s`` ×
     ``port_count`` (one NVLink's rate per direction × the GPU's links);
  4. the catalog's ``intra_node_gbytes_per_s`` (stated or inferred), two-way, halved.
- Fabric (per GPU, one way): measured ``nic_gbits_per_s`` or ``ib_write_gbits_per_s`` × ``port_count``,
  then expected ``ib_port_gbits_per_s`` × ``port_count`` (a provider's health check), each a node total
  divided by its GPUs (the median when several agree on a shape); else the catalog's
  ``inter_node_gbits_per_s``. A multi-node NCCL busbw is never used as a fabric figure: part of the
  ring stays on NVLink, so it can exceed the NICs' line rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import duckdb

from catalog.read.text import known
from normalize.gpus import BY_ID, GPUS
from planner.hardware import (
    MISSING,
    Figure,
    Node,
    fabric_gbytes_per_s_per_gpu,
    link_levels,
    one_way_gbytes_per_s,
)

Measurement = dict


def _has(con: duckdb.DuckDBPyConnection, table: str, tables: frozenset[str] | None = None) -> bool:
    """Whether the catalog file has ``table`` (files built before prices and measurements have not):
    in ``tables`` when the caller knows them (``catalog.read.shape``), else asked of the file."""
    if tables is not None:
        return table in tables
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone()
    return bool(found and found[0])


#: The price a plan is costed at: on-demand, or spot when asked (one row's, in one region or any).
ASKED_PRICE = "CASE WHEN $plan_spot THEN spot_usd_per_hour ELSE usd_per_hour END"
_ASKED_WHERE = f"($plan_region = '' OR lower(region) = lower($plan_region)) AND {ASKED_PRICE} IS NOT NULL"


def price_words(region: str = "", spot: bool = False) -> str:
    """Which price a plan is costed at, in words: "cheapest on-demand, any region", "spot, us-east-1"."""
    return f"{'spot' if spot else 'cheapest on-demand'}, {region or 'any region'}"


def cheapest_prices(
    con: duckdb.DuckDBPyConnection, region: str = "", spot: bool = False
) -> dict[tuple[str, str], tuple[float, str]]:
    """(provider, instance_type) → (lowest current USD per hour, its region): on-demand, or spot when
    ``spot``; in ``region`` only when one is named (as ``cheapest --region R --spot`` prices)."""
    if not _has(con, "current_prices"):
        return {}
    rows = con.execute(
        f"""SELECT provider, instance_type, min({ASKED_PRICE}), arg_min(region, {ASKED_PRICE})
           FROM current_prices WHERE {_ASKED_WHERE} GROUP BY 1, 2""",
        {"plan_region": region or "", "plan_spot": spot},
    ).fetchall()
    return {(p, t): (float(usd), where) for p, t, usd, where in rows}


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict]:
    """The rows of an executed query as dicts keyed by column (no pandas on the read path)."""
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def measurements_by_instance(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[Measurement]]:
    """The numeric measurements that name their instance, by (provider, instance_type)."""
    if not _has(con, "measurements"):
        return {}
    records = _records(
        con.execute(
            """SELECT provider, instance_type, kind, metric, value, direction, nodes, gpus, port_count, tool
               FROM measurements
               WHERE provider IS NOT NULL AND instance_type IS NOT NULL AND value IS NOT NULL"""
        )
    )
    found: dict[tuple[str, str], list[Measurement]] = {}
    for record in records:
        found.setdefault((record["provider"], record["instance_type"]), []).append(record)
    return found


def _pick(records: Iterable[Measurement], kind: str, metric: str) -> list[Measurement]:
    return [r for r in records if r["kind"] == kind and r["metric"] == metric]


def _median(values: Iterable[float]) -> float:
    """``statistics.median`` of some values (at least one), as it computes it, without loading
    ``statistics`` (and ``fractions``) on every ranking's path."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _copy_figure(records: list[Measurement], kind: str) -> Figure | None:
    values = []
    for r in _pick(records, kind, "gpu_to_gpu_gbytes_per_s"):
        if r["direction"] == "one-way":
            values.append(r["value"])
        elif r["direction"] == "two-way":
            values.append(one_way_gbytes_per_s(r["value"]))
    if not values:
        return None
    median = _median(values)
    detail = f"{kind} GPU-to-GPU copy, one way, median of {len(values)}"
    # Measured or expected, a copy is what one pair achieved (a health check's expected figure is
    # the copy rate it wants nvbandwidth to reach), never a line rate.
    return Figure(median, kind, detail, achieved="copy")


def intra_figure(row: dict, records: list[Measurement]) -> Figure:
    """The GPU-to-GPU figure, one way per GPU, best source first (see the module docstring)."""
    measured = _copy_figure(records, "measured")
    if measured:
        return measured
    gpus = row["gpu_count"]
    busbw = [
        r["value"]
        for r in _pick(records, "measured", "nccl_allreduce_busbw_gbytes_per_s")
        if r["nodes"] == 1 and known(gpus) and r["gpus"] == gpus
    ]
    if busbw:
        detail = f"NCCL all_reduce busbw on one node of {int(gpus)} GPUs, largest"
        return Figure(max(busbw), "measured", detail, achieved="busbw")
    expected = _copy_figure(records, "expected")
    if expected:
        return expected
    for kind in ("measured", "expected"):
        links = [r for r in _pick(records, kind, "nvlink_gbytes_per_s") if known(r["port_count"])]
        if links:
            per_gpu = _median(r["value"] * r["port_count"] for r in links)
            return Figure(per_gpu, kind, f"{kind} NVLink rate per direction x links")
    two_way, basis = row["intra_node_gbytes_per_s"], row["intra_node_basis"]
    if not known(two_way):
        return Figure(None, "missing", "inferred values excluded" if basis == "inferred" else "not stated")
    return Figure(one_way_gbytes_per_s(two_way), basis, f"{two_way:g} GB/s two-way per GPU / 2")


def inter_figure(row: dict, records: list[Measurement], gpus: int) -> Figure:
    """The fabric figure, GB/s per GPU one way, best source first (see the module docstring)."""
    for kind, metrics in (
        ("measured", ("nic_gbits_per_s", "ib_write_gbits_per_s")),
        ("expected", ("ib_port_gbits_per_s", "nic_gbits_per_s")),
    ):
        for metric in metrics:
            ports = [r for r in _pick(records, kind, metric) if known(r["port_count"])]
            if ports:
                node_gbits = _median(r["value"] * r["port_count"] for r in ports)
                detail = f"{kind} {metric} x ports = {node_gbits:g} Gb/s per node / 8 / {gpus} GPUs"
                return Figure(fabric_gbytes_per_s_per_gpu(node_gbits, gpus), kind, detail)
    gbits, basis = row["inter_node_gbits_per_s"], row["inter_node_basis"]
    if not known(gbits):
        return Figure(None, "missing", "inferred values excluded" if basis == "inferred" else "not stated")
    return Figure(
        fabric_gbytes_per_s_per_gpu(gbits, gpus), basis, f"{gbits:g} Gb/s per node / 8 / {gpus} GPUs"
    )


@lru_cache(maxsize=256)  # by GPU id: a ranking asks for a few dozen, a family id scans the table
def dense_peaks(gpu_model: str | None) -> tuple[float | None, float | None]:
    """Dense (BF16, FP8) TFLOPS of a catalog GPU id from the datasheet table. A family-level id
    (form factor not stated, e.g. ``A100-40GB``) gets the figure its parts of that memory all share
    (both A100 40GB parts: 312), and None where they differ (H100 SXM 989.5, PCIe 756.5)."""
    spec = BY_ID.get(gpu_model or "")
    if spec is not None:
        return spec.dense_bf16_tflops, spec.dense_fp8_tflops
    parts = [g for g in GPUS if gpu_model and gpu_model in (g.family, f"{g.family}-{g.memory_gb:g}GB")]
    bf16 = {g.dense_bf16_tflops for g in parts}
    fp8 = {g.dense_fp8_tflops for g in parts}
    return (bf16.pop() if len(bf16) == 1 else None), (fp8.pop() if len(fp8) == 1 else None)


def gpu_memory_per_gpu(row: dict) -> float | None:
    """A GPU's memory in the catalog's one unit (``gpu_memory_nominal_gb``, docs/schema.md): the
    datasheet's size when the stated figure is it read as GB or as GiB, so one GPU plans alike on
    every cloud (AWS's "80 GiB" A100 and Azure's "80 GB" are both 80, not 85.9 and 80); the stated
    ``gpu_memory_gb`` where a row has no nominal figure (a row built before the column)."""
    nominal = row.get("gpu_memory_nominal_gb")
    return nominal if known(nominal) else row.get("gpu_memory_gb")


def node_from_row(
    row: dict,
    price: tuple[float, str] | None = None,
    records: list[Measurement] | None = None,
    spot: bool = False,
) -> Node | str:
    """The planner's view of one ``filtered_instances`` row, or the reason it cannot have one; ``price``
    is (USD per hour, its region), a spot price when ``spot``."""
    records = records or []
    count = row["gpu_count"]
    if not known(count):
        return "GPUs per instance not stated"
    if count < 1 or count != int(count):
        return f"a fraction of a GPU ({count:g} of one): the planner plans whole GPUs"
    gpus = int(count)
    spec = BY_ID.get(row["gpu_model"] or "")
    memory_gb, memory_basis = gpu_memory_per_gpu(row), "stated"
    if not known(memory_gb):
        if spec is None:
            return f"GPU memory of {row['gpu_model']} not stated"
        memory_gb, memory_basis = spec.memory_gb, "inferred"
    pcie = MISSING
    if spec is not None and spec.pcie_gbytes_per_s:
        pcie = Figure(one_way_gbytes_per_s(spec.pcie_gbytes_per_s), "inferred", "PCIe x16 two-way / 2")
    links = link_levels(
        link=row["intra_node_link"],
        intra=intra_figure(row, records),
        scale_up_gpus=int(row["scale_up_domain_gpus"]) if known(row["scale_up_domain_gpus"]) else None,
        gpus_per_node=gpus,
        pcie=pcie,
        fabric=row["inter_node_fabric"],
        inter=inter_figure(row, records, gpus),
    )
    hbm = row["gpu_memory_gbytes_per_s"]
    bf16_tflops, fp8_tflops = dense_peaks(row["gpu_model"])
    return Node(
        provider=row["provider"],
        instance_type=row["instance_type"],
        gpu_model=row["gpu_model"] or "unknown GPU",
        gpus=gpus,
        memory_gb_per_gpu=float(memory_gb),
        memory_basis=memory_basis,
        hbm_gbytes_per_s=float(hbm) if known(hbm) else None,
        hbm_basis=row["gpu_memory_bw_basis"],
        dense_bf16_tflops=bf16_tflops,
        dense_fp8_tflops=fp8_tflops,
        links=links,
        usd_per_hour=price[0] if price else None,
        price_detail=price_words(price[1], spot) if price else "",
        dense_fp4_tflops=spec.dense_fp4_tflops if spec is not None else None,
    )


#: The columns of a ``filtered_instances`` row that ``node_from_row`` reads. Rows equal in these, in
#: their cheapest price (and its region) and in their measurements become the same node but for the
#: name, so ``catalog.read.plan.rank`` plans one of them per group (tests/unit/test_read_app.py checks
#: that every row's plan is the one it would get alone).
NODE_INPUTS = (
    "gpu_count", "gpu_model", "gpu_memory_nominal_gb", "gpu_memory_gbytes_per_s", "gpu_memory_bw_basis",
    "intra_node_link", "intra_node_gbytes_per_s", "intra_node_basis", "scale_up_domain_gpus",
    "inter_node_fabric", "inter_node_gbits_per_s", "inter_node_basis",
)  # fmt: skip
#: The columns ``node_groups`` reads of its rows.
NODE_COLUMNS = ("provider", "instance_type", "flags", *NODE_INPUTS)
_READINGS = "kind, metric, value, direction, nodes, gpus, port_count, tool"


def node_groups(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict,
    region: str = "",
    spot: bool = False,
    tables: frozenset[str] | None = None,
) -> list[dict]:
    """The rows of ``sql`` (``instances_sql``, or ``plain_sql`` of ``NODE_COLUMNS``): their names, flags
    and ``NODE_INPUTS``, with ``usd_per_hour_min`` and ``price_region`` (their cheapest on-demand
    price, or spot when ``spot``, in ``region`` when one is named: ``cheapest_prices``),
    ``price_flag`` (why that price looks like a placeholder, NULL when nothing does) and
    ``node_group``: rows with the same group number have the same ``NODE_INPUTS``, price and
    measurements (numbered in one query, however many rows);
    ``hardware_group`` the same without the price (rows whose nodes differ only in name and price)."""
    price = "NULL::DOUBLE AS plan_usd, NULL::VARCHAR AS plan_region, NULL::VARCHAR AS plan_flag"
    joins, asked = "", {}
    if _has(con, "current_prices", tables):
        asked = {"plan_region": region or "", "plan_spot": spot}
        # The view's columns as a query of no rows reports them (a tenth of information_schema's time).
        columns = con.execute("SELECT * FROM current_prices LIMIT 0").description or ()
        flagged = any(column[0] == "price_flag" for column in columns)
        flag = f"arg_min(price_flag, {ASKED_PRICE})" if flagged else "NULL::VARCHAR"
        price = "p.plan_usd, p.plan_region, p.plan_flag"
        joins += f""" LEFT JOIN (SELECT provider, instance_type, min({ASKED_PRICE}) AS plan_usd,
                           arg_min(region, {ASKED_PRICE}) AS plan_region, {flag} AS plan_flag
                    FROM current_prices WHERE {_ASKED_WHERE} GROUP BY 1, 2) p
                   USING (provider, instance_type)"""
    readings = "NULL::VARCHAR"
    if _has(con, "measurements", tables):
        readings = "m.readings"
        # Listed, then sorted: equal readings give equal text either way, and a list aggregate
        # with its own ORDER BY sorts group by group, at twice the work.
        joins += f""" LEFT JOIN (SELECT provider, instance_type,
                           CAST(list_sort(list(({_READINGS}))) AS VARCHAR) AS readings
                    FROM measurements WHERE value IS NOT NULL GROUP BY 1, 2) m
                   USING (provider, instance_type)"""
    inputs = ", ".join(NODE_INPUTS)
    return _records(
        con.execute(
            f"""WITH shown AS ({sql}),
               keyed AS (SELECT shown.*, {price}, {readings} AS readings FROM shown {joins})
               SELECT provider, instance_type, flags, plan_flag AS price_flag, {inputs},
                      plan_usd AS usd_per_hour_min, plan_region AS price_region,
                      dense_rank() OVER (ORDER BY {inputs}, plan_usd, plan_region, readings) AS node_group,
                      dense_rank() OVER (ORDER BY {inputs}, readings) AS hardware_group
               FROM keyed ORDER BY provider, instance_type""",
            params | asked,
        )
    )


def measurements_of(
    con: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]], tables: frozenset[str] | None = None
) -> dict[tuple[str, str], list[Measurement]]:
    """``measurements_by_instance`` for the ``(provider, instance_type)`` pairs in ``keys`` only
    (``tables``: the file's tables, when known)."""
    if not keys or not _has(con, "measurements", tables):
        return {}
    records = _records(
        con.execute(
            """SELECT provider, instance_type, kind, metric, value, direction, nodes, gpus, port_count, tool
               FROM measurements
               WHERE value IS NOT NULL AND list_contains($keys, provider || chr(10) || instance_type)""",
            {"keys": [f"{p}\n{i}" for p, i in keys]},
        )
    )
    found: dict[tuple[str, str], list[Measurement]] = {}
    for record in records:
        found.setdefault((record["provider"], record["instance_type"]), []).append(record)
    return found
