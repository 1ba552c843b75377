"""SharedText writes what json.dumps writes (indent or none, ensure_ascii off), however a document shares its
containers with the templates it was built from, and never lets a shared container's text go stale."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.strategies.json_text import SharedText
from conformance.surfaces.result_load import strategy as result_load

TEMPLATE: dict[str, Any] = {"a": [1, 2.5, {"b": None}], "c": {"d": "ü\u2028\"x\"", "e": []}, "f": {}}
_TEXT = SharedText([TEMPLATE])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5))
keys = st.one_of(st.text(max_size=3), st.integers(-5, 5), st.floats(allow_nan=False), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=3)), max_leaves=8)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(values, st.sampled_from([None, 0, 2, 4]))
def test_any_value_is_written_as_json_dumps_writes_it(value, indent):
    assert _TEXT.dumps(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)


@pytest.mark.parametrize("indent", [None, 4])
def test_a_document_sharing_a_template_is_written_with_its_own_changes(indent):
    document = {**TEMPLATE, "c": {**TEMPLATE["c"], "d": float("nan")}, "g": TEMPLATE["a"]}
    assert _TEXT.dumps(TEMPLATE, indent) == json.dumps(TEMPLATE, indent=indent, ensure_ascii=False)
    assert _TEXT.dumps(document, indent) == json.dumps(document, indent=indent, ensure_ascii=False)
    assert "NaN" in _TEXT.dumps(document, indent)  # the changed container's text, not the template's


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_result_load_documents_are_written_as_json_dumps_writes_them(data):
    templates = {"job": (result_load.JOB_HOT, result_load.JOB_PATCHES),
                 "trial": (result_load.TRIAL_HOT, result_load.TRIAL_PATCHES)}
    kind = data.draw(st.sampled_from(sorted(templates)))
    template = data.draw(st.sampled_from(result_load.JOBS if kind == "job" else result_load.TRIALS))
    document = data.draw(st.composite(lambda draw: result_load._perturbed(draw, template, *templates[kind]))())
    for indent in (None, 4):
        assert result_load._TEXT.dumps(document, indent) == json.dumps(document, indent=indent, ensure_ascii=False)
    # The templates themselves are never edited: a document copies what it changes.
    assert json.dumps(result_load.JOB, sort_keys=True, default=repr) == _JOB_BEFORE


_JOB_BEFORE = json.dumps(result_load.JOB, sort_keys=True, default=repr)
