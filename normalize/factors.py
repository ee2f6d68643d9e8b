"""Conversion factors for code that must start fast and so never loads pint (the catalog's read side
and the app). Each factor is checked against the one pint registry (``normalize.units``) in
tests/unit/test_units.py, so it cannot drift from it."""

from __future__ import annotations

#: Bits in a byte: Gb/s = GB/s x BITS_PER_BYTE.
BITS_PER_BYTE = 8
