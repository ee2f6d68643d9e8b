"""Scrapers of providers' own documents (pages, markdown, tables), one module or package each."""
