"""The fault matrix, changes under 8x: held against the last accepted value, counts and row counts too.

A fabric 5 -> 35 -> 245 Gb/s across two refreshes, a GPU count 8 -> 32 (the per-GPU price cut 4x)
and 60,000 new rows from one CSV once passed every gate. Each case refreshes the small mirror's
catalog (tests/helpers.py ``build_mirror``) with the AWS page changed.
"""

from __future__ import annotations

import pytest

from tests.helpers import AWS_PAGE, Clock, build_mirror, query, run

G5_NETWORK = "| g5.12xlarge        | 4x 10 Gigabit                     |"
P5_SIZE = "| p5.48xlarge        | 2048.00      | AMD EPYC 7R13         | 192   | 8 x NVIDIA H100 GPU  "


@pytest.fixture
def small(tmp_path):
    """The small mirror refreshed once: (AWS page, db, clock a day later)."""
    mirror, db, clock = build_mirror(tmp_path / "m"), tmp_path / "c.duckdb", Clock()
    assert run(db, mirror, clock).exit_code == 0
    clock.advance()
    return mirror, db, clock


def aws_page(mirror, old: str, new: str) -> None:
    page = mirror / AWS_PAGE
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new))


def test_a_fabric_creeping_up_7x_per_refresh_is_held_at_the_second_step(small):
    mirror, db, clock = small
    original = (mirror / AWS_PAGE).read_text()
    aws_page(mirror, G5_NETWORK, G5_NETWORK.replace("4x 10 Gigabit", "4x 70 Gigabit"))  # 40 → 280
    assert run(db, mirror, clock).exit_code == 0
    clock.advance()
    (mirror / AWS_PAGE).write_text(original)
    aws_page(mirror, G5_NETWORK, G5_NETWORK.replace("4x 10 Gigabit", "4x 490 Gigabit"))  # 280 → 1960
    report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome, aws.fields_held) == (1, "carried", 2)  # fabric and front end
    assert "g5.12xlarge inter_node_gbits_per_s 280 → 1960 Gbit/s (49x the last accepted 40)" in aws.cause
    assert query(db, "SELECT inter_node_gbits_per_s FROM instances WHERE instance_type = 'g5.12xlarge'") == [
        (280.0,)
    ]


def test_a_gpu_count_read_4x_is_held_and_the_per_gpu_price_stays(small):
    mirror, db, clock = small
    aws_page(mirror, P5_SIZE, P5_SIZE.replace("8 x NVIDIA", "32 x NVIDIA"))
    report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome) == (1, "carried")
    assert "p5.48xlarge gpu_count 8 → 32 GPUs (4x)" in aws.cause
    assert query(
        db, "SELECT gpu_count, usd_per_gpu_hour, stale FROM instances WHERE instance_type = 'p5.48xlarge'"
    ) == [(8.0, 6.88, True)]


def test_rows_growing_8x_in_one_refresh_are_held_until_accepted(small):
    mirror, db, clock = small
    line = "| g5.xlarge          | 16.00        | AMD EPYC 7R32         | 4     | 1 x NVIDIA A10G GPU  "
    page = (mirror / AWS_PAGE).read_text()
    row = next(ln for ln in page.splitlines() if ln.startswith(line[:30]))
    extra = "\n".join(row.replace("g5.xlarge  ", f"g5.x{n:03d}   ", 1) for n in range(30))
    aws_page(mirror, row, row + "\n" + extra)
    report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome) == (1, "stale")
    assert "aws: 33 rows against 3 before (11x, 8x or more): held back; --accept-changes" in aws.cause
    assert query(db, "SELECT count(*) FROM instances WHERE provider = 'aws'") == [(3,)]
    clock.advance()
    assert run(db, mirror, clock, accept_changes=True).exit_code == 0
    assert query(db, "SELECT count(*) FROM instances WHERE provider = 'aws'") == [(33,)]


# -- the provider's own page stays primary (over loopback, with the local copies) -------------------


@pytest.mark.slow
def test_a_bad_cell_on_aws_page_never_hands_the_row_to_the_third_party_copy(tmp_path, mirror_server):
    from devtools.mirror_server import Reply
    from tests.helpers import AWS_PATH, MIRROR, SHARED, T0, fault_refresh, outcomes

    db = tmp_path / "c.duckdb"
    mirror_server.scripts.clear()
    assert fault_refresh(db, mirror_server.base_url, providers=["aws"], now=T0, copies=SHARED).exit_code == 0
    own = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
    assert query(db, "SELECT source_url FROM instances WHERE instance_type = 'p5.48xlarge'") == [(own,)]
    page = (MIRROR / AWS_PATH.lstrip("/")).read_text()
    cell = "| p5.48xlarge        | 3200 Gigabit                      |"
    mirror_server.script(
        AWS_PATH, Reply(200, page.replace(cell, "| p5.48xlarge        | NaN Gigabit |").encode())
    )
    report = fault_refresh(db, mirror_server.base_url, providers=["aws"], copies=SHARED)
    aws = outcomes(report)["aws"]
    assert (report.exit_code, aws.outcome, aws.rows_carried) == (1, "carried", 1)
    source, stale, cause = query(
        db, "SELECT source_url, stale, stale_cause FROM instances WHERE instance_type = 'p5.48xlarge'"
    )[0]
    assert (source, stale) == (own, True)
    assert cause.startswith(f"not in this refresh's parse of {own} (Skipping aws row p5.48xlarge: ")
    closed = query(
        db,
        "SELECT count(*) FROM claims WHERE instance_type = 'p5.48xlarge' "
        f"AND source_url = '{own}' AND valid_to IS NOT NULL",
    )
    assert closed == [(0,)]  # AWS's own claims stay current
