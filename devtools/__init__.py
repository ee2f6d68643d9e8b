"""Developer tooling, kept out of the product's import path: the loopback mirror server that fault
tests and benchmarks run against, and the benchmarks themselves (``python -m devtools``)."""
