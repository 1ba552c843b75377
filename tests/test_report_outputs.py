"""What is derived from a report: diff by case id, Markdown, JUnit XML, the badge; and the release list.

Reports here are written by hand, line by line, so every expected figure is
counted from the lines themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.kit import wire
from conformance.oracle import releases
from conformance.report import badge, junit, markdown
from conformance.report import diff as report_diff
from conformance.report.reader import read
from tests.report_lines import footer_line, header_line

MISMATCH = {"cls": "value", "path": "$['reward']", "expected": "1.0", "actual": "0.0"}
ULP = {"cls": "ulp", "path": "$['mean']", "expected": "0.1", "actual": "0.10000000000000002", "ulps": 1}


# A candidate as a header has it once it answered the handshake: named by it, not by its spec (a path).
STARTED = {"spec": "exec:/home/runner/work/cand/bin/cand", "implementation": {
    "name": "cand", "version": "1.0", "language": "rust", "surfaces": ["reward.parse"]}}


def _write(path: Path, records: list[dict], *, footer: bool = True, generated: list[dict] = (),
           candidate: dict = STARTED) -> Path:
    head = header_line(candidate=candidate, surfaces=sorted({r["surface"] for r in records}))
    lines = [head, *({"type": "case", "seconds": 0.5, **r} for r in records), *generated]
    if footer:
        lines.append(footer_line())
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _case(case_id: str, outcome: str, *mismatches: dict, **extra) -> dict:
    return {"id": case_id, "surface": case_id.split("::")[0], "outcome": outcome, "mismatches": list(mismatches),
            "oracle": {"output": wire.encode({"reward": 1.0})}, "candidate": {"output": wire.encode({"reward": 0.0})},
            **extra}


# -- diff -------------------------------------------------------------------


@pytest.fixture
def two_reports(tmp_path):
    a = _write(tmp_path / "a.jsonl", [
        _case("reward.parse::same", "pass"),
        _case("reward.parse::breaks", "pass"),
        _case("reward.parse::mended", "fail", MISMATCH),
        _case("reward.parse::reclassed", "fail", MISMATCH),
        _case("reward.parse::same-failure", "fail", MISMATCH),
        _case("reward.parse::gone", "pass"),
        _case("metric.compute::known", "xfail", ULP,
              expected_divergence={"outcome": "fail", "classes": ["ulp"], "reason": "r"}),
    ])
    b = _write(tmp_path / "b.jsonl", [
        _case("reward.parse::same", "pass"),
        _case("reward.parse::breaks", "crash", detail="exited with status 1"),
        _case("reward.parse::mended", "pass"),
        _case("reward.parse::reclassed", "fail", ULP),
        _case("reward.parse::same-failure", "fail", MISMATCH),
        _case("reward.parse::new-case", "pass"),
        _case("metric.compute::known", "fail", ULP),  # the same divergence, now without an expectation file
    ])
    return a, b


def test_diff_classifies_every_changed_id(two_reports):
    a, b = two_reports
    changes = {c.id: (c.kind, c.before, c.after) for c in report_diff.diff(read(a), read(b))}
    assert changes == {
        "reward.parse::breaks": ("new-divergence", "pass", "crash"),
        "reward.parse::mended": ("fixed", "fail [value]", "pass"),
        "reward.parse::reclassed": ("changed", "fail [value]", "fail [ulp]"),
        "reward.parse::gone": ("only-in-a", "pass", "-"),
        "reward.parse::new-case": ("only-in-b", "-", "pass"),
    }


@pytest.mark.slow
def test_diff_cli_exit_status_and_outputs(two_reports, tmp_path):
    a, b = two_reports
    out_md, out_json = tmp_path / "d.md", tmp_path / "d.json"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "diff", str(a), str(b),
                           "--markdown", str(out_md), "--json", str(out_json)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a new divergence and a changed one
    data = json.loads(out_json.read_text())
    assert data["counts"] == {"new-divergence": 1, "fixed": 1, "changed": 1, "only-in-a": 1, "only-in-b": 1}
    assert "`reward.parse::reclassed` | changed | fail [value] | fail [ulp]" in out_md.read_text()
    # A report compared with itself changes nothing.
    back = subprocess.run([sys.executable, "-m", "conformance.cli.app", "diff", str(b), str(b)],
                          capture_output=True, text=True)
    assert back.returncode == 0 and "0 new-divergence" in back.stdout


@pytest.mark.slow
def test_diff_of_fixes_only_exits_zero(tmp_path):
    a = _write(tmp_path / "a.jsonl", [_case("reward.parse::x", "fail", MISMATCH)])
    b = _write(tmp_path / "b.jsonl", [_case("reward.parse::x", "pass")])
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "diff", str(a), str(b)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "1 fixed" in proc.stdout


# -- JUnit, badge, Markdown -------------------------------------------------------


@pytest.fixture
def mixed(tmp_path):
    generated = [{"type": "case", "id": "reward.parse::gen-abc", "surface": "reward.parse", "outcome": "fail",
                  "origin": "generated", "input": wire.encode({"reward_txt": b"1"}), "mismatches": [MISMATCH],
                  "seconds": 0.1},
                 {"type": "generated", "surface": "reward.parse", "profile": "ci", "seed": 0, "max_examples": 10,
                  "inputs_run": 12, "divergences": ["reward.parse::gen-abc"]}]
    return _write(tmp_path / "mixed.jsonl", [
        _case("reward.parse::ok", "pass"),
        _case("reward.parse::bad", "fail", MISMATCH),
        _case("reward.parse::died", "crash", detail="exited with status 3"),
        _case("reward.parse::known", "xfail", MISMATCH,
              expected_divergence={"outcome": "fail", "classes": ["value"], "reason": "a known change"}),
        _case("reward.parse::stale-entry", "xpass", detail="listed but conforms"),
        _case("metric.compute::declined", "skip", detail="not supported"),
    ], generated=generated)


def test_junit_counts_each_outcome_where_ci_systems_look(mixed):
    root = ET.fromstring(junit.render(read(mixed)))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    parse = suites["reward.parse"]
    # 5 cases + the generated-inputs testcase; fail, xpass and the generated divergence are failures.
    counts = (parse.get("tests"), parse.get("failures"), parse.get("errors"), parse.get("skipped"))
    assert counts == ("6", "3", "1", "1")
    cases = {c.get("name"): c for c in parse.findall("testcase")}
    assert cases["reward.parse::bad"].find("failure").get("type") == "fail"
    assert cases["reward.parse::died"].find("error").get("type") == "crash"
    assert "a known change" in cases["reward.parse::known"].find("skipped").get("message")
    assert cases["reward.parse::stale-entry"].find("failure").get("type") == "xpass"
    assert cases["reward.parse::ok"].find("failure") is None and cases["reward.parse::ok"].find("error") is None
    assert "reward.parse::gen-abc" in cases["reward.parse::generated"].find("failure").text
    assert suites["metric.compute"].get("skipped") == "1"


def test_badge_for_a_failing_a_known_and_a_clean_run(mixed, tmp_path):
    assert badge.render(read(mixed)) == {
        "schemaVersion": 1, "label": "harbor 0.13.1", "color": "red",
        "message": "cand 1.0: 2/6 cases, 12 generated, 1 known, 1 generated divergence(s), "
                   "partial: metric.compute, reward.parse, warnings: mostly-skipped"}  # metric.compute's one case
    known = _write(tmp_path / "known.jsonl", [
        _case("reward.parse::ok", "pass"),
        _case("reward.parse::known", "xfail", MISMATCH, expected_divergence={"outcome": "fail", "classes": ["value"],
                                                                          "reason": "r"})])
    assert badge.render(read(known))["color"] == "yellow"
    assert badge.render(read(known))["message"] == "cand 1.0: 2/2 cases, 1 known, partial: reward.parse"
    clean = _write(tmp_path / "clean.jsonl", [_case("reward.parse::ok", "pass")])
    assert badge.render(read(clean)) == {"schemaVersion": 1, "label": "harbor 0.13.1", "color": "brightgreen",
                                         "message": "cand 1.0: 1/1 cases, partial: reward.parse"}  # only partial
    unfinished = _write(tmp_path / "cut.jsonl", [_case("reward.parse::ok", "pass")], footer=False)
    assert badge.render(read(unfinished))["color"] == "red"
    assert badge.render(read(unfinished))["message"].endswith(", unfinished")


EVERY_SURFACE = ["evsys.metric", "job.result", "metric.compute", "multi_step.reward", "outcome.summary",
                 "pass_at_k", "reason.normalize", "result.load", "reward.parse"]


@pytest.mark.parametrize(("header", "label", "message"), [
    ({"surfaces": EVERY_SURFACE}, "harbor 0.13.1", "cand 1.0: 1/1 cases"),
    ({"surfaces": EVERY_SURFACE, "oracle": {"spec": "recorded"}}, "harbor 0.13.1 (recorded)", "cand 1.0: 1/1 cases"),
    ({"surfaces": EVERY_SURFACE, "oracle": {"spec": "harbor==0.25.0"}}, "harbor 0.25.0", "cand 1.0: 1/1 cases"),
    ({"surfaces": EVERY_SURFACE, "case_globs": ["reward.parse::txt-*"]}, "harbor 0.13.1",
     "cand 1.0: 1/1 cases, partial: cases reward.parse::txt-*"),
    ({"surfaces": EVERY_SURFACE, "shard": {"index": 1, "count": 3, "cases": ["reward.parse::ok"]}}, "harbor 0.13.1",
     "cand 1.0: 1/1 cases, partial: shard 1/3"),
    ({"surfaces": EVERY_SURFACE[:5]}, "harbor 0.13.1", "cand 1.0: 1/1 cases, partial: 5/9 surfaces"),
    # No handshake: the badge says so, and shows no spec (a path on the machine that ran it).
    ({"surfaces": EVERY_SURFACE, "candidate": {"spec": "exec:/home/runner/bin/cand"}}, "harbor 0.13.1",
     "never started: 1/1 cases"),
])
def test_the_badge_names_what_was_certified(tmp_path, header, label, message):
    path = tmp_path / "r.jsonl"
    lines = [header_line(**{"candidate": STARTED, **header}),
             {"type": "case", "id": "reward.parse::ok", "surface": "reward.parse", "outcome": "pass"}, footer_line()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    shown = badge.render(read(path))
    assert (shown["label"], shown["message"], shown["color"]) == (label, message, "brightgreen")


def test_markdown_summary_lists_the_problems_and_not_the_known(mixed):
    text = markdown.summary(read(mixed))
    assert text.startswith("## ❌ `cand 1.0` does not conform to `harbor==0.13.1`")
    assert "candidate: `exec:/home/runner/work/cand/bin/cand`" in text  # the spec, beside the name
    for case_id in ("reward.parse::bad", "reward.parse::died", "reward.parse::stale-entry"):
        assert f"`{case_id}`" in text
    assert "`reward.parse::known`" not in text and "`reward.parse::ok`" not in text
    assert "| `reward.parse` | 5 | 1 | 1 | 1 | 0 | 1 | 1 |" in text  # pass fail crash skip xfail xpass
    assert "| `reward.parse` | 12 | 1 | 0 |" in text  # generated: inputs, unexpected, expected


def test_markdown_names_a_candidate_that_never_started_by_its_spec(tmp_path):
    report = _write(tmp_path / "r.jsonl", [_case("reward.parse::ok", "broken")], candidate={"spec": "exec:./gone"})
    text = markdown.summary(read(report))
    assert text.startswith("## ❌ `exec:./gone (never started)` does not conform to `harbor==0.13.1`")
    assert "candidate: " not in text  # its spec is its name already


def test_markdown_keeps_a_hostile_name_in_its_code_span_on_one_line(tmp_path):
    hostile = {"spec": "exec:x", "implementation": {
        "name": "a``b\n## owned <script>", "version": "`1`", "language": "x", "surfaces": []}}
    heading = markdown.summary(read(_write(tmp_path / "r.jsonl", [_case("reward.parse::ok", "pass")],
                                           candidate=hostile))).splitlines()[0]
    # A fence one backtick longer than the longest run inside, the newline shown as U+FFFD.
    assert heading == "## ✅ ``` a``b\ufffd## owned <script> `1` ``` conforms to `harbor==0.13.1`"


def test_summary_cli_writes_all_three_formats(mixed, tmp_path):
    outputs = {"--markdown": tmp_path / "s.md", "--junit": tmp_path / "s.xml", "--badge": tmp_path / "b.json"}
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.app", "summary", str(mixed),
                           *(x for flag, path in outputs.items() for x in (flag, str(path)))],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert outputs["--markdown"].read_text().startswith("## ❌")
    ET.fromstring(outputs["--junit"].read_text())
    assert json.loads(outputs["--badge"].read_text())["color"] == "red"


def test_gate_markdown_shows_input_and_both_outputs(tmp_path):
    report = _write(tmp_path / "g.jsonl", [
        _case("reward.parse::known", "xfail", MISMATCH, expected_divergence={
            "outcome": "fail", "classes": ["value"], "reason": "0.23 refuses NaN", "link": "https://example.org/x"}),
        _case("reward.parse::surprise", "fail", MISMATCH),
        _case("reward.parse::same", "pass"),
    ])
    lookup = {"reward.parse::known": ("a NaN reward", {"reward_txt": b"nan"}),
              "reward.parse::surprise": ("a BOM", {"reward_txt": b"\xef\xbb\xbf1"})}.get
    text = markdown.changes(read(report), baseline="0.13.1", release="9.9.9", lookup=lookup)
    assert "2 behaviour(s) changed: 1 listed in the expectation file, 1 not listed." in text
    assert "Gate: FAILED." in text
    assert "expected: 0.23 refuses NaN ([link](https://example.org/x))" in text
    assert "**not in the expectation file**" in text
    assert "{'reward_txt': b'\\xef\\xbb\\xbf1'}" in text
    assert "harbor 0.13.1:\n\n```\n{'reward': 1.0}\n```" in text
    assert "harbor 9.9.9:\n\n```\n{'reward': 0.0}\n```" in text
    assert "reward.parse::same" not in text


# -- releases ------------------------------------------------------------------------


def test_releases_are_final_unyanked_and_ordered():
    page = {"name": "harbor", "files": [
        {"filename": "harbor-0.9.0-py3-none-any.whl"},
        {"filename": "harbor-0.10.0.tar.gz"},
        {"filename": "harbor-0.10.0-py3-none-any.whl"},
        {"filename": "harbor-0.11.0rc1-py3-none-any.whl"},
        {"filename": "harbor-0.11.1.dev202601010101-py3-none-any.whl"},
        {"filename": "harbor-0.12.0-py3-none-any.whl", "yanked": "broken"},
        {"filename": "harbor-0.13.0-py3-none-any.whl"},
        {"filename": "harbor_extras-1.0-py3-none-any.whl"},
        {"filename": "harbor-0.13.0.zip.asc"},
    ]}
    assert releases.select(page) == ["0.9.0", "0.10.0", "0.13.0"]
    assert releases.select(page, since="0.10.0") == ["0.10.0", "0.13.0"]
