"""normalize.units: every bandwidth spelling met in the real documents, and pint's traps."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from normalize.errors import ParseError
from normalize.units import (
    find_bandwidths,
    find_memory_gb,
    gbits_to_gbytes,
    gbytes_to_gbits,
    memory_gb,
    parse_bandwidth,
    parse_gpu_count,
    parse_memory_gb,
    ureg,
)


@pytest.mark.parametrize(
    ("text", "default_unit", "gbits", "count", "up_to"),
    [
        ("3200 Gigabit", None, 3200, 1, False),  # AWS network table
        ("4x 100 Gigabit", None, 400, 4, False),  # AWS p4d: per instance across 4 cards
        ("16x 200 Gigabit", None, 3200, 16, False),  # AWS trn2
        ("8 x 400", "Gbps", 3200, 8, False),  # AWS blog "Network bandwidth (Gbps)" column
        ("3.2 Tbps", None, 3200, 1, False),  # Azure ND H100 v5 summary
        ("3.2Tb/s", None, 3200, 1, False),  # Azure ND H200 v5 summary, no space
        ("400 Gb/s", None, 400, 1, False),
        ("400 Gbps", None, 400, 1, False),
        ("80000 Mbps", None, 80, 1, False),
        ("80000", "Mbps", 80, 1, False),  # Azure "Max Bandwidth (Mbps)" cell
        ("75000", "Mb/s", 75, 1, False),  # Azure RTX PRO 6000 header spelling
        ("24,000", "Mbps", 24, 1, False),  # comma-formatted
        ("1,600 Gbps", None, 1600, 1, False),
        ("Up to 100 Gigabit", None, 100, 1, True),
        ("up to 25 Gigabit", None, 25, 1, True),
        ("100-Gigabit InfiniBand EDR", None, 100, 1, False),  # Azure NDv2
        ("4x800", "Gbps", 3200, 4, False),  # Azure GB300 scale-out cell
        ("4× 400 Gb/s NVIDIA Quantum-2 CX7 InfiniBand connections per VM", None, 1600, 4, False),
        ("8 x 2 x 200 Gbps RDMA", None, 3200, 16, False),  # OCI H100.8
        ("8 x 1 x 400 Gbps", None, 3200, 8, False),
        ("160", "Gbps", 160, 1, False),
    ],
)
def test_bit_rate_spellings(text, default_unit, gbits, count, up_to):
    bandwidth = parse_bandwidth(text, default_unit=default_unit)
    assert bandwidth.gbits_per_s == gbits
    assert bandwidth.count == count
    assert bandwidth.up_to is up_to
    assert not bandwidth.is_bytes


@pytest.mark.parametrize(
    ("text", "gbytes"),
    [("900 GB/s", 900), ("1.8 TB/s", 1800), ("128 GB/s", 128), ("4.8 TB/s", 4800), ("1.8 TBps", 1800)],
)
def test_byte_rate_spellings(text, gbytes):
    bandwidth = parse_bandwidth(text)
    assert bandwidth.is_bytes
    assert bandwidth.gbytes_per_s == gbytes


def test_baseline_and_burst():
    bandwidth = parse_bandwidth("2.5 / 10.0", default_unit="Gbps")
    assert bandwidth.gbits_per_s == 2.5
    assert bandwidth.burst_gbits_per_s == 10.0
    assert bandwidth.qualifiers == "baseline; burst 10 Gbit/s"


def test_qualifiers_per_and_direction():
    bandwidth = parse_bandwidth("900 GB/s per GPU, bidirectional")
    assert bandwidth.per == "gpu"
    assert bandwidth.direction == "bidirectional"
    assert parse_bandwidth("450 GB/s in each direction").direction == "unidirectional"
    assert parse_bandwidth("3.2 Tbps per VM").per == "node"
    assert parse_bandwidth("400 Gbps per NIC").per == "nic"


def test_bytes_printed_for_bits_can_be_reread():
    # Azure NDm A100 v4: "200 GB/s NVIDIA Mellanox HDR InfiniBand" means 200 Gb/s.
    printed = parse_bandwidth("200 GB/s")
    assert printed.gbits_per_s == 1600
    assert printed.reread_as_bits().gbits_per_s == 200
    assert parse_bandwidth("1.6 TB/s").reread_as_bits().gbits_per_s == 1600


# pint's own reading of vendor spellings is wrong; each trap gets a test that shows it.
def test_trap_gb_is_gilbert_in_pint_but_gigabit_here():
    assert str(ureg("Gb").units) == "gilbert"
    assert parse_bandwidth("400 Gb").gbits_per_s == 400


def test_trap_mb_is_megabarn_in_pint_but_megabit_here():
    assert str(ureg("Mb").units) == "megabarn"
    assert parse_bandwidth("80000 Mb").gbits_per_s == 80


def test_trap_gbps_is_gigabaud_in_pint_but_gigabit_per_second_here():
    assert str(ureg("Gbps").units) == "gigabaud"
    assert str(parse_bandwidth("400 Gbps").each.units) == "gigabit / second"


def test_trap_case_of_b_separates_bits_from_bytes():
    assert parse_bandwidth("1.8 TBps").gbits_per_s == 14400
    assert parse_bandwidth("1.8 Tbps").gbits_per_s == 1800


def test_dimensionality_error_for_memory_as_rate():
    with pytest.raises(Exception, match="dimension"):
        ureg.Quantity(80, "gigabyte").to("gigabit / second")


@pytest.mark.parametrize(
    "text",
    ["", "   ", "fast", "NVLINK 4.0", "20,000 - 80,000 Mbps", "1 x 100 Gbps 8 x 200 Gbps", "80 GB"],
)
def test_bad_bandwidth_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_bandwidth(text)


def test_bare_number_without_unit_is_an_error():
    with pytest.raises(ParseError, match="no bandwidth figure"):
        parse_bandwidth("3200")


def test_numbers_inside_words_are_not_figures():
    assert parse_bandwidth("H100 80GB 400 Gbps", default_unit="Gbps").gbits_per_s == 400
    figures = find_bandwidths("ND H100 v5 with 3.2 Tbps of interconnect bandwidth per VM")
    assert [f.gbits_per_s for f in figures] == [3200]


# The seed's reference figures, exactly.
def test_seed_conversions():
    assert gbits_to_gbytes(400) == 50
    assert 900 / gbits_to_gbytes(400) == 18
    assert gbits_to_gbytes(100) == 12.5
    assert math.isclose(3350 / 900, 3.7, abs_tol=0.03)
    assert 3350 / gbits_to_gbytes(400) == 67
    assert gbytes_to_gbits(50) == 400


@pytest.mark.parametrize(
    ("text", "gb"),
    [
        ("22 GiB", 23.622320128),
        ("80 GiB", 85.89934592),
        ("(80GB)", 80.0),
        ("1,900 GiB", 2040.109465600),
        ("Nvidia Blackwell GPU (192 GiB)", 206.158430208),
        ("96 GB", 96.0),
    ],
)
def test_memory_sizes(text, gb):
    assert parse_memory_gb(text) == pytest.approx(gb, rel=1e-12)


def test_memory_finds_every_size():
    assert find_memory_gb("640 GiB (8 x 80 GiB)") == [687.19476736, 85.89934592]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("8", Fraction(8)),
        ("8.0", Fraction(8)),
        ("1/6", Fraction(1, 6)),
        ("0.125", Fraction(1, 8)),
        (" 1/4 ", Fraction(1, 4)),
    ],
)
def test_gpu_counts_stay_exact(text, count):
    assert parse_gpu_count(text) == count


@pytest.mark.parametrize("text", ["", "x", "0", "1/0", "-1", "1 - 4"])
def test_bad_gpu_counts(text):
    with pytest.raises(ParseError):
        parse_gpu_count(text)


@pytest.mark.parametrize(
    ("value", "symbol", "gb"), [(81920, "MiB", 85.89934592), (80, "GB", 80.0), (1600, "GiB", 1717.9869184)]
)
def test_memory_gb_converts_through_pint(value, symbol, gb):
    assert memory_gb(value, symbol) == gb
    with pytest.raises(ParseError, match="unknown memory unit 'Mb'"):
        memory_gb(value, "Mb")


def test_the_read_sides_factors_agree_with_the_registry():
    """normalize.factors serves code that never loads pint; each factor is what the registry says."""
    from normalize.factors import (
        BITS_PER_BYTE,
        BYTES_PER_GB,
        FLOPS_PER_TFLOPS,
        SECONDS_PER_HOUR,
        TOKENS_PER_BILLION,
        TOKENS_PER_MILLION,
    )
    from normalize.units import factor

    # The planner's factors (planner/conversions.py), which it reads without loading pint.
    assert factor("gigabyte", "byte") == BYTES_PER_GB
    assert factor("gigabyte / second", "byte / second") == BYTES_PER_GB
    assert factor("teracount / second", "count / second") == FLOPS_PER_TFLOPS
    assert factor("hour", "second") == SECONDS_PER_HOUR
    assert factor("megacount", "count") == TOKENS_PER_MILLION
    assert factor("gigacount", "count") == TOKENS_PER_BILLION
    assert factor("bit", "byte") * BITS_PER_BYTE == 1

    assert gbytes_to_gbits(1.0) == BITS_PER_BYTE
    assert gbits_to_gbytes(BITS_PER_BYTE) == 1.0


def test_the_read_sides_currency_is_the_one_the_catalog_publishes_in():
    from normalize.currency import USD
    from normalize.factors import CURRENCY

    assert CURRENCY == USD
