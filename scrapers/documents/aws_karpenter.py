"""Karpenter's generated EC2 bandwidth table: a cross-check of every AWS network figure.

``aws/karpenter-provider-aws`` (AWS's own repository) generates ``zz_generated.bandwidth.go`` from
the EC2 documentation: a Go map of instance type to network bandwidth in Mb/s (the baseline of a
burstable type, as the page's first figure is). Each AWS row gets Karpenter's figure as a second
claim beside the page's, for the fabric and the front end alike (EFA and ENA share that allowance),
so where the two disagree the row is a conflict with both quotes. Karpenter never makes a row of its
own: it names no GPUs.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

from normalize.errors import ParseError
from normalize.units import Bandwidth, parse_bandwidth
from records.offers import Claim, RawOffer
from scrapers.claims import bandwidth_claim

log = logging.getLogger(__name__)

REPOSITORY = "https://raw.githubusercontent.com/aws/karpenter-provider-aws/"
BANDWIDTH_URL = REPOSITORY + "main/pkg/providers/instancetype/zz_generated.bandwidth.go"
MAP_NAME = "InstanceTypeBandwidthMegabits"
CONTEXT = f"Karpenter zz_generated.bandwidth.go › {MAP_NAME}"
QUALIFIERS = "Karpenter's table, generated from the EC2 documentation, in Mb/s"

_LINE = re.compile(r'^\s*"(?P<type>[a-z0-9][a-z0-9.\-]*)":\s*(?P<mbits>[0-9]+),\s*$')


@dataclass(frozen=True)
class Figure:
    """One line of the map: the instance type's bandwidth and the line that states it."""

    bandwidth: Bandwidth
    line: str


def parse_bandwidths(text: str) -> dict[str, Figure]:
    """Instance type → its figure, from the lines of the bandwidth map (comments and other maps
    ignored; a line whose figure cannot be read is skipped with a warning naming it)."""
    start = text.find(MAP_NAME)
    figures = {}
    for raw in text[start:].splitlines() if start >= 0 else ():
        match = _LINE.match(raw)
        if match is None:
            continue
        try:
            bandwidth = parse_bandwidth(match.group("mbits"), default_unit="Mbps")
        except ParseError as exc:
            log.warning("Skipping aws Karpenter line %s: %s", raw.strip(), exc)
            continue
        figures[match.group("type")] = Figure(bandwidth, raw.strip())
    return figures


def _claims(figure: Figure) -> list[Claim]:
    return [
        bandwidth_claim(
            field,
            figure.bandwidth,
            quote=figure.line,
            source_url=BANDWIDTH_URL,
            context=CONTEXT,
            extra_qualifiers=QUALIFIERS,
        )
        for field in ("inter_node_gbits_per_s", "frontend_gbits_per_s")
    ]


def cross_check(offers: list[RawOffer], figures: dict[str, Figure]) -> list[RawOffer]:
    """Every offer Karpenter lists, with Karpenter's figure beside the page's (after it: the page leads)."""
    checked = []
    for offer in offers:
        figure = figures.get(offer.instance_type)
        if figure is None:
            checked.append(replace(offer, notes=(*offer.notes, "not in Karpenter's bandwidth table")))
        else:
            checked.append(replace(offer, claims=(*offer.claims, *_claims(figure))))
    return checked
