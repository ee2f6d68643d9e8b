"""``nvidia-smi -q -x``: the GPUs' own report of what they are and how they are attached.

Three things are read, per distinct value over the GPUs (``gpus`` says how many report it):

- ``gpu_product_name`` (text): the product name the GPU reports, with the part it names
  (``product_gpu``): "NVIDIA A100-SXM4-40GB" is the SXM module, "NVIDIA H100 PCIe" the card. Two
  names say no form factor but leave one reading, each a rule written down in ``_NAME_RULES`` (an
  inference from the name, and the notes say so): "NVIDIA H100 80GB HBM3" is the SXM5 module (the
  80 GB H100 PCIe card carries HBM2e and reports "NVIDIA H100 PCIe"; the NVL card "NVIDIA H100 NVL"),
  and a bare "NVIDIA H200" the SXM module (the NVL card reports "NVIDIA H200 NVL"). Otherwise the part
  is family-level and the form factor stays open.
- ``pcie_link_gbytes_per_s`` (two-way, per GPU): the host-GPU PCIe link's nominal rate from
  ``max_link_gen`` and ``max_link_width``, the link's maximum in this host (the lower of what the GPU
  and the slot support; ``max_device_link_gen`` is the GPU's alone and can be higher: the H100s of an
  a3-megagpu-8g are Gen5 parts on a Gen4 link). ``current_link_gen`` can drop at idle and is only noted.
- ``gpu_fabric_state`` (text), where the GPU reports one: its NVLink-fabric registration (``Completed``,
  with its status and clique id in the notes). GPUs with no fabric report ``N/A`` and give no reading.

The run's date and driver are the XML's own ``<timestamp>`` and ``<driver_version>``; a caller holding
a run record that disagrees (Spare Cores' meta.json can describe a later, failed attempt) says so in
its notes, never dates the output by it. The XML is untrusted: a document declaring entities is refused.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from measure.common import Origin, measurement
from normalize.errors import ParseError
from normalize.gpus import identify_gpu
from normalize.vocab import PCIE_X16_GBYTES_PER_S
from records.measurements import Measurement

#: An element of the parsed XML (lxml's, read through its ElementTree API: find, findall, findtext);
#: Any, as lxml ships no type stubs, so mypy checks none of its calls.
Element = Any

TOOL = "nvidia-smi -q -x"
_TIMESTAMP = "%a %b %d %H:%M:%S %Y"  # "Fri Dec 19 23:55:04 2025"
_WIDTH = re.compile(r"^(?P<lanes>\d{1,2})x$")
# (product name, canonical part, why): names that say no form factor but leave only one reading.
_NAME_RULES: tuple[tuple[str, str, str], ...] = (
    (
        "NVIDIA H100 80GB HBM3",
        "H100-SXM-80GB",
        "the 80 GB H100 with HBM3 is the SXM5 module: the H100 PCIe card carries HBM2e and reports "
        "itself as 'NVIDIA H100 PCIe', the NVL card as 'NVIDIA H100 NVL'",
    ),
    (
        "NVIDIA H200",
        "H200-SXM-141GB",
        "a bare 'NVIDIA H200' is the SXM module: the H200 NVL card reports itself as 'NVIDIA H200 NVL'",
    ),
)


@dataclass(frozen=True)
class ProductGpu:
    """The part a product name names: ``id`` (family-level when the form factor is open), whether
    the form factor is settled, and how it was read."""

    id: str
    settled: bool
    how: str


def product_gpu(name: str) -> ProductGpu | None:
    """The part an nvidia-smi product name names, or None for a GPU the catalog's table lacks."""
    for product, part, why in _NAME_RULES:
        if name.strip() == product:
            return ProductGpu(part, True, f"inferred from the product name: {why}")
    try:
        match = identify_gpu(name)
    except ParseError:
        return None
    if match.spec is None:
        return ProductGpu(match.id, False, "the product name names no form factor: it stays open")
    return ProductGpu(match.id, True, "the product name names the part")


def is_xml(text: str) -> bool:
    return "<nvidia_smi_log" in text[:2000]


def parse_xml(text: str, origin: Origin) -> list[Measurement]:
    """Product names, PCIe links and fabric states of every GPU. ParseError (with the line) when the
    text is not nvidia-smi's XML or lists no GPU."""
    if "<!ENTITY" in text:
        raise ParseError("line 1: the XML declares entities: refused")
    root = _tree(text)
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"line 1: root element <{root.tag}>, not <nvidia_smi_log>")
    gpus = root.findall("gpu")
    if not gpus:
        raise ParseError("line 1: nvidia-smi lists no GPU")
    run = _run_origin(root, origin)
    driver = (root.findtext("driver_version") or "").strip() or None
    readings = _products(text, gpus, run, driver)
    readings += _pcie_links(text, gpus, run, driver)
    readings += _fabric_states(text, gpus, run, driver)
    return readings


def _tree(text: str) -> Element:
    """The document's root, parsed by lxml (2.5x faster than ElementTree on these 100-200 kB files)
    with no entity resolved, no DTD loaded and nothing fetched; the text as decoded, whatever
    encoding its declaration names. Comments and processing instructions are dropped, as
    ElementTree drops them, so an element's text is read whole. ParseError naming the line when it
    is not well-formed XML or refers to an entity: behind nvidia-smi's external DOCTYPE libxml2
    keeps an undefined ``&name;`` as a node, which would cut a text short where ElementTree refused."""
    from lxml import etree  # type: ignore[import-untyped]  # only when a run's XML is read

    parser = etree.XMLParser(
        encoding="utf-8",
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"line {exc.position[0]}: not nvidia-smi XML: {exc}") from None
    entity = next(root.iter(etree.Entity), None)
    if entity is not None:
        raise ParseError(f"line {entity.sourceline}: undefined entity {entity.text}: refused")
    return root


def run_time(text: str) -> datetime | None:
    """The XML's own ``<timestamp>``, or None when it has none that reads."""
    match = re.search(r"<timestamp>([^<]{1,64})</timestamp>", text[:4000])
    if match is None:
        return None
    try:
        return datetime.strptime(match.group(1).strip(), _TIMESTAMP)
    except ValueError:
        return None


def driver_version(text: str) -> str | None:
    match = re.search(r"<driver_version>([^<]{1,64})</driver_version>", text[:4000])
    return match.group(1).strip() if match else None


def _run_origin(root: Element, origin: Origin) -> Origin:
    stamp = (root.findtext("timestamp") or "").strip()
    try:
        when = datetime.strptime(stamp, _TIMESTAMP)
    except ValueError:
        return origin
    return Origin(origin.source, origin.source_url, origin.kind, origin.provider, origin.instance_type, when)


def _located(text: str, gpu_id: str, tag: str) -> tuple[int, int, int]:
    """(line number, start, end) of the first ``<tag>`` element after GPU ``gpu_id``'s opening tag."""
    start = text.find(f'<gpu id="{gpu_id}"')
    found = text.find(f"<{tag}>", start) if start >= 0 else -1
    if found < 0:
        raise ParseError(f"gpu {gpu_id!r}: <{tag}> not found in the text")
    close = text.find(f"</{tag}>", found)
    end = close + len(tag) + 3 if close >= 0 else found + len(tag) + 2
    return text.count("\n", 0, found) + 1, found, end


def _line_at(text: str, position: int) -> str:
    """The whole source line holding ``position`` (without its line break), a substring of ``text``."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : len(text) if end < 0 else end].rstrip("\r")


def _products(text: str, gpus: list[Element], origin: Origin, driver: str | None) -> list[Measurement]:
    names = Counter((gpu.findtext("product_name") or "").strip() for gpu in gpus)
    readings = []
    for name, count in sorted(names.items()):
        if not name:
            continue
        first = next(g for g in gpus if (g.findtext("product_name") or "").strip() == name)
        gpu_id = first.get("id", "")
        line, found, _ = _located(text, gpu_id, "product_name")
        part = product_gpu(name)
        said = f"{part.id}: {part.how}" if part else "a GPU the catalog's table lacks"
        readings.append(
            measurement(
                origin,
                "gpu_product_name",
                None,
                value_text=name,
                locator=f"line {line} (gpu {gpu_id} product_name; {count} of {len(gpus)} GPUs)",
                quote=_line_at(text, found),
                tool=TOOL,
                tool_version=driver,
                gpus=count,
                notes=f"{count} GPUs report {name!r} = {said}",
            )
        )
    return readings


def _pcie_links(text: str, gpus: list[Element], origin: Origin, driver: str | None) -> list[Measurement]:
    links: dict[tuple[int, int], list[Element]] = {}
    for gpu in gpus:
        info = gpu.find("pci/pci_gpu_link_info")
        if info is None:
            continue
        gen, lanes = (
            _gen(info.findtext("pcie_gen/max_link_gen")),
            _lanes(info.findtext("link_widths/max_link_width")),
        )
        if gen is not None and lanes is not None and gen in PCIE_X16_GBYTES_PER_S:
            links.setdefault((gen, lanes), []).append(gpu)
    readings = []
    for (gen, lanes), members in sorted(links.items()):
        first = members[0]
        gpu_id = first.get("id", "")
        line, found, end = _located(text, gpu_id, "pci_gpu_link_info")
        info = first.find("pci/pci_gpu_link_info")
        device = _gen(info.findtext("pcie_gen/max_device_link_gen") if info is not None else None)
        current = _gen(info.findtext("pcie_gen/current_link_gen") if info is not None else None)
        gbytes = PCIE_X16_GBYTES_PER_S[gen] * lanes / 16
        notes = f"PCIe Gen{gen} x{lanes} on {len(members)} of {len(gpus)} GPUs (max_link_gen, max_link_width)"
        if device is not None and device != gen:
            notes += (
                f"; the GPU itself supports Gen{device} (max_device_link_gen): the host holds it at Gen{gen}"
            )
        if current is not None and current != gen:
            notes += f"; running at Gen{current} when read (current_link_gen: links slow down at idle)"
        readings.append(
            measurement(
                origin,
                "pcie_link_gbytes_per_s",
                gbytes,
                locator=f"line {line} (gpu {gpu_id} pci_gpu_link_info)",
                quote=text[found:end],
                tool=TOOL,
                tool_version=driver,
                direction="two-way",
                gpus=len(members),
                notes=notes + f"; nominal {gbytes:g} GB/s per GPU, both directions together",
            )
        )
    return readings


def _fabric_states(text: str, gpus: list[Element], origin: Origin, driver: str | None) -> list[Measurement]:
    states: dict[tuple[str, str, str], list[Element]] = {}
    for gpu in gpus:
        state = (gpu.findtext("fabric/state") or "").strip()
        if state and state != "N/A":
            key = (
                state,
                (gpu.findtext("fabric/status") or "").strip(),
                (gpu.findtext("fabric/cliqueId") or "").strip(),
            )
            states.setdefault(key, []).append(gpu)
    readings = []
    for (state, status, clique), members in sorted(states.items()):
        gpu_id = members[0].get("id", "")
        line, found, _ = _located(text, gpu_id, "fabric")
        state_at = text.find("<state>", found)
        readings.append(
            measurement(
                origin,
                "gpu_fabric_state",
                None,
                value_text=state,
                locator=f"line {line} (gpu {gpu_id} fabric; {len(members)} of {len(gpus)} GPUs)",
                quote=_line_at(text, state_at),
                tool=TOOL,
                tool_version=driver,
                gpus=len(members),
                notes=(
                    f"NVLink fabric registration {state}, status {status or 'not given'}, clique "
                    f"{clique or 'not given'} on {len(members)} of {len(gpus)} GPUs"
                ),
            )
        )
    return readings


def _gen(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 2 else None


def _lanes(text: str | None) -> int | None:
    match = _WIDTH.match((text or "").strip())
    lanes = int(match.group("lanes")) if match else 0
    return lanes if lanes in (1, 2, 4, 8, 16, 32) else None
