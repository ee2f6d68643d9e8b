"""The instance types documents in ../shared list that are not catalog rows, each with its reason.

The catalog's coverage promise: every GPU instance type a mirrored document lists is a row, or is on
this list, which lives in one place (``catalog/not_rows.toml``). docs/providers.md's table is rendered
from it (``markdown_table``), and tests/pipeline/test_coverage.py checks both ways on the real
documents: every listed type is a row or excluded here, and no type excluded here is a row. An entry
whose ``types`` is ``["*"]`` excludes a whole provider this catalog does not cover.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

EXCLUSION_FILE = "catalog/not_rows.toml"
EVERY_TYPE = "*"


@dataclass(frozen=True)
class Exclusion:
    """Instance types of one provider that are not rows for one reason, and which documents name them."""

    provider: str
    types: tuple[str, ...]
    named_by: str
    reason: str

    @property
    def whole_provider(self) -> bool:
        return self.types == (EVERY_TYPE,)


@functools.cache
def exclusions() -> tuple[Exclusion, ...]:
    """The list, in its file's order; ValueError naming an entry that lacks a field or repeats a type."""
    text = resources.files("catalog").joinpath("not_rows.toml").read_text(encoding="utf-8")
    entries = tomllib.loads(text).get("excluded", [])
    found, seen = [], set()
    for number, entry in enumerate(entries, start=1):
        missing = [k for k in ("provider", "types", "named_by", "reason") if not entry.get(k)]
        if missing:
            raise ValueError(f"{EXCLUSION_FILE} entry {number}: no {', '.join(missing)}")
        exclusion = Exclusion(entry["provider"], tuple(entry["types"]), entry["named_by"], entry["reason"])
        for name in exclusion.types:
            if (exclusion.provider, name) in seen:
                raise ValueError(
                    f"{EXCLUSION_FILE} entry {number}: {exclusion.provider}/{name} is there twice"
                )
            seen.add((exclusion.provider, name))
        found.append(exclusion)
    return tuple(found)


def excluded(provider: str, instance_type: str) -> Exclusion | None:
    """The entry that excludes one type (or its whole provider), or None."""
    for exclusion in exclusions():
        if exclusion.provider == provider and (exclusion.whole_provider or instance_type in exclusion.types):
            return exclusion
    return None


def markdown_table() -> str:
    """The docs table: one line per entry (provider, the types in backticks, who names them, why)."""
    lines = ["| provider | instance types | named by | why not a row |", "| --- | --- | --- | --- |"]
    for e in exclusions():
        types = "every type" if e.whole_provider else ", ".join(f"`{name}`" for name in e.types)
        lines.append(f"| {e.provider} | {types} | {e.named_by} | {e.reason} |")
    return "\n".join(lines)
