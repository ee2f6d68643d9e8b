"""The records every layer hands to the next, and the catalog's clock.

Imports read bottom to top: ``normalize`` (units, vocabulary, GPU table, the error tree) →
``records`` (this package: documents, claims and offers, prices, measurements) → ``scrapers``
(fetch and parse, one module per provider) → ``catalog`` (build rows, store, refresh, read) →
``app.py``. Nothing here does I/O or imports a layer above it; ``tests/unit/test_layers.py`` checks it.
"""
