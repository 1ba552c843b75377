"""Hypothesis strategies, one per surface, named in the surface's declaration.

Each draws inputs that real verifiers and runners produce, mixed with the
awkward ones that break re-implementations. Values are plain Python (bytes,
str, int, float, None, lists, dicts): exactly what a case file's ``input``
holds, so a generated input can be written out as a case unchanged.
"""
