"""html_tables reads pages with lxml directly; on any page it must give exactly the tables that the
BeautifulSoup reading (the reference) gives: random table-shaped HTML, and the real pages mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.tables import html_tables, html_tables_soup
from tests.helpers import MIRROR
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import mutated

pytestmark = MARKS

WORDS = st.sampled_from(["8", "H100", "NVIDIA", "3,200 Gbps", "x", "&amp;", "&nbsp;", " ", "\n", "é", "—"])
TAGS = st.sampled_from(
    [
        "br",
        "p",
        "li",
        "div",
        "span",
        "b",
        "a",
        "sup",
        "code",
        "caption",
        "th",
        "td",
        "tr",
        "table",
        "h2",
        "h3",
    ]
)


@st.composite
def fragment(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        choice = draw(st.integers(0, 3 if depth < 3 else 1))
        if choice <= 1:
            parts.append(draw(WORDS))
        elif choice == 2:
            tag = draw(TAGS)
            parts.append(f"<{tag}>{draw(fragment(depth + 1))}</{tag}>" if tag != "br" else "<br>")
        else:
            parts.append(f"<!-- {draw(WORDS)} -->")
    return "".join(parts)


@st.composite
def page(draw: st.DrawFn) -> str:
    rows = []
    for r in range(draw(st.integers(0, 4))):
        cell = "th" if r == 0 and draw(st.booleans()) else "td"
        rows.append(
            "<tr>" + "".join(f"<{cell}>{draw(fragment())}</{cell}>" for _ in range(draw(st.integers(0, 3))))
        )
    heading = draw(st.sampled_from(["", "<h2>GPU</h2>", "<h2>A</h2><h3>B</h3>", "<h4>only</h4>"]))
    body = f"{heading}{draw(fragment())}<table>{''.join(rows)}</table>{draw(fragment())}"
    return f"<html><body>{body}</body></html>"


@given(text=page())
def test_random_tables_read_the_same_by_lxml_and_beautifulsoup(text):
    assert html_tables(text) == html_tables_soup(text)


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=20)
@given(data=st.data())
def test_the_real_aws_page_mutated_reads_the_same(data):
    real = (MIRROR / "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md").read_text(encoding="utf-8")
    text = data.draw(mutated(real))
    assert html_tables(text) == html_tables_soup(text)
