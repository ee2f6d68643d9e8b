"""What Azure's series summaries and InfiniBand page state in prose.

Summaries carry the figures the size tables lack: "interconnected with 900 GB/s NVLink",
"3.2 Tbps of interconnect bandwidth per VM", "its own dedicated ... 400 Gbps ... InfiniBand
connection" for each GPU. Some print bytes for bits ("1.6 TB/s", "200 GB/s ... HDR InfiniBand"):
those are reread through ``normalize.bounds.network_rate`` and marked unit-suspect. Rack-level
sentences (NVL72 totals) and comparisons ("800Gbps vs 400 Gbps") describe no single VM and are
skipped.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from normalize.bounds import network_rate
from normalize.gpus import family_of
from normalize.units import Bandwidth, find_bandwidths
from normalize.vocab import (
    INFINIBAND_RATE_GBITS,
    INFINIBAND_RATE_SOURCE,
    Basis,
    Fabric,
    Link,
    link_from_text,
)
from records.offers import Claim
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import sentences

_RACK = re.compile(r"(?i)rack|NVL72|cross[- ]sectional")
_COMPARISON = re.compile(r"(?i)\bvs\b|compared to")
_FABRIC = re.compile(r"(?i)infini\s*band|interconnect bandwidth")
_MEMORY_BANDWIDTH = re.compile(r"(?i)memory bandwidth")
_AGGREGATE = re.compile(r"(?i)^\s*(?:of\s+)?aggregate")
_GENERATIONS = "|".join(INFINIBAND_RATE_GBITS)
_RATES_FOR = re.compile(
    rf"\b(?P<gen>{_GENERATIONS}) rates for (?P<names>.*?)"
    rf"(?=,?\s*(?:and\s+)?\b(?:{_GENERATIONS}) rates for|\s+virtual machines|\.\s*$|$)"
)


def gpu_sentences(summary: str) -> list[str]:
    """Summary sentences that name a GPU family, in order."""
    return [s for s in sentences(summary) if family_of(s) is not None]


def _about_one_vm(sentence: str) -> bool:
    return not (_RACK.search(sentence) or _COMPARISON.search(sentence))


def claims(summary: str, url: str, gpu_count: float | None) -> list[Claim]:
    """Link, fabric and memory-bandwidth claims stated in a series summary."""
    return list(_summary_claims(summary, url, gpu_count))


@functools.lru_cache(maxsize=256)
def _summary_claims(summary: str, url: str, gpu_count: float | None) -> tuple[Claim, ...]:
    """Every size of a series reads the same summary: it is parsed once per (summary, GPU count)."""
    found: list[Claim] = []
    fabric_named = False
    for sentence in filter(_about_one_vm, sentences(summary)):
        figures = find_bandwidths(sentence)
        if _FABRIC.search(sentence):
            found += _fabric_claims(sentence, figures, url, gpu_count)
            if not fabric_named and re.search(r"(?i)infini\s*band", sentence):
                found.append(
                    fact(
                        "inter_node_fabric",
                        Fabric.INFINIBAND.value,
                        quote=sentence,
                        source_url=url,
                        context="series summary",
                    )
                )
                fabric_named = True
        elif (link := link_from_text(sentence)) not in (None, Link.PCIE):  # "A100 PCIe GPU" is a card
            found += _scale_up_claims(sentence, figures, link, url)
        if _MEMORY_BANDWIDTH.search(sentence):
            found += [
                bandwidth_claim(
                    "gpu_memory_gbytes_per_s", f, quote=sentence, source_url=url, context="series summary"
                )
                for f in figures
                if f.is_bytes
            ]
    return tuple(found)


def _scale_up_claims(sentence: str, figures: list[Bandwidth], link: Link, url: str) -> list[Claim]:
    found = [fact("intra_node_link", link.value, quote=sentence, source_url=url, context="series summary")]
    in_bytes = [f for f in figures if f.is_bytes]
    aggregate = [f for f in in_bytes if _AGGREGATE.match(sentence[f.span[1] :])]
    chosen = (aggregate or in_bytes)[:1]
    for figure in chosen:
        per_gpu = dataclasses.replace(figure, count=1)  # "4× 1.8 TB/s ... per VM" is 1.8 per GPU
        qualifier = "per GPU" + ("; aggregate of all links" if aggregate else "")
        if figure.count > 1:
            qualifier += f"; {figure.count} x {figure.each.magnitude:g} per VM as printed"
        found.append(
            bandwidth_claim(
                "intra_node_gbytes_per_s",
                per_gpu,
                quote=sentence,
                source_url=url,
                context="series summary",
                extra_qualifiers=qualifier,
            )
        )
    return found


def _fabric_claims(sentence: str, figures: list[Bandwidth], url: str, gpu_count: float | None) -> list[Claim]:
    found = []
    for figure in figures:
        if figure.per == "gpu":
            if not gpu_count or gpu_count < 1:  # a GPU slice has no InfiniBand connection of its own
                continue
            links = int(gpu_count)
            figure, suspect = network_rate(figure, links=1)
            total = dataclasses.replace(figure, count=figure.count * links)
        else:
            links = figure.count if figure.count > 1 else int(gpu_count or 1)
            total, suspect = network_rate(figure, links=links)
        found.append(
            bandwidth_claim(
                "inter_node_gbits_per_s",
                total,
                quote=sentence,
                source_url=url,
                context="series summary",
                unit_suspect=suspect,
                extra_qualifiers="per VM"
                + ("; printed in bytes, a NIC rate only in bits" if suspect else ""),
            )
        )
        if figure.per == "gpu" or figure.count > 1:
            found.append(
                fact(
                    "nic_count",
                    links,
                    quote=sentence,
                    source_url=url,
                    context="series summary",
                    # "800 Gb/s InfiniBand per GPU" states a rate per GPU, not a NIC count: one
                    # connection per GPU is our reading of it, so the count is inferred.
                    basis=Basis.INFERRED if figure.per == "gpu" else Basis.STATED,
                    qualifiers="one InfiniBand connection per GPU" if figure.per == "gpu" else "",
                )
            )
    return found


@dataclass(frozen=True)
class RdmaRates:
    """The InfiniBand generation each series runs at, as setup-infiniband.md states it."""

    sentence: str
    generation_by_series: dict[str, str]

    def generation(self, series_name: str) -> str | None:
        for name, generation in self.generation_by_series.items():
            if name.lower() == series_name.lower():
                return generation
        if series_name.upper().startswith("N"):
            for name, generation in self.generation_by_series.items():
                if "N-series" in name:
                    return generation
        return None


def rdma_generations(text: str) -> RdmaRates:
    """Parse "... at HDR rates for HBv4, ..., EDR rates for ..., NDv2, and FDR rates for ..."."""
    for sentence in sentences(text):
        matches = list(_RATES_FOR.finditer(sentence))
        if not matches:
            continue
        by_series = {}
        for match in matches:
            for name in re.split(r",\s*(?:and\s+)?|\s+and\s+", match.group("names")):
                if name.strip():
                    by_series[name.strip()] = match.group("gen")
        return RdmaRates(sentence, by_series)
    return RdmaRates("", {})


def rdma_claims(series_name: str, rates: RdmaRates, url: str) -> list[Claim]:
    """Fabric of an 'r' size whose summary states none: InfiniBand at its generation's rate. Both are
    inferred: that the size is RDMA-capable comes from the 'r' in its name, its rate from the
    generation the sentence names for its series (or for "other RDMA-capable N-series")."""
    generation = rates.generation(series_name)
    if generation is None:
        return []
    rate = INFINIBAND_RATE_GBITS[generation]
    context = "Set up InfiniBand › RDMA-capable instances"
    return [
        fact(
            "inter_node_fabric",
            Fabric.INFINIBAND.value,
            quote=rates.sentence,
            source_url=url,
            context=context,
            basis=Basis.INFERRED,
            qualifiers=f"'r' size of {series_name}: RDMA-capable by Azure's naming",
        ),
        fact(
            "inter_node_gbits_per_s",
            rate,
            quote=rates.sentence,
            source_url=url,
            context=context,
            basis=Basis.INFERRED,
            qualifiers=(
                f"{generation} 4x link rate {rate:g} Gbit/s ({INFINIBAND_RATE_SOURCE}); one link assumed"
            ),
        ),
    ]
