"""How text reaches the page. Everything read from a document or the catalog (quotes, notes,
instance and GPU names, error causes, URLs, regions) is shown as the characters it is, never as
markdown or HTML: in a table cell (which renders text), or through ``show``, which HTML-escapes it
into a styled block. Streamlit's markdown would not do even escaped: it turns any URL in the text
into a live link. Links are made only from ``http``/``https`` URLs in link columns
(``link_or_none``); only the app's own wording goes to markdown."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from records.documents import COPY_SCHEME, is_copy

#: The looks ``show`` can give a block of text (classes styled by ``STYLE``).
KINDS = ("caption", "subheader", "warning", "info", "error")
#: CSS for ``show``'s blocks; in both themes (text colour inherited, tinted backgrounds).
STYLE = """
.ic-text {overflow-wrap: anywhere; white-space: pre-line; margin: 0 0 0.6rem 0; line-height: 1.5;}
.ic-caption {font-size: 0.875rem; opacity: 0.72;}
.ic-subheader {font-size: 1.5rem; font-weight: 600; line-height: 1.3; margin: 0.4rem 0 0.6rem 0;}
.ic-warning, .ic-info, .ic-error {padding: 0.75rem 1rem; border-radius: 0.5rem;}
.ic-warning {background: rgba(255, 189, 69, 0.2);}
.ic-info {background: rgba(28, 131, 225, 0.12);}
.ic-error {background: rgba(255, 43, 43, 0.12);}
"""


#: How the app names each ``instances`` column a claim feeds (never the raw column name).
FIELD_LABELS: Mapping[str, str] = {
    "gpu_model": "GPU model",
    "gpu_count": "GPUs per instance",
    "gpu_memory_gb": "GPU memory per GPU",
    "gpu_memory_gbytes_per_s": "GPU memory bandwidth per GPU",
    "intra_node_link": "GPU-to-GPU link",
    "intra_node_gbytes_per_s": "GPU-to-GPU bandwidth per GPU, two-way",
    "scale_up_domain_gpus": "NVLink domain (GPUs)",
    "inter_node_fabric": "fabric",
    "inter_node_gbits_per_s": "fabric bandwidth per node, one-way",
    "nic_count": "fabric NICs",
    "frontend_gbits_per_s": "front-end bandwidth per node, one-way",
    "frontend_nic_count": "front-end NICs",
}
#: Units that count things: said in the singular for exactly one ("1 GPU", never "1 GPUs").
COUNT_UNITS = {"GPUs": "GPU", "NICs": "NIC", "NVLinks": "NVLink"}


def text_html(text: object, kind: str = "caption") -> str:
    """``text`` as an HTML block of ``kind`` (``KINDS``), every character escaped."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    return f'<div class="ic-text ic-{kind}">{html.escape(str(text))}</div>'


def show(text: object, kind: str = "caption") -> None:
    """Put ``text`` on the page as the characters it is (no markdown, no HTML, no autolinks)."""
    import streamlit as st

    st.html(text_html(text, kind))


def show_all(blocks: Sequence[tuple[object, str]]) -> None:
    """Several ``(text, kind)`` blocks as one element (one ``st.html``), each escaped as ``show``
    escapes it: every element is redrawn by the browser on each rerun, whether it changed or not."""
    import streamlit as st

    st.html("".join(text_html(text, kind) for text, kind in blocks))


def link_or_none(url: object) -> str | None:
    """``url`` when it is an http(s) URL a link column may open, else None (shown as no link)."""
    if isinstance(url, str) and re.match(r"(?i)^https?://[^\s]+$", url):
        return url
    return None


def source_text(url: object, originals: Mapping[str, str] | None = None) -> str | None:
    """A source as a text column shows it: an http(s) URL as it is; a local copy (``copy:<path>``,
    a third-party copy read from ../shared and cited as itself) in words, with the page it copies
    (``originals``, ``catalog.read.queries.copy_originals``); any other text as it is. None only for
    no source. Text, never a link: a link column takes ``source_link``."""
    if not isinstance(url, str) or not url.strip():
        return None
    if is_copy(url):
        path, page = url.removeprefix(COPY_SCHEME), (originals or {}).get(url)
        of = f"of {page}" if page else "(the page it copies is not recorded)"
        return f"a local copy {of}: {path}"
    return url


def source_link(url: object, originals: Mapping[str, str] | None = None) -> str | None:
    """The web page a link column opens for a source: its http(s) URL, or for a local copy the page
    it copies when that is one; None otherwise (``link_or_none``: nothing else becomes a link)."""
    if isinstance(url, str) and is_copy(url):
        return link_or_none((originals or {}).get(url))
    return link_or_none(url)


def field_label(field: str) -> str:
    """The words for an ``instances`` column (``inter_node_gbits_per_s`` → fabric bandwidth per node)."""
    return FIELD_LABELS.get(field, field.replace("_", " "))


def when(timestamp: Any) -> str:
    """A UTC timestamp to the minute, or "unknown"."""
    stamp = _timestamp(timestamp)
    return "unknown" if stamp is None else f"{stamp:%Y-%m-%d %H:%M} UTC"


def day(timestamp: Any) -> str:
    """A UTC timestamp or date as its day, or "unknown"."""
    stamp = _timestamp(timestamp)
    return "unknown" if stamp is None else f"{stamp:%Y-%m-%d}"


def _timestamp(value: Any) -> pd.Timestamp | None:
    """A timestamp, or None for a missing or unreadable one (text in a tampered catalog)."""
    try:
        stamp = None if value is None or pd.isna(value) else pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return None
    return None if stamp is None or pd.isna(stamp) else stamp


def plural(count: int, noun: str) -> str:
    """``1 provider``, ``2 providers``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def yes_no_unknown(value: Any) -> str:
    """A nullable boolean as "yes", "no" or "unknown"."""
    if value is None or pd.isna(value):
        return "unknown"
    return "yes" if value else "no"


#: One-line explanations shown on hover wherever these words head a column or label a toggle.
BASIS_HELP = (
    "Where a figure comes from. stated: the provider's own words, quoted; paraphrased: a curated "
    "figure in our words, read from the cited page; inferred: from the GPU's datasheet, not the "
    "provider; expected: a provider's health check or topology file; missing: nobody states it."
)
CURATED_HELP = (
    "Curated: facts a person read from the provider's documents and wrote down with their source, "
    "because the pages cannot be scraped; not refreshed automatically."
)
FLAGS_HELP = (
    "stale: kept from the last good refresh after a failed one; conflict: sources disagree (see "
    f"Conflicts); unit corrected: the source's unit was fixed (see the claim); {CURATED_HELP}"
)
LAYOUT_HELP = (
    "TP×PP×EP×DP: tensor × pipeline × expert × data parallel, how the cluster's GPUs split the model "
    "(TP4 x PP1 x EP1 x DP2: 4-GPU tensor-parallel groups, 2 replicas)."
)
BOUND_HELP = (
    "What limits the step: HBM-bound (reading weights and KV cache from GPU memory), compute-bound "
    "(the matrix multiplies), or a link (the communication)."
)
