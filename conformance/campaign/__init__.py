"""Long fuzzing campaigns (``conformance campaign``): generator tasks on a Dask cluster, merged into one report.

A campaign is many short runs of the surfaces' generators, each one surface
with a seed of its own and a slice of the examples, run as Dask tasks on an
embedded local cluster or on a cluster of many machines until a wall-clock
budget is spent:

    plan.py      what a campaign asks for and the tasks it submits (no Dask)
    tasks.py     what a worker runs: one generator task, on the worker's own oracle and candidate
    findings.py  the one report, each new finding written as it arrives
    engine.py    the cluster, the submission loop, the end of a campaign however it ends

Dask is imported only by ``tasks.py`` and ``engine.py``, so the command
line starts without it.
"""
