"""The factors the planner computes with, each read once from the project's one pint registry.

The planner works in base units (bytes, bytes per second, FLOP per second, seconds, tokens) so that
its inner loops are plain float arithmetic. The catalog's figures (GB, GB/s, Gbit/s, TFLOPS, USD per
hour) are turned into base units with these factors, which come from the one registry
(``normalize.units.factor``) and never from a typed-in constant.
"""

from __future__ import annotations

from normalize.units import GB, GBIT_PER_S, GBYTE_PER_S, factor

_factor = factor


BYTES_PER_GB = _factor(GB, "byte")
BYTES_PER_S_PER_GBYTE_PER_S = _factor(GBYTE_PER_S, "byte / second")
BYTES_PER_S_PER_GBIT_PER_S = _factor(GBIT_PER_S, "byte / second")
# Floating-point operations and tokens are counts: pint's ``count`` with its SI prefixes.
FLOPS_PER_TFLOPS = _factor("teracount / second", "count / second")
SECONDS_PER_HOUR = _factor("hour", "second")
TOKENS_PER_MILLION = _factor("megacount", "count")
TOKENS_PER_BILLION = _factor("gigacount", "count")

#: Bits per element of each number format a model's weights, KV cache or activations are held in.
DTYPE_BITS = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4}
#: The same in bytes (bf16 → 2.0, fp4 → 0.5), converted by pint.
BYTES_PER_ELEMENT = {name: bits * factor("bit", "byte") for name, bits in DTYPE_BITS.items()}


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
