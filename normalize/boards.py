"""One inference policy for the board a GPU sits on: families sold only as one kind of board.

Providers name the GPU (an "H100") but rarely its form factor, which decides the link: an H100 SXM on
an HGX board talks over NVSwitch, an H100 PCIe card over PCIe. Some families are only ever sold as
one kind of board: AWS P5, Azure ND H100 v5, Google A3, Oracle BM.GPU.H100.8 are 8-GPU HGX (SXM)
machines. ``normalize/board_families.csv`` lists them, per provider and family as the provider names
it, and every scraper asks ``board_of`` the same question, so the form factor is inferred the same
way everywhere, marked inferred, and explained by the same note. A family not in the table whose
source states NVLink among more than two GPUs is on such a board too (PCIe cards bridge pairs at
most): the same question answers it, with its own note.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

BOARD_TABLE = "normalize/board_families.csv"


@dataclass(frozen=True)
class Board:
    """The one kind of board a family is sold as, and its form factor (a key of gpus.csv)."""

    form_factor: str
    sold_as: str
    nvlink_gpus: float | None = None  # set when the board follows from NVLink stated among these GPUs

    def note(self, family: str) -> str:
        """The row note every provider gives an inference from this table (or from stated NVLink)."""
        if self.nvlink_gpus is not None:
            return (
                f"form factor {self.form_factor} inferred: {family} states NVLink among "
                f"{self.nvlink_gpus:g} GPUs, which only {self.sold_as} carry"
            )
        return f"form factor {self.form_factor} inferred: {family} is sold only as {self.sold_as}"


def _load() -> dict[tuple[str, str], Board]:
    with resources.files("normalize").joinpath("board_families.csv").open(encoding="utf-8") as handle:
        return {
            (row["provider"], row["family"].lower()): Board(row["form_factor"], row["sold_as"])
            for row in csv.DictReader(handle)
        }


BOARDS = _load()


def board_of(provider: str, family: str, *, nvlink_gpus: float | None = None) -> Board | None:
    """The board ``provider``'s ``family`` (as the provider names it) is sold as, or None. Not in the
    table: an HGX (SXM) board when the source states NVLink among ``nvlink_gpus`` > 2 GPUs."""
    board = BOARDS.get((provider, family.strip().lower()))
    if board is None and nvlink_gpus is not None and nvlink_gpus > 2:
        return Board("SXM", "HGX (SXM) boards", nvlink_gpus=nvlink_gpus)
    return board
