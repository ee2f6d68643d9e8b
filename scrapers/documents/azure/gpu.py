"""What an Azure series says of its GPU (the specs include, else the summary), and what a size's name
says of its network (the 'r' capability letter)."""

from __future__ import annotations

import re

from normalize.boards import Board
from normalize.errors import ParseError
from normalize.gpus import GpuMatch, identify_gpu
from normalize.units import find_memory_gb
from scrapers.documents.azure import prose as azure_prose
from scrapers.documents.azure.series import Series
from scrapers.tables import clean

_SIZE = re.compile(r"^Standard_N[A-Z]*\d+(?P<caps>[a-z]*)")


def rdma_capable(size: str) -> bool:
    """Azure's naming convention: sizes 'designated with r' are RDMA-capable (setup-infiniband)."""
    match = _SIZE.match(size)
    return bool(match and "r" in match.group("caps"))


def gpu_identity(
    series: Series, memory_hint_gb: float | None, board: Board | None = None
) -> tuple[GpuMatch, str, str]:
    """The GPU, the quote that names it, and that quote's URL: the specs table, else the summary.
    A series on HGX boards (``normalize.boards``) gets its form factor from ``board``."""
    spec_raw = series.spec_cell("Accelerators", 2)
    spec_text = clean(spec_raw)
    form = board.form_factor if board else None
    candidates = []
    if spec_text:
        candidates.append((f"{spec_text} {series.name}", spec_raw.strip(), series.specs_url))
    for sentence in azure_prose.gpu_sentences(series.summary):
        candidates.append((f"{sentence} {series.name}", sentence, series.summary_url))
    for name, quote, url in candidates:
        memory = memory_hint_gb or next(iter(find_memory_gb(name)), None)
        try:
            return identify_gpu(name, memory_gb=memory, form_factor=form), quote, url or series.url
        except ParseError:
            continue
    raise ParseError(f"{series.url}: no GPU model named in the specs table or summary")


def spec_memory_gb(series: Series) -> float | None:
    """The per-GPU memory the specs table (else the summary) states, in GB."""
    sizes = find_memory_gb(clean(series.spec_cell("Accelerators", 2)))
    if not sizes:
        sizes = [m for s in azure_prose.gpu_sentences(series.summary) for m in find_memory_gb(s)]
    return sizes[0] if sizes else None
