"""The report's typed lines: written, published as a JSON Schema, and read back with errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.core.compare import Mismatch, MismatchClass
from conformance.core.outcomes import Outcome
from conformance.report.model import CaseLine, OutputResult, Party, RaisedResult
from conformance.report.reader import ReportError, read
from conformance.report.writer import ReportWriter, Tally, new_header

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "conformance" / "schemas" / "report-line.json")
                    .read_text(encoding="utf-8"))


def _written(tmp_path: Path, *cases: CaseLine, finish: bool = True) -> Path:
    path = tmp_path / "r.jsonl"
    head = new_header(oracle=Party(spec="harbor==0.13.1"), candidate=Party(spec="reference"),
                      nan_policy="any-nan-equal", surfaces=["reward.parse"], cases_root="cases")
    with ReportWriter(path, head) as writer:
        for case in cases:
            writer.write(case)
        if finish:
            writer.write(Tally.of(cases).footer())
    return path


NULL_OUTPUT = CaseLine(id="reward.parse::a", surface="reward.parse", outcome=Outcome.FAIL,
                       oracle=OutputResult(output=None), candidate=RaisedResult(raised="ValueError"),
                       mismatches=[Mismatch(MismatchClass.ERROR_VS_VALUE, "$", "None", "raised ValueError")])


def test_every_line_written_is_valid_by_the_published_schema(tmp_path):
    path = _written(tmp_path, NULL_OUTPUT, CaseLine(id="reward.parse::b", surface="reward.parse", outcome="pass"))
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", "case", "case", "footer"]
    for line in lines:
        jsonschema.validate(line, SCHEMA)


def test_a_null_output_is_a_value_and_survives_the_round_trip(tmp_path):
    line = json.loads(_written(tmp_path, NULL_OUTPUT).read_text().splitlines()[1])
    assert line["oracle"] == {"output": None} and line["candidate"] == {"raised": "ValueError"}
    (back,) = read(tmp_path / "r.jsonl").records
    assert back == NULL_OUTPUT


def test_a_line_that_is_no_report_line_is_named_by_file_and_line(tmp_path):
    path = _written(tmp_path, NULL_OUTPUT)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], '{"type": "case", "id": "x"}', *lines[1:]]) + "\n")
    with pytest.raises(ReportError, match=rf"{path}:2: not a report line \(case\.surface: Field required\)"):
        read(path)
    result = CliRunner().invoke(app, ["summary", str(path)])
    assert result.exit_code == 2 and f"{path}:2:" in result.output and "Traceback" not in result.output


def test_only_the_last_line_may_be_cut_short(tmp_path):
    path = _written(tmp_path, NULL_OUTPUT, finish=False)
    path.write_text(path.read_text() + '{"type": "case", "id": "reward.pa')
    report = read(path)
    assert report.truncated and len(report.records) == 1 and not report.finished
    path.write_text(path.read_text() + "\n" + json.dumps(NULL_OUTPUT.to_json()) + "\n")
    with pytest.raises(ReportError, match=":3: not a JSON line"):
        read(path)


def test_a_long_exception_message_is_kept_cut_with_its_length():
    from conformance.core.compare import Result
    from conformance.report.model import MESSAGE_LIMIT, result_line

    line = result_line(Result.of_raised("ValueError", None, "x" * 5000))
    assert isinstance(line, RaisedResult) and line.message is not None
    assert line.message == "x" * MESSAGE_LIMIT + "… (5000 characters)"
    short = result_line(Result.of_raised("ValueError", None, "no reward file"))
    assert short.text() == "raises ValueError: no reward file"


def _generated(skipped: int):
    from conformance.report.model import GeneratedLine
    return GeneratedLine(surface="evsys.metric", profile="ci", seed=1, max_examples=20, inputs_run=20,
                         skipped=skipped, skip_reason="not implemented yet" if skipped else None)


def test_skipped_generated_inputs_keep_a_run_from_conforming_and_are_said_in_every_format():
    from conformance.report import junit, markdown
    from conformance.report.reader import Report
    from conformance.report.writer import Tally

    assert Tally.of([], [_generated(0)], []).conforms
    assert not Tally.of([], [_generated(20)], []).conforms
    report = Report.of([_generated(20)])
    assert "| `evsys.metric` | 20 | 0 (20 skipped) | 0 |" in markdown.summary(report)
    xml = junit.render(report)
    assert 'failures="1"' in xml and "20 skipped: not implemented yet" in xml


def test_a_report_line_cannot_be_changed_once_made():
    from pydantic import ValidationError

    from conformance.report.model import CandidateLine, GeneratedLine

    line = CaseLine(id="reward.parse::a", surface="reward.parse", outcome=Outcome.PASS)
    for name, value in [("outcome", Outcome.FAIL), ("detail", "changed"), ("id", "reward.parse::b")]:
        with pytest.raises(ValidationError, match="frozen"):
            setattr(line, name, value)
    assert (line.outcome, line.detail, line.id) == (Outcome.PASS, "", "reward.parse::a")
    generated = GeneratedLine(surface="reward.parse", profile="ci", seed=0, max_examples=1, inputs_run=1)
    with pytest.raises(ValidationError, match="frozen"):
        generated.inputs_run = 2
    with pytest.raises(ValidationError, match="frozen"):
        CandidateLine(stage="start", outcome="crash").detail = "x"


def test_an_amended_line_is_a_new_line_within_the_limits():
    from conformance.report.model import DETAIL_LIMIT, MISMATCH_LIMIT

    line = CaseLine(id="reward.parse::a", surface="reward.parse", outcome=Outcome.PASS)
    mismatches = [Mismatch(MismatchClass.VALUE, f"$[{i:04}]", "1", "2") for i in range(MISMATCH_LIMIT + 5)]
    changed = line.amended(outcome=Outcome.FAIL, detail="x" * (DETAIL_LIMIT + 1), mismatches=mismatches)
    assert line.outcome is Outcome.PASS and line.mismatches == [] and line.detail == ""
    assert changed.outcome is Outcome.FAIL
    assert changed.detail.endswith(f"({DETAIL_LIMIT + 1} characters)")
    assert (len(changed.mismatches), changed.more_mismatches) == (MISMATCH_LIMIT, 5)
    # The same as a line made whole with those fields.
    made = CaseLine(id="reward.parse::a", surface="reward.parse", outcome=Outcome.FAIL, detail="x" * (DETAIL_LIMIT + 1),
                    mismatches=mismatches)
    assert made == changed
