"""``nvidia-smi topo -m`` (how each GPU pair is linked) and ``nvidia-smi topo -p2p r`` (whether a
pair can read each other's memory directly), one reading per distinct value among GPU pairs.

The matrix is whitespace- or tab-separated, may carry ANSI underline escapes on its header, NIC
rows and columns, CPU/NUMA affinity columns and a legend; only the GPU-by-GPU block is read. "NV#"
is a bonded set of # NVLinks; PIX/PXB/PHB/NODE/SYS are PCIe paths of increasing distance.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import partial

from measure.common import Line, Origin, Output, check_matrix, measurement
from normalize.errors import ParseError
from records.measurements import Measurement

_DEVICE = re.compile(r"^(?:GPU|NIC)\d+$")
_GPU = re.compile(r"^GPU\d+$")
_NV = re.compile(r"^NV(?P<n>\d+)$")
_P2P = re.compile(r"topo -p2p (?P<mode>\w)")
_P2P_VALUES = frozenset({"OK", "CNS", "GNS", "TNS", "NS", "U"})
_P2P_MODES = {"r": "read", "w": "write", "n": "NVLink", "a": "atomics", "p": "prop"}


def _header(output: Output) -> tuple[Line, list[str]] | None:
    for line in output:
        tokens = line.text.split()
        columns = []
        for token in tokens:
            if not _DEVICE.match(token):
                break
            columns.append(token)
        if columns and _GPU.match(columns[0]):
            return line, columns
    return None


def is_topo(output: Output) -> bool:
    return _header(output) is not None


def parse_topo(output: Output, origin: Origin) -> list[Measurement]:
    """One reading per distinct GPU-pair value (link type, or P2P status), with NVLink counts."""
    found = _header(output)
    if found is None:
        raise ParseError("line 1: no nvidia-smi topology header (GPU0 GPU1 ...) found")
    header, columns = found
    gpus = [c for c in columns if _GPU.match(c)]
    check_matrix(len(gpus), "GPU columns", f"line {header.number}")
    index = {gpu: i for i, gpu in enumerate(gpus)}
    pairs: dict[str, list[tuple[str, str, Line]]] = defaultdict(list)
    for line in output.lines[header.number :]:
        tokens = line.text.split()
        if not tokens or tokens[0] not in index:
            continue
        if len(tokens) < 1 + len(columns):
            raise ParseError(
                f"line {line.number}: {tokens[0]} has {len(tokens) - 1} cells, header has {len(columns)}"
            )
        for column, value in zip(columns, tokens[1:], strict=False):
            if column in index and index[tokens[0]] < index[column]:
                pairs[value].append((tokens[0], column, line))
    if not pairs:
        raise ParseError(f"line {header.number}: a topology header with no GPU rows under it")
    mode = next((m.group("mode") for _, m in output.find(_P2P)), None)
    p2p = mode is not None or set(pairs) <= _P2P_VALUES
    total = sum(len(v) for v in pairs.values())
    return [
        reading
        for value, where in pairs.items()
        for reading in _readings(origin, value, where, total, len(gpus), p2p, mode)
    ]


def _readings(
    origin: Origin,
    value: str,
    where: list[tuple[str, str, Line]],
    total: int,
    gpus: int,
    p2p: bool,
    mode: str | None,
) -> list[Measurement]:
    first = where[0][2]
    share = f"{len(where)} of {total} GPU pairs ({where[0][0]}-{where[0][1]} first)"
    at_first = partial(
        measurement, origin, locator=f"line {first.number}", quote=first.raw, tool="nvidia-smi", gpus=gpus
    )
    if p2p:
        what = f"P2P {_P2P_MODES.get(mode or 'r', mode)} status"
        return [at_first("gpu_p2p_status", None, value_text=value, notes=f"{what}; {share}")]
    readings = [at_first("gpu_link", None, value_text=value, notes=f"topo -m; {share}")]
    nv = _NV.match(value)
    if nv:
        readings.append(
            at_first("nvlink_count", float(nv.group("n")), notes=f"{value}: bonded NVLinks; {share}")
        )
    return readings
