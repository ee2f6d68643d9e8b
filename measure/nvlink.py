"""``nvidia-smi nvlink -s`` / ``--status``: each GPU's NVLinks and the rate nvidia-smi reports for
each, per direction ("Link 0: 26.562 GB/s": 18 such links are ~478 GB/s each way on an H100).

One reading per GPU and rate: the rate of one link, ``port_count`` links. Where the output elides
links ("[...]"), the count is the highest link number + 1 and the note says so. A GPU whose links
are all inactive ("NVML: Unable to retrieve NVLink information as all links are inactive") gives a
``nvlink_status`` reading instead: a degraded node is a finding, not a parse failure.
"""

from __future__ import annotations

import re
from collections import defaultdict

from measure.common import Line, Origin, Output, measurement
from normalize.errors import ParseError
from normalize.units import parse_bandwidth
from records.measurements import Measurement

_GPU = re.compile(r"^GPU (?P<gpu>\d+): (?P<name>[^(]+?) \(UUID: [^)]+\)")
_LINK = re.compile(r"^\s*Link (?P<link>\d+):\s*(?P<rate>\S(?:.*\S)?)\s*$")
_INACTIVE = re.compile(r"all links are inactive|<inactive>")
_ELIDED = re.compile(r"^\s*\[\.\.\.\]\s*$")


def is_nvlink(output: Output) -> bool:
    return any(_GPU.match(line.text) for line in output) and (
        any(_LINK.match(line.text) for line in output) or any(_INACTIVE.search(line.text) for line in output)
    )


def parse_nvlink(output: Output, origin: Origin) -> list[Measurement]:
    """Per GPU: its links' rate and count, or its all-inactive state."""
    readings: list[Measurement] = []
    gpu: tuple[Line, re.Match[str]] | None = None
    links: list[tuple[int, Line]] = []
    elided = False
    for line in [*output.lines, None]:
        head = _GPU.match(line.text) if line else None
        if line is None or head:
            if gpu is not None:
                readings.extend(_gpu_readings(origin, gpu, links, elided))
            gpu, links, elided = (line, head) if line and head else None, [], False
        elif gpu is not None and (link := _LINK.match(line.text)):
            links.append((int(link.group("link")), line))
        elif gpu is not None and _ELIDED.match(line.text):
            elided = True
        elif gpu is not None and _INACTIVE.search(line.text):
            links.append((-1, line))
    if not readings:
        raise ParseError("line 1: no 'GPU n: ... (UUID: ...)' block with links found")
    return readings


def _gpu_readings(
    origin: Origin, gpu: tuple[Line, re.Match[str]], links: list[tuple[int, Line]], elided: bool
) -> list[Measurement]:
    _, head = gpu
    name = f"GPU {head.group('gpu')} ({head.group('name')})"
    inactive = [line for link, line in links if link < 0 or _INACTIVE.search(line.text)]
    readings = [
        measurement(
            origin,
            "nvlink_status",
            None,
            value_text="inactive",
            locator=f"line {line.number}",
            quote=line.raw,
            tool="nvidia-smi",
            notes=f"{name}: {line.text.strip()}",
        )
        for line in inactive[:1]
    ]
    for rate, found in _by_rate(links).items():
        count = max(link for link, _ in found) + 1 if elided else len(found)
        how = f"{count} links" + (" (links elided: count from the highest link number)" if elided else "")
        readings.append(
            measurement(
                origin,
                "nvlink_gbytes_per_s",
                rate,
                locator=f"line {found[0][1].number}",
                quote=found[0][1].raw,
                tool="nvidia-smi",
                direction="one-way",
                port_count=count,
                gpus=1,
                notes=f"{name}: {how} at {rate:g} GB/s each, per direction",
            )
        )
    return readings


def _by_rate(links: list[tuple[int, Line]]) -> dict[float, list[tuple[int, Line]]]:
    """Active links grouped by their rate (GB/s per direction); ParseError naming a bad rate's line."""
    by_rate: dict[float, list[tuple[int, Line]]] = defaultdict(list)
    for link, line in links:
        if link < 0 or _INACTIVE.search(line.text):
            continue
        match = _LINK.match(line.text)
        assert match is not None, "parse_nvlink keeps only the lines _LINK matches"
        try:
            rate = parse_bandwidth(match.group("rate")).gbytes_per_s
        except ParseError as exc:
            raise ParseError(f"line {line.number}: {exc}") from None
        by_rate[rate].append((link, line))
    return by_rate
