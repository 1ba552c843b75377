"""Hostile inputs to the suite itself: reports and case files made to break their readers.

Whatever is wrong, every reader answers the same way: exit status 2 and one
line naming the file, the line and the problem, never a traceback, never a
hang. Reports are read as streams, in memory that does not grow with their
size; case files are bounded in size, nesting, values and int digits, and
read only when they are regular files inside the corpus. The broken files
that can be written once live in tests/broken_cases/ (tests/test_broken_corpus.py);
the ones here are made in a temporary folder: FIFOs, links out of it, and
files too large or too deep to keep in the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.corpus import files
from conformance.corpus.cases import check_corpus
from conformance.corpus.yaml_values import INT_DIGITS_LIMIT, NESTING_LIMIT, VALUE_LIMIT
from conformance.kit import wire
from conformance.report import reader
from tests.report_lines import footer_line, header_line

REPO = Path(__file__).parent.parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def _one_line_naming(output: str, path: Path, line: int, text: str) -> str:
    """The one line of ``output`` naming ``path``:``line``, which must say ``text``; and no traceback."""
    assert "Traceback" not in output, output
    named = [row for row in output.splitlines() if f"{path}:" in row]
    assert len(named) == 1, output
    assert f"{path}:{line}: " in named[0] and text in named[0], named[0]
    return named[0]


# -- malformed reports -------------------------------------------------------------------------------------------

OUTPUT = {"output": wire.encode({"reward": 1.0})}


def _case(number: int, **fields: object) -> dict:
    return {"type": "case", "id": f"reward.parse::c{number}", "surface": "reward.parse", "outcome": "pass",
            "oracle": OUTPUT, "candidate": OUTPUT, **fields}


def _report_lines() -> list[bytes]:
    """A whole report: a header (with what --resume compares), three cases, a footer."""
    head = header_line(candidate={"spec": "reference"}, oracle={"spec": "recorded"}, surfaces=["reward.parse"])
    lines = [head, _case(1), _case(2), _case(3), footer_line()]
    return [json.dumps(line).encode() for line in lines]


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _without_outcome() -> bytes:
    line = _case(9)
    del line["outcome"]
    return json.dumps(line).encode()


def _header(**fields: object) -> bytes:
    return json.dumps(header_line(**{"candidate": {"spec": "reference"}, "oracle": {"spec": "recorded"}, **fields})
                      ).encode()


# name: (the line's number, what the line is, or where it goes, and what the error says)
MALFORMED = {
    "a line that is not an object": (2, b"[1, 2]", "not a report line (Input should be a valid dictionary"),
    "a case line without an outcome": (2, _without_outcome(), "not a report line (case.outcome: Field required)"),
    "a header whose candidate is a string": (1, _header(candidate="reference"), "not a report line (header.candidate"),
    "JSON nested 100000 deep": (2, b"[" * 100_000 + b"]" * 100_000, "nested more than 200 levels deep"),
    "a case nested 300 deep": (2, json.dumps(_case(9, input=_nested(300))).encode(), "nested more than 200 levels"),
    "a line that is not JSON": (2, b"hello", "not a JSON line"),
    "a line that is not UTF-8": (2, b'{"type": "case", "id": "\xff\xfe"}', "not UTF-8 text"),
    "a NaN": (2, json.dumps(_case(9, seconds=float("nan"))).encode(), "not a JSON line (NaN is no JSON value)"),
    "a 5000-digit number": (2, b'{"type": "case", "seconds": 1' + b"0" * 5000 + b"}", "not a JSON line (Exceeds"),
    "an input that is no wire value": (2, json.dumps(_case(9, input={"bogus": 1})).encode(),
                                       "case reward.parse::c9: input is not a wire value (unknown wire tag 'bogus'"),
    "an output that is no wire value": (2, json.dumps(_case(9, oracle={"output": 1.5})).encode(),
                                        "oracle.output is not a wire value (bare JSON number 1.5"),
    "a second header": (3, _header(), "a second header (the header is the report's first line)"),
    "a first line that is no header": (1, json.dumps(_case(9)).encode(), "the first line is a case line, not the"),
    "a report of another version": (1, _header(report_version=2), "report version 2; this suite reads version 1"),
    "a line after the footer": (6, json.dumps(_case(9)).encode(), "a line after the footer"),
}


def _malformed(tmp_path: Path, name: str) -> tuple[Path, int, str]:
    number, bad, text = MALFORMED[name]
    lines = _report_lines()
    if name.startswith(("a header whose", "a report of another")):
        lines[0] = bad
    else:
        lines.insert(number - 1, bad)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, number, text


def _good(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_bytes(b"\n".join(_report_lines()) + b"\n")
    return path


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "reward.parse").mkdir(parents=True)
    (root / "reward.parse" / "one.yaml").write_text(textwrap.dedent("""\
        surface: reward.parse
        cases:
          - id: reward.parse::c1
            description: reward.txt holding "1"
            spec: seed-003 §1.2
            input: {reward_txt: !bytes "1"}
            expect: {output: {reward: !float 1.0}}
        """))
    return root


def _argv(command: str, path: Path, tmp_path: Path) -> list[str]:
    if command == "summary":
        return ["summary", str(path)]
    if command == "diff":
        return ["diff", str(_good(tmp_path)), str(path)]
    if command == "combine":
        return ["combine", str(path), "--out", str(tmp_path / "combined.jsonl")]
    if command == "promote":
        return ["promote", str(path), "--cases", str(_corpus(tmp_path))]
    if command == "expectations update":
        return ["expectations", "update", str(path), "--file", str(tmp_path / "expected.yaml")]
    return ["certify", "-c", "reference", "--oracle", "recorded", "--no-generate", "--progress", "none",
            "--cases", str(_corpus(tmp_path)), "--report", str(path), "--resume"]


@pytest.mark.parametrize("command", ["summary", "diff", "combine", "certify --resume", "promote",
                                     "expectations update"])
@pytest.mark.parametrize("name", list(MALFORMED))
def test_every_reader_refuses_a_malformed_report_naming_file_and_line(tmp_path, command, name):
    path, number, text = _malformed(tmp_path, name)
    before = path.read_bytes()
    result = CliRunner().invoke(app, _argv(command, path, tmp_path))
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    _one_line_naming(result.output, path, number, text)
    assert path.read_bytes() == before  # --resume refused: the report is left as it was
    assert not (tmp_path / "combined.jsonl").exists() and not (tmp_path / "expected.yaml").exists()


def test_a_line_past_the_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "LINE_LIMIT", 4096)
    lines = _report_lines()
    lines.insert(2, json.dumps(_case(9, detail="x" * 5000)).encode())
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = CliRunner().invoke(app, ["summary", str(path)])
    assert result.exit_code == 2
    _one_line_naming(result.output, path, 3, "a line longer than 4096 bytes")


def test_a_last_line_cut_mid_character_is_a_killed_runs_and_is_dropped(tmp_path):
    """The writer keeps non-ASCII text as UTF-8: a run killed mid-line can leave half a character."""
    lines = _report_lines()[:-1]  # no footer: the run was killed
    cut = json.dumps(_case(9, detail="résumé"), ensure_ascii=False).encode()
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n" + cut[:cut.index("é".encode()) + 1])
    data = reader.read(path)
    assert data.truncated and not data.finished and [r.id for r in data.records] == [
        "reward.parse::c1", "reward.parse::c2", "reward.parse::c3"]
    with path.open("ab") as handle:
        handle.write(b"\n" + lines[1] + b"\n")  # no longer the last line: an error
    with pytest.raises(reader.ReportError, match=rf"{path}:5: not UTF-8 text"):
        reader.read(path)


# -- diff, against an unfinished report or one that lacks cases ---------------------------------------------------


def _diff(tmp_path: Path, a: list[bytes], b: list[bytes]) -> tuple[int, str, dict]:
    (tmp_path / "a.jsonl").write_bytes(b"".join(line + b"\n" for line in a))
    (tmp_path / "b.jsonl").write_bytes(b"".join(line + b"\n" for line in b))
    result = CliRunner().invoke(app, ["diff", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                                      "--json", str(tmp_path / "d.json")])
    assert "Traceback" not in result.output
    return result.exit_code, result.output, json.loads((tmp_path / "d.json").read_text())


def test_diff_against_an_unfinished_or_empty_report_says_so_and_fails(tmp_path):
    whole = _report_lines()
    code, output, data = _diff(tmp_path, whole, whole[:-1])  # B: the same cases, no footer
    assert code == 1 and "B (" in output and "did not finish (no footer)" in output
    assert data["finished"] == {"a": True, "b": False} and data["counts"]["only-in-a"] == 0
    code, output, data = _diff(tmp_path, whole, [])  # B: an empty file
    assert code == 1 and "has no line for 3 case(s) of A" in output and "did not finish" in output
    code, output, _ = _diff(tmp_path, whole[:-1], whole)  # A did not finish: its baseline is incomplete
    assert code == 1 and "A (" in output and "did not finish" in output


def test_diff_fails_on_a_declared_case_b_lacks_and_not_on_one_only_b_has(tmp_path):
    whole = _report_lines()
    code, output, data = _diff(tmp_path, whole, [*whole[:2], *whole[3:]])  # B lacks c2
    assert code == 1 and "has no line for 1 case(s) of A" in output and "reward.parse::c2" in output
    assert data["notes"] and data["counts"]["only-in-a"] == 1
    code, output, data = _diff(tmp_path, [*whole[:2], *whole[3:]], whole)  # B has c2 besides: the corpus grew
    assert code == 0 and data["counts"]["only-in-b"] == 1 and data["notes"] == []
    # A generated finding only in A: B did not find it, which fails nothing.
    finding = json.dumps(_case(7, outcome="fail", origin="generated", id="reward.parse::gen-7")).encode()
    code, _, data = _diff(tmp_path, [*whole[:-1], finding, whole[-1]], whole)
    assert code == 0 and data["counts"]["only-in-a"] == 1 and data["notes"] == []


# -- --resume with case ids the corpus no longer has ---------------------------------------------------------------


def test_resume_drops_finished_cases_the_corpus_no_longer_has(tmp_path):
    corpus = _corpus(tmp_path)
    path = tmp_path / "report.jsonl"
    argv = ["certify", "-c", "reference", "--oracle", "recorded", "--no-generate", "--progress", "none",
            "--cases", str(corpus), "--report", str(path)]
    assert CliRunner().invoke(app, argv).exit_code == 0
    lines = path.read_bytes().splitlines()[:-1]  # killed before its footer ...
    gone = [json.dumps(_case(n, id=f"reward.parse::gone-{n}")).encode() for n in range(7)]
    path.write_bytes(b"\n".join([*lines, *gone]) + b"\n")  # ... with cases since deleted from the corpus
    result = CliRunner().invoke(app, [*argv, "--resume"])
    assert result.exit_code == 0, result.output
    warning = [row for row in result.output.splitlines() if row.startswith("warning:")]
    assert len(warning) == 1 and "7 finished case(s)" in warning[0] and "no longer in the corpus" in warning[0]
    assert "reward.parse::gone-0" in warning[0] and warning[0].endswith(" ...")  # a few ids, not all seven
    assert "(1/1 cases pass)" in result.output
    data = reader.read(path)
    assert [r.id for r in data.records] == ["reward.parse::c1"] and data.footer.total == 1


# -- the memory a large report takes -------------------------------------------------------------------------------


def _peak_rss(argv: list[str]) -> tuple[int, float, str]:
    """Peak RSS (bytes) and seconds of the command, run alone under a Python that reports its child's peak."""
    script = ("import resource, subprocess, sys, time; t = time.monotonic(); "
              "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - t, p.returncode); "
              "sys.stderr.write(p.stdout + p.stderr)")
    proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, env=_env(),
                          timeout=300)
    peak, seconds, code = proc.stdout.split()
    assert code in ("0", "1"), proc.stderr
    return int(peak) * 1024, float(seconds), proc.stderr  # ru_maxrss is in KiB on Linux


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB, as Linux gives it")
def test_summary_of_a_large_report_takes_memory_that_does_not_grow_with_it(tmp_path):
    size = 40 * 1024 * 1024
    lines = _report_lines()
    big = tmp_path / "big.jsonl"
    with big.open("wb") as handle:
        handle.write(lines[0] + b"\n")
        written, number = 0, 0
        while written < size:  # passing cases and, one in fifty, a failing one: what a summary keeps
            number += 1
            fields = {"outcome": "fail", "mismatches": [{"cls": "value", "path": "$", "expected": "1",
                                                         "actual": "2"}]} if number % 50 == 0 else {}
            text = json.dumps(_case(number, detail="d" * 400, **fields)).encode() + b"\n"
            handle.write(text)
            written += len(text)
        handle.write(lines[-1] + b"\n")
    small = _good(tmp_path)
    command = [sys.executable, "-m", "conformance", "summary"]
    baseline, _, _ = _peak_rss([*command, str(small)])
    peak, seconds, output = _peak_rss([*command, str(big)])
    assert f"{number // 50} failing case(s)" in output
    # Every line held at once would take many times the file (a validated line is ten times its text).
    assert peak - baseline < size // 4, (peak, baseline, size, seconds)


# -- hostile case files ------------------------------------------------------------------------------------------

CASE = """\
surface: {surface}
cases:
  - id: {surface}::{slug}
    description: a case
    spec: seed-000
    input: {input}
"""
REWARD_INPUT = '{reward_txt: !bytes "1"}'
SCRIPT_INPUT = "{metric: {type: uv-script, kwargs: {script_path: m.py}}, rewards: [], scripts: {m.py: !file m.py}}"


def _case_file(folder: Path, slug: str, input_text: str = REWARD_INPUT, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug}.yaml"
    path.write_text(CASE.format(surface=folder.name, slug=slug, input=input_text) + extra)
    return path


def _errors(root: Path) -> list[str]:
    return [str(error) for error in check_corpus(root)[1]]


def test_yaml_nested_past_the_limit_is_refused_before_it_is_built(tmp_path):
    root = tmp_path / "cases"
    deep = _case_file(root / "reward.parse", "deep", extra="    expect: {output: " + "[" * 600 + "]" * 600 + "}\n")
    # At the limit: the document's mapping, the cases list, a case, expect, then lists to the limit.
    _case_file(root / "reward.parse", "at-limit",
               extra="    expect: {output: " + "[" * (NESTING_LIMIT - 4) + "]" * (NESTING_LIMIT - 4) + "}\n")
    (error,) = _errors(root)
    assert error.startswith(f"{deep}:7: nested deeper than {NESTING_LIMIT} levels")


def test_a_huge_plain_int_is_refused_with_its_digit_count(tmp_path):
    root = tmp_path / "cases"
    huge = _case_file(root / "reward.parse", "huge", extra="    expect: {output: {reward: " + "7" * 100_000 + "}}\n")
    _case_file(root / "reward.parse", "at-limit", extra="    expect: {output: {reward: " + "7" * INT_DIGITS_LIMIT
               + "}}\n")
    (error,) = _errors(root)
    assert error.startswith(f"{huge}:7: [reward.parse::huge] bad value: a plain int of 100000 digits: at most "
                            f"{INT_DIGITS_LIMIT}")


def test_a_file_of_too_many_values_is_refused_before_it_is_built(tmp_path):
    root = tmp_path / "cases"
    many = _case_file(root / "reward.parse", "many", extra="    tags: [" + ", ".join(["t"] * VALUE_LIMIT) + "]\n")
    (error,) = _errors(root)
    assert error.startswith(f"{many}:7: more than {VALUE_LIMIT} values")


def test_a_case_file_past_the_size_limit_is_refused_unread_and_quickly(tmp_path):
    root = tmp_path / "cases"
    big = _case_file(root / "reward.parse", "big", extra="    tags: [" + ", ".join(["tag"] * 2_100_000) + "]\n")
    assert big.stat().st_size > 10 * 1024 * 1024
    started = time.monotonic()
    (error,) = _errors(root)
    assert time.monotonic() - started < 1.0
    assert error == f"{big}:1: {big.stat().st_size} bytes: a case file may hold at most 2 MiB"


def test_a_file_named_by_file_past_its_size_limit_is_refused(tmp_path):
    root = tmp_path / "cases"
    folder = root / "metric.compute"
    case = _case_file(folder, "big-script", SCRIPT_INPUT)
    with (folder / "m.py").open("wb") as handle:
        handle.truncate(files.FILE_LIMIT + 1)  # sparse: nothing to write, and it must not be read
    (error,) = _errors(root)
    assert error == (f"{case}:6: [metric.compute::big-script] bad value: !file 'm.py': {files.FILE_LIMIT + 1} "
                     "bytes: a !file may hold at most 16 MiB")


def test_fifos_are_never_opened(tmp_path):
    """A FIFO as a case file, and one named by !file: opening either would wait for a writer for ever."""
    root = tmp_path / "cases"
    os.makedirs(root / "reward.parse")
    os.mkfifo(root / "reward.parse" / "pipe.yaml")
    folder = root / "metric.compute"
    case = _case_file(folder, "fifo-script", SCRIPT_INPUT)
    os.mkfifo(folder / "m.py")
    proc = subprocess.run([sys.executable, "-m", "conformance", "cases", "check", str(root)], capture_output=True,
                          text=True, timeout=60, env=_env())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{root / 'reward.parse' / 'pipe.yaml'}:1: a FIFO, not a regular file: not read" in proc.stdout
    assert f"{case}:6: [metric.compute::fifo-script] bad value: !file 'm.py': a FIFO, not a regular file" in proc.stdout


def test_case_files_and_surface_folders_linked_out_of_the_corpus_are_refused(tmp_path):
    root = tmp_path / "cases"
    elsewhere = tmp_path / "elsewhere"
    outside = _case_file(elsewhere / "pass_at_k", "outside", "{n: 1, c: 1, k: 1}")
    _case_file(root / "reward.parse", "here")
    (root / "reward.parse" / "linked.yaml").symlink_to(_case_file(elsewhere / "reward.parse", "linked"))
    (root / "pass_at_k").symlink_to(elsewhere / "pass_at_k", target_is_directory=True)
    # A link inside the corpus to elsewhere inside it stays allowed, as with !file: read, its id a duplicate.
    shared = _case_file(root / "reward.parse", "shared")
    (root / "reward.parse" / "also.yaml").symlink_to(shared)
    errors = _errors(root)
    assert sorted(errors) == sorted([
        f"{root / 'pass_at_k' / 'outside.yaml'}:1: leads out of the corpus (through a symbolic link, to "
        f"{outside.resolve()}): not read",
        f"{root / 'reward.parse' / 'linked.yaml'}:1: leads out of the corpus (through a symbolic link, to "
        f"{(elsewhere / 'reward.parse' / 'linked.yaml').resolve()}): not read",
        f"{shared}:3: [reward.parse::shared] duplicate id (first at {root / 'reward.parse' / 'also.yaml'}:3)",
    ])


@pytest.mark.slow
def test_promote_appends_to_no_fifo_and_through_no_link_out_of_the_corpus(tmp_path):
    finding = _case(1, id="reward.parse::gen-1", origin="generated", outcome="fail",
                    input=wire.encode({"reward_txt": b"1"}))
    report = tmp_path / "report.jsonl"
    report.write_bytes(b"\n".join([_report_lines()[0], json.dumps(finding).encode()]) + b"\n")
    target = _corpus(tmp_path) / "reward.parse" / "generated.yaml"
    os.mkfifo(target)
    argv = [sys.executable, "-m", "conformance", "promote", str(report), "--cases", str(target.parent.parent)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 2 and f"{target}:1: a FIFO, not a regular file" in proc.stderr, proc.stderr
    target.unlink()
    outside = _case_file(tmp_path / "elsewhere" / "reward.parse", "generated")
    target.symlink_to(outside)
    before = outside.read_bytes()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 2 and f"{target}:1: leads out of the corpus" in proc.stderr, proc.stderr
    assert outside.read_bytes() == before


@pytest.mark.slow
def test_cases_check_lists_every_problem_and_certify_refuses_to_run(tmp_path):
    """Each problem through both commands: `cases check` lists them all (exit 2), `certify` runs nothing."""
    root = tmp_path / "cases"
    _case_file(root / "reward.parse", "fine")
    deep = _case_file(root / "reward.parse", "deep", extra="    expect: {output: " + "[" * 700 + "]" * 700 + "}\n")
    huge = _case_file(root / "reward.parse", "huge", extra="    expect: {output: {reward: " + "1" * 100_000 + "}}\n")
    os.mkfifo(root / "reward.parse" / "pipe.yaml")
    big = root / "reward.parse" / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(files.CASE_FILE_LIMIT + 1)
    elsewhere = _case_file(tmp_path / "elsewhere" / "pass_at_k", "outside", "{n: 1, c: 1, k: 1}")
    (root / "pass_at_k").symlink_to(elsewhere.parent, target_is_directory=True)
    expected = [(deep, 7, "nested deeper than"), (huge, 7, "a plain int of 100000 digits"),
                (root / "reward.parse" / "pipe.yaml", 1, "a FIFO, not a regular file"),
                (big, 1, "a case file may hold at most 2 MiB"),
                (root / "pass_at_k" / "outside.yaml", 1, "leads out of the corpus")]
    check = subprocess.run([sys.executable, "-m", "conformance", "cases", "check", str(root)], capture_output=True,
                           text=True, timeout=60, env=_env())
    assert check.returncode == 2 and "Traceback" not in check.stdout + check.stderr
    assert check.stdout.splitlines()[-1] == f"1 cases in 6 files; {len(expected)} problem(s)"
    report = tmp_path / "report.jsonl"
    certify = subprocess.run([sys.executable, "-m", "conformance", "certify", "-c", "reference", "--oracle",
                              "recorded", "--no-generate", "--cases", str(root), "--report", str(report)],
                             capture_output=True, text=True, timeout=120, env=_env())
    assert certify.returncode == 2 and "Traceback" not in certify.stdout + certify.stderr
    for path, line, text in expected:
        _one_line_naming(check.stdout, path, line, text)
        _one_line_naming(certify.stderr, path, line, text)
    assert not report.exists()
