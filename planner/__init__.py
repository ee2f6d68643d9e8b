"""The workload planner: what a model costs in seconds and dollars on an instance's links.

Pure functions over plain records, no I/O: ``models`` (model and workload specs, presets),
``hardware`` (an instance's links in the catalog's conventions, turned one way per GPU),
``layouts`` (every TP x PP x EP x DP and where each group's traffic runs), ``memory`` (bytes per GPU),
``comms`` (bytes each collective moves and its time), ``step`` (compute, HBM and link time of one
step), ``plan`` (the whole answer for one instance or cluster, in ``result`` records) and ``verdict``
(how it reads). It imports ``normalize`` and ``records`` only; ``catalog.read.plan`` feeds it
catalog rows. The formulas are in docs/planning.md.
"""
