"""The report's typed lines: written, published as a JSON Schema, and read back with errors that name the line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.connection.protocol import Implementation
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


# -- how a candidate is named ----------------------------------------------------------------------------------


def _named(name: str, version: str = "1.0", language: str = "rust", spec: str = "exec:./x") -> Party:
    return Party(spec=spec, implementation=Implementation(name=name, version=version, language=language,
                                                          surfaces=[]))


def test_a_candidate_is_named_by_its_handshake_and_its_spec_is_shown_beside():
    party = _named("fastsum", "1.2", spec="exec:/home/runner/work/fastsum/bin/fastsum")
    assert party.display_name == "fastsum 1.2"
    assert party.described == "fastsum 1.2 (exec:/home/runner/work/fastsum/bin/fastsum)"
    assert party.file_stem == "conformance-fastsum-1.2"
    # Its identity is its name and language: the same from any path, another with another language.
    assert party.identity == _named("fastsum", "1.3", spec=r"exec:C:\runner\fastsum.exe").identity
    assert party.identity != _named("fastsum", "1.2", language="python").identity


def test_a_candidate_that_never_started_is_named_by_its_spec_saying_so():
    party = Party(spec="exec:./gone --fast")
    assert party.display_name == party.described == "exec:./gone --fast (never started)"
    assert party.file_stem == "conformance-never-started-exec_._gone_--fast"  # ":" and "/" as "_"
    assert party.identity.language is None


@pytest.mark.parametrize("name", [
    "../../etc/passwd", "a/b\\c", "..", ".", "", "/", "\x00\x1b[2J\n", "CON", "é" * 10, "x" * 5000,
    "-rf --no-preserve-root", "name\u202eelif",
])
def test_a_hostile_name_makes_one_safe_file_name(name):
    stem = _named(name, version=name).file_stem
    assert re.fullmatch(r"conformance-[A-Za-z0-9._-]+", stem), stem
    assert ".." not in stem and len(f"{stem}.shard-99-of-99.partial.jsonl") <= 255
    assert Path(stem).name == stem and Path(stem).parent == Path(".")


def test_two_long_names_that_begin_alike_stay_two_file_names():
    assert _named("x" * 300 + "a").file_stem != _named("x" * 300 + "b").file_stem


def test_a_name_is_shown_on_one_line_without_control_characters_and_cut():
    shown = _named("evil\x1b[31m\nname\u202e" + "n" * 500, version="1\r\n2").display_name
    assert shown.startswith("evil\ufffd[31m\ufffdname\ufffd") and shown.endswith("… 1\ufffd\ufffd2")
    assert not any(c in shown for c in "\x1b\n\r\u202e") and len(shown) < 100
