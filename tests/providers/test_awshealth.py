"""awshealth: AWS's sample GPU health-check profile table, read in place."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from scrapers.measurements.awshealth import PROFILES, AwsHealth, profile_readings
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(AwsHealth())
    assert [d.url for d in documents] == [PROFILES] and all(d.ok for d in documents)
    return AwsHealth().parse_measurements(DocumentSet(documents))


def by_type(readings, metric):
    return {m.instance_type: m for m in readings if m.metric == metric}


def test_real_efa_counts_cover_p5e_p5en_and_p6_b200(readings, real_document):
    efa = {k: (m.value, m.gpus) for k, m in by_type(readings, "nic_count").items()}
    assert efa == {
        "p4d.24xlarge": (4.0, 8),
        "p4de.24xlarge": (4.0, 8),
        "p5.48xlarge": (32.0, 8),
        "p5e.48xlarge": (32.0, 8),
        "p5en.48xlarge": (16.0, 8),
        "p6-b200.48xlarge": (8.0, 8),
        "g6.48xlarge": (1.0, 8),
    }
    document = real_document(PROFILES)
    for m in readings:
        assert m.kind == "expected" and m.provider == "aws" and m.quote in document
        assert m.locator.startswith("line ")
    assert by_type(readings, "nic_count")["p5en.48xlarge"].quote == "p5en.48xlarge|8|16|true|efa"


def test_real_nvlink_expected_on_p_types_not_on_g6_and_the_l40s_comment_is_not_read(readings, real_document):
    nvlink = {k: m.value_text for k, m in by_type(readings, "nvlink_status").items()}
    assert nvlink == {
        "p4d.24xlarge": "active",
        "p4de.24xlarge": "active",
        "p5.48xlarge": "active",
        "p5e.48xlarge": "active",
        "p5en.48xlarge": "active",
        "p6-b200.48xlarge": "active",
        "g6.48xlarge": "not expected",
    }
    # the section comment calls g6 "L40S"; g6 carries L4s: nothing is read from a comment
    assert "NVIDIA L40S Instances" in real_document(PROFILES)
    assert not any("L40S" in m.notes or "L40S" in m.quote for m in readings)
    # g6.xlarge: one GPU and EFA_COUNT 0 give no reading (a count is positive; no GPU pair)
    assert not [m for m in readings if m.instance_type == "g6.xlarge"]
    # the file has no final newline: its last line is still read
    assert not real_document(PROFILES).endswith("\n")
    assert len(readings) == 14


def test_fixture_malformed_lines_are_refused_with_the_line():
    head = "# Format: INSTANCE_TYPE|GPU_COUNT|EFA_COUNT|NVLINK_EXPECTED|EFA_PROVIDER\n"
    with pytest.raises(ParseError, match="line 2: 3 fields"):
        profile_readings(head + "p5.48xlarge|8|32\n", PROFILES, "awshealth")
    with pytest.raises(ParseError, match="line 2: EFA_COUNT 'x' is not a count"):
        profile_readings(head + "p5.48xlarge|8|x|true|efa", PROFILES, "awshealth")
    with pytest.raises(ParseError, match="NVLINK_EXPECTED 'yes'"):
        profile_readings(head + "p5.48xlarge|8|32|yes|efa", PROFILES, "awshealth")
    with pytest.raises(LayoutError, match="format line"):
        profile_readings("p5.48xlarge|8|32|true|efa", PROFILES, "awshealth")
    with pytest.raises(LayoutError, match="no instance profile"):
        profile_readings(head, PROFILES, "awshealth")
