"""Measured bandwidth and hardware self-reports of real cloud instances, from Spare Cores
(``SpareCores/sc-inspector-data``, ``data/<vendor>/<instance>/<task>/{meta.json,stdout}``): the
``nvbandwidth`` task (``nvbandwidth -j``'s JSON) and the ``nvidia_smi`` task (``nvidia-smi -q -x``).

``meta.json`` records the task's LAST attempt: when it started, the tool version, whether it produced
output. ``stdout`` is the last output that was produced, which need not be that attempt's: a later
attempt that failed ("Flavor out of stock", ``outputs: []``) leaves the earlier output in place
(ovh/h100-760), and a meta.json can even describe another successful run than the stdout beside it
(gcp/a3-ultragpu-8g's nvidia_smi: meta 2026-02-13, driver 590.48.01; the XML 2026-07-14, 595.71.05).
So every listed run's stdout is fetched whatever meta.json says, the output is judged by itself, and
where meta.json disagrees the readings say so in their notes: nvidia-smi XML is dated by its own
``<timestamp>`` and driver, an nvbandwidth output whose meta describes a failed attempt has no date
(its JSON carries none). nvbandwidth readings come from ``measure.nvbandwidth`` with the run's version
(v0.5 per-direction vs v0.8 totals are never mixed); an output that failed (nvbandwidth's own
"error", an unreadable file) is skipped with a warning and the others stand. Vendor ids are Spare
Cores' (aws, gcp, azure match the catalog's; ``ovh`` is the catalog's ``ovhcloud``, mapped in
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
from measure import nvidia_smi_xml
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


NVBANDWIDTH, NVIDIA_SMI = "nvbandwidth", "nvidia_smi"
#: task → the file listing its runs (GitHub's raw host has no directory listing).
KNOWN = {NVBANDWIDTH: "sparecores.txt", NVIDIA_SMI: "sparecores_nvidia_smi.txt"}


def known_runs(task: str = NVBANDWIDTH) -> tuple[str, ...]:
    """The vendor/instance runs of ``task`` listed in scrapers/known/ (no listing on GitHub raw)."""
    text = resources.files("scrapers").joinpath("known", KNOWN[task]).read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def meta_url(run: str, task: str = NVBANDWIDTH) -> str:
    return f"{DATA}{run}/{task}/meta.json"


def stdout_url(run: str, task: str = NVBANDWIDTH) -> str:
    return f"{DATA}{run}/{task}/stdout"


def _listed() -> list[tuple[str, str]]:
    return [(task, run) for task in KNOWN for run in known_runs(task)]


class SpareCores(Scraper):
    name = "sparecores"
    title = "Spare Cores nvbandwidth and nvidia-smi runs on cloud instances (measured; CC BY-SA 4.0)"
    kind = "measurements"
    url_prefixes = (DATA,)
    budget = Budget(max_documents=500)  # a meta.json and a stdout for each of ~221 runs

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        listed = _listed()
        await fetcher.get_all([meta_url(run, task) for task, run in listed], required=False)
        # every stdout, whatever meta.json says: a failed later attempt leaves the earlier output
        await fetcher.get_all([stdout_url(run, task) for task, run in listed], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings: list[Measurement] = []
        for task, run in _listed():
            stdout = documents.optional_text(stdout_url(run, task))
            if stdout is None:
                continue
            meta = _meta(documents.optional_text(meta_url(run, task)) or "{}")
            read = run_readings if task == NVBANDWIDTH else smi_readings
            try:
                readings.extend(read(run, stdout, meta, self.name))
            except ParseError as exc:
                log.warning("Skipping Spare Cores %s run %s: %s", task, run, exc)
        if not readings:
            raise LayoutError("no Spare Cores nvbandwidth or nvidia_smi run gave a reading")
        return readings


def _origin(run: str, task: str, source: str, run_at: datetime | None) -> Origin:
    vendor, _, instance = run.partition("/")
    provider = CATALOG_PROVIDER.get(vendor.lower(), vendor.lower())
    return Origin(source, stdout_url(run, task), "measured", provider, instance, run_at)


def run_readings(run: str, stdout: str, meta: dict, source: str) -> list[Measurement]:
    """One nvbandwidth run's readings, attributed to Spare Cores and its licence. Dated by meta.json
    when it describes this output; undated, and saying why, when it records a failed later attempt."""
    started = meta.get("start")
    failed = _failed_attempt(meta)
    when = datetime.fromisoformat(started) if isinstance(started, str) and not failed else None
    version = meta.get("version") if isinstance(meta.get("version"), str) and not failed else None
    extra = f"meta.json {failed}: this output is an earlier run's, date unknown" if failed else ""
    attribution = "; ".join(part for part in (extra, LICENCE) if part)
    return parse_json(stdout, _origin(run, NVBANDWIDTH, source, when), version, attribution=attribution)


def smi_readings(run: str, stdout: str, meta: dict, source: str) -> list[Measurement]:
    """One nvidia-smi run's readings (dated by the XML itself), with any meta.json disagreement."""
    origin = _origin(run, NVIDIA_SMI, source, None)
    readings = nvidia_smi_xml.parse_xml(stdout, origin)
    return [_attributed(m, _smi_disagreement(stdout, meta)) for m in readings]


def _failed_attempt(meta: dict) -> str | None:
    """What meta.json says of an attempt that produced no output, or None when it produced one."""
    outputs = meta.get("outputs")
    if not isinstance(outputs, list) or "stdout" in outputs:
        return None  # it produced output, or it does not say
    error = meta.get("error_msg")
    said = str(error).strip().splitlines()[-1].strip()[:160] if error else "no error given"
    attempt = f"start {meta.get('start')}, exit_code {meta.get('exit_code')}"
    return f"records a later attempt with no output ({attempt}: {said})"


def _smi_disagreement(stdout: str, meta: dict) -> str:
    """A note when meta.json describes another attempt than the XML beside it ('' when it agrees)."""
    failed = _failed_attempt(meta)
    if failed:
        return f"meta.json {failed}: the output is dated by its own <timestamp>"
    found = []
    started, version, size = meta.get("start"), meta.get("version"), meta.get("stdout_bytes")
    stamp, driver = nvidia_smi_xml.run_time(stdout), nvidia_smi_xml.driver_version(stdout)
    if isinstance(started, str) and stamp is not None and started[:10] != stamp.date().isoformat():
        found.append(f"start {started[:10]} vs <timestamp> {stamp.date().isoformat()}")
    if isinstance(version, str) and driver is not None and version.lstrip("v") != driver:
        found.append(f"version {version} vs <driver_version> {driver}")
    if isinstance(size, int) and size != len(stdout.encode("utf-8")):
        found.append(f"stdout_bytes {size} vs {len(stdout.encode('utf-8'))} bytes stored")
    if not found:
        return ""
    return (
        "meta.json describes another run than this output ("
        + "; ".join(found)
        + "): the output's own date and driver are used"
    )


def _attributed(m: Measurement, extra: str = "") -> Measurement:
    return replace(m, notes="; ".join(part for part in (m.notes, extra, LICENCE) if part))


def _meta(text: str) -> dict:
    try:
        meta = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return meta if isinstance(meta, dict) else {}
