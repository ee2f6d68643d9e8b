"""Ranking by price: the cheapest rows that answer a question, and what their fabric costs.

"8 GPUs, NVSwitch, fabric >= 3,200 Gb/s, cheapest first" is ``cheapest(con, PriceQuestion(gpu_counts=(8,),
intra_links=("nvswitch",), min_fabric_gbits_per_s_per_node=3200))``. A pure function: a DuckDB connection
in, a DataFrame out (``python -m catalog cheapest`` and the app ask it). Prices are on-demand
(``catalog.pricing``); the cheapest spot price is shown beside them, never ranked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from normalize.factors import CURRENCY  # the name the price questions' callers import

if TYPE_CHECKING:  # annotations only: the CLI builds its parser from ORDERS without loading either
    import duckdb
    import pandas as pd

#: Values one filter may list (there are 20 providers and a dozen GPU counts), and GPUs per instance.
MAX_FILTER_VALUES = 100
MAX_GPUS = 1024
#: normalize.bounds.FABRIC_MAX_GBITS_PER_S, the fabric no node has (not imported: normalize.bounds
#: loads pint, which the read side never does; a test holds the two equal).
FABRIC_MAX_GBITS_PER_S = 30_000.0

# What a ranking can be ordered by: the column, cheapest first.
ORDERS = {
    "usd_per_hour": "min_usd_per_hour",
    "usd_per_gpu_hour": "usd_per_gpu_hour",
    "usd_per_fabric_gbytes_per_s": "usd_per_gpu_hour_per_fabric_gbytes_per_s",
}


@dataclass(frozen=True)
class PriceQuestion:
    """Which rows to rank, and by what. Empty or zero means "no filter".

    - ``gpu_counts`` (exact GPUs per instance), ``intra_links`` (``Link`` values), ``fabrics``
      (``Fabric`` values), ``providers``: a row matches one of the listed values.
    - ``min_fabric_gbits_per_s_per_node``: at least this fabric per node; a row whose figure is not
      known does not match. ``include_inferred`` False counts only figures the provider states.
    - ``include_stale`` False drops rows kept from a failed refresh.
    - ``priced_only`` drops rows with no on-demand price; otherwise they come last, unranked.
    - ``order_by``: a key of ``ORDERS``.
    - ``region``: price each row in this region only (as its price source names it; a row not
      priced there has no price); ``spot``: rank by the spot price instead of on-demand. Without
      either, the cheapest on-demand region of each row.
    """

    gpu_counts: tuple[float, ...] = ()
    intra_links: tuple[str, ...] = ()
    fabrics: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    min_fabric_gbits_per_s_per_node: float = 0
    include_inferred: bool = True
    include_stale: bool = True
    priced_only: bool = False
    order_by: str = "usd_per_hour"
    region: str | None = None
    spot: bool = False

    def __post_init__(self) -> None:
        """ValueError naming the filter for a number no row can have (NaN once matched nothing and
        dropped the fabric filter in silence) or thousands of values (each a bound parameter);
        repeated values are asked once."""
        gpus, providers = tuple(dict.fromkeys(self.gpu_counts)), tuple(dict.fromkeys(self.providers))
        for name, values in (("gpus", gpus), ("provider", providers)):
            if len(values) > MAX_FILTER_VALUES:
                raise ValueError(f"{name}: {len(values):,} values, at most {MAX_FILTER_VALUES}")
        object.__setattr__(self, "gpu_counts", gpus)
        object.__setattr__(self, "providers", providers)
        for count in self.gpu_counts:
            if not (math.isfinite(count) and 0 < count <= MAX_GPUS):
                raise ValueError(f"gpus: {count:g} is not a number of GPUs above 0, at most {MAX_GPUS:,}")
        fabric = self.min_fabric_gbits_per_s_per_node
        if not (math.isfinite(fabric) and 0 <= fabric <= FABRIC_MAX_GBITS_PER_S):
            bound = f"{FABRIC_MAX_GBITS_PER_S:,.0f} Gbit/s per node"
            raise ValueError(f"min_fabric_gbits: {fabric:g} is not a fabric from 0 to {bound}")


_RANKED = """
WITH spot AS (
    SELECT provider, instance_type, min(spot_usd_per_hour) AS min_spot_usd_per_hour
    FROM current_prices GROUP BY provider, instance_type
), source AS (
    SELECT provider, instance_type, region, arg_min(source_url, usd_per_hour) AS price_source_url
    FROM current_prices WHERE usd_per_hour IS NOT NULL GROUP BY provider, instance_type, region
), asked AS (
    SELECT provider, instance_type,
           min(CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END) AS usd,
           arg_min(region, CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END) AS asked_region,
           arg_min(source_url, CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END) AS asked_source,
           {asked_flag} AS asked_flag
    FROM current_prices
    WHERE ($region IS NULL OR lower(region) = lower($region))
      AND (CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END) IS NOT NULL
    GROUP BY provider, instance_type
), base AS (
    SELECT i.* REPLACE (
        CASE WHEN $inferred OR inter_node_basis <> 'inferred' THEN inter_node_gbits_per_s END
            AS inter_node_gbits_per_s,
        CASE WHEN $inferred OR inter_node_basis <> 'inferred' THEN inter_node_gbytes_per_s END
            AS inter_node_gbytes_per_s,
        CASE WHEN $asking THEN asked.usd ELSE min_usd_per_hour END AS min_usd_per_hour,
        CASE WHEN $asking THEN asked.usd / i.gpu_count ELSE usd_per_gpu_hour END AS usd_per_gpu_hour,
        CASE WHEN $asking THEN asked.asked_region ELSE price_region END AS price_region),
        spot.min_spot_usd_per_hour,
        CASE WHEN $asking THEN asked.asked_source ELSE source.price_source_url END AS price_source_url,
        asked.asked_flag
    FROM instances i
    LEFT JOIN spot USING (provider, instance_type)
    LEFT JOIN asked ON asked.provider = i.provider AND asked.instance_type = i.instance_type
    LEFT JOIN source ON source.provider = i.provider AND source.instance_type = i.instance_type
        AND source.region = i.price_region
), derived AS (
    SELECT *, CASE WHEN inter_node_gbytes_per_s > 0 THEN min_usd_per_hour / inter_node_gbytes_per_s END
        AS usd_per_gpu_hour_per_fabric_gbytes_per_s
    FROM base
)
SELECT CASE WHEN {key} IS NOT NULL
            THEN row_number() OVER (ORDER BY {key} NULLS LAST, provider, instance_type) END AS rank,
       provider, instance_type, gpu_model, gpu_count, intra_node_link, scale_up_domain_gpus,
       inter_node_fabric, inter_node_gbits_per_s, inter_node_basis,
       min_usd_per_hour, usd_per_gpu_hour, price_region, regions, min_spot_usd_per_hour,
       usd_per_gpu_hour_per_fabric_gbytes_per_s, price_source_url,
       CASE WHEN $asking THEN asked_flag ELSE {flag} END AS price_flag, stale, source_kind,
       '{currency}' AS currency, CASE WHEN $spot THEN 'spot' ELSE 'on-demand' END AS price_kind
FROM derived {where}
ORDER BY {key} NULLS LAST, provider, instance_type
"""


def _where(question: PriceQuestion) -> tuple[list[str], dict]:
    where: list[str] = []
    params: dict[str, object] = {
        "inferred": question.include_inferred,
        "region": question.region,
        "spot": question.spot,
        "asking": question.region is not None or question.spot,
    }
    lists = (
        ("gpu_count", "gpu_counts", [float(c) for c in question.gpu_counts]),
        ("intra_node_link", "intra_links", list(question.intra_links)),
        ("inter_node_fabric", "fabrics", list(question.fabrics)),
        ("provider", "providers", list(question.providers)),
    )
    for column, name, values in lists:
        if values:
            where.append(f"list_contains(${name}, {column})")
            params[name] = values
    if question.min_fabric_gbits_per_s_per_node > 0:
        where.append("inter_node_gbits_per_s >= $min_fabric")
        params["min_fabric"] = float(question.min_fabric_gbits_per_s_per_node)
    if not question.include_stale:
        where.append("NOT stale")
    if question.priced_only:
        where.append("min_usd_per_hour IS NOT NULL")
    return where, params


def cheapest(con: duckdb.DuckDBPyConnection, question: PriceQuestion = PriceQuestion()) -> pd.DataFrame:
    """The rows matching ``question``, cheapest first by ``question.order_by``; unpriced rows last.

    Columns: ``rank`` (NULL for a row the order cannot rank), the row's identity, GPUs, link and
    fabric, its price columns (in ``question.region`` and spot when asked; ``currency`` and
    ``price_kind`` say which), ``min_spot_usd_per_hour`` (cheapest current spot price, any region),
    ``usd_per_gpu_hour_per_fabric_gbytes_per_s`` (``usd_per_gpu_hour`` / the fabric's GB/s per GPU,
    i.e. ``min_usd_per_hour`` / ``inter_node_gbytes_per_s``: what one GB/s between nodes costs per
    hour; NULL without a price or a fabric figure), ``price_source_url`` (where the cheapest
    price is published) and ``price_flag`` (why that price looks like a placeholder; NULL in a
    catalog built before flags). ValueError for an unknown ``order_by``.
    """
    if question.order_by not in ORDERS:
        raise ValueError(f"order_by {question.order_by!r}: choose one of {', '.join(ORDERS)}")
    where, params = _where(question)
    flagged = {
        table
        for (table,) in con.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'price_flag'"
        ).fetchall()
    }
    asked_price = "CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END"
    sql = _RANKED.format(
        key=ORDERS[question.order_by],
        where="WHERE " + " AND ".join(where) if where else "",
        flag="price_flag" if "instances" in flagged else "NULL::VARCHAR",
        asked_flag=f"arg_min(price_flag, {asked_price})" if "current_prices" in flagged else "NULL::VARCHAR",
        currency=CURRENCY,
    )
    return con.execute(sql, params).df()


def placeholder_caution(flag: object) -> str:
    """What a price sentence adds when the price looks like a placeholder (``prices.price_flag``):
    ", a price that looks like a placeholder (on-demand = spot = ...)"; "" for a price nothing flags."""
    if not isinstance(flag, str) or not flag.strip():
        return ""
    why = flag.strip().removeprefix("looks like a placeholder").lstrip(": ")
    return ", a price that looks like a placeholder" + (f" ({why})" if why else "")


def cautions(frame: pd.DataFrame, limit: int = 5) -> list[str]:
    """One sentence per row of ``cheapest``'s answer whose price looks like a placeholder
    (``price_flag``), in its order, at most ``limit``: "mithril h100-80gb.sxm.8x (rank 1): $1.00 per
    GPU-hour, a price that looks like a placeholder (...)"."""
    import pandas as pd

    if "price_flag" not in frame.columns:
        return []
    found = []
    for row in frame[frame["price_flag"].notna()].head(limit).to_dict("records"):
        per_gpu, rank = row.get("usd_per_gpu_hour"), row.get("rank")
        price = f"${per_gpu:,.2f} per GPU-hour" if pd.notna(per_gpu) else "its price"
        where = f" (rank {int(rank)})" if pd.notna(rank) else ""
        caution = placeholder_caution(row["price_flag"])
        found.append(f"{row['provider']} {row['instance_type']}{where}: {price}{caution}.")
    return found


def unlisted_prices(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Instance types a price source lists that have no catalog row (a coverage finding: the
    provider's documents never describe them), per provider, cheapest first."""
    return con.execute(
        """SELECT provider, instance_type, count(DISTINCT region) AS regions,
                  min(usd_per_hour) AS min_usd_per_hour, any_value(source_url) AS source_url
           FROM current_prices p
           WHERE NOT EXISTS (SELECT 1 FROM instances i
                             WHERE i.provider = p.provider AND i.instance_type = p.instance_type)
           GROUP BY provider, instance_type
           ORDER BY provider, min_usd_per_hour NULLS LAST, instance_type"""
    ).df()


def region_prices(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """One row's current prices, one line per region as published, cheapest on-demand first: region,
    ``usd_per_hour``, ``spot_usd_per_hour``, the source's own words (``quote``), where in the source
    (``context``), ``notes``, ``source_url`` and ``fetched_at``. Empty without a ``current_prices``
    view (a catalog built before prices)."""
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'current_prices'"
    ).fetchone()
    if not found or not found[0]:
        import pandas as pd

        columns = ["region", "usd_per_hour", "spot_usd_per_hour", "quote", "context", "notes", "source_url"]
        return pd.DataFrame(columns=[*columns, "fetched_at"])
    return con.execute(
        """SELECT region, usd_per_hour, spot_usd_per_hour, quote, context, notes, source_url, fetched_at
           FROM current_prices WHERE provider = $p AND instance_type = $i
           ORDER BY usd_per_hour NULLS LAST, region""",
        {"p": provider, "i": instance_type},
    ).df()


def regions(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every region a current price names, sorted."""
    return [r for (r,) in con.execute("SELECT DISTINCT region FROM current_prices ORDER BY 1").fetchall()]
