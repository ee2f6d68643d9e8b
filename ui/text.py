"""How text reaches the page. Everything read from a document or the catalog (quotes, notes,
instance and GPU names, error causes, URLs, regions) is shown as the characters it is: in a
Streamlit slot that renders markdown it goes through ``plain``, which escapes every markdown and
HTML character, so an injected link stays text and an injected image is never fetched. Links
are made only from ``http``/``https`` URLs (``link_or_none``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping all of them
# also defuses Streamlit's own syntax (":red[...]", ":material/...:", "$...$").
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")

#: How the app names each ``instances`` column a claim feeds (never the raw column name).
FIELD_LABELS: Mapping[str, str] = {
    "gpu_model": "GPU model",
    "gpu_count": "GPUs per instance",
    "gpu_memory_gb": "GPU memory per GPU",
    "gpu_memory_gbytes_per_s": "GPU memory bandwidth per GPU",
    "intra_node_link": "GPU-to-GPU link",
    "intra_node_gbytes_per_s": "GPU-to-GPU bandwidth per GPU",
    "scale_up_domain_gpus": "NVLink domain (GPUs)",
    "inter_node_fabric": "fabric",
    "inter_node_gbits_per_s": "fabric bandwidth per node",
    "nic_count": "fabric NICs",
    "frontend_gbits_per_s": "front-end bandwidth per node",
    "frontend_nic_count": "front-end NICs",
}


def plain(text: object) -> str:
    """``text`` for a markdown slot (caption, warning, subheader...), rendered as the characters it is."""
    return _PUNCTUATION.sub(r"\\\1", str(text))


def link_or_none(url: object) -> str | None:
    """``url`` when it is an http(s) URL a link column may open, else None (shown as no link)."""
    if isinstance(url, str) and re.match(r"(?i)^https?://[^\s]+$", url):
        return url
    return None


def field_label(field: str) -> str:
    """The words for an ``instances`` column (``inter_node_gbits_per_s`` → fabric bandwidth per node)."""
    return FIELD_LABELS.get(field, field.replace("_", " "))


def when(timestamp: object) -> str:
    """A UTC timestamp to the minute, or "unknown"."""
    if timestamp is None or pd.isna(timestamp):
        return "unknown"
    return f"{pd.Timestamp(timestamp):%Y-%m-%d %H:%M} UTC"


def day(timestamp: object) -> str:
    """A UTC timestamp or date as its day, or "unknown"."""
    if timestamp is None or pd.isna(timestamp):
        return "unknown"
    return f"{pd.Timestamp(timestamp):%Y-%m-%d}"


def yes_no_unknown(value: object) -> str:
    """A nullable boolean as "yes", "no" or "unknown"."""
    if value is None or pd.isna(value):
        return "unknown"
    return "yes" if value else "no"
