"""The read side: questions the app and the CLI ask of a built catalog (``queries``), how rows rank
for a workload (``scoring``), what changed between refreshes (``changes``). It imports nothing of
the refresh: reading the catalog never loads a scraper, pint or an HTTP client.
"""
