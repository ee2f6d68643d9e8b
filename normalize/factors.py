"""Conversion factors for code that must start fast and so never loads pint (the catalog's read side
and the app). Each factor is checked against the one pint registry (``normalize.units``) in
tests/unit/test_units.py, so it cannot drift from it; ``CURRENCY``, the one constant here that is
not a factor, is ``normalize.currency.USD`` (checked there too)."""

from __future__ import annotations

#: Bits in a byte: Gb/s = GB/s x BITS_PER_BYTE.
BITS_PER_BYTE = 8

#: Bytes in a GB (decimal): the catalog's memory and bandwidth unit.
BYTES_PER_GB = 1_000_000_000
#: FLOP/s in a TFLOPS.
FLOPS_PER_TFLOPS = 1_000_000_000_000
#: Seconds in an hour (prices are per hour).
SECONDS_PER_HOUR = 3600
#: Tokens in a million and in a billion (costs are per million or billion tokens).
TOKENS_PER_MILLION = 1_000_000
TOKENS_PER_BILLION = 1_000_000_000

#: The currency every price in the catalog is published in (the columns say ``usd``).
CURRENCY = "USD"
