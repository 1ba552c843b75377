"""The pytest plugin as a runner: node ids, --lf, markers, options, usage errors, expectations, reports, generators.

Each test runs pytest on a small copy of the corpus in a fresh folder
(pytester), with deliberately wrong candidates; offline against the cases'
recorded results, except the generated items, which need the live oracle.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import hypothesis  # noqa: F401 - see below
import pytest
import yaml

import conformance.pytest_plugin.session  # noqa: F401 - see below
import tests.wrong_candidates  # noqa: F401 - see below
from conformance.corpus.cases import load_file
from conformance.report import badge, junit, markdown
from conformance.report.reader import read
from conformance.run.certification import Options, certify

pytest_plugins = ["pytester"]
# pytester takes out of sys.modules what each run it makes imports: the modules every run imports are imported
# here once (the plugin's, the candidates', and Hypothesis, which its pytest plugin imports), not once a run.

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "cases"
WRONG = "tests.wrong_candidates:txt_before_json"  # reads reward.txt before reward.json: fails some precedence cases
PRECEDENCE = "reward.parse/precedence.yaml"
RECORDED = ("--conformance-oracle", "recorded")
RESULT = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\b")


def _copy(pytester: pytest.Pytester, *files: str) -> Path:
    """The case files, in a corpus folder of their own; returns it."""
    root = pytester.path / "cases"
    for name in files:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((CASES / name).read_bytes())
    return root


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--conformance-candidate", WRONG, *RECORDED, "-v", *args)


def _collected(pytester: pytest.Pytester, *args: str) -> set[str]:
    """The node ids a run would run."""
    result = pytester.runpytest("--conformance-candidate", WRONG, *RECORDED, "--co", "-q", *args)
    return {line for line in result.outlines if "::" in line}


def _ran(result: pytest.RunResult) -> dict[str, str]:
    """Node id -> outcome of each item the run reports, in the order they ran."""
    found = {}
    for line in result.outlines:
        match = RESULT.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _case_ids(path: Path, tag: str | None = None) -> set[str]:
    return {case.id for case in load_file(path)[0] if tag is None or tag in case.case.tags}


def _node_ids(relative: str, case_ids: set[str]) -> set[str]:
    return {f"cases/{relative}::{case_id.split('::', 1)[1]}" for case_id in case_ids}


def test_the_plugin_imports_nothing_of_the_harness_until_it_is_on():
    # Every pytest run where the suite is installed loads the plugin.
    code = ("import sys, conformance.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'conformance', 'pydantic', 'hypothesis', "
            "'yaml', 'typer', 'rich'}))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # The run options' declarations (conformance.run.flags, standard library only) give the plugin's their help.
    assert eval(loaded) == ["conformance", "conformance.pytest_plugin", "conformance.pytest_plugin.options",
                            "conformance.run", "conformance.run.flags"]


def test_off_without_a_candidate(pytester):
    _copy(pytester, PRECEDENCE)
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    result = pytester.runpytest("-v", "--strict-markers")
    assert _ran(result) == {"test_own.py::test_own": "PASSED"}
    markers = pytester.runpytest("--markers").stdout.str()
    assert "reward_parse" not in markers and "@pytest.mark.conformance" not in markers


def test_a_project_with_its_own_candidate_and_oracle_options(pytester):
    pytester.makeconftest("""
        def pytest_addoption(parser):
            parser.addoption("--candidate", default=None)
            parser.addoption("--oracle", default=None)

        def pytest_report_header(config):
            return f"own options: {config.getoption('candidate')} {config.getoption('oracle')}"
    """)
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    alone = pytester.runpytest("--candidate", "mine", "--oracle", "theirs", "-v")
    assert alone.ret == 0 and "own options: mine theirs" in alone.stdout.str()
    _copy(pytester, PRECEDENCE)
    both = pytester.runpytest("--candidate", "mine", "--conformance-candidate", WRONG, *RECORDED, "-v",
                              "test_own.py", "cases")
    assert "own options: mine None" in both.stdout.str()
    ran = _ran(both)
    assert ran.pop("test_own.py::test_own") == "PASSED"
    assert set(ran) >= _node_ids(PRECEDENCE, _case_ids(CASES / PRECEDENCE))


def test_a_failing_case_reruns_alone_by_the_node_id_it_is_printed_with(pytester):
    _copy(pytester, PRECEDENCE)
    first = _ran(_run(pytester, "cases"))
    failed = [node for node, outcome in first.items() if outcome == "FAILED"]
    assert failed and "PASSED" in first.values()
    # Each case item is named by its slug: the node id is the file and the case's id without its surface.
    assert set(first) >= _node_ids(PRECEDENCE, _case_ids(CASES / PRECEDENCE))
    again = _run(pytester, failed[-1])
    assert _ran(again) == {failed[-1]: "FAILED"}
    assert again.ret == 1


def test_last_failed_reruns_exactly_the_failures_and_failed_first_puts_them_first(pytester):
    _copy(pytester, PRECEDENCE)
    first = _ran(_run(pytester, "cases"))
    failed = {node for node, outcome in first.items() if outcome == "FAILED"}
    assert failed and len(failed) < len(first)
    last_failed = _run(pytester, "cases", "--lf")
    assert _ran(last_failed) == dict.fromkeys(failed, "FAILED")
    assert "not in selected tests" not in last_failed.stdout.str()
    failed_first = list(_ran(_run(pytester, "cases", "--ff")))
    assert set(failed_first[:len(failed)]) == failed and len(failed_first) == len(first)


def test_a_surfaces_generated_item_reruns_alone_by_its_node_id(pytester):
    _copy(pytester, PRECEDENCE, "pass_at_k/k_values.yaml")
    everything = _ran(_run(pytester, "cases", "-rs"))
    generated = {node for node in everything if node.endswith("::generated")}
    assert generated == {"cases/reward.parse::generated", "cases/pass_at_k::generated"}
    result = _run(pytester, "cases/reward.parse::generated", "-rs")
    # Skipped: generated inputs need the live oracle, and the run uses the recordings.
    assert _ran(result) == {"cases/reward.parse::generated": "SKIPPED"}
    assert "need a live oracle" in result.stdout.str()
    assert _run(pytester, "cases/reward.parse", "--conformance-no-generate").parseoutcomes().get("skipped") is None


def test_node_ids_copied_together_rerun_those_items_alone_beside_a_generated_item(pytester):
    # A failing run's node ids, copied as its summary prints them: a generated item and cases of its own folder.
    _copy(pytester, PRECEDENCE, "pass_at_k/k_values.yaml")
    first = _ran(_run(pytester, "cases"))
    failed = sorted(node for node, outcome in first.items() if outcome == "FAILED")
    assert failed and len(failed) < len(first) - 1
    chosen = {"cases/reward.parse::generated", *failed}
    assert _collected(pytester, *sorted(chosen)) == chosen
    assert _ran(_run(pytester, *sorted(chosen))) == {**dict.fromkeys(failed, "FAILED"),
                                                     "cases/reward.parse::generated": "SKIPPED"}
    # A whole file beside it: the file's cases; the folder itself, or one above it: everything.
    whole_file = _collected(pytester, "cases/reward.parse::generated", f"cases/{PRECEDENCE}")
    assert whole_file == _node_ids(PRECEDENCE, _case_ids(CASES / PRECEDENCE)) | {"cases/reward.parse::generated"}
    for whole in ("cases/reward.parse", "cases"):
        assert _collected(pytester, "cases/reward.parse::generated", failed[0], whole) >= whole_file
    # Another surface's generated item keeps its folder's cases out.
    assert _collected(pytester, "cases/pass_at_k::generated", failed[0]) == {"cases/pass_at_k::generated", failed[0]}


def test_tags_and_surfaces_are_registered_markers_and_keywords(pytester):
    _copy(pytester, PRECEDENCE, "pass_at_k/eligibility.yaml")
    precedence, eligibility = CASES / PRECEDENCE, CASES / "pass_at_k/eligibility.yaml"
    errors = _collected(pytester, "cases", "--strict-markers", "-m", "error and reward_parse")
    assert errors == _node_ids(PRECEDENCE, _case_ids(precedence, "error")) and errors
    pass_at_k = _collected(pytester, "cases", "--strict-markers", "-m", "pass_at_k")
    assert pass_at_k == _node_ids("pass_at_k/eligibility.yaml", _case_ids(eligibility)) | {"cases/pass_at_k::generated"}
    # reward.json is a tag: as a marker reward_json; -k matches it as written, and the marker's name.
    for keyword in ("reward.json", "reward_json"):
        tagged = _collected(pytester, "cases", "-k", keyword)
        assert tagged == _node_ids(PRECEDENCE, _case_ids(precedence, "reward.json")) and tagged
    generated = _collected(pytester, "cases", "-m", "generated and not reward_parse")
    assert generated == {"cases/pass_at_k::generated"}


def test_a_tag_never_takes_the_name_of_another_plugins_marker(pytester):
    # A tag "timeout" beside pytest-timeout's marker, "skip" beside pytest's own: neither may act on the case.
    pytester.makeini("[pytest]\nmarkers =\n    timeout(seconds): the time limit of a test\n")
    case_file = _copy(pytester, PRECEDENCE) / PRECEDENCE
    case_file.write_text(case_file.read_text().replace("tags: [precedence, json-null]", "tags: [timeout, skip]"))
    result = _run(pytester, "cases", "--strict-markers", "-m", "conformance_timeout and conformance_skip")
    assert _ran(result) == {"cases/reward.parse/precedence.yaml::both-json-null": "FAILED"}


@pytest.mark.parametrize(("args", "said"), [
    (["--conformance-candidate", "referense"], "--conformance-candidate: unknown candidate 'referense'"),
    (["--conformance-candidate", "tests.no_such_module:candidate"], "cannot import 'tests.no_such_module'"),
    (["--conformance-candidate", "reference", "--conformance-oracle", "harbour==0.13.1"], "--conformance-oracle"),
    (["--conformance-candidate", "reference", "--conformance-timeout", "soon"], "--conformance-timeout"),
    (["--conformance-candidate", "reference", "--conformance-max-examples", "0"], "--conformance-max-examples"),
    (["--conformance-candidate", "reference", "--conformance-profile", "fast"], "unknown profile 'fast'"),
    (["--conformance-candidate", "reference", "--conformance-nan-policy", "loose"], "--conformance-nan-policy"),
    (["--conformance-candidate", "reference", "--conformance-broken-after", "0"], "--conformance-broken-after"),
    (["--conformance-candidate", "reference", "--conformance-expectations", "known.yaml"],
     "known.yaml:2: [reward.parse::both-json-null] divergences.0.reason"),
    (["--conformance-candidate", "reference", "--conformance-no-cases", "--conformance-no-generate"],
     "leave nothing to run"),
    (["--conformance-profile", "ci"], "--conformance-profile given without --conformance-candidate"),
])
def test_a_run_that_cannot_start_as_asked_is_a_short_usage_error(pytester, args, said):
    _copy(pytester, PRECEDENCE)
    pytester.makefile(".yaml", known="divergences:\n  - id: reward.parse::both-json-null\n")
    result = pytester.runpytest("cases", *(args if "--conformance-oracle" in args else [*args, *RECORDED]))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str()
    assert len(result.outlines) + len(result.errlines) < 10
    assert not re.search(r"passed|failed|skipped", result.stdout.str())


def test_settings_in_an_ini_file_leave_a_run_without_a_candidate_alone(pytester):
    pytester.makeini("[pytest]\nconformance_oracle = recorded\nconformance_profile = ci\n")
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    _copy(pytester, PRECEDENCE)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)  # the project's own test, and no case


def test_settings_from_the_ini_file(pytester):
    # Paths in the ini file are relative to it, wherever pytest runs from.
    pytester.makeini("[pytest]\nconformance_oracle = recorded\nconformance_report = out/run.jsonl\n")
    _copy(pytester, PRECEDENCE)
    (pytester.path / "elsewhere").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(pytester.path / "elsewhere")
        pytester.runpytest("--conformance-candidate", WRONG, "../cases")
    report = read(pytester.path / "out" / "run.jsonl")
    assert report.header is not None and report.header.oracle.spec == "recorded"
    assert {r.id for r in report.records} == _case_ids(CASES / PRECEDENCE)


def test_a_broken_case_file_is_one_line_per_problem(pytester):
    case_file = _copy(pytester, PRECEDENCE) / PRECEDENCE
    lines = case_file.read_text().splitlines()
    lines[2] = lines[2].replace("reward.parse::both-valid-json-wins", "reward.parse::Both")
    case_file.write_text("\n".join(lines) + "\n")
    result = _run(pytester, "cases")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    said = [line for line in result.outlines if "precedence.yaml:3: [reward.parse::Both]" in line]
    assert said and "Traceback" not in result.stdout.str()


def _certified(corpus: Path, tmp_path: Path):
    """The same cases certified by `conformance certify`: the plugin's reports must agree with it."""
    return certify(Options(candidate=WRONG, oracle="recorded", cases_root=corpus), tmp_path / "certify.jsonl")


def test_listed_divergences_are_xfail_with_their_reason_and_a_conforming_listed_case_fails(pytester, tmp_path):
    corpus = _copy(pytester, PRECEDENCE)
    records = _certified(corpus, tmp_path).records
    diverging = [r for r in records if r.signature is not None]
    conforming = next(r for r in records if r.conforms)
    assert diverging
    entries = [{"id": r.id, "outcome": str(r.signature.outcome), "classes": [c.value for c in r.signature.classes],
                "reason": f"reviewed: {r.id} differs on purpose"} for r in diverging]
    known = pytester.path / "known.yaml"
    known.write_text(yaml.safe_dump({"divergences": entries}))
    result = _run(pytester, "cases", "-rxf", "--conformance-expectations", str(known))
    ran = _ran(result)
    assert {node for node, outcome in ran.items() if outcome == "XFAIL"} == _node_ids(
        PRECEDENCE, {r.id for r in diverging})
    assert f"reviewed: {diverging[0].id} differs on purpose" in result.stdout.str()
    assert result.ret == 0

    # A listed case that conforms: the entry is out of date, the item fails (as certify's xpass fails the run).
    stale = entries + [{"id": conforming.id, "outcome": "fail", "classes": ["type"], "reason": "was wrong once"}]
    known.write_text(yaml.safe_dump({"divergences": stale}))
    result = _run(pytester, "cases", "--conformance-expectations", str(known))
    node = next(iter(_node_ids(PRECEDENCE, {conforming.id})))
    assert _ran(result)[node] == "FAILED" and "XPASS(strict)" in result.stdout.str()
    assert result.ret == 1

    # An entry naming no case of the surface: a typo or a removed case, which fails the run as well.
    typo = entries + [{"id": "reward.parse::no-such-case", "reason": "a typo"}]
    known.write_text(yaml.safe_dump({"divergences": typo}))
    result = _run(pytester, "cases", "--conformance-expectations", str(known))
    assert "stale expectation" in result.stdout.str() and "reward.parse::no-such-case" in result.stdout.str()
    assert result.ret == 1
    # ... but not when the case exists and only this run does not select it.
    unselected = _run(pytester, "cases", "--conformance-expectations", str(known), "-k", "not both-json-null")
    said = next(line for line in unselected.outlines if "stale expectation" in line)
    assert "reward.parse::no-such-case" in said and "both-json-null" not in said


def test_an_expired_entry_no_longer_applies_and_is_named(pytester, tmp_path):
    corpus = _copy(pytester, PRECEDENCE)
    diverging = [r for r in _certified(corpus, tmp_path).records if r.signature is not None]
    entries = [{"id": r.id, "outcome": str(r.signature.outcome), "classes": [c.value for c in r.signature.classes],
                "reason": "reviewed"} for r in diverging]
    expired, later = diverging[0].id, diverging[1:]
    entries[0]["expires"] = "2000-01-31"  # long before any session
    for entry in entries[1:]:
        entry["expires"] = "2999-12-31"
    known = pytester.path / "known.yaml"
    known.write_text(yaml.safe_dump({"divergences": entries}))
    report = tmp_path / "plugin.jsonl"
    result = _run(pytester, "cases", "--conformance-expectations", str(known), "--conformance-report", str(report))
    ran = _ran(result)
    assert {ran[node] for node in _node_ids(PRECEDENCE, {expired})} == {"FAILED"}
    assert {ran[node] for node in _node_ids(PRECEDENCE, {r.id for r in later})} <= {"XFAIL"}
    said = next(line for line in result.outlines if "expired expectation" in line)
    assert said.endswith(expired)
    assert read(report).footer.expired_expectations == [expired]
    assert result.ret == 1


def _outcomes(path: Path) -> set[tuple[str, str]]:
    return {(record.id, str(record.outcome)) for record in read(path).records}


@pytest.mark.slow
def test_the_report_is_certifys_whether_one_process_or_xdist_workers_write_it(pytester, tmp_path, monkeypatch):
    corpus = _copy(pytester, PRECEDENCE, "pass_at_k/k_values.yaml")
    certified = _certified(corpus, tmp_path)
    single, parallel = pytester.path / "single.jsonl", pytester.path / "parallel.jsonl"
    _run(pytester, "cases", "--conformance-report", str(single))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    workers = pytester.runpytest_subprocess("cases", "--conformance-candidate", WRONG, *RECORDED, "-n", "2",
                                            "--conformance-report", str(parallel))
    assert "2 workers" in workers.stdout.str()

    expected = {(r.id, str(r.outcome)) for r in certified.records}
    assert _outcomes(single) == _outcomes(parallel) == expected
    for path in (single, parallel):
        report = read(path)
        assert report.finished and report.footer is not None
        assert report.footer.total == certified.footer.total and report.footer.outcomes == certified.footer.outcomes
        assert report.header is not None and report.header.candidate.spec == WRONG
        assert report.header.candidate.implementation is not None
        assert report.header.surfaces == ["pass_at_k", "reward.parse"]
        assert not report.footer.conforms
        # The outputs certify's reports have render from it.
        failing = next(r.id for r in report.records if r.outcome == "fail")
        assert failing in markdown.summary(report)
        assert failing in junit.render(report)
        assert badge.render(report)["message"]


def test_a_run_cut_short_leaves_an_unfinished_report(pytester):
    _copy(pytester, PRECEDENCE)
    path = pytester.path / "cut.jsonl"
    _run(pytester, "cases", "-x", "--conformance-report", str(path))
    report = read(path)
    assert not report.finished and len(report.records) == 1


@pytest.mark.slow
def test_a_generated_item_finds_a_divergence_and_replays_it_from_the_database(pytester, harbor_env):
    (pytester.path / "pass_at_k").mkdir()
    database = pytester.path / "examples"
    candidate = ["--conformance-candidate", "tests.wrong_candidates:pass_at_1", "--conformance-no-cases", "-v"]

    def run(*args: str) -> tuple[set[str], pytest.RunResult]:
        result = pytester.runpytest("pass_at_k", *candidate, *args)
        return set(re.findall(r"pass_at_k::gen-[0-9a-f]{12}", result.stdout.str())), result

    found, first = run("--conformance-max-examples", "40", "--conformance-example-database", str(database))
    assert _ran(first) == {"pass_at_k::generated": "FAILED"}
    assert found and "extra-key" in first.stdout.str() and "input:" in first.stdout.str()
    assert any(database.rglob("*")), "the finding was not saved"
    # One new input, from another seed: a fresh search does not find it, the database replays it.
    one = ("--conformance-max-examples", "1", "--conformance-seed", "7")
    fresh, _ = run(*one, "--conformance-example-database", "none")
    replayed, again = run(*one, "--conformance-example-database", str(database))
    assert not fresh
    assert replayed & found and _ran(again) == {"pass_at_k::generated": "FAILED"}


@pytest.mark.slow
def test_a_candidate_that_starts_for_the_controller_but_not_in_a_worker_is_recorded_and_its_items_broken(
        pytester, tmp_path, monkeypatch):
    """The controller's handshake succeeds; each xdist worker's own start crashes: certify's candidate line, once a
    worker, and every item broken (a worker's failing start is an event of its run, then a line of the report)."""
    import json

    _copy(pytester, PRECEDENCE)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"starts": ["ok", "crash", "crash", "crash"]}))
    chaos = f"exec:{sys.executable} {REPO / 'tests' / 'chaos_candidate.py'} {plan}"
    report = pytester.path / "r.jsonl"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    result = pytester.runpytest_subprocess("cases", "--conformance-candidate", chaos, *RECORDED, "-n", "2",
                                           "--conformance-report", str(report))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    written = read(report)
    assert written.candidate_problems and {line.stage for line in written.candidate_problems} == {"start"}
    assert {line.outcome for line in written.candidate_problems} == {"crash"}
    assert written.records and {str(r.outcome) for r in written.records} == {"broken"}
