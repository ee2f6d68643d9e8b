"""The one JSON record ``python -m catalog probe`` writes, and its readings.

A record names the instance (as the cloud's metadata service or the user said), when it was
collected, and each tool's run: the command, its exit code and its standard output verbatim::

    {"format": "interconnect-catalog-probe", "version": 1, "provider": "gcp",
     "instance_type": "a3-highgpu-8g", "instance_source": "metadata", "collected_at": "2026-12-03T10:00:00",
     "runs": [{"tool": "nvidia-smi topo -m", "command": ["nvidia-smi", "topo", "-m"],
               "status": "ok", "exit_code": 0, "seconds": 0.4, "stdout": "..."}, ...]}

A run's readings cite ``<record url>#/runs/<i>/stdout``: the quote is a substring of that stdout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from measure import parse_output
from measure.common import Origin
from normalize.errors import ParseError
from normalize.safe_text import escaped, unsafe_characters
from records.measurements import Measurement

FORMAT = "interconnect-catalog-probe"
VERSION = 1
# A record probe writes holds six runs; one with more was not written by it.
MAX_RUNS = 64
# The longest instance type in the catalog is under 50 characters.
MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class ProbeRecord:
    """A parsed probe record: whom it is about and every tool run."""

    provider: str | None
    instance_type: str | None
    collected_at: datetime | None
    runs: list[dict]


def is_probe_record(text: str) -> bool:
    return text.lstrip().startswith("{") and f'"{FORMAT}"' in text[:200]


def read_probe_record(text: str) -> ProbeRecord:
    """The record in ``text``; ParseError naming the line when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"line {exc.lineno}: not a probe record: {exc.msg}") from None
    except RecursionError:
        raise ParseError("line 1: not a probe record: JSON nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise ParseError(f"line 1: not a probe record: {str(exc).split(';')[0]}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ParseError(f"line 1: not a version-{VERSION} {FORMAT} record")
    runs = data.get("runs")
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        raise ParseError("line 1: a probe record needs a list of runs")
    if len(runs) > MAX_RUNS:
        raise ParseError(f"line 1: {len(runs):,} runs, over the cap of {MAX_RUNS} in one probe record")
    for key in ("provider", "instance_type"):
        if (problem := name_problem(data.get(key))) is not None:
            raise ParseError(f"line 1: {key} {problem}")
    collected = data.get("collected_at")
    try:
        at = datetime.fromisoformat(collected) if collected else None
    except (TypeError, ValueError):
        raise ParseError(f"line 1: collected_at {collected!r} is not an ISO timestamp") from None
    return ProbeRecord(data.get("provider"), data.get("instance_type"), at, runs)


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a provider or instance type a reading is about (not text, longer than
    MAX_NAME_CHARS, control or invisible characters), or None (None itself is no name: fine)."""
    if name is None:
        return None
    if not isinstance(name, str):
        return f"is {type(name).__name__}, not text"
    if len(name) > MAX_NAME_CHARS:
        return f"is {len(name):,} characters long, at most {MAX_NAME_CHARS}"
    if found := unsafe_characters(name):
        return f"{escaped(name)!r} has control or invisible characters ({', '.join(dict.fromkeys(found))})"
    return None


def probe_readings(
    record: ProbeRecord, url: str, origin: Origin, *, collective: str | None = None
) -> tuple[list[Measurement], list[str]]:
    """Readings of every run that produced output, and why the others gave none."""
    readings, skipped = [], []
    for i, run in enumerate(record.runs):
        stdout, tool = run.get("stdout"), run.get("tool", f"run {i}")
        if not isinstance(stdout, str) or not stdout.strip():
            skipped.append(f"{tool}: {run.get('status', 'no output')}")
            continue
        at = Origin(
            origin.source,
            f"{url}#/runs/{i}/stdout",
            origin.kind,
            origin.provider,
            origin.instance_type,
            origin.run_at,
        )
        try:
            readings.extend(parse_output(stdout, at, collective=collective))
        except ParseError as exc:
            skipped.append(f"{tool}: {exc}")
    return readings, skipped
