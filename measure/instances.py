"""Which catalog instance a tool output is about, when the output itself says so.

An output names its instance only in passing ("2x a3-highgpu-8g (H100-80GB)", "shape=BM.GPU.B4.8"),
so it is searched for the catalog's own instance-type names, whole (not part of a longer name).
Names with spaces are left out: RunPod's and CoreWeave's instance types are GPU names ("NVIDIA H100
80GB HBM3") that every nvidia-smi and nccl-tests output prints whatever instance it ran on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Found:
    """The instance a text names, or why none is taken."""

    provider: str | None
    instance_type: str | None
    how: str


def find_instance(text: str, known: Iterable[tuple[str, str]]) -> Found:
    """The one catalog instance ``text`` names (provider, instance type), or none with the reason."""
    names = {(p, i) for p, i in known if i and not any(c.isspace() for c in i)}
    hits = {
        (p, i) for p, i in names if i in text and re.search(rf"(?<![\w.\-]){re.escape(i)}(?![\w.\-])", text)
    }
    if len(hits) == 1:
        ((provider, instance_type),) = hits
        return Found(provider, instance_type, f"the file names {instance_type}")
    if hits:
        listed = ", ".join(sorted(i for _, i in hits))
        return Found(None, None, f"the file names several catalog instances ({listed}): say which one")
    return Found(None, None, "the file names no catalog instance")
