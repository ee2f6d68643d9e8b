"""The read side: questions the app and the CLI ask of a built catalog. ``filters`` (what the user
asked for, as bound SQL), ``queries`` (rows with derived columns, cliffs, claims), ``scoring`` (how
rows rank for a workload, in one query), ``missing`` and ``conflicts`` (what the catalog does not
know or where sources disagree, and why), ``status`` (refreshes, stale rows, how old the data is),
``changes`` (what changed between refreshes), ``shape`` (which optional tables a file holds). It
imports nothing of the refresh: reading the catalog never loads a scraper, pint or an HTTP client.
"""
