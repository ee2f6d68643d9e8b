"""The units a user reads bandwidths in: GB/s or Gb/s, per GPU or per node, applied everywhere.

The catalog stores GB/s per GPU for the links inside a node and Gb/s per node for the networks; the
read side derives both per GPU (``catalog.read.queries``). Here a per-GPU GB/s figure becomes the
chosen unit: x BITS_PER_BYTE for Gb/s (``normalize.factors``, checked against pint), x GPUs per
instance for per node (a fractional GPU counts as one, as in the per-GPU derivation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from normalize.factors import BITS_PER_BYTE

#: Significant digits a shown figure keeps (85.89934592 GB → 85.9; 3,200 stays 3,200).
SIGNIFICANT_DIGITS = 4


@dataclass(frozen=True)
class Units:
    """GB/s or Gb/s (``bits``), per GPU or per node (``per_node``)."""

    bits: bool = False
    per_node: bool = False

    @property
    def rate(self) -> str:
        """``Gb/s`` or ``GB/s``."""
        return "Gb/s" if self.bits else "GB/s"

    @property
    def per(self) -> str:
        """``per node`` or ``per GPU``."""
        return "per node" if self.per_node else "per GPU"

    @property
    def label(self) -> str:
        """The unit in words, e.g. ``Gb/s per node``."""
        return f"{self.rate} {self.per}"

    @property
    def short(self) -> str:
        """The unit for a narrow column header, e.g. ``Gb/s/node``."""
        return f"{self.rate}/{'node' if self.per_node else 'GPU'}"

    def convert(self, gbytes_per_s_per_gpu: pd.Series, gpu_count: pd.Series) -> pd.Series:
        """Per-GPU GB/s figures in these units, rounded for reading (NaN stays NaN; per node needs
        the GPU count, so an unknown count gives NaN)."""
        values = gbytes_per_s_per_gpu.astype("float64")
        if self.per_node:
            values = values * gpu_count.astype("float64").clip(lower=1)
        if self.bits:
            values = values * BITS_PER_BYTE
        return pd.Series(round_significant(values.to_numpy()), index=gbytes_per_s_per_gpu.index)

    def from_display(self, value: float) -> tuple[float, float]:
        """A minimum fabric bandwidth typed in these units, as (Gb/s per node, GB/s per GPU), one of
        them zero: the filter compares the figure the user reads, in the form the catalog holds."""
        if self.per_node:
            return (value if self.bits else value * BITS_PER_BYTE), 0.0
        return 0.0, (value / BITS_PER_BYTE if self.bits else value)


def round_significant(values: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """Each value rounded to ``digits`` significant digits, but never past its units digit
    (85.89934592 → 85.9, 11,106.1 → 11,106; NaN and 0 unchanged)."""
    x = np.asarray(values, dtype="float64")
    finite = np.isfinite(x) & (x != 0)
    magnitude = np.floor(np.log10(np.abs(np.where(finite, x, 1.0))))
    factor = 10.0 ** np.maximum(digits - 1 - magnitude, 0)
    return np.where(finite, np.round(x * factor) / factor, x)
