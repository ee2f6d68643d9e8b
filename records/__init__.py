"""The records every layer hands to the next, and the catalog's clock.

Imports read bottom to top, one floor at a time: ``normalize`` (units, vocabulary, GPU table, the error
tree) → ``records`` (this package: documents, claims and offers, prices, measurements, the column
table) → ``fetch`` (the network floor) → ``measure`` (tool-output parsers) → ``scrapers`` (one module
per source) → ``planner`` → ``catalog`` (build rows, store, refresh, read) → ``devtools`` → ``ui`` →
``app.py``. Nothing here does I/O or imports a floor above it; ``tests/unit/test_layers.py`` checks it.
"""
