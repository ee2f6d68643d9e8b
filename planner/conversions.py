"""The factors the planner computes with, as plain numbers so that a plan never loads pint: each is
checked against the project's one pint registry in tests/unit/test_units.py (``normalize.factors``).

The planner works in base units (bytes, bytes per second, FLOP per second, seconds, tokens) so that
its inner loops are plain float arithmetic. The catalog's figures (GB, GB/s, Gbit/s, TFLOPS, USD per
hour) are turned into base units with these factors.
"""

from __future__ import annotations

from normalize.factors import (
    BITS_PER_BYTE,
    BYTES_PER_GB,
    FLOPS_PER_TFLOPS,
    SECONDS_PER_HOUR,
    TOKENS_PER_BILLION,
    TOKENS_PER_MILLION,
)

BYTES_PER_S_PER_GBYTE_PER_S = BYTES_PER_GB
__all__ = [
    "BYTES_PER_ELEMENT",
    "BYTES_PER_GB",
    "BYTES_PER_S_PER_GBYTE_PER_S",
    "DTYPE_BITS",
    "FLOPS_PER_TFLOPS",
    "SECONDS_PER_HOUR",
    "TOKENS_PER_BILLION",
    "TOKENS_PER_MILLION",
]

#: Bits per element of each number format a model's weights, KV cache or activations are held in.
DTYPE_BITS = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4}
#: The same in bytes (bf16 → 2.0, fp4 → 0.5).
BYTES_PER_ELEMENT = {name: bits / BITS_PER_BYTE for name, bits in DTYPE_BITS.items()}


def gb_to_bytes(gb: float) -> float:
    """10^9 bytes → bytes."""
    return gb * BYTES_PER_GB


def bytes_to_gb(n_bytes: float) -> float:
    """bytes → GB (10^9 bytes)."""
    return n_bytes / BYTES_PER_GB


def gbytes_per_s_to_bytes_per_s(gbytes_per_s: float) -> float:
    """GB/s → bytes/s."""
    return gbytes_per_s * BYTES_PER_S_PER_GBYTE_PER_S


def tflops_to_flops(tflops: float) -> float:
    """TFLOPS (10^12 FLOP/s) → FLOP/s."""
    return tflops * FLOPS_PER_TFLOPS
