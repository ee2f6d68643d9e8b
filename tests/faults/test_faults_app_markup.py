"""The fault matrix, round three, the app (issue 23): nothing from a catalog reaches markdown in any
view, a tampered catalog's unknown words are one line and no traceback, and a link's numbers are held
to the ``plan`` options' caps, with a word (AppTest on a tampered copy of the small catalog)."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from tests.helpers import run_app, shown_texts

pytestmark = pytest.mark.slow

PAYLOAD = (
    " [click](https://evil.example/a) ![pixel](https://evil.example/p.png) <img src=https://evil.example/h>"
)
# Columns that hold a word of the catalog's vocabulary (a link, a basis...): tampered separately below.
VOCABULARY = {
    "field", "unit", "basis", "evidence", "seller_kind", "gpu_memory_flag", "intra_node_link",
    "inter_node_fabric", "gpu_peer_access", "source_kind", "kind", "metric", "direction", "outcome",
    "refresh_id", "sha256", "currency", "body",
}  # fmt: skip
# Elements whose text Streamlit renders as markdown (or shows as an exception).
MARKUP = (
    "markdown",
    "caption",
    "info",
    "warning",
    "error",
    "success",
    "title",
    "header",
    "subheader",
    "exception",
)


def _tampered(source, target) -> None:
    shutil.copyfile(source, target)
    with duckdb.connect(str(target)) as con:
        columns = con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE t.table_type = 'BASE TABLE' AND data_type IN ('VARCHAR', 'VARCHAR[]')"
        ).fetchall()
        for table, column, kind in columns:
            if column in VOCABULARY or column.endswith("_basis"):
                continue
            value = f'"{column}" || $p' if kind == "VARCHAR" else f'list_append("{column}", $p)'
            con.execute(
                f'UPDATE "{table}" SET "{column}" = {value} WHERE "{column}" IS NOT NULL', {"p": PAYLOAD}
            )
        con.execute("DELETE FROM prices WHERE instance_type LIKE 'g5.xlarge%'")  # an unpriced row, counted


@pytest.fixture(scope="module")
def tampered_db(small_catalog_file, tmp_path_factory):
    db = tmp_path_factory.mktemp("markup") / "tampered.duckdb"
    _tampered(small_catalog_file, db)
    return db


def _texts(node, found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kind = getattr(node, "type", "")
    for attribute in ("value", "body", "label"):
        text = getattr(node, attribute, None)
        if isinstance(text, str):
            found.append((kind, text))
    children = getattr(node, "children", None)
    for child in children.values() if isinstance(children, dict) else ():
        _texts(child, found)
    return found


def _views(db) -> list[dict]:
    from ui.sidebar import LINKS

    with duckdb.connect(str(db), read_only=True) as con:
        name, provider = con.execute(
            "SELECT instance_type || ' (' || provider || ')', provider FROM instances "
            "WHERE instance_type LIKE 'p5.48xlarge%'"
        ).fetchone()
        (region,) = con.execute("SELECT region FROM prices WHERE provider = ? LIMIT 1", [provider]).fetchone()
    return [
        {"view": "Ranking"},
        {"view": "Ranking", "mode": LINKS, "provider": [provider], "region": region},
        {"view": "Ranking", "provider": [provider], "region": region},
        {"view": "Compare", "compare": [name]},
        {"view": "Instance", "instance": name},
        {"view": "Instance", "instance": name, "mode": LINKS},
        {"view": "Measurements", "provider": [provider]},
        {"view": "What's missing", "provider": [provider], "region": region},
        {"view": "What's missing"},
        {"view": "Conflicts", "provider": [provider]},
        {"view": "Catalog status", "provider": [provider]},
    ]


@pytest.mark.parametrize("view", range(11))
def test_no_catalog_text_reaches_markdown_in_any_view(tampered_db, tmp_path, monkeypatch, view):
    """Every text column of the catalog ends in a markdown link, a remote image and an HTML tag. Once
    the What's missing tab's 'Prices:' line (provider names), the status tab's provider line and the
    ranking's price words (a region) rendered them live."""
    db = tmp_path / "c.duckdb"  # a copy: the app's cached connection must not hold the shared file
    shutil.copyfile(tampered_db, db)
    query = _views(db)[view]
    app = run_app(monkeypatch, db, **query)
    leaked = [
        (kind, text[:120])
        for kind, text in _texts(app._tree, [])
        if kind in MARKUP and "evil.example" in text
    ]
    assert leaked == [], query


@pytest.mark.parametrize("column", ["intra_node_link", "inter_node_fabric"])
def test_a_word_no_catalog_of_ours_holds_is_one_line_not_a_traceback(
    small_catalog_file, tmp_path, monkeypatch, column
):
    """A tampered catalog whose link or fabric is an unknown word: every view once a ValueError
    traceback ('bogus' is not a valid Link); now one line saying the catalog cannot be read."""
    from ui.sidebar import LINKS

    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute(f"ALTER TABLE instances ALTER {column} TYPE VARCHAR")
        con.execute(f"UPDATE instances SET {column} = 'bogus'")
        (name,) = con.execute(
            "SELECT instance_type || ' (' || provider || ')' FROM instances LIMIT 1"
        ).fetchone()
    for query in ({"view": "Ranking"}, {"view": "Instance", "instance": name, "mode": LINKS}):
        app = run_app(monkeypatch, db, **query)  # it fails on any exception
        errors = shown_texts(app, "error")
        assert len(errors) == 1 and "is not a valid" in errors[0], (query, errors)


@pytest.mark.parametrize(
    ("param", "value", "cap"),
    [
        ("nodes", "1000000", "1,024"),  # once planned 1,000,000 instances without a word
        ("batch", "1000000000", "10,000,000"),
        ("context", "1000000000", "10,000,000"),
        ("target", "1e300", "1,000,000,000"),
        ("min_mem", "inf", "100,000"),
    ],
)
def test_a_link_number_past_the_plan_caps_is_warned_about_and_ignored(
    small_catalog_file, tmp_path, monkeypatch, param, value, cap
):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    app = run_app(monkeypatch, db, **{param: value})
    warnings = shown_texts(app, "warning")
    said = f"The link's {param}={value!r} is not one the app can show"
    expected = f"{said} (expected a number from 0 to {cap})"
    assert [w for w in warnings if expected in w], warnings
    boxes = {box.key: box.value for box in app.number_input}
    assert boxes[param] != float(value)
