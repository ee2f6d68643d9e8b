"""How old each offer list is, in the catalog built from ../shared: the offer_lists table and the
notes of rows from frozen lists."""

from __future__ import annotations

from tests.helpers import query


def test_offer_lists_table_says_which_lists_are_frozen_and_that_no_date_is_known(real_catalog_file):
    rows = query(
        real_catalog_file,
        "SELECT provider, catalog_version, status, data_as_of, as_of_note FROM offer_lists ORDER BY 1, 2",
    )
    frozen = sorted(p for p, v, s, _, _ in rows if s == "frozen")
    assert frozen == ["digitalocean", "fluidstack", "oci", "ovhcloud", "paperspace", "scaleway"]
    assert all(v == "v6" for _, v, s, _, _ in rows if s == "frozen")
    assert all(d is None and note.startswith("undated") for _, _, _, d, note in rows)
    [(newer,)] = query(real_catalog_file, "SELECT newer_list FROM offer_lists WHERE provider = 'fluidstack'")
    assert "v9/fluidstack/vms.csv" in newer and "H100_NVLINK_80GB::8" in newer


def test_rows_of_frozen_lists_say_so(real_catalog_file):
    noted = dict(
        query(
            real_catalog_file,
            "SELECT provider, count(*) FILTER (WHERE array_to_string(notes, '|') LIKE '%a tree SkyPilot no "
            "longer reads: frozen%') FROM instances GROUP BY 1",
        )
    )
    assert {p: noted[p] for p in ("digitalocean", "paperspace", "fluidstack", "ovhcloud", "scaleway")} == {
        "digitalocean": 2,
        "paperspace": 14,
        "fluidstack": 12,
        "ovhcloud": 14,
        "scaleway": 4,  # the 11 others come from Scaleway's own docs, not the list
    }
    assert noted["nebius"] == 0 and noted["lambda"] == 0
