"""Text read from documents, on its way to a terminal or a spreadsheet: shown as the characters it is.

A name from a document can carry a NUL, a terminal escape sequence (``\\x1b[2J``), a bidirectional
override that reorders what a reader sees, or a spreadsheet formula (``=HYPERLINK(...)``,
``+cmd|...``, ``@SUM(...)``). ``escaped`` writes every such character as its escape (``\\x1b``,
``\\u202e``), so the text is printed, never obeyed; ``formula_safe`` puts a ``'`` before a cell that
a spreadsheet would read as a formula (it starts with = + - @, a tab or a carriage return), so it
opens as the text it is.
"""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls, DEL, and the invisible format characters that reorder or hide text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escaped(text: str, *, keep: str = "") -> str:
    """``text`` with every control or invisible format character written as its escape; the
    characters in ``keep`` (a report's own newlines) stay as they are."""
    if keep:
        return keep[0].join(escaped(part, keep=keep[1:]) for part in text.split(keep[0]))
    return _UNSAFE.sub(_escape, text)


def unsafe_characters(text: str) -> list[str]:
    """The escapes of the control and format characters in ``text``, in order (empty if none)."""
    return [_escape(m) for m in _UNSAFE.finditer(text)]


def formula_safe(value: Any) -> Any:
    """A CSV cell a spreadsheet opens as text: a string starting with a formula prefix gets a ``'``
    before it; anything else is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


#: How a CSV cell writes a list of texts (a row's notes): its items joined, in order.
LIST_SEPARATOR = "; "


def csv_cell(value: Any) -> Any:
    """One CSV cell: a list (or tuple, or array) as its items joined by ``LIST_SEPARATOR``, then
    ``formula_safe``; anything else as ``formula_safe`` leaves it."""
    if hasattr(value, "__len__") and not isinstance(value, (str, bytes, dict)):
        value = LIST_SEPARATOR.join(str(item) for item in value)
    return formula_safe(value)


def csv_safe_frame(frame: Any) -> Any:
    """A pandas DataFrame with every text cell ``formula_safe`` and every list joined (``csv_cell``;
    numbers untouched), for a CSV."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    columns = [c for c in frame.columns if is_object_dtype(frame[c]) or is_string_dtype(frame[c])]
    safe = frame.copy()
    for column in columns:
        safe[column] = safe[column].map(csv_cell)
    safe.columns = [formula_safe(c) for c in safe.columns]
    return safe
