"""Azure's size names, and the series a size belongs to when only its name is known.

A size name spells its series: ``Standard_ND96isr_H100_v5`` is family ``ND``, 96 vCPUs, capability
letters ``isr``, accelerator ``H100``, version ``v5``; the series is "ND-H100-v5". Series names use
the same parts ("NDm_A100_v4", "NCasT4_v3", "NVads-A10 v5", "NGads V620", "NVv4"). Microsoft's price
table and health checks name sizes that no series page in the mirror lists (``Standard_ND96is_H100_v5``,
``Standard_ND96isrf_H200_v5``): ``match_series`` places such a size in the one series whose parts it
carries, and gives up (None) when none or several fit equally well.

Matching, case-insensitive: the same family; the series' accelerator tokens all in the size's (or
neither names one); the same version, or the series names none but an accelerator ("NGads V620" fits
``Standard_NG8ads_V620_v1``); the series' capability letters all in the size's ("NDm" needs an ``m``).
Capability letters only rule a series out: ``Standard_ND96amsr_A100_v4`` fits both "NDm_A100_v4" and
"NDasrA100_v4", and the name cannot choose. Other tokens of a size ("flex", "noIB", "NDR", "xl", "Promo")
are free. Versions are ``v`` and one or two digits: "v710" is the Radeon PRO V710, an accelerator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_PREFIX = "Standard_"
_FIRST = re.compile(
    r"^(?P<family>N[A-Z]+)(?P<vcpus>\d+(?:-\d+)?)?(?P<caps>[a-z]*?)(?P<rest>[vV]\d{1,2}|[A-Z][A-Za-z0-9]*)?$"
)
_VERSION = re.compile(r"^v\d{1,2}$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[-_\s]+")
_SERIES_WORDS = re.compile(r"(?i)-?\bsizes?\b|-?series\b")


@dataclass(frozen=True)
class NameParts:
    """The parts of a size or series name (lower case where case does not matter)."""

    family: str
    caps: frozenset[str]
    accelerators: frozenset[str]
    version: str | None
    vcpus: str | None = None


def _parts(tokens: list[str]) -> NameParts | None:
    if not tokens:
        return None
    first = _FIRST.match(tokens[0])
    if first is None:
        return None
    rest = [first.group("rest")] if first.group("rest") else []
    accelerators, versions = set(), []
    for token in rest + tokens[1:]:
        if _VERSION.match(token):
            versions.append(token.lower())
        elif re.search(r"\d", token) and re.search(r"[A-Za-z]", token):
            accelerators.add(token.lower())
    return NameParts(
        family=first.group("family"),
        caps=frozenset(first.group("caps")),
        accelerators=frozenset(accelerators),
        version=versions[-1] if versions else None,
        vcpus=first.group("vcpus"),
    )


def size_parts(size: str) -> NameParts | None:
    """The parts of a size name (``Standard_NV36adms_A10_v5``), None if it is not one."""
    if not size.startswith(_PREFIX):
        return None
    parts = _parts(_SEPARATORS.split(size.removeprefix(_PREFIX).strip()))
    return parts if parts is not None and parts.vcpus is not None else None


def series_parts(name: str) -> NameParts | None:
    """The parts of a series name ("ND-H100-v5 size series", "NCasT4_v3-series", "NGads V620-series")."""
    words = _SEPARATORS.split(_SERIES_WORDS.sub(" ", name).strip())
    parts = _parts([w for w in words if w])
    return parts if parts is not None and parts.vcpus is None else None


def fits(size: NameParts, series: NameParts) -> bool:
    """Whether a size's name carries every part of a series' name."""
    if size.family != series.family or not series.caps <= size.caps:
        return False
    if series.version != size.version and (series.version is not None or not series.accelerators):
        return False  # a series that names no version is told by its accelerator, else by nothing
    if series.accelerators:
        return series.accelerators <= size.accelerators
    return not size.accelerators


def _specificity(series: NameParts) -> tuple[int, bool]:
    return (len(series.accelerators), series.version is not None)


def match_series(size: str, candidates: list[tuple[T, NameParts]]) -> T | None:
    """The one candidate series ``size`` belongs to by its name: the most specific that fits; None when
    no series fits, or when two fit equally specifically (the name cannot choose)."""
    parts = size_parts(size)
    if parts is None:
        return None
    fitting = [(item, series) for item, series in candidates if fits(parts, series)]
    if not fitting:
        return None
    best = max(_specificity(series) for _, series in fitting)
    chosen = [item for item, series in fitting if _specificity(series) == best]
    return chosen[0] if len(chosen) == 1 else None


def frontmatter_title(text: str) -> str | None:
    """The ``title:`` of a page's YAML front matter, without quotes ("ND-H200-v5 size series")."""
    match = re.match(r"\A---\r?\n(?P<head>.*?)\r?\n---", text, flags=re.DOTALL)
    if match is None:
        return None
    title = re.search(r"^title:\s*(?P<title>.+?)\s*$", match.group("head"), flags=re.MULTILINE)
    return title.group("title").strip().strip("'\"").strip() if title else None
