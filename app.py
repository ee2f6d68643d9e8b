"""Streamlit app: the GPU interconnect catalog. Run with `make app`."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from catalog.store import connect_readonly

DB_PATH = Path(os.environ.get("INTERCONNECT_CATALOG_DB", "data/catalog.duckdb"))


@st.cache_data(ttl=60)
def load_instances(db_path: str, mtime: float) -> pd.DataFrame:
    """All catalog rows; ``mtime`` keys the cache so a refreshed catalog is read again."""
    with connect_readonly(Path(db_path)) as con:
        return con.execute("SELECT * FROM instances ORDER BY provider, instance_type").df()


def main() -> None:
    st.set_page_config(page_title="GPU interconnect catalog", layout="wide")
    st.title("GPU interconnect catalog")
    if not DB_PATH.exists():
        st.error(f"No catalog at {DB_PATH}. Run `make app` (builds it) or `make refresh`.")
        return
    instances = load_instances(str(DB_PATH), DB_PATH.stat().st_mtime)
    if instances.empty:
        st.info("The catalog is empty.")
        return
    st.caption(f"{len(instances)} instance types from {instances['provider'].nunique()} providers")
    st.dataframe(instances, hide_index=True, use_container_width=True)


if __name__ == "__main__":
    main()
