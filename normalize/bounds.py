"""Physical bounds a figure must respect, and the bits-versus-bytes check they allow.

Provider pages print GB/s where they mean Gb/s ("200 GB/s NVIDIA Mellanox HDR InfiniBand"). A
single network port faster than the fastest shipping NIC is not a network port: such a figure is
reread as bits and marked unit-suspect.
"""

from __future__ import annotations

from normalize.units import Bandwidth

# Fastest single network port shipping: InfiniBand XDR / ConnectX-8, 800 Gbit/s.
NIC_MAX_GBITS_PER_S = 800.0
# Per-GPU scale-up links: NVLink 5 is 1,800 GB/s; leave headroom for one more generation.
INTRA_MAX_GBYTES_PER_S = 2000.0
# Per-node GPU fabric: 8 x 800 Gbit/s = 6,400 today; anything past 30,000 is a unit error.
FABRIC_MAX_GBITS_PER_S = 30000.0
# Smallest front-end bandwidth a GPU instance is sold with (AWS g5g.xlarge baseline: 1.25 Gbit/s).
FRONTEND_MIN_GBITS_PER_S = 0.5
# Per GPU, no instance has more network than two of the fastest NICs (GB200/GB300: 800 Gbit/s per GPU).
NETWORK_PER_GPU_MAX_GBITS_PER_S = 2 * NIC_MAX_GBITS_PER_S
# A stated figure this many times its GPU datasheet's (either way) is a unit or prefix error.
DATASHEET_RATIO_MAX = 8.0
# A measured GPU-to-GPU copy reaches at most its link's peak (the real readings: 0.87x at most); past
# this many times the datasheet it is not the row's GPU (an imported 1,999 GB/s once filled a V100 row,
# whose NVLink peaks at 300, as measured).
MEASURED_RATIO_MAX = 1.5


def network_rate(figure: Bandwidth, *, links: int = 1) -> tuple[Bandwidth, bool]:
    """The figure as a network rate, and whether its printed unit was wrong.

    A figure printed in bytes per second whose share per link exceeds NIC_MAX_GBITS_PER_S only makes
    sense in bits: it is returned reread as bits with the suspect flag set.
    """
    per_link = figure.gbits_per_s / max(1, links, figure.count)
    if figure.is_bytes and per_link > NIC_MAX_GBITS_PER_S:
        return figure.reread_as_bits(), True
    return figure, False
