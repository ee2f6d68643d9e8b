"""Links (AppTest): a copied link reproduces the view a ready question set up; a source the catalog
holds as a local copy is named as one, in the link view's table and its download."""

from __future__ import annotations

import pytest

from tests.helpers import app_tab, run_app

pytestmark = pytest.mark.slow

TRAIN_405B = "Train Llama 3.1 405B: what to rent, what it costs"


def test_the_link_of_a_ready_question_opens_the_same_view(small_catalog_file, monkeypatch):
    """A new user's run: "Train Llama 3.1 405B" trains 15.6T tokens (``LLAMA_405B_TOKENS_B``), but its
    link held the model, task and order only, so the link opened 20 tokens per parameter (8.1e12),
    half the days and dollars. The token budget's box is not on the serving view the question is
    picked from, and a bound widget writes a value set from code only once it has been drawn."""
    from ui.sidebar import LLAMA_405B_TOKENS_B

    app = run_app(monkeypatch, small_catalog_file)
    app.selectbox(key="ready").select(TRAIN_405B).run()
    assert app.number_input(key="train_tokens").value == LLAMA_405B_TOKENS_B
    link = dict(app.query_params)
    assert link["train_tokens"] == str(LLAMA_405B_TOKENS_B)
    picked = app_tab(app, "Ranking").dataframe[0].value
    opened = run_app(monkeypatch, small_catalog_file, **link)
    assert opened.number_input(key="train_tokens").value == LLAMA_405B_TOKENS_B
    assert app_tab(opened, "Ranking").subheader[0].value == app_tab(app, "Ranking").subheader[0].value
    shared = app_tab(opened, "Ranking").dataframe[0].value
    assert set(shared["tokens to train"].dropna()) == {LLAMA_405B_TOKENS_B * 1e9}
    cheapest = ["instance", "USD to train", "days to train"]
    assert shared[cheapest].iloc[0].tolist() == picked[cheapest].iloc[0].tolist()
    assert shared.equals(picked)


def test_a_ready_question_from_the_link_view_links_its_model(small_catalog_file, monkeypatch):
    """From the link view no plan widget is drawn: the question's model, task, order and token
    budget reach the URL all the same, and the link opens the plan it asked."""
    app = run_app(monkeypatch, small_catalog_file, mode="Links only")
    app.selectbox(key="ready").select(TRAIN_405B).run()
    link = dict(app.query_params)
    assert {k: link.get(k) for k in ("model", "task", "by", "train_tokens")} == {
        "model": "llama-3.1-405b",
        "task": "Train",
        "by": "cost",
        "train_tokens": "15600.0",
    }
    opened = run_app(monkeypatch, small_catalog_file, **link)
    assert app_tab(opened, "Ranking").dataframe[0].value.equals(app_tab(app, "Ranking").dataframe[0].value)
