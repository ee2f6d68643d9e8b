"""The app's building blocks below ``app.py``: how provider text is shown (``text``), units and
rounding (``units``), the sidebar and URL state (``sidebar``), charts (``charts``), the shown tables
and their downloads (``tables``), and one module per group of views. Every question is asked of
``catalog.read``; nothing here imports the refresh, pint or a scraper.
"""
