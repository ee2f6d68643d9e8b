"""Node Health Check (NHC) configuration lines, as Azure's and Oracle's health checks write them:
``<hostmask> || <check> <args...>`` (Azure: `` * || check_hw_ib 400 mlx5_ib0:1``; Oracle:
``*||check_hw_ib 200 mlx5_0:1``), ``#`` comments, and for Oracle a Jinja2 template whose
``{% if 'BM.GPU.H100.8' in nhc_node_shape %}`` branches say which shape a line is for.

``check_hw_ib <rate> <device:port>`` is NHC's own check: the port must be up at ``rate`` Gbit/s
(mej/nhc: "check_hw_ib ... rate in Gb/sec"); 100, 200 and 400 are EDR, HDR and NDR.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from normalize.errors import ParseError
from normalize.units import to_number
from records.frozen import direct_init

_CHECK = re.compile(r"^\s*[^#|]*\|\|\s*(?P<check>check_\w+)(?P<args>(?:.*\S)?)\s*$")
_SHAPE = re.compile(r"'(?P<shape>[^']+)'\s+in\s+nhc_node_shape")


@direct_init
@dataclass(frozen=True)
class Check:
    """One NHC check line: its 1-based line number, text, name, arguments and Jinja conditions."""

    number: int
    text: str
    name: str
    args: tuple[str, ...]
    shapes: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    span: tuple[int, int] = (0, 0)  # where the line stands in the document (without its line ending)


@dataclass(frozen=True)
class PortGroup:
    """The check_hw_ib lines of one rate: how many ports, and the document's text that says so."""

    gbits_per_s: float
    checks: tuple[Check, ...]
    quote: str
    frontend: bool = False  # the general-purpose NIC, not an RDMA fabric port (see ``port_groups``)

    @property
    def locator(self) -> str:
        first, last = self.checks[0].number, self.checks[-1].number
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        return f"{lines} ({len(self.checks)} check_hw_ib)"


def checks(text: str) -> list[Check]:
    """Every active check line (commented-out lines are not checks), with the Jinja branches it sits in."""
    frames = _frames(text)
    starts = [start for start, _ in frames]
    branches: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # frame index → its branch, read once
    found = []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n")
        match = _CHECK.match(bare) if "||" in bare else None  # no check line without its "||"
        if match and not line.lstrip().startswith("#"):
            at = bisect.bisect_right(starts, offset) - 1
            if at not in branches:
                branches[at] = _branch(frames[at][1])
            shapes, conditions = branches[at]
            args = tuple(match.group("args").split())
            span = (offset, offset + len(bare))
            found.append(Check(number, bare, match.group("check"), args, shapes, conditions, span))
        offset += len(line)
    return found


def port_groups(found: list[Check], text: str) -> list[PortGroup]:
    """check_hw_ib lines grouped by rate, most ports first, each quoting ``text``: its lines verbatim
    where they stand together (they do in every real file), else the first. A front-end port (Azure's
    ``mlx5_an*``, or one port of another rate beside 8+ rails) is a group of its own, marked
    ``frontend`` and listed last. ParseError naming a line whose rate is not a number."""
    by_rate: dict[tuple[float, bool], list[Check]] = defaultdict(list)
    for check in found:
        if check.name != "check_hw_ib":
            continue
        if not check.args:
            raise ParseError(f"line {check.number}: check_hw_ib without a rate")
        try:
            rate = to_number(check.args[0])
        except ParseError:
            raise ParseError(
                f"line {check.number}: check_hw_ib rate {check.args[0]!r} is not a number"
            ) from None
        if rate <= 0:
            raise ParseError(f"line {check.number}: check_hw_ib rate {rate:g} is not a rate")
        by_rate[(rate, _named_frontend(check))].append(check)
    rails = max((len(c) for (_, named), c in by_rate.items() if not named), default=0)
    groups = [
        PortGroup(
            rate, tuple(checks), _quote(checks, text), named or (len(checks) == 1 and rails >= MIN_RAILS)
        )
        for (rate, named), checks in by_rate.items()
    ]
    return sorted(groups, key=lambda g: (g.frontend, -len(g.checks), -g.gbits_per_s))


#: A lone port of another rate beside this many RDMA rails is the front-end NIC (OCI's 50 Gbit/s
#: mlx5_4 beside BM.GPU4.8's sixteen 100 Gbit/s rails), not a fabric port.
MIN_RAILS = 8


def _named_frontend(check: Check) -> bool:
    """Azure names its accelerated-networking (front-end Ethernet) device mlx5_an0."""
    return len(check.args) > 1 and check.args[1].startswith("mlx5_an")


def _quote(found: list[Check], text: str) -> str:
    numbers = [c.number for c in found]
    if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return text[found[0].span[0] : found[-1].span[1]]
    return found[0].text


def first(found: list[Check], name: str) -> Check | None:
    """The first check called ``name``."""
    return next((c for c in found if c.name == name), None)


def _tags(text: str) -> Iterator[tuple[int, str]]:
    """(end offset, body) of each ``{% ... %}`` tag, found in one pass (no regex backtracking)."""
    start = text.find("{%")
    while start >= 0:
        end = text.find("%}", start + 2)
        if end < 0:
            return
        yield end + 2, " ".join(text[start + 2 : end].strip("-").split())
        start = text.find("{%", end + 2)


def _frames(text: str) -> list[tuple[int, list[tuple[str, str]]]]:
    """(offset, condition stack) after each Jinja tag: the stack holds (kind, condition) frames."""
    stack: list[tuple[str, str]] = []
    frames: list[tuple[int, list[tuple[str, str]]]] = [(0, [])]
    for end, body in _tags(text):
        word, _, rest = body.partition(" ")
        if word in ("if", "for"):
            stack.append((word, rest))
        elif word in ("elif", "else") and stack:
            stack[-1] = ("if", rest if word == "elif" else "else")
        elif word in ("endif", "endfor") and stack:
            stack.pop()
        frames.append((end, list(stack)))
    return frames


def _branch(stack: list[tuple[str, str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The shapes and the other conditions of one condition stack (the innermost shape test wins)."""
    shapes: tuple[str, ...] = ()
    conditions = []
    for kind, condition in stack:
        named = tuple(m.group("shape") for m in _SHAPE.finditer(condition))
        if named:
            shapes = named
        elif kind == "if":
            conditions.append(" ".join(condition.split()))
    return shapes, tuple(conditions)
