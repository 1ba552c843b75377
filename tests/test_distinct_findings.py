"""Several findings of one kind, told apart by the shape of their inputs; findings rid of redundant duplicate keys."""

from __future__ import annotations

import json
import math

import pytest

from conformance.connection.connectors import connect
from conformance.reference import candidate as reference
from conformance.run import generate, shapes, simplify
from conformance.run.runner import run_input
from conformance.surfaces.reward_parse import reference as reward_files
from tests.wrong_candidates import _metric_with, _naive_sum

CI = generate.PROFILES["ci"]


# -- candidates with two bugs of one mismatch class, and one whose bug needs a duplicate key -------------


def _txt_int(verifier_dir: dict):
    text = verifier_dir.get("reward_txt")
    if verifier_dir.get("reward_json") is None and text is not None and text.isdigit() and len(text) < 16:
        return {"reward": int(text)}  # bug A: "1" in reward.txt read as the int 1, where float() gives 1.0
    return reward_files.parse(verifier_dir)


def _json_ints_as_floats(verifier_dir: dict):
    rewards = reward_files.parse(verifier_dir)
    if verifier_dir.get("reward_json") is None or rewards is None:
        return rewards
    # bug B: an int in reward.json comes back a float, where pydantic keeps the int
    return {key: float(value) if type(value) is int and abs(value) < 2**53 else value for key, value in rewards.items()}


# Two bugs of mismatch class `type`: one in reading reward.txt, one in reading reward.json.
txt_and_json_ints = reference.derive("txt-and-json-ints", **{
    "reward.parse": lambda d: _json_ints_as_floats(d) if d.get("reward_json") is not None else _txt_int(d)})

# Two bugs of mismatch class `ulp`, in two metrics: the mean through math.fsum, the sum left to right.
mean_and_sum = reference.derive("mean-and-sum", **{"metric.compute": _metric_with({
    "mean": lambda values: math.fsum(values) / len(values), "sum": _naive_sum})})


def _first_of_each_key(pairs: list) -> dict:
    kept: dict = {}
    for key, value in pairs:
        kept.setdefault(key, value)
    return kept


def _first_duplicate_wins(verifier_dir: dict):
    data = verifier_dir.get("reward_json")
    try:
        rewards = json.loads(data, object_pairs_hook=_first_of_each_key) if data else None
    except ValueError:
        rewards = None
    return reward_files.parse(verifier_dir) if rewards is None else reward_files.validate_rewards(rewards)


# A bug that only a duplicate key shows: the first occurrence is kept, where json.loads keeps the last.
first_duplicate_wins = reference.derive("first-duplicate-wins", **{"reward.parse": _first_duplicate_wins})


def _findings_by_kind(result: generate.GenerationResult) -> dict[tuple[str, ...], list]:
    found: dict[tuple[str, ...], list] = {}
    for record in result.findings:
        found.setdefault(generate.kind_of(record), []).append(record)
    return found


# -- shapes ------------------------------------------------------------------------------------------


def _reward_dir(**files: bytes):
    return shapes.shape_of("reward.parse", files)


def test_a_file_is_its_token_class():
    assert _reward_dir(reward_txt=b"-0") == _reward_dir(reward_txt=b"-0.0") == _reward_dir(reward_txt=b" 1e3\n")
    assert _reward_dir(reward_txt=b"nan") == _reward_dir(reward_txt=b"-NaN\n") != _reward_dir(reward_txt=b"inf")
    classes = {shapes.token_class(data) for data in (b"", b"\xff1", b" \n", b"1", b"nan", b"inf", b"x", b"[]")}
    assert classes == {"empty", "undecodable", "blank", "number:float", "number:nan", "number:inf", "text",
                       ("list", frozenset())}
    # A JSON file is the shape of its value, its keys data: the name of a reward does not matter, its type does.
    assert shapes.token_class(b'{"reward": 1}') == shapes.token_class(b'{"accuracy": 2, "a": 3}')
    assert shapes.token_class(b'{"reward": 1}') != shapes.token_class(b'{"reward": 1.0}')
    assert shapes.token_class(b'{"reward": true}') != shapes.token_class(b'{"reward": "1"}')
    assert _reward_dir(reward_txt=b"1") != _reward_dir(reward_json=b"1") != _reward_dir(reward_txt=b"1",
                                                                                         reward_json=b"1")


def test_a_shape_keeps_field_names_tags_and_enumerated_values_and_drops_data():
    def metric(value):
        return shapes.shape_of("metric.compute", value)

    # the model's field names and a registry metric's type are kept; reward names, values and list lengths are not
    assert metric({"metric": {"type": "mean"}, "rewards": [{"reward": 0.5}] * 3}) == \
        metric({"metric": {"type": "mean"}, "rewards": [{"accuracy": 1e16}, {"b": -0.0}]})
    assert metric({"metric": {"type": "mean"}, "rewards": []}) != metric({"metric": {"type": "sum"}, "rewards": []})
    assert metric({"metric": {"type": "mean"}, "rewards": [{"a": 1.0}]}) != \
        metric({"metric": {"type": "mean"}, "rewards": [{"a": float("nan")}]})

    def job(trial):
        return shapes.shape_of("job.result", {"agents": [{"name": "nop"}], "tasks": [{"name": "a", "trials": [trial]}]})

    # task and agent names are data; what a stage raises, and where, is an enumerated field
    assert shapes.shape_of("job.result", {"agents": [{"name": "nop"}], "tasks": [{"name": "a", "trials": []}]}) == \
        shapes.shape_of("job.result", {"agents": [{"name": "codex"}], "tasks": [{"name": "b", "trials": []}]})
    assert job({"raises": "timeout"}) != job({"raises": "RuntimeError"})
    assert job({"raises": "timeout", "raises_in": "agent"}) != job({"raises": "timeout", "raises_in": "verifier"})


def test_a_shape_covers_the_shapes_it_holds_more_than():
    txt = _reward_dir(reward_txt=b"-0")
    both = _reward_dir(reward_txt=b"-0", reward_json=b'{"a": 1}')
    assert shapes.covers(both, txt) and not shapes.covers(txt, both)
    assert shapes.covers(txt, txt)
    assert shapes.covers(shapes.token_class(b'{"a": 1, "b": 2.5}'), shapes.token_class(b'{"a": 1}'))
    assert not shapes.covers(shapes.token_class(b'{"a": 2.5}'), shapes.token_class(b'{"a": 1}'))
    assert shapes.covers(shapes.token_class(b"[1, [2.5], null]"), shapes.token_class(b"[[0.5], 7]"))

    def metric(config, rewards):
        return shapes.shape_of("metric.compute", {"metric": config, "rewards": rewards})

    # more beside: covered; another tag, or a tag where there was none, takes another path: not covered
    assert shapes.covers(metric({"type": "mean", "kwargs": {}}, [None, {"a": 1.0}]), metric({"type": "mean"}, [{}]))
    assert not shapes.covers(metric({"type": "sum"}, [{"a": 1.0}]), metric({"type": "mean"}, [{"a": 1.0}]))
    assert not shapes.covers(metric({"type": "sum"}, [{"a": 1.0}]), metric({}, [{"a": 1.0}]))


def test_a_shape_is_bounded_in_depth():
    deep: object = 1.0
    for _ in range(50):
        deep = [deep]
    shape = shapes.shape_of("evsys.metric", {"metric": "avg", "task_rewards": deep})
    assert shapes.DEEPER in repr(shape) and repr(shape).count("list") <= shapes.MAX_DEPTH


# -- two bugs of one class, and one bug ----------------------------------------------------------------


@pytest.mark.slow
def test_two_bugs_of_one_mismatch_class_are_both_found(live_oracle):
    result = generate.generate("reward.parse", connect("tests.test_distinct_findings:txt_and_json_ints"),
                               live_oracle, profile=CI, seed=CI.fixed_seed)
    types = _findings_by_kind(result)[("fail", "type")]
    files = {tuple(sorted(record.decoded_input)) for record in types}
    assert ("reward_txt",) in files and ("reward_json",) in files, [r.decoded_input for r in types]

    result = generate.generate("metric.compute", connect("tests.test_distinct_findings:mean_and_sum"),
                               live_oracle, profile=CI, seed=CI.fixed_seed)
    ulps = _findings_by_kind(result)[("fail", "ulp")]
    metrics = {record.decoded_input["metric"].get("type", "mean") for record in ulps}
    assert metrics == {"mean", "sum"}, [r.decoded_input for r in ulps]


@pytest.mark.slow
def test_with_one_finding_per_kind_the_second_bug_stays_hidden(live_oracle, monkeypatch):
    monkeypatch.setattr(generate, "FINDINGS_PER_KIND", 1)
    result = generate.generate("metric.compute", connect("tests.test_distinct_findings:mean_and_sum"),
                               live_oracle, profile=CI, seed=CI.fixed_seed)
    assert len(_findings_by_kind(result)[("fail", "ulp")]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["negative_zero_lost", "empty_by_strip", "txt_before_json"])
def test_one_bug_gives_no_near_duplicates(live_oracle, name):
    result = generate.generate("reward.parse", connect(f"tests.wrong_candidates:{name}"), live_oracle,
                               profile=CI, seed=CI.fixed_seed)
    assert result.findings and result.error is None
    assert len(result.findings) <= generate.FINDINGS_PER_SURFACE
    for kind, records in _findings_by_kind(result).items():
        assert len(records) <= generate.kind_limit(kind)
        found = [shapes.shape_of("reward.parse", record.decoded_input) for record in records]
        for i, one in enumerate(found):
            for j, other in enumerate(found):
                assert i == j or not shapes.covers(one, other), (kind, [r.decoded_input for r in records])
    if name == "negative_zero_lost":  # -0, -0.0, -0e0, " -0\n": one finding per file and kind of value holding it
        inputs = [r.decoded_input for r in result.findings]
        assert {tuple(found) for found in inputs} <= {("reward_txt",), ("reward_json",)}, inputs
        # A JSON number and a numeric string pydantic reads are two paths (shapes.py: a leaf's category), so
        # reward.json may give one finding of each; never two spellings of one.
        assert len(inputs) == len({shapes.shape_of("reward.parse", found) for found in inputs}), inputs
    if name == "empty_by_strip":  # a blank reward.txt or a blank reward.json; never the same with both files
        assert all(len(r.decoded_input) == 1 for r in result.findings), [r.decoded_input for r in result.findings]


@pytest.mark.slow
def test_the_limits_bound_the_findings_and_the_rounds(live_oracle, monkeypatch):
    monkeypatch.setattr(generate, "FINDINGS_PER_KIND", 2)
    monkeypatch.setattr(generate, "FINDINGS_PER_SURFACE", 3)
    rounds = []
    original = generate._round

    def counted(*args, **kwargs):
        done = [a for a in [*args, *kwargs.values()] if isinstance(a, generate.GenerationResult)]
        rounds.append(done[0].inputs_run)  # the inputs run when the round starts
        return original(*args, **kwargs)

    monkeypatch.setattr(generate, "_round", counted)
    result = generate.generate("reward.parse", connect("tests.wrong_candidates:txt_before_json"), live_oracle,
                               profile=CI, seed=CI.fixed_seed)
    assert len(result.findings) == 3 and len(rounds) <= 3
    assert all(len(records) <= 2 for records in _findings_by_kind(result).values())

    # No round starts once the inputs run, shrinking included, reach WORK_PER_EXAMPLE times the budget.
    monkeypatch.setattr(generate, "FINDINGS_PER_SURFACE", 10)
    monkeypatch.setattr(generate, "WORK_PER_EXAMPLE", 1)
    rounds.clear()
    result = generate.generate("reward.parse", connect("tests.wrong_candidates:txt_before_json"), live_oracle,
                               profile=CI, seed=CI.fixed_seed, max_examples=40)
    assert result.findings and result.inputs_run >= 40
    assert rounds[0] == 0 and all(started < 40 for started in rounds), rounds  # none starts past the work limit


# -- duplicate keys ------------------------------------------------------------------------------------


def test_removals_take_out_one_occurrence_of_a_duplicated_key():
    assert list(simplify.removals(b'{"reward": 0, "reward": "1"}')) == [b'{"reward": "1"}', b'{"reward": 0}']
    assert list(simplify.removals(b'[{"a":1,"b":2,"a":3}]')) == [b'[{"b":2,"a":3}]', b'[{"a":1,"b":2}]']
    nested = b'{"x": {"y": 1, "y": [{"z": 2, "z": 3}]}, "x": 0}'
    assert b'{"x": {"y": 1, "y": [{"z": 3}]}, "x": 0}' in list(simplify.removals(nested))
    assert b'{"x": 0}' in list(simplify.removals(nested))
    # keys are compared as JSON reads them: "\u0061" is "a"; a quote inside a key does not end it
    assert list(simplify.removals(b' {"\\u0061": 1 ,\n "a":2 } ')) == [b' {"a":2 } ', b' {"\\u0061": 1 } ']
    assert list(simplify.removals(b'{"\\"": 1, "\\"": 2}')) == [b'{"\\"": 2}', b'{"\\"": 1}']
    for unread in (b'{"a": 1, "a": 2', b'\xff{"a": 1, "a": 2}', b'{"a": 1} {"a": 2}', b'{"a": 1, "b": 2}', b""):
        assert list(simplify.removals(unread)) == []


def test_every_json_file_of_an_input_is_simplified_in_turn():
    step = {"reward_json": b'{"a": 1, "a": 2}'}
    value = {"strategy": "mean", "steps": [step, {"reward_txt": b'{"a": 1, "a": 2}'}, step]}
    smaller = list(simplify.without_duplicate_keys(value))
    assert len(smaller) == 4  # two occurrences each in two reward.json files; reward.txt is not JSON
    assert smaller[0]["steps"][0] == {"reward_json": b'{"a": 2}'} and smaller[0]["steps"][2] == step
    assert value["steps"][0] == step  # the input itself is left as it was


def _finding(surface: str, value, spec: str, live_oracle):
    candidate = connect(spec)
    record = generate._as_finding(run_input("x", surface, value, candidate, live_oracle), surface, value)
    kind, shape = generate.kind_of(record), shapes.shape_of(surface, value)
    result = generate.GenerationResult(surface, "ci", 0, 1)
    return generate._simplified(record, kind, shape, candidate, live_oracle, None, result, lambda _: None), kind


def test_a_finding_loses_the_duplicate_keys_it_diverges_without(live_oracle):
    value = {"reward_json": b'{"reward": 0, "reward": 0, "reward": "1", "a": 1}'}
    simplified, kind = _finding("reward.parse", value, "tests.wrong_candidates:json_verbatim", live_oracle)
    assert simplified.decoded_input == {"reward_json": b'{"reward": "1", "a": 1}'}
    assert generate.kind_of(simplified) == kind == ("fail", "type")
    assert simplified.id == generate.finding_id("reward.parse", simplified.decoded_input) and simplified.generated


def test_a_duplicate_key_the_divergence_needs_stays(live_oracle):
    value = {"reward_json": b'{"reward": 0, "reward": 1, "reward": 1}'}
    simplified, kind = _finding("reward.parse", value, "tests.test_distinct_findings:first_duplicate_wins",
                                live_oracle)
    assert kind == ("fail", "value")  # harbor keeps the last (1), the candidate the first (0)
    assert simplified.decoded_input == {"reward_json": b'{"reward": 0, "reward": 1}'}


@pytest.mark.slow
def test_generated_findings_hold_no_redundant_duplicate_key(live_oracle):
    # Seed 1 shrank json_verbatim's findings to {"reward": 0, "reward": 0, "reward": 0, "reward": "1"}.
    result = generate.generate("reward.parse", connect("tests.wrong_candidates:json_verbatim"), live_oracle,
                               profile=CI, seed=1)
    files = [r.decoded_input["reward_json"] for r in result.findings if "reward_json" in r.decoded_input]
    assert files and all(list(simplify.removals(data)) == [] for data in files), files


def test_every_stored_finding_of_one_kind_replays_and_one_fixed_is_forgotten(live_oracle, tmp_path):
    """Hypothesis replays one failure per exception type, one type per kind: the findings' own inputs, kept in the
    database beside its examples, bring back each finding of a kind, on any seed and a budget of one input."""
    from conformance.run.examples import open_database, stored_findings

    database = open_database(tmp_path / "examples")
    wrong = "tests.test_distinct_findings:txt_and_json_ints"
    first = generate.generate("reward.parse", connect(wrong), live_oracle, profile=CI, seed=CI.fixed_seed,
                              database=database)
    types = sorted(record.id for record in _findings_by_kind(first)[("fail", "type")])
    assert len(types) >= 2
    assert len(stored_findings(database, "reward.parse")) == len(first.findings)

    again = generate.generate("reward.parse", connect(wrong), live_oracle, profile=CI, seed=12345, max_examples=1,
                              database=database)
    assert sorted(record.id for record in _findings_by_kind(again)[("fail", "type")]) == types

    fixed = generate.generate("reward.parse", connect("reference"), live_oracle, profile=CI, seed=12345,
                              max_examples=1, database=database)
    assert fixed.conforms and stored_findings(database, "reward.parse") == []
