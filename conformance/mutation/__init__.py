"""Mutation testing of the suite itself: how many one-bug reimplementations does it catch?

Each mutant is the reference candidate with exactly one plausible bug
(:mod:`.mutants`: where, what is replaced, which bug a reimplementer would
have made). :mod:`.serve` runs one as a candidate process; :mod:`.measure`
certifies every mutant twice, by the cases alone and by the ``ci``
generators alone, and :mod:`.table` renders the kill rates per surface,
with each survivor named. ``conformance mutants`` (and ``nox -s mutants``)
runs it.
"""
