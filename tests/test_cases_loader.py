"""Tests for conformance.corpus.cases: loading case files and checking a corpus."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.core.compare import Result
from conformance.corpus.cases import CaseError, CorpusError, check_corpus, load_corpus, select

GOOD_REWARD = """\
surface: reward.parse
cases:
  - id: reward.parse::txt-one
    description: reward.txt holding "1"
    tags: [reward.txt]
    spec: seed-003 §1.2
    harbor: ">=0.13.1"
    input: {reward_txt: !bytes "1"}
    expect:
      output: {reward: !float 1.0}
  - id: reward.parse::none
    description: no reward files at all
    spec: seed-003 §1.1
    input: {}
    expect: {raised: RewardFileNotFoundError}
"""

GOOD_METRIC = """\
surface: metric.compute
cases:
  - id: metric.compute::mean-two
    description: mean over two trials, one without rewards
    spec: seed-003 §3
    input:
      metric: {type: mean}
      rewards: [{reward: !float 1.0}, null, {reward: 0}]
"""

GOOD_PASS = """\
surface: pass_at_k
cases:
  - id: pass_at_k::one-trial
    description: a single passing trial
    spec: seed-003 §4
    harbor: "<0.13"
    input:
      trials:
        - {task_name: t1, agent: a, model: m, rewards: {reward: 1}}
        - {task_name: t1, agent: a, rewards: null}
"""


def write(root: Path, folder: str, name: str, text: str) -> Path:
    path = root / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def errors_for(root: Path) -> list[CaseError]:
    _, errors = check_corpus(root)
    return errors


def only_error(root: Path) -> CaseError:
    errors = errors_for(root)
    assert len(errors) == 1, "\n".join(map(str, errors))
    return errors[0]


# -- good files -------------------------------------------------------------------------


def test_good_files_load_without_errors(tmp_path):
    write(tmp_path, "reward.parse", "x.yaml", GOOD_REWARD)
    write(tmp_path, "metric.compute", "x.yaml", GOOD_METRIC)
    write(tmp_path, "pass_at_k", "x.yaml", GOOD_PASS)
    loaded, errors = check_corpus(tmp_path)
    assert errors == []
    by_id = {item.id: item for item in loaded}
    assert set(by_id) == {
        "reward.parse::txt-one",
        "reward.parse::none",
        "metric.compute::mean-two",
        "pass_at_k::one-trial",
    }
    one = by_id["reward.parse::txt-one"]
    assert one.line == 3 and one.file == tmp_path / "reward.parse" / "x.yaml"
    assert by_id["reward.parse::none"].line == 11
    assert one.case.surface == "reward.parse"
    assert one.case.input == {"reward_txt": b"1"}
    assert one.case.tags == ["reward.txt"]
    result = one.case.expect.result()
    assert result == Result.of_value({"reward": 1.0}) and type(result.value["reward"]) is float
    assert by_id["reward.parse::none"].case.expect.result() == Result.of_raised("RewardFileNotFoundError")
    assert by_id["metric.compute::mean-two"].case.expect is None
    assert by_id["metric.compute::mean-two"].case.input["rewards"][1] is None
    assert len(load_corpus(tmp_path)) == 4


def test_select_by_surface_id_and_harbor_version(tmp_path):
    write(tmp_path, "reward.parse", "x.yaml", GOOD_REWARD)
    write(tmp_path, "pass_at_k", "x.yaml", GOOD_PASS)
    loaded = load_corpus(tmp_path)
    assert {c.id for c in select(loaded, surfaces_wanted=["pass_at_k"])} == {"pass_at_k::one-trial"}
    assert {c.id for c in select(loaded, ids=["reward.parse::*"])} == {
        "reward.parse::txt-one", "reward.parse::none",
    }
    assert {c.id for c in select(loaded, harbor_version="0.13.1")} == {
        "reward.parse::txt-one", "reward.parse::none",
    }
    assert {c.id for c in select(loaded, harbor_version="0.12.0")} == {
        "reward.parse::none", "pass_at_k::one-trial",
    }


# -- broken files -------------------------------------------------------------------------


def test_bad_yaml(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: one: two
            spec: s
            input: {}
        """)
    loaded, errors = check_corpus(tmp_path)
    assert loaded == []
    assert len(errors) == 1
    (err,) = errors
    assert err.file == path and err.line == 4
    assert "bad YAML" in err.message
    assert str(err).startswith(f"{path}:4: ")


def test_bad_tagged_value_names_line_and_case(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
          - id: reward.parse::b
            description: d
            spec: s
            input: {reward_txt: !hex "zz"}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 10, "reward.parse::b")
    assert "bad value" in err.message


def test_plain_float(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
            expect:
              output: {reward: 1.0}
        """)
    loaded, errors = check_corpus(tmp_path)
    assert len(errors) == 1, errors
    (err,) = errors
    assert (err.file, err.line, err.case_id) == (path, 8, "reward.parse::a")
    assert "1.0" in err.message and "!float" in err.message
    assert str(err) == f"{path}:8: [reward.parse::a] {err.message}"


def test_plain_float_in_second_case_names_that_case(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
          - id: reward.parse::b
            description: d
            spec: s
            input: {}
            expect: {output: {reward: .inf}}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 11, "reward.parse::b")


def test_plain_float_on_first_line_of_a_later_case(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
          - expect: {output: {reward: 1.5}}
            id: reward.parse::b
            description: d
            spec: s
            input: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line) == (path, 7)
    # Not asserted: err.case_id is "reward.parse::a" (the previous case) instead of
    # "reward.parse::b"; a block mapping's end mark lies on the next item's first line
    # and _owner takes the first range that contains the line (bug reported).


def test_unknown_key_in_case(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
          - id: reward.parse::b
            description: d
            spec: s
            colour: red
            input: {}
        """)
    loaded, errors = check_corpus(tmp_path)
    assert loaded == []
    assert len(errors) == 1, errors
    (err,) = errors
    assert (err.file, err.line, err.case_id) == (path, 7, "reward.parse::b")
    assert "colour" in err.message


def test_missing_description(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            spec: s
            input: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, "reward.parse::a")
    assert "description" in err.message


@pytest.mark.parametrize(
    "bad_id",
    ["reward.parse::Upper", "reward.parse::", "reward.parse:one", "Reward.parse::a", "reward.parse::a b",
     "reward.parse::-a"],
)
def test_bad_id_pattern(tmp_path, bad_id):
    path = write(tmp_path, "reward.parse", "x.yaml", f"""\
        surface: reward.parse
        cases:
          - description: d
            id: "{bad_id}"
            spec: s
            input: {{}}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, bad_id)
    assert err.message.startswith("cases.0.id")


def test_id_with_wrong_surface_prefix(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
          - id: metric.compute::b
            description: d
            spec: s
            input: {}
        """)
    loaded, errors = check_corpus(tmp_path)
    assert len(errors) == 1, errors
    (err,) = errors
    assert (err.file, err.line, err.case_id) == (path, 7, "metric.compute::b")
    assert "reward.parse::" in err.message


def test_duplicate_ids_across_two_files(tmp_path):
    first = write(tmp_path, "reward.parse", "a.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::dup
            description: d
            spec: s
            input: {}
        """)
    second = write(tmp_path, "reward.parse", "b.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::other
            description: d
            spec: s
            input: {}
          - id: reward.parse::dup
            description: d
            spec: s
            input: {reward_txt: !bytes "0"}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (second, 7, "reward.parse::dup")
    assert "duplicate" in err.message
    assert f"{first}:3" in err.message
    with pytest.raises(CorpusError) as info:
        load_corpus(tmp_path)
    assert info.value.errors == [err]


def test_duplicate_ids_within_one_file(tmp_path):
    path = write(tmp_path, "reward.parse", "a.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::dup
            description: d
            spec: s
            input: {}
          - id: reward.parse::dup
            description: d
            spec: s
            input: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 7, "reward.parse::dup")


def test_input_not_matching_surface_model(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {reward_txt: !bytes "1"}
          - id: reward.parse::str-not-bytes
            description: d
            spec: s
            input: {reward_txt: "1"}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 7, "reward.parse::str-not-bytes")
    assert err.message.startswith("input.reward_txt")


@pytest.mark.parametrize(
    ("folder", "body", "field"),
    [
        ("metric.compute", "{metric: {type: mean}, rewards: [{reward: \"1\"}]}", "input.rewards"),
        ("metric.compute", "{metric: {type: mean}}", "input.rewards"),
        ("pass_at_k", "{trials: [{task_name: t, agent: a}]}", "input.trials"),
        ("pass_at_k", "{trials: [], extra: 1}", "input.extra"),
        ("reward.parse", "{reward_txt: !bytes \"1\", reward_md: !bytes \"1\"}", "input.reward_md"),
    ],
)
def test_input_not_matching_other_surfaces(tmp_path, folder, body, field):
    path = write(tmp_path, folder, "x.yaml", f"""\
        surface: {folder}
        cases:
          - id: {folder}::a
            description: d
            spec: s
            input: {body}
        """)
    errors = errors_for(tmp_path)
    assert errors, "expected an input error"
    for err in errors:
        assert (err.file, err.line, err.case_id) == (path, 3, f"{folder}::a")
        assert err.message.startswith(field)


def test_expect_with_both_output_and_raised(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
            expect:
              output: null
              raised: ValueError
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, "reward.parse::a")
    assert "expect" in err.message


def test_expect_with_neither(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
            expect: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, "reward.parse::a")


def test_expect_output_null_is_a_value(tmp_path):
    write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {}
            expect: {output: null}
        """)
    loaded, errors = check_corpus(tmp_path)
    assert errors == []
    assert loaded[0].case.expect.result() == Result.of_value(None)


def test_file_in_the_wrong_folder(tmp_path):
    path = write(tmp_path, "metric.compute", "x.yaml", GOOD_REWARD)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 1, None)
    assert "cases/reward.parse/" in err.message


def test_unknown_surface(tmp_path):
    path = write(tmp_path, "reward.nope", "x.yaml", """\
        surface: reward.nope
        cases:
          - id: reward.nope::a
            description: d
            spec: s
            input: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line) == (path, 1)
    assert "reward.nope" in err.message


def test_bad_harbor_specifier(tmp_path):
    path = write(tmp_path, "reward.parse", "x.yaml", """\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            harbor: "not a specifier"
            input: {}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, "reward.parse::a")
    assert "harbor" in err.message


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a\n- b\n", "surface: reward.parse\ncases: []\n"])
def test_empty_or_shapeless_file(tmp_path, text):
    path = write(tmp_path, "reward.parse", "x.yaml", text)
    loaded, errors = check_corpus(tmp_path)
    assert loaded == []
    assert errors and all(err.file == path for err in errors)


def test_errors_from_several_files_are_all_reported(tmp_path):
    a = write(tmp_path, "reward.parse", "a.yaml", GOOD_REWARD.replace("{reward: !float 1.0}", "{reward: 1.0}"))
    b = write(tmp_path, "pass_at_k", "b.yaml", GOOD_PASS.replace("    description: a single passing trial\n", ""))
    errors = errors_for(tmp_path)
    assert {(e.file, e.line, e.case_id) for e in errors} == {
        (a, 10, "reward.parse::txt-one"),
        (b, 3, "pass_at_k::one-trial"),
    }


def test_missing_corpus_folder(tmp_path):
    loaded, errors = check_corpus(tmp_path / "nope")
    assert loaded == [] and len(errors) == 1


UV_CASE = """\
surface: metric.compute
cases:
  - id: metric.compute::uv
    description: a uv-script metric shipping its script
    spec: seed-000
    input:
      metric: {type: uv-script, kwargs: {script_path: m.py}}
      rewards: []
      scripts: {m.py: !file PATH}
"""


def test_file_tag_reads_bytes_beside_the_case_file(tmp_path):
    (tmp_path / "metric.compute" / "scripts").mkdir(parents=True)
    (tmp_path / "metric.compute" / "scripts" / "m.py").write_bytes(b"print('\\xff')\r\n\x00")
    write(tmp_path, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", "scripts/m.py"))
    loaded, errors = check_corpus(tmp_path)
    assert errors == []
    assert loaded[0].case.input["scripts"] == {"m.py": b"print('\\xff')\r\n\x00"}


def test_a_file_tag_read_again_sees_the_file_as_it_is_now(tmp_path):
    """A case file parsed once is not parsed again while its text is unchanged, unless a file it reads changed:
    new bytes, the file gone, the file back, a link turned to another file."""
    scripts = tmp_path / "metric.compute" / "scripts"
    scripts.mkdir(parents=True)
    script, other = scripts / "m.py", scripts / "other.py"
    script.write_bytes(b"first")
    other.write_bytes(b"elsewhere")
    write(tmp_path, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", "scripts/link.py"))
    (scripts / "link.py").symlink_to("m.py")

    def read() -> bytes | list[str]:
        loaded, errors = check_corpus(tmp_path)
        return [e.message for e in errors] if errors else loaded[0].case.input["scripts"]["m.py"]

    assert read() == b"first"
    script.write_bytes(b"second, as long")
    assert read() == b"second, as long"
    script.unlink()
    assert "No such file" in read()[0]
    script.write_bytes(b"back")
    assert read() == b"back"
    (scripts / "link.py").unlink()
    (scripts / "link.py").symlink_to("other.py")
    assert read() == b"elsewhere"


@pytest.mark.parametrize(("path", "message"), [
    ("scripts/none.py", "No such file"),
    ("/etc/hostname", "must be a relative path"),
    ("../outside.py", "must be a relative path"),
    ('""', "takes a relative path"),
])
def test_file_tag_errors_name_file_line_and_case(tmp_path, path, message):
    (tmp_path / "outside.py").write_text("x = 1\n")
    target = write(tmp_path, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", path))
    errors = errors_for(tmp_path)
    assert len(errors) == 1 and errors[0].file == target and errors[0].line == 9
    assert errors[0].case_id == "metric.compute::uv"
    assert message in errors[0].message


def test_file_tag_outside_a_case_file_is_refused():
    import yaml

    from conformance.corpus.yaml_values import CaseLoader

    with pytest.raises(yaml.YAMLError, match="only allowed in a case file"):
        yaml.load("x: !file a.py\n", Loader=CaseLoader)


# -- nothing runs, nothing is read from outside the corpus ------------------------------------


@pytest.mark.parametrize(("value", "tag"), [
    ('!!python/object/apply:os.system ["touch MARKER"]', "!!python/object/apply:os.system"),
    ('!!python/name:os.system ""', "!!python/name:os.system"),
])
def test_python_tags_are_refused_and_run_nothing(tmp_path, monkeypatch, value, tag):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "reward.parse", "x.yaml", f"""\
        surface: reward.parse
        cases:
          - id: reward.parse::a
            description: d
            spec: s
            input: {{reward_txt: {value}}}
        """)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 6, "reward.parse::a")
    assert f"tag {tag} is not allowed in a case file" in err.message
    assert not (tmp_path / "MARKER").exists()


TWO_CASES = """\
surface: reward.parse
cases:
  - id: reward.parse::a
    description: d
    spec: s
    input: {}
  - id: reward.parse::b
    description: d
    spec: s
"""


@pytest.mark.parametrize(("rest", "line"), [
    ("    input: &i {}\n    expect: {output: *i}\n", 10),  # an anchor and its alias: the anchor's line
    ("    input: {}\n    tags: &t [a]\n", 11),  # an anchor alone
    ("    input: {}\n    tags: [a, *t]\n", 11),  # an alias alone
])
def test_anchors_and_aliases_are_refused(tmp_path, rest, line):
    path = write(tmp_path, "reward.parse", "x.yaml", TWO_CASES + rest)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, line, "reward.parse::b")
    assert "anchors and aliases (&name, *name) are not allowed" in err.message


def test_an_alias_bomb_is_refused_at_once(tmp_path):
    # Twelve levels of ten aliases each: 10**12 leaves if it were built, so this returns only if it is not.
    levels = ["      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"]
    levels += [f"      a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 12)]
    path = write(tmp_path, "reward.parse", "x.yaml", TWO_CASES + "    input: {}\n    expect:\n      output:\n"
                 + "".join(levels))
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 13, "reward.parse::b")


def test_file_tag_through_a_link_out_of_the_corpus_is_refused(tmp_path):
    corpus = tmp_path / "corpus"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "m.py").write_text("x = 1\n")
    path = write(corpus, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", "scripts/m.py"))
    (corpus / "metric.compute" / "scripts").symlink_to(tmp_path / "elsewhere")
    errors = errors_for(corpus)
    assert [(e.file, e.line, e.case_id) for e in errors] == [(path, 9, "metric.compute::uv")]
    assert "leads out of the corpus" in errors[0].message


def test_file_tag_through_a_link_to_another_surface_folder(tmp_path):
    # As cases/job.result/scripts links to cases/metric.compute/scripts.
    (tmp_path / "reward.parse" / "scripts").mkdir(parents=True)
    (tmp_path / "reward.parse" / "scripts" / "m.py").write_bytes(b"x = 1\n")
    write(tmp_path, "metric.compute", "uv.yaml", UV_CASE.replace("PATH", "scripts/m.py"))
    (tmp_path / "metric.compute" / "scripts").symlink_to("../reward.parse/scripts")
    loaded, errors = check_corpus(tmp_path)
    assert errors == []
    assert loaded[0].case.input["scripts"] == {"m.py": b"x = 1\n"}


# -- a uv-script metric's script_path ---------------------------------------------------------

SCRIPT_PATH_CASES = {
    "metric.compute": "{metric: {type: uv-script, kwargs: {script_path: SP}}, rewards: []}",
    "job.result": "{agents: [{name: nop}], metrics: [{type: uv-script, kwargs: {script_path: SP}}]}",
    "outcome.summary": "{job: {agents: [{name: nop}], datasets: [{name: ds, metrics: [{type: max}, "
                       "{type: uv-script, kwargs: {script_path: SP}}]}]}}",
}


def script_path_case(tmp_path: Path, surface: str, script_path: str) -> Path:
    return write(tmp_path, surface, "x.yaml", f"""\
        surface: {surface}
        cases:
          - id: {surface}::a
            description: d
            spec: s
            input: {SCRIPT_PATH_CASES[surface].replace("SP", script_path)}
        """)


@pytest.mark.parametrize("surface", sorted(SCRIPT_PATH_CASES))
@pytest.mark.parametrize("script_path", ["/tmp/m.py", "../m.py", "a/../../m.py", "'..'", "''", "'.'", "'./'", "1"])
def test_script_path_must_stay_in_the_folder(tmp_path, surface, script_path):
    path = script_path_case(tmp_path, surface, script_path)
    err = only_error(tmp_path)
    assert (err.file, err.line, err.case_id) == (path, 3, f"{surface}::a")
    assert err.message.startswith("input.") and "kwargs.script_path" in err.message
    assert "must be a relative path inside the folder" in err.message


@pytest.mark.parametrize("surface", sorted(SCRIPT_PATH_CASES))
@pytest.mark.parametrize("script_path", ["m.py", "no_such_script.py", "metrics/m.py", "./m.py", "'m..py'"])
def test_script_path_inside_the_folder_is_legal(tmp_path, surface, script_path):
    script_path_case(tmp_path, surface, script_path)
    assert errors_for(tmp_path) == []


def test_a_metric_without_script_path_is_legal(tmp_path):
    write(tmp_path, "metric.compute", "x.yaml", """\
        surface: metric.compute
        cases:
          - id: metric.compute::a
            description: d
            spec: s
            input: {metric: {type: uv-script, kwargs: {}}, rewards: []}
          - id: metric.compute::b
            description: d
            spec: s
            input: {metric: {type: uv-script, kwargs: null}, rewards: []}
        """)
    assert errors_for(tmp_path) == []


@pytest.mark.parametrize("surface", ["metric.compute", "job.result"])
def test_generated_uv_script_inputs_keep_script_path_in_the_folder(surface):
    from hypothesis import given, settings

    from conformance.core import surfaces
    from conformance.surfaces.job_result import strategy as jobs
    from conformance.surfaces.metric_compute import strategy as reward_lists

    strategy = {"metric.compute": reward_lists.uv_script_inputs, "job.result": jobs.uv_script_jobs}[surface]

    @settings(max_examples=25, database=None, deadline=None)
    @given(strategy)
    def check(value):
        surfaces.get(surface).validate_input(value)

    check()
