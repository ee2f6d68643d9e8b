"""Measured bandwidth of real cloud instances: Spare Cores' nvbandwidth runs
(``SpareCores/sc-inspector-data``, ``data/<vendor>/<instance>/nvbandwidth/{meta.json,stdout}``).

``meta.json`` says when the run started, which nvbandwidth version ran and whether it produced
output; ``stdout`` is ``nvbandwidth -j``'s JSON. Readings come from ``measure.nvbandwidth`` with the
run's version (v0.5 per-direction vs v0.8 totals are never mixed) and start time; a run that failed
(no output, or nvbandwidth's own "error") is skipped with a warning and the others stand. Vendor ids
are Spare Cores' (aws, gcp, azure match the catalog's; ``ovh`` is the catalog's ``ovhcloud``, mapped in
``CATALOG_PROVIDER``; alicloud, upcloud, vultr stay unmatched).

Licence: the data is CC BY-SA 4.0 (Spare Cores). Every row cites its Spare Cores URL and says so in
its notes; data derived from it (these measurement rows, and anything built on them) is shared under
the same licence.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import datetime
from importlib import resources

from fetch.budget import Budget
from fetch.http import ProviderFetcher
from measure.common import Origin
from measure.nvbandwidth import parse_json
from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from scrapers.base import Scraper

log = logging.getLogger(__name__)

DATA = "https://raw.githubusercontent.com/SpareCores/sc-inspector-data/main/data/"
LICENCE = "Spare Cores sc-inspector-data, CC BY-SA 4.0"
#: Spare Cores vendor id → the catalog's provider id, where the two spell it differently.
CATALOG_PROVIDER = {"ovh": "ovhcloud"}


def known_runs() -> tuple[str, ...]:
    """The vendor/instance runs listed in scrapers/known/sparecores.txt (no listing on GitHub raw)."""
    text = resources.files("scrapers").joinpath("known", "sparecores.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def meta_url(run: str) -> str:
    return f"{DATA}{run}/nvbandwidth/meta.json"


def stdout_url(run: str) -> str:
    return f"{DATA}{run}/nvbandwidth/stdout"


class SpareCores(Scraper):
    name = "sparecores"
    title = "Spare Cores nvbandwidth runs on cloud instances (measured; CC BY-SA 4.0)"
    kind = "measurements"
    url_prefixes = (DATA,)
    budget = Budget(max_documents=500)  # a meta.json and a stdout for each of ~216 runs

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        runs = known_runs()
        metas = await fetcher.get_all([meta_url(run) for run in runs], required=False)
        with_output = [
            run for run, doc in zip(runs, metas, strict=True) if doc.ok and _has_stdout(doc.body or "")
        ]
        await fetcher.get_all([stdout_url(run) for run in with_output], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings: list[Measurement] = []
        for run in known_runs():
            stdout = documents.optional_text(stdout_url(run))
            if stdout is None:
                continue
            meta = _meta(documents.optional_text(meta_url(run)) or "{}")
            try:
                readings.extend(run_readings(run, stdout, meta, self.name))
            except ParseError as exc:
                log.warning("Skipping Spare Cores run %s: %s", run, exc)
        if not readings:
            raise LayoutError("no Spare Cores nvbandwidth run gave a reading")
        return readings


def run_readings(run: str, stdout: str, meta: dict, source: str) -> list[Measurement]:
    """One run's readings, attributed to Spare Cores and its licence."""
    vendor, _, instance = run.partition("/")
    started = meta.get("start")
    origin = Origin(
        source,
        stdout_url(run),
        "measured",
        CATALOG_PROVIDER.get(vendor.lower(), vendor.lower()),
        instance,
        datetime.fromisoformat(started) if isinstance(started, str) else None,
    )
    readings = parse_json(
        stdout, origin, meta.get("version") if isinstance(meta.get("version"), str) else None
    )
    return [_attributed(m) for m in readings]


def _attributed(m: Measurement) -> Measurement:
    return replace(m, notes=f"{m.notes}; {LICENCE}")


def _meta(text: str) -> dict:
    try:
        meta = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _has_stdout(text: str) -> bool:
    outputs = _meta(text).get("outputs")
    return isinstance(outputs, list) and "stdout" in outputs
