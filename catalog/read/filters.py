"""What the user asked for (``Filters``) and the SQL WHERE clause it becomes.

Every user value is bound as a parameter, never spliced into the SQL. The clause reads the columns of
``catalog.read.queries.instances_sql`` (the catalog's own plus the derived ones), so a filter on
"fabric GB/s per GPU" and the column a user sees are the same number.
"""

from __future__ import annotations

import re

from records.frozen import record

WORKLOADS = ("tensor", "pipeline", "expert")

# A search term that names a GPU count: "8x", "8-GPU", "8gpus", "8-gpus".
_COUNT_TERM = re.compile(r"^(\d+(?:\.\d+)?)(?:x|-?gpus?)$")


@record
class Filters:
    """The question: which rows to show and how to rank them. Empty or zero means "no filter".

    - ``providers``, ``gpu_counts`` (exact GPUs per instance), ``intra_links`` (``Link`` values),
      ``fabrics`` (``Fabric`` values): a row matches one of the listed values.
    - ``min_scale_up_domain_gpus``: the row's NVLink-class domain (NVSwitch, NVLink, NVLink bridge,
      Infinity Fabric) holds at least this many GPUs; PCIe and single-GPU rows never match.
    - ``min_fabric_gbits_per_s_per_node`` / ``min_fabric_gbytes_per_s_per_gpu``: at least this fabric
      bandwidth; a row whose figure is unknown does not match.
    - ``max_usd_per_gpu_hour``: cheapest on-demand price per GPU-hour at most this (rows with no
      price do not match); only meaningful when the catalog has prices.
    - ``search``: see ``parse_search``.
    - ``region``: only rows with a current price in this region (as its price source names it,
      without case), priced there; ``spot``: price by the spot price instead of on-demand (a row
      with no spot price has none). Only meaningful when the catalog has prices.
    - ``min_gpu_memory_gb`` / ``min_total_gpu_memory_gb``: GPU memory per GPU / per instance at least
      this, compared like for like (``gpu_memory_per_gpu_gb`` and ``gpu_memory_total_gb`` of
      ``catalog.read.queries.instances_sql``: an H100 is 80 GB whether its page says "80 GB" or
      "80 GiB"; a fraction of a GPU has its slice's memory); a row whose memory is not known does not
      match.
    - ``peer_access``: the row's ``gpu_peer_access`` is one of these (``yes``, ``no``, ``unknown``,
      ``not-applicable``): whether its GPUs read each other's memory directly.
    - ``include_inferred`` False treats datasheet-inferred bandwidths as not stated, so only the
      providers' own figures count (in scores and in the bandwidth filters alike).
    """

    workload: str = "tensor"
    providers: tuple[str, ...] = ()
    gpu_counts: tuple[float, ...] = ()
    intra_links: tuple[str, ...] = ()
    fabrics: tuple[str, ...] = ()
    min_scale_up_domain_gpus: int = 0
    # Floats, as the sidebar's number boxes give them: the default question and an untouched sidebar
    # are then the same cache key (Streamlit's hash tells 0 from 0.0), which ui.serve.warm relies on.
    min_fabric_gbits_per_s_per_node: float = 0.0
    min_fabric_gbytes_per_s_per_gpu: float = 0.0
    max_usd_per_gpu_hour: float | None = None
    search: str = ""
    region: str = ""
    spot: bool = False
    min_gpu_memory_gb: float = 0.0
    min_total_gpu_memory_gb: float = 0.0
    peer_access: tuple[str, ...] = ()
    include_stale: bool = True
    include_curated: bool = True
    include_inferred: bool = True


#: Every row, ranked for tensor parallelism: the default question.
NO_FILTERS = Filters()


# Every term is a bound parameter scanned against every row: a 62 KB link with 10,500 alternatives
# once held a server 25 s and 3.26 GB. A search names a handful of instances or GPUs.
MAX_SEARCH_CHARS = 500
MAX_SEARCH_ALTERNATIVES = 20
MAX_SEARCH_TERMS = 40


def search_problem(text: str) -> str | None:
    """Why the search text is refused (one line naming the cap; never the text itself), or None."""
    if len(text) > MAX_SEARCH_CHARS:
        return f"Search: {len(text):,} characters, over the cap of {MAX_SEARCH_CHARS}; search not applied."
    alternatives = [part.split() for part in text.split(",")]
    count = sum(1 for terms in alternatives if terms)
    if count > MAX_SEARCH_ALTERNATIVES:
        return (
            f"Search: {count:,} alternatives (separated by commas), over the cap of "
            f"{MAX_SEARCH_ALTERNATIVES}; search not applied."
        )
    terms = sum(len(t) for t in alternatives)
    if terms > MAX_SEARCH_TERMS:
        return f"Search: {terms:,} terms, over the cap of {MAX_SEARCH_TERMS}; search not applied."
    return None


def parse_search(text: str) -> tuple[tuple[str, ...], ...]:
    """The search box: alternatives separated by commas, each a list of terms that must all match.

    ``"H100 SXM, B200"`` is (H100 and SXM) or B200; ``"p5.48xlarge, a3-highgpu-8g"`` names two
    instances. Terms are lower-cased; empty alternatives are dropped. ValueError (``search_problem``)
    past the caps on characters, alternatives and terms.
    """
    problem = search_problem(text)
    if problem:
        raise ValueError(problem)
    alternatives = (tuple(part.lower().split()) for part in text.split(","))
    return tuple(terms for terms in alternatives if terms)


def _term_sql(term: str, name: str, params: dict) -> str:
    count = _COUNT_TERM.match(term)
    if count:
        params[name] = float(count.group(1))
        return f"gpu_count = ${name}"
    params[name] = term
    return f"contains(search_text, ${name})"


def _search_sql(text: str, params: dict) -> str | None:
    alternatives = []
    for i, terms in enumerate(parse_search(text)):
        conditions = [_term_sql(term, f"term_{i}_{j}", params) for j, term in enumerate(terms)]
        alternatives.append("(" + " AND ".join(conditions) + ")")
    return "(" + " OR ".join(alternatives) + ")" if alternatives else None


def where_sql(filters: Filters, *, nvlink_class_sql: str, priced: bool) -> tuple[list[str], dict]:
    """The WHERE conditions of ``filters`` and their bound parameters.

    ``nvlink_class_sql`` is the SQL list of NVLink-class links; ``priced`` says whether the rows carry
    ``usd_per_gpu_hour`` (without prices the price filter cannot apply and is ignored).
    """
    where: list[str] = []
    params: dict = {}
    lists = (
        ("provider", "providers", filters.providers),
        ("gpu_count", "gpu_counts", tuple(float(c) for c in filters.gpu_counts)),
        ("intra_node_link", "intra_links", filters.intra_links),
        ("inter_node_fabric", "fabrics", filters.fabrics),
        ("gpu_peer_access", "peer_access", filters.peer_access),
    )
    for column, name, values in lists:
        if values:
            where.append(f"list_contains(${name}, {column})")
            params[name] = list(values)
    minimums = (
        ("scale_up_domain_gpus", "min_domain", filters.min_scale_up_domain_gpus),
        ("inter_node_gbits_per_s", "min_fabric_node", filters.min_fabric_gbits_per_s_per_node),
        ("fabric_gbytes_per_s_per_gpu", "min_fabric_gpu", filters.min_fabric_gbytes_per_s_per_gpu),
    )
    for column, name, minimum in minimums:
        if minimum and minimum > 0:
            where.append(f"{column} >= ${name}")
            params[name] = float(minimum)
    if filters.min_scale_up_domain_gpus and filters.min_scale_up_domain_gpus > 0:
        where.append(f"intra_node_link IN {nvlink_class_sql}")
    memory = (
        ("gpu_memory_per_gpu_gb", "min_mem", filters.min_gpu_memory_gb),
        ("gpu_memory_total_gb", "min_total_mem", filters.min_total_gpu_memory_gb),
    )
    for column, name, minimum in memory:
        if minimum and minimum > 0:
            where.append(f"{column} >= ${name}")
            params[name] = float(minimum)
    if priced and filters.region:
        where.append("usd_per_gpu_hour IS NOT NULL")
    if priced and filters.max_usd_per_gpu_hour is not None:
        where.append("usd_per_gpu_hour <= $max_price")
        params["max_price"] = float(filters.max_usd_per_gpu_hour)
    search = _search_sql(filters.search, params)
    if search:
        where.append(search)
    if not filters.include_stale:
        where.append("NOT stale")
    if not filters.include_curated:
        where.append("source_kind <> 'curated'")
    return where, params


def describe(filters: Filters) -> str:
    """The filter in words, for a download or a caption: "providers aws, azure; 8 GPUs; link
    nvswitch; fabric ≥ 3,200 Gb/s per node", or "no filter". User text is quoted as typed."""
    parts = []
    if filters.search.strip():
        parts.append(f"search {filters.search.strip()!r}")
    lists = (
        ("providers", filters.providers),
        ("GPUs per instance", tuple(f"{c:g}" for c in filters.gpu_counts)),
        ("GPU-to-GPU link", filters.intra_links),
        ("fabric", filters.fabrics),
        ("GPU peer access", filters.peer_access),
    )
    parts += [f"{name} {', '.join(values)}" for name, values in lists if values]
    if filters.min_scale_up_domain_gpus > 0:
        parts.append(f"NVLink domain ≥ {filters.min_scale_up_domain_gpus} GPUs")
    if filters.min_fabric_gbits_per_s_per_node > 0:
        parts.append(f"fabric ≥ {filters.min_fabric_gbits_per_s_per_node:,g} Gb/s per node, one way")
    if filters.min_fabric_gbytes_per_s_per_gpu > 0:
        parts.append(f"fabric ≥ {filters.min_fabric_gbytes_per_s_per_gpu:,g} GB/s per GPU, one way")
    if filters.min_gpu_memory_gb > 0:
        parts.append(f"GPU memory ≥ {filters.min_gpu_memory_gb:,g} GB per GPU")
    if filters.min_total_gpu_memory_gb > 0:
        parts.append(f"GPU memory ≥ {filters.min_total_gpu_memory_gb:,g} GB per instance")
    if filters.region:
        parts.append(f"priced in {filters.region}")
    if filters.spot:
        parts.append("spot prices")
    if filters.max_usd_per_gpu_hour is not None:
        parts.append(f"price ≤ {filters.max_usd_per_gpu_hour:,g} USD per GPU-hour")
    parts += [
        words
        for off, words in (
            (not filters.include_stale, "stale rows left out"),
            (not filters.include_curated, "curated rows left out"),
            (not filters.include_inferred, "inferred figures left out"),
        )
        if off
    ]
    return "; ".join(parts) or "no filter"
