"""measure.nvidia_smi_xml on small XML of our own: product names to parts, PCIe links, fabric state."""

from __future__ import annotations

import pytest

from measure import detect, parse_output
from measure.common import Origin
from measure.nvidia_smi_xml import parse_xml, product_gpu
from normalize.errors import ParseError

ORIGIN = Origin("user", "file:nvidia-smi.xml", "measured", "aws", "x.large")


def gpu(
    gpu_id: str, name: str, gen: str = "4", device_gen: str = "5", width: str = "16x", state: str = "N/A"
) -> str:
    return f"""\t<gpu id="{gpu_id}">
\t\t<product_name>{name}</product_name>
\t\t<pci>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen>
\t\t\t\t\t<max_link_gen>{gen}</max_link_gen>
\t\t\t\t\t<current_link_gen>1</current_link_gen>
\t\t\t\t\t<max_device_link_gen>{device_gen}</max_device_link_gen>
\t\t\t\t</pcie_gen>
\t\t\t\t<link_widths>
\t\t\t\t\t<max_link_width>{width}</max_link_width>
\t\t\t\t</link_widths>
\t\t\t</pci_gpu_link_info>
\t\t</pci>
\t\t<fabric>
\t\t\t<state>{state}</state>
\t\t\t<status>Success</status>
\t\t</fabric>
\t</gpu>"""


def log(*gpus: str) -> str:
    head = '<?xml version="1.0" ?>\n<nvidia_smi_log>\n\t<timestamp>Sat Aug 17 19:27:54 2024</timestamp>\n'
    return head + "\t<driver_version>535.1</driver_version>\n" + "\n".join(gpus) + "\n</nvidia_smi_log>\n"


@pytest.mark.parametrize(
    ("name", "part", "settled"),
    [
        ("NVIDIA A100-SXM4-40GB", "A100-SXM-40GB", True),
        ("NVIDIA H100 PCIe", "H100-PCIE-80GB", True),
        ("NVIDIA H100 NVL", "H100-NVL-94GB", True),
        ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB", True),  # HBM3: the SXM5 module
        ("NVIDIA H200", "H200-SXM-141GB", True),  # the NVL card says "H200 NVL"
        ("NVIDIA H200 NVL", "H200-NVL-141GB", True),
        ("NVIDIA L4", "L4-24GB", True),
        ("NVIDIA H100", "H100", False),  # no memory, no form: open
    ],
)
def test_product_names_give_the_part_or_leave_the_form_factor_open(name, part, settled):
    found = product_gpu(name)
    assert found is not None and (found.id, found.settled) == (part, settled)


def test_unknown_product_is_none():
    assert product_gpu("Matrox G200") is None


def test_readings_group_gpus_and_quote_their_own_lines():
    text = log(
        gpu("0", "NVIDIA H100 80GB HBM3", state="Completed"),
        gpu("1", "NVIDIA H100 80GB HBM3", state="Completed"),
        gpu("2", "NVIDIA H100 PCIe", gen="5", width="8x"),
    )
    assert detect(text) == ["nvidia-smi XML"]
    readings = parse_output(text, ORIGIN)
    by = {(m.metric, m.value, m.value_text, m.gpus) for m in readings}
    assert by == {
        ("gpu_product_name", None, "NVIDIA H100 80GB HBM3", 2),
        ("gpu_product_name", None, "NVIDIA H100 PCIe", 1),
        ("pcie_link_gbytes_per_s", 64.0, None, 2),  # Gen4 x16, both directions
        ("pcie_link_gbytes_per_s", 64.0, None, 1),  # Gen5 x8
        ("gpu_fabric_state", None, "Completed", 2),
    }
    for m in readings:
        assert m.quote in text and m.run_at.isoformat() == "2024-08-17T19:27:54" and m.tool_version == "535.1"
    link = next(m for m in readings if m.metric == "pcie_link_gbytes_per_s" and m.gpus == 2)
    assert "the host holds it at Gen4" in link.notes and "running at Gen1 when read" in link.notes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<nvidia_smi_log><gpu", "not nvidia-smi XML"),
        ("<nvidia_smi_log></nvidia_smi_log>", "lists no GPU"),
        ('<!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log/>', "declares entities"),
        ("<other><nvidia_smi_log/></other>", "not <nvidia_smi_log>"),
    ],
)
def test_bad_xml_is_a_parse_error_naming_why(text, message):
    with pytest.raises(ParseError, match=message):
        parse_xml(text, ORIGIN)


DOCTYPE = '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">\n'


def test_an_undefined_entity_behind_nvidia_smis_doctype_is_refused_not_read_as_a_cut_text():
    text = DOCTYPE + log(gpu("0", "NVIDIA &foo; H100 80GB HBM3")).split("\n", 1)[1]
    with pytest.raises(ParseError, match="undefined entity"):
        parse_xml(text, ORIGIN)


def test_a_comment_or_processing_instruction_inside_a_text_leaves_it_whole():
    for inside in ("<!--c-->", "<?pi x?>"):
        text = DOCTYPE + log(gpu("0", f"NVIDIA H100 {inside}80GB HBM3")).split("\n", 1)[1]
        names = {m.value_text for m in parse_xml(text, ORIGIN) if m.metric == "gpu_product_name"}
        assert names == {"NVIDIA H100 80GB HBM3"}
