"""The published-cases suite (devtools/published_cases.py): every measured case within its tolerance,
and the suite's summary as the docs print it. A failing case means the model moved away from a
published run: fix the mechanism, not the case."""

from __future__ import annotations

import pytest

from devtools.published_cases import CASES, table, typical_and_worst
from tests.helpers import ROOT


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_case_within_its_tolerance(case):
    ratio = case.ratio()
    assert 1 / case.tolerance <= ratio <= case.tolerance, (
        f"{case.what}: planner {case.planner():.4g} vs published {case.published:.4g} {case.unit} "
        f"({case.source_url})"
    )


def test_every_case_cites_a_source_and_has_a_role():
    assert len({c.case_id for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.source_url.startswith("https://") and case.role in ("calibration", "judge")
        assert case.klass in ("communication", "serving", "training") and case.published > 0


def test_the_summary_is_what_the_ratios_say():
    assert typical_and_worst([2.0, 0.5, 1.0]) == pytest.approx((2.0, 2.0))
    text = table()
    assert text.count("\n| ") >= len(CASES) and "| communication |" in text
    # docs/planning.md shows this very table: after a change to the model or the cases, paste
    # `python -m devtools.published_cases` into its "Published cases" section.
    assert text in (ROOT / "docs" / "planning.md").read_text(encoding="utf-8")
