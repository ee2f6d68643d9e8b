"""``python -m catalog measurements import``: a user's own tool outputs, or a probe record, into the
catalog's ``measurements`` table (source ``user``), without a refresh.

Every file is read before anything is written: one file the importer cannot read (its error names the
line) and nothing is imported. The instance is the one the flags name, else the one a probe record or
the output itself names, else none (the readings are kept, unmatched). The catalog is rewritten
through ``CatalogWriter`` (its lock, its atomic swap): every table as it was, plus the new readings;
a reading already imported (same file, place, metric and value) is not added twice, and the figures
derived from measurements are derived again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypedDict, Unpack

from catalog import finish
from catalog.read.connect import check_catalog
from catalog.store import CatalogWriter
from catalog.validate import reading_problem
from fetch.files import FileRefused, read_capped_file
from measure import parse_output
from measure.common import Origin
from measure.instances import Found, find_instance
from measure.probe_record import is_probe_record, probe_readings, read_probe_record
from normalize.errors import ParseError
from records.measurements import USER_SOURCE, Measurement

# One file's cap: the largest real tool output is a few hundred kB, and a probe record holds six
# tools' outputs of at most 8 MB each (catalog.probe.MAX_STDOUT_BYTES).
MAX_IMPORT_BYTES = 64_000_000


@dataclass
class FileReadings:
    """What one file gave: its readings, whom they are about and how that was decided."""

    path: Path
    readings: list[Measurement]
    found: Found
    skipped: list[str] = field(default_factory=list)


def readings_from_text(
    text: str,
    url: str,
    known: set[tuple[str, str]],
    *,
    provider: str | None = None,
    instance_type: str | None = None,
    collective: str | None = None,
) -> tuple[list[Measurement], Found, list[str]]:
    """The readings of one file's text (pure). ParseError naming the line when it cannot be read."""
    if is_probe_record(text):
        record = read_probe_record(text)
        found = _chosen(provider, instance_type) or Found(
            record.provider, record.instance_type, "the probe record names it"
        )
        origin = Origin(
            USER_SOURCE, url, "measured", found.provider, found.instance_type, record.collected_at
        )
        readings, skipped = probe_readings(record, url, origin, collective=collective)
        if not readings:
            raise ParseError(
                f"line 1: the probe record holds no tool output with a reading ({'; '.join(skipped)})"
            )
        return readings, found, skipped
    found = _chosen(provider, instance_type) or find_instance(text, known)
    origin = Origin(USER_SOURCE, url, "measured", found.provider, found.instance_type)
    return parse_output(text, origin, collective=collective), found, []


def _chosen(provider: str | None, instance_type: str | None) -> Found | None:
    if instance_type is None:
        return None
    return Found(provider.lower() if provider else None, instance_type, "given on the command line")


class ReadFlags(TypedDict, total=False):
    """What the command line says about every file: whom they are about, which collective ran."""

    provider: str | None
    instance_type: str | None
    collective: str | None


def read_files(
    paths: list[Path], known: set[tuple[str, str]], **flags: Unpack[ReadFlags]
) -> tuple[list[FileReadings], list[str]]:
    """Every file's readings, and the errors ('FILE: line N: ...') of the files that cannot be read."""
    results: list[FileReadings] = []
    errors: list[str] = []
    for path in paths:
        try:
            text = read_capped_file(path, MAX_IMPORT_BYTES).decode("utf-8")
        except FileRefused as exc:
            errors.append(str(exc))
            continue
        except UnicodeDecodeError as exc:
            errors.append(f"{path}: cannot read it: not UTF-8 ({exc.reason} at byte {exc.start})")
            continue
        try:
            readings, found, skipped = readings_from_text(text, path.resolve().as_uri(), known, **flags)
            _gate(readings)
        except ParseError as exc:
            errors.append(f"{path}: {exc}")
            continue
        results.append(FileReadings(path, readings, found, skipped))
    return results, errors


def _gate(readings: list[Measurement]) -> None:
    """ParseError naming the first reading outside the physical bounds a page's figure must respect
    (catalog.validate): an import is held to the same gates as a scrape."""
    for m in readings:
        if (problem := reading_problem(m.metric, m.value, m.port_count)) is not None:
            raise ParseError(f"{m.locator.split(' (', 1)[0]}: outside physical bounds: {problem}")


def known_instances(db_path: Path) -> set[tuple[str, str]]:
    """The catalog's (provider, instance type) pairs. CorruptCatalog, before any file is read, for a
    catalog that cannot be read in full: an import has nothing to rebuild it from, so it is left as it
    is (a refresh moves it aside and rebuilds it, keeping the readings imported into it)."""
    import duckdb

    check_catalog(db_path)
    with duckdb.connect(str(db_path), read_only=True) as con:
        return set(con.execute("SELECT provider, instance_type FROM instances").fetchall())


def write(db_path: Path, readings: list[Measurement], now: datetime) -> tuple[int, int]:
    """Add the readings to the catalog at ``db_path``; (added, already there)."""
    with CatalogWriter.open(db_path, rebuild_corrupt=False) as writer:  # a corrupt one: CorruptCatalog
        writer.refuse_a_clock_behind(now)
        writer.keep_untouched([])
        writer.con.execute("INSERT INTO source_layouts SELECT * FROM old.source_layouts")
        there = set(
            writer.con.execute(
                "SELECT source_url, locator, metric, value, value_text FROM measurements WHERE source = ?",
                [USER_SOURCE],
            ).fetchall()
        )
        fresh = [
            m for m in readings if (m.source_url, m.locator, m.metric, m.value, m.value_text) not in there
        ]
        fresh = list({(m.source_url, m.locator, m.metric, m.value, m.value_text): m for m in fresh}.values())
        writer.write_fresh(USER_SOURCE, [], [], fresh, {m.source_url: now for m in fresh}, now)
        finish.finish_rows(writer, now)  # the figures derived from measurements, derived again
    return len(fresh), len(readings) - len(fresh)
