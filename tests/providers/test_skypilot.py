"""The SkyPilot catalog reader (scrapers/offer_lists/skypilot.py,
scrapers/offer_lists/skypilot_catalog.py): small CSVs written
for the test, then every trap on the real files in ../shared/mirror."""

from __future__ import annotations

import json
import logging

import pytest

from normalize.errors import LayoutError, ParseError
from scrapers.offer_lists.skypilot import CATALOGS, GpuInfo, csv_rows, gpu_info, is_gpu_row, row_price
from scrapers.offer_lists.skypilot_catalog import MemoryReading, catalog_memory
from tests.helpers import MIRROR, SHARED

URL = CATALOGS + "v8/test/vms.csv"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
H100_REPR = (
    "{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}],"
    " 'TotalGpuMemoryInMiB': 655360}"
)
H100_LINE = f'gpu_8x_h100,H100,8.0,208.0,1800.0,31.92,us-east-1,"{H100_REPR}",'


def rows(*lines: str, header: str = HEADER, end: str = "\r\n"):
    return csv_rows(end.join([header, *lines]) + end, "v8/test/vms.csv")


def test_columns_are_found_by_name_and_the_raw_line_is_kept():
    text = "Price,GpuInfo,InstanceType,AcceleratorName,AcceleratorCount,Region\r\n1.5,,cpu_x,,,r1\r\n"
    (row,) = csv_rows(text, "t.csv")
    assert (row.cell("InstanceType"), row.cell("Price"), row.number) == ("cpu_x", "1.5", 2)
    assert row.line == "1.5,,cpu_x,,,r1" and not is_gpu_row(row)
    (gpu,) = rows(H100_LINE)
    assert gpu.line == H100_LINE and gpu.cell("GpuInfo") == H100_REPR and is_gpu_row(gpu)
    assert rows(H100_LINE, end="\n")[0].line == H100_LINE  # LF files too


def test_a_missing_column_is_a_layout_error_naming_it():
    with pytest.raises(LayoutError, match=r"no column \['GpuInfo'\]"):
        rows(H100_LINE, header=HEADER.replace("GpuInfo", "Gpu"))


def test_a_short_line_is_skipped_with_a_warning_and_a_bom_is_no_column(caplog):
    with caplog.at_level(logging.WARNING):
        found = rows("gpu_1x,H100,1.0,8.0", H100_LINE, header="\ufeff" + HEADER)
    assert [r.cell("InstanceType") for r in found] == ["gpu_8x_h100"]
    assert "Skipping v8/test/vms.csv line 2 gpu_1x,H100,1.0,8.0: 4 cells, header has 9" in caplog.text


def test_gpu_info_python_repr_json_null_bare_and_lower_case_keys():
    python = gpu_info(H100_REPR)
    assert python == GpuInfo("python", "H100", 8.0, 81920.0, 655360.0, False)
    with pytest.raises(json.JSONDecodeError):
        json.loads(H100_REPR)
    as_json = gpu_info('{"Gpus": [{"Name": "B200", "Count": 1, "MemoryInfo": {"SizeInMiB": 184320}}]}')
    assert (as_json.written, as_json.name, as_json.size, as_json.total) == ("json", "B200", 184320.0, None)
    with_null = gpu_info(
        "{'Gpus': [{'Name': 'L40', 'Manufacturer': null, 'Count': 2, 'MemoryInfo': {'SizeInMiB': 49152}}]}"
    )
    assert (with_null.written, with_null.name, with_null.count) == ("python", "L40", 2.0)
    lower = gpu_info(
        "{'gpus': [{'name': 'h100', 'count': 8.0, 'memoryinfo': {'sizeinmib': 81559}}], "
        "'totalgpumemoryinmib': 81559}"
    )
    assert (lower.name, lower.size, lower.total) == ("h100", 81559.0, 81559.0)
    assert gpu_info("A100-80GB") == GpuInfo("bare", "A100-80GB")
    assert gpu_info("  ") is None
    entry = "'Name': 'A6000', 'Count': 4.0, 'MemoryInfo': {'SizeInMiB': 48}, 'TotalGpuMemoryInMiB': 192"
    inside = gpu_info("{'Gpus': [{" + entry + "}]}")
    assert (inside.size, inside.total, inside.total_in_entry) == (48.0, 192.0, True)


@pytest.mark.parametrize(
    "cell",
    [
        "{__import__('os').getcwd()}",  # a literal-only evaluator, never eval
        "{'Gpus': []}",
        "{'Gpus': [{'Name': 'A'}, {'Name': 'B'}]}",
        "{'Gpus': [{'Name': 'A'}]",
        "{{'a'}: 1}",
    ],
)
def test_gpu_info_refuses_anything_but_one_gpu_entry(cell):
    with pytest.raises(ParseError):
        gpu_info(cell)


def test_implausible_gpu_info_numbers_are_absent():
    entry = "'Name': 'H100', 'Count': True, 'MemoryInfo': {'SizeInMiB': -1}"
    info = gpu_info("{'Gpus': [{" + entry + "}], 'TotalGpuMemoryInMiB': 1e999}")
    assert (info.count, info.size, info.total) == (None, None, None)


def _price(line: str):
    (row,) = rows(line)
    return row_price("test", "gpu_8x_h100", row, URL)


def test_a_price_line_quotes_itself_and_keeps_its_utf8_region():
    line = H100_LINE.replace("us-east-1", '"Hafnarfjarðarkaupstaður, IS, EU"') + "12.5"
    price = _price(line)
    assert (price.region, price.usd_per_hour, price.spot_usd_per_hour) == (
        "Hafnarfjarðarkaupstaður, IS, EU",
        31.92,
        12.5,
    )
    assert price.quote == line and price.context == "v8/test/vms.csv › line 2"


@pytest.mark.parametrize(
    ("prices", "usd", "note"),
    [
        ("31.92,us-east-1", 31.92, ""),
        (",us-east-1", None, ""),  # with an empty SpotPrice too: no price row at all
        ("700.0,us-east-1", None, "placeholder"),
        ("0.00,us-east-1", None, "not a price"),
    ],
)
def test_empty_zero_and_placeholder_prices_are_no_price(prices, usd, note):
    line = H100_LINE.replace("31.92,us-east-1", prices)
    price = _price(line + "9.0")
    assert (price.usd_per_hour, price.spot_usd_per_hour) == (usd, 9.0)
    assert note in price.notes
    assert (_price(line) is None) == (usd is None)


def test_an_unreadable_or_implausible_price_is_a_parse_error():
    for bad in ("free", "20000"):
        with pytest.raises(ParseError):
            _price(H100_LINE.replace("31.92", bad))


@pytest.mark.parametrize(
    ("reading", "size", "count", "gb"),
    [
        (MemoryReading.PER_GPU_MIB, 81920, 8, 85.89934592),
        (MemoryReading.TOTAL_MIB, 655360, 8, 85.89934592),
        (MemoryReading.PER_GPU_GB, 80, 8, 80.0),
    ],
)
def test_each_memory_reading_gives_one_gpus_memory(reading, size, count, gb):
    line = H100_LINE.replace("'SizeInMiB': 81920", f"'SizeInMiB': {size}")
    claims, _ = catalog_memory(rows(line), reading, "H100", count, URL)
    assert claims[0].value == gb and claims[0].quote == line


def test_memory_that_is_host_ram_fits_no_part_or_differs_by_region_is_not_stated():
    host = H100_LINE.replace("'SizeInMiB': 81920", "'SizeInMiB': 230400")  # 1800 GiB / 8
    claims, notes = catalog_memory(rows(host), MemoryReading.PER_GPU_MIB, "H100", 8, URL)
    assert claims == [] and "is the host RAM per GPU (MemoryGiB 1800.0 / 8 GPUs)" in notes[-1]
    small = H100_LINE.replace("'SizeInMiB': 81920", "'SizeInMiB': 1024")
    claims, notes = catalog_memory(rows(small), MemoryReading.PER_GPU_MIB, "H100", 8, URL)
    assert claims == [] and "fits no H100 part (80 or 94 GB): not used" in notes[-1]
    claims, notes = catalog_memory(rows(H100_LINE, small), MemoryReading.PER_GPU_MIB, "H100", 8, URL)
    assert claims == [] and notes == ["regions disagree on GPU memory (1024 MiB, 81920 MiB): not stated"]


# ------------------------------------------------------------------------------------------------
# The real files.

CATALOG_DIR = "raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"


def _body(path: str) -> str:
    """A real catalog in the mirror byte for byte (read_text would turn CRLF into LF)."""
    return (MIRROR / CATALOG_DIR / path).read_bytes().decode("utf-8")


@pytest.mark.shared
def test_real_column_orders_differ_and_are_read_by_name():
    files = sorted(
        p.relative_to(MIRROR / CATALOG_DIR).as_posix() for p in (MIRROR / CATALOG_DIR).glob("v*/*/vms.csv")
    )
    assert len(files) >= 15  # every catalog CSV in the mirror, whatever its version folder
    headers = {path: _body(path).split("\n", 1)[0].rstrip("\r").split(",") for path in files}
    assert len({tuple(h) for h in headers.values()}) >= 6
    assert headers["v6/paperspace/vms.csv"][-1] == "Price" and headers["v8/mithril/vms.csv"][-1] == "GpuInfo"
    assert headers["v6/scaleway/vms.csv"][0] == "AvailabilityZone"
    assert headers["v8/verda/vms.csv"][1] == "UpstreamCloudId"
    assert (
        headers["v8/lambda/vms.csv"].index("Price") == 5
        and headers["v8/hyperstack/vms.csv"].index("Price") == 6
    )
    for path in files:
        body = _body(path)
        for row in csv_rows(body, path):
            assert row.line in body and set(row.cells) == set(headers[path])


@pytest.mark.shared
@pytest.mark.parametrize(
    ("path", "crlf"),
    [
        ("v8/lambda/vms.csv", True),
        ("v8/nebius/vms.csv", True),
        ("v8/vast/vms.csv", True),
        ("v8/verda/vms.csv", True),
        ("v8/hyperstack/vms.csv", False),
        ("v6/do/vms.csv", False),
    ],
)
def test_real_line_endings_survive_and_quotes_carry_no_line_end(path, crlf):
    body = _body(path)
    assert ("\r\n" in body) == crlf
    for row in csv_rows(body, path):
        assert "\r" not in row.line and "\n" not in row.line


@pytest.mark.shared
def test_real_placeholder_price_700_is_no_price():
    """SkyPilot's GCP catalog (too large for the mirror; its lines are in a verbatim excerpt) prices
    unavailable TPU slices at 700.0: neither on-demand nor spot is a price."""
    excerpt = (SHARED / "reference/skypilot/skypilot-catalog-v8-large-files-excerpts.md").read_text()
    header = next(line for line in excerpt.splitlines() if line.startswith("InstanceType,vCPUs,"))
    line = next(line for line in excerpt.splitlines() if line.endswith(",700.0,700.0"))
    assert line == ",,,tpu-v6e-8,1,tpu-v6e-8,us-central2,us-central2-b,700.0,700.0"
    (row,) = csv_rows(f"{header}\n{line}\n", "gcp/vms.csv")
    assert row_price("gcp", "tpu-v6e-8", row, URL) is None
    (priced,) = csv_rows(f"{header}\n{line.replace(',700.0,700.0', ',21.6,700.0')}\n", "gcp/vms.csv")
    price = row_price("gcp", "tpu-v6e-8", priced, URL)
    assert (price.usd_per_hour, price.spot_usd_per_hour) == (21.6, None)
    assert "SpotPrice 700.0 is SkyPilot's placeholder" in price.notes
