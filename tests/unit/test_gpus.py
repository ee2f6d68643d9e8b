"""normalize.gpus: canonical names keep the form factor; GiB/GB and partitions are handled."""

from __future__ import annotations

import pytest

from normalize.errors import ParseError
from normalize.gpus import BY_ID, GPUS, identify_gpu
from normalize.units import parse_memory_gb
from normalize.vocab import Link


@pytest.mark.parametrize(
    ("name", "memory", "form", "expected"),
    [
        ("P5 NVIDIA H100 GPU", "80 GiB", "SXM", "H100-SXM-80GB"),
        ("Nvidia PCIe H100 GPU (94GB)", "94 GB", None, "H100-NVL-94GB"),  # Azure NCads: NVL card
        ("NVIDIA H100 NVL", None, None, "H100-NVL-94GB"),
        ("Nvidia PCIe A100 GPU (80GB)", "80 GB", None, "A100-PCIE-80GB"),
        ("NVIDIA A10G GPU", "22 GiB", None, "A10G-24GB"),  # AWS prints 22 GiB for the 24 GB A10G
        ("NVIDIA L40S GPU", "44 GiB", None, "L40S-48GB"),
        ("P6-B200 NVIDIA B200 GPU", "179 GiB", "SXM", "B200-SXM-180GB"),
        ("P6e-GB200 NVIDIA B200 GPU", "185 GiB", None, "GB200-186GB"),  # the family names the superchip
        ("Nvidia Blackwell GPU (192 GiB) ND GB200-v6", "192 GiB", None, "GB200-186GB"),
        ("NVIDIA T4g GPU", "16 GiB", None, "T4G-16GB"),
        ("AMD Instinct MI300X GPU (192GB)", "191.875 GB", None, "MI300X-192GB"),
        (
            "8 NVIDIA Tesla V100 NVLINK-connected GPUs",
            "32 GB",
            None,
            "V100-SXM2-32GB",
        ),  # no NVLink on PCIe V100
        ("Nvidia Tesla V100 GPU", "32 GB", "SXM", "V100-SXM2-32GB"),  # an SXM board of V100s is SXM2
        # the GPUs the offer lists sell, as their catalogs spell them
        ("GH200", "96 GiB", None, "GH200-96GB"),
        ("RTX6000", "24 GiB", None, "QUADRO-RTX-6000-24GB"),  # Lambda's Turing card, not the Ada one
        ("RTX6000-Ada", None, None, "RTX-6000-ADA-48GB"),
        ("RTX-6000-Ada", None, None, "RTX-6000-ADA-48GB"),
        ("RTX 4070S Ti", None, None, "RTX-4070-TI-SUPER-16GB"),
        ("RTX 3060 Ti", None, None, "RTX-3060-TI-8GB"),
        ("RTX3060", None, None, "RTX-3060-12GB"),
        ("RTX 4060 Ti", "16 GiB", None, "RTX-4060-TI-16GB"),
        ("A16", "16 GB", None, "A16-16GB"),
        ("GAUDI2", "96 GB", None, "GAUDI2-96GB"),
        ("M4000", None, None, "QUADRO-M4000-8GB"),
        ("P4000", None, None, "QUADRO-P4000-8GB"),
        ("A100-80G-PCIe-NVLink", "80 GiB", None, "A100-PCIE-80GB"),  # NVLink bridges on PCIe cards
    ],
)
def test_identify(name, memory, form, expected):
    memory_gb = parse_memory_gb(memory) if memory else None
    match = identify_gpu(name, memory_gb=memory_gb, form_factor=form)
    assert match.id == expected
    assert match.spec is BY_ID[expected]
    assert not match.memory_mismatch


@pytest.mark.parametrize(
    ("name", "memory", "expected"),
    [
        ("V100-32GB", None, "V100-32GB"),  # SXM2 and PCIe both come with 32 GB
        ("RTXPRO6000S", None, "RTX-PRO-6000-96GB"),  # Server, Workstation or Max-Q: not said
        ("H100 NVLINK", "80 GiB", "H100-80GB"),  # an SXM board or bridged PCIe cards: not said
    ],
)
def test_offer_list_names_without_a_form_factor_stay_family_level(name, memory, expected):
    match = identify_gpu(name, memory_gb=parse_memory_gb(memory) if memory else None)
    assert (match.id, match.spec) == (expected, None)


def test_ambiguous_form_factor_stays_family_level():
    # Azure NCv3 "Nvidia Tesla V100 GPU (16GB)": SXM2 and PCIe both exist with 16 GB.
    match = identify_gpu("Nvidia Tesla V100 GPU (16GB)", memory_gb=16)
    assert match.id == "V100-16GB"
    assert match.spec is None


def test_partition_keeps_the_gpu_and_flags_memory():
    # AWS g6f.large: "1 x NVIDIA L4 GPU" with "2 GiB": a slice of an L4.
    match = identify_gpu("NVIDIA L4 GPU", memory_gb=parse_memory_gb("2 GiB"))
    assert match.id == "L4-24GB"
    assert match.memory_mismatch


def test_unknown_family_raises():
    with pytest.raises(ParseError, match="unknown GPU"):
        identify_gpu("Xilinx Virtex UltraScale (VU9P) FPGA")


def test_datasheet_table_is_consistent():
    ids = [spec.id for spec in GPUS]
    assert len(ids) == len(set(ids))
    for spec in GPUS:
        assert spec.id.startswith(spec.family)
        assert spec.id.endswith(f"{spec.memory_gb:g}GB")
        assert spec.datasheet_url.startswith("https://")
        if spec.link in (Link.NVSWITCH, Link.NVLINK, Link.INFINITY_FABRIC):
            assert spec.link_gbytes_per_s and spec.link_gbytes_per_s >= 100


def test_datasheet_figures_match_shared_facts():
    """The headline figures in ../shared/facts/gpu-specs.md."""
    assert BY_ID["H100-SXM-80GB"].link_gbytes_per_s == 900
    assert BY_ID["H100-SXM-80GB"].memory_gbytes_per_s == 3350
    assert BY_ID["H200-SXM-141GB"].memory_gbytes_per_s == 4800
    assert BY_ID["B200-SXM-180GB"].link_gbytes_per_s == 1800
    assert BY_ID["A100-SXM-80GB"].memory_gbytes_per_s == 2039
    assert BY_ID["V100-SXM2-32GB"].link_gbytes_per_s == 300
    assert BY_ID["MI300X-192GB"].link_gbytes_per_s == 896
    assert BY_ID["L4-24GB"].pcie_gbytes_per_s == 64
    assert BY_ID["T4-16GB"].pcie_gbytes_per_s == 32
    assert BY_ID["H100-NVL-94GB"].pcie_gbytes_per_s == 128
    assert BY_ID["GB200-186GB"].scale_up_domain_gpus == 72


@pytest.mark.parametrize(
    ("gpu", "printed_sparse_bf16", "printed_sparse_fp8", "divisor"),
    [
        # NVIDIA prints the 2:4-sparsity peak with an asterisk; dense is half.
        ("H100-SXM-80GB", 1979, 3958, 2),  # 1,979 / 2 = 989.5; 3,958 / 2 = 1,979
        ("H200-SXM-141GB", 1979, 3958, 2),
        ("H100-NVL-94GB", 1671, 3341, 2),  # 835.5; 1,670.5
        ("L4-24GB", 242, 485, 2),  # 121; 242.5
        # Board and rack pages print the whole board's sparse peak: / GPUs / 2.
        ("B200-SXM-180GB", 36_000, 72_000, 8 * 2),  # 36 PFLOPS / 8 / 2 = 2,250 TFLOPS
        ("GB200-186GB", 360_000, 720_000, 72 * 2),  # 360 PFLOPS / 72 / 2 = 2,500 TFLOPS
    ],
)
def test_dense_peaks_are_the_printed_sparse_figures_halved(
    gpu, printed_sparse_bf16, printed_sparse_fp8, divisor
):
    spec = BY_ID[gpu]
    assert spec.tflops_printed_sparse is True
    assert spec.dense_bf16_tflops == printed_sparse_bf16 / divisor
    assert spec.dense_fp8_tflops == printed_sparse_fp8 / divisor
    assert "with sparsity" in spec.tflops_note


def test_dense_peaks_printed_dense_are_stored_as_printed():
    assert (BY_ID["MI300X-192GB"].dense_bf16_tflops, BY_ID["MI300X-192GB"].dense_fp8_tflops) == (
        1307.4,
        2614.9,
    )
    assert BY_ID["A100-SXM-80GB"].dense_bf16_tflops == 312
    assert BY_ID["L40S-48GB"].dense_fp8_tflops == 733
    assert BY_ID["MI300X-192GB"].tflops_printed_sparse is False


def test_parts_without_a_datasheet_peak_stay_empty_and_say_why():
    for gpu, why in [
        ("A100-SXM-80GB", "no FP8 tensor cores"),  # BF16 yes, FP8 no
        ("T4-16GB", "no BF16"),
        ("V100-SXM2-32GB", "no BF16"),
        ("A10G-24GB", "no NVIDIA datasheet"),
    ]:
        spec = BY_ID[gpu]
        assert spec.dense_fp8_tflops is None
        assert why in spec.tflops_note
    assert BY_ID["T4-16GB"].dense_bf16_tflops is None


def test_every_peak_is_plausible_and_explained():
    for spec in GPUS:
        if spec.dense_bf16_tflops is None:
            assert spec.dense_fp8_tflops is None, spec.id  # no part has FP8 without BF16
            assert spec.tflops_printed_sparse is None and spec.tflops_note, spec.id
            continue
        assert 50 <= spec.dense_bf16_tflops <= 5000, spec.id
        if spec.dense_fp8_tflops is not None:
            assert spec.dense_fp8_tflops == pytest.approx(2 * spec.dense_bf16_tflops, rel=0.02), spec.id
        assert spec.tflops_printed_sparse is not None and "FLOPS" in spec.tflops_note, spec.id
