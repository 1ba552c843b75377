"""A failure reproduced by hand: `repro` writes its requests and sidecar, a real candidate process answers them,
`check-reply` judges the reply with no oracle at all."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.connection.protocol import REQUEST_ADAPTER
from conformance.kit import wire
from conformance.report.model import CaseLine, Footer, Header, OutputResult, RaisedResult
from conformance.report.reproducer import Names, Reproducer, file_name
from conformance.report.writer import dumps
from tests.report_lines import footer_line, header_line

ROOT = Path(__file__).resolve().parent.parent


def _serving(name: str) -> str:
    """A program serving one deliberately wrong candidate over stdin and stdout, from anywhere."""
    return f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.wrong_candidates import {name}; {name}.serve()"


REFERENCE = [sys.executable, "-m", "conformance.reference"]


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def _cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Done:
    """The command, run in this process (the candidates it starts are processes of their own); ``env``: the
    variables it sees beside this process's. The one test that needs a bare environment starts a process itself."""
    from typer.testing import CliRunner

    from conformance.cli.app import app
    from conformance.cli.console import out

    width = out.width
    out.width = 400  # no table row wraps, as in a wide terminal
    try:
        with contextlib.chdir(cwd or Path.cwd()):
            done = CliRunner().invoke(app, list(args), env=env)
    finally:
        out.width = width
    return Done(done.exit_code, done.stdout, done.stderr)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}


def _pipe(program: list[str], requests: Path, reply: Path) -> None:
    with requests.open("rb") as stdin, reply.open("wb") as stdout:
        subprocess.run(program, stdin=stdin, stdout=stdout, check=True, timeout=120, env=_env())


@pytest.fixture(scope="module")
def wrong_report(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """A report of a wrong candidate run as a program (``exec:``) against the recorded oracle on reward.parse."""
    work = tmp_path_factory.mktemp("wrong")
    script = work / "wrong_runner.py"
    script.write_text(_serving("empty_by_strip"), encoding="utf-8")
    report = work / "wrong.jsonl"
    done = _cli("certify", "-c", f"exec:{sys.executable} {script}", "--oracle", "recorded", "-s", "reward.parse",
                "--report", str(report), "--progress", "none", cwd=work, env=_env())
    assert done.returncode == 1, done.stdout + done.stderr
    return work, report, done


def _sidecars(folder: Path) -> list[Reproducer]:
    return [Reproducer.model_validate_json(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_certify_prints_each_failures_repro_command(wrong_report):
    work, report, done = wrong_report
    failing = [json.loads(line)["id"] for line in report.read_text().splitlines()
               if json.loads(line).get("outcome") == "fail"]
    assert failing
    for case_id in failing:
        assert f"repro:     conformance repro {shlex.quote(str(report))} {case_id}" in done.stdout


def test_a_wrong_candidates_failure_is_reproduced_and_judged_without_an_oracle(wrong_report):
    work, report, _ = wrong_report
    done = _cli("repro", str(report), "--out", "out", cwd=work, env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    made = _sidecars(work / "out")
    failing = {json.loads(line)["id"] for line in report.read_text().splitlines()
               if json.loads(line).get("outcome") == "fail"}
    assert {m.id for m in made} == failing and all(m.outcome == "fail" for m in made)
    for m in made:
        assert m.id in done.stdout and m.how.check in done.stdout and m.how.run in done.stdout
        # the exec: candidate's own command, shell-quoted, with the reply beside the requests
        assert m.how.program == [sys.executable, str(work / "wrong_runner.py")]
        assert m.nan_policy == "any-nan-equal" and m.candidate.spec.startswith("exec:")
        assert m.oracle.result is not None and m.oracle.text.startswith("raises VerifierOutputParseError")
        lines = [REQUEST_ADAPTER.validate_json(line) for line in (work / "out" / m.requests).read_bytes().splitlines()]
        assert [line.cmd for line in lines] == ["start", "batch", "stop"]  # its handshake declared batch
        assert lines[1].items[0].surface == "reward.parse"

    first = made[0]
    # The printed command, run as a shell runs it, starts the wrong candidate and catches the same bug.
    subprocess.run(first.how.run, shell=True, cwd=work, check=True, env=_env(), timeout=120)
    wrong = _cli(*shlex.split(first.how.check)[1:], cwd=work, env=_env())
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "error-type at $: oracle VerifierOutputParseError / candidate RewardFileEmptyError" in wrong.stdout

    sidecar = work / "out" / f"{file_name(first.id)}.json"
    fixed = work / "fixed.reply.jsonl"
    _pipe(REFERENCE, work / "out" / first.requests, fixed)
    right = _cli("check-reply", str(sidecar), str(fixed), env=_env())
    assert right.returncode == 0, right.stdout + right.stderr
    assert "the reply conforms" in right.stdout

    only = work / "only.reply.jsonl"  # a candidate that writes the reply alone, no handshake
    only.write_bytes(fixed.read_bytes().splitlines(keepends=True)[1])
    assert _cli("check-reply", str(sidecar), str(only), env=_env()).returncode == 0


def test_a_reply_that_breaks_the_protocol_is_named_with_its_hint(wrong_report, tmp_path):
    work, report, _ = wrong_report
    assert _cli("repro", str(report), "--out", str(tmp_path), env=_env()).returncode == 0
    sidecar = sorted(tmp_path.glob("*.json"))[0]
    reply = tmp_path / "reply.jsonl"
    reply.write_text('{"protocol":1,"implementation":{"name":"x","version":"1","language":"go",'
                     '"surfaces":["reward.parse"],"batch":true}}\n'
                     '{"seq":1,"replies":[{"seq":7,"output":null}]}\n')
    done = _cli("check-reply", str(sidecar), str(reply), env=_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "protocol-error (wrong-seq)" in done.stdout and f"{reply}:2:" in done.stdout
    assert "echo the request's seq in its reply" in done.stdout  # the hint

    reply.write_text('{"seq":1,"output":null}\n')  # a run reply to a batch request
    done = _cli("check-reply", str(sidecar), str(reply), env=_env())
    assert done.returncode == 1 and "not a batch reply" in done.stdout

    reply.write_text('{"protocol":1,"implementation":{"name":"x","version":"1","language":"go",'
                     '"surfaces":["reward.parse"]}}\n')  # a handshake, then nothing
    done = _cli("check-reply", str(sidecar), str(reply), env=_env())
    assert done.returncode == 1 and "a handshake and no reply" in done.stdout and "flush stdout" in done.stdout


def test_an_unreadable_sidecar_or_reply_is_named_with_its_line(wrong_report, tmp_path):
    work, report, _ = wrong_report
    assert _cli("repro", str(report), "--out", str(tmp_path), env=_env()).returncode == 0
    sidecar = sorted(tmp_path.glob("*.json"))[0]
    text = sidecar.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"oracle"') + 20])
    done = _cli("check-reply", str(cut), str(sidecar), env=_env())
    assert done.returncode == 2, done.stdout + done.stderr
    line = text[: text.index('"oracle"')].count("\n") + 1
    assert f"{cut}:{line + 1}: not JSON" in done.stderr and "Traceback" not in done.stderr

    wrong_type = tmp_path / "wrong-type.json"
    wrong_type.write_text(text.replace('"seq": 1,', '"seq": "one",'))
    seq_line = text[: text.index('"seq": 1,')].count("\n") + 1
    done = _cli("check-reply", str(wrong_type), str(sidecar), env=_env())
    assert done.returncode == 2 and f"{wrong_type}:{seq_line}: not a reproducer (seq:" in done.stderr

    missing = tmp_path / "no-such-reply.jsonl"
    done = _cli("check-reply", str(sidecar), str(missing), env=_env())
    assert done.returncode == 2 and f"{missing}: cannot read" in done.stderr


def test_an_id_the_report_does_not_hold_is_a_usage_error(wrong_report, tmp_path):
    work, report, _ = wrong_report
    done = _cli("repro", str(report), "reward.parse::no-such-case", "--out", str(tmp_path / "out"), env=_env())
    assert done.returncode == 2
    assert "'reward.parse::no-such-case'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_conforming_case_asked_for_by_id_takes_its_input_from_the_corpus(wrong_report, tmp_path):
    work, report, _ = wrong_report
    passing = next(json.loads(line) for line in report.read_text().splitlines()
                   if json.loads(line).get("outcome") == "pass")
    assert "input" not in passing  # a passing line keeps no input: the corpus has it
    done = _cli("repro", str(report), passing["id"], "--out", str(tmp_path), env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    (made,) = _sidecars(tmp_path)
    reply = tmp_path / "reply.jsonl"
    _pipe(REFERENCE, tmp_path / made.requests, reply)
    assert _cli("check-reply", str(tmp_path / f"{file_name(made.id)}.json"), str(reply), env=_env()).returncode == 0


@pytest.mark.slow
def test_a_whole_job_failure_is_reproduced(tmp_path):
    report = tmp_path / "job.jsonl"
    done = _cli("certify", "-c", "tests.wrong_candidates:agent_timeout_unverified", "--oracle", "recorded",
                "-s", "job.result", "--report", str(report), "--progress", "none", cwd=ROOT, env=_env())
    assert done.returncode == 1, done.stdout + done.stderr
    done = _cli("repro", str(report), "--out", str(tmp_path / "out"), env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    made = _sidecars(tmp_path / "out")
    assert made and {m.surface for m in made} == {"job.result"}
    first = made[0]
    requests = tmp_path / "out" / first.requests
    lines = [REQUEST_ADAPTER.validate_json(line) for line in requests.read_bytes().splitlines()]
    assert [line.cmd for line in lines] == ["start", "run", "stop"]  # a whole job is never batched
    assert "tasks" in wire.decode(lines[1].input)
    assert first.how.program is None and first.how.note and "./my-runner <" in first.how.run  # ran in process
    sidecar = tmp_path / "out" / f"{file_name(first.id)}.json"
    for program, status in (([sys.executable, "-c", _serving("agent_timeout_unverified")], 1), (REFERENCE, 0)):
        reply = tmp_path / "reply.jsonl"
        _pipe(program, requests, reply)
        judged = _cli("check-reply", str(sidecar), str(reply), env=_env())
        assert judged.returncode == status, judged.stdout + judged.stderr


def _hostile_report(path: Path, ids: list[str]) -> Path:
    head = Header.model_validate({**header_line(), "candidate": {"spec": "exec:./my-runner --x"}})
    lines = [CaseLine(id=case_id, surface="reason.normalize", outcome="fail",
                      input=wire.encode({"kind": "type", "value": "ValueError", "attempt": 1}),
                      oracle=RaisedResult(raised="ValueError"), candidate=OutputResult(output=None))
             for case_id in ids]
    text = [dumps(head), *map(dumps, lines), dumps(Footer.model_validate(footer_line()))]
    path.write_text("\n".join(text) + "\n")
    return path


def test_a_hostile_case_id_never_becomes_a_path_outside_the_folder(tmp_path):
    ids = ["../../etc/passwd", "..", "/abs/olute", "-rf", "a\nb", "ÄÖ", "x::y", "X::Y", "x__y"]
    report = _hostile_report(tmp_path / "hostile.jsonl", ids)
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    before = {p for p in tmp_path.rglob("*")}
    done = _cli("repro", str(report), "--out", "out", cwd=work, env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    made = set(tmp_path.rglob("*")) - before
    assert made and all(path.parent == work / "out" for path in made)
    assert len(made) == 2 * len(ids)  # every id its own two files, none overwriting another's
    assert not any(path.name.startswith((".", "-")) for path in made)
    sidecars = _sidecars(work / "out")
    assert sorted(m.id for m in sidecars) == sorted(ids)
    for m in sidecars:  # pasted into a shell, each word of the printed commands arrives as it was
        assert shlex.split(m.how.run)[:2] == ["./my-runner", "--x"]
        assert shlex.split(m.how.check)[2].startswith("out/")


def test_names_are_unique_whatever_the_case_of_the_letters():
    names = Names()
    made = [names(i) for i in ("x::y", "X::Y", "x__y", "x_y", "x_y.reply")]
    files = {f"{name}{suffix}".lower() for name in made for suffix in Names.SUFFIXES}
    assert len(files) == 3 * len(made)
    assert file_name("../../etc") == "etc" and file_name("..") == "case"


def test_check_reply_creates_no_oracle_environment_and_needs_no_uv(wrong_report, tmp_path):
    work, report, _ = wrong_report
    assert _cli("repro", str(report), "--out", str(tmp_path / "out"), env=_env()).returncode == 0
    sidecar = sorted((tmp_path / "out").glob("*.json"))[0]
    made = Reproducer.model_validate_json(sidecar.read_text())
    reply = tmp_path / "reply.jsonl"
    _pipe(REFERENCE, tmp_path / "out" / made.requests, reply)
    cache, empty_path, home = tmp_path / "cache", tmp_path / "bin", tmp_path / "home"
    for folder in (cache, empty_path, home):
        folder.mkdir()
    env = {"PYTHONPATH": str(ROOT), "PATH": str(empty_path), "HOME": str(home), "HARBOR_CONFORMANCE_CACHE": str(cache),
           "XDG_CACHE_HOME": str(cache / "xdg"), "NO_PROXY": "*"}
    entry = "import sys; from conformance.cli.app import main; sys.argv = ['conformance', *sys.argv[1:]]; main()"
    done = subprocess.run([sys.executable, "-c", entry, "check-reply", str(sidecar), str(reply)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(cache.iterdir()) == [] and list(home.iterdir()) == []


def test_the_markdown_summary_and_the_site_show_the_repro_command(wrong_report, tmp_path):
    from conformance.report.markdown import summary
    from conformance.report.reader import ReportFile
    from conformance.site import build

    work, report, _ = wrong_report
    failing = [json.loads(line)["id"] for line in report.read_text().splitlines()
               if json.loads(line).get("outcome") == "fail"]
    text = summary(ReportFile(report).overview(), source=report)
    for case_id in failing:
        assert f"`` conformance repro {report} {case_id} ``" in text
    build([report], tmp_path / "site", None)
    pages = " ".join(page.read_text() for page in (tmp_path / "site").rglob("*.html"))
    for case_id in failing:
        assert f"<code>conformance repro {report} {case_id}</code>" in pages


def test_the_sidecar_schema_is_published():
    published = json.loads((ROOT / "conformance" / "schemas" / "reproducer.json").read_text())
    assert published["title"].startswith("harbor-conformance reproducer")
    assert {"id", "surface", "oracle", "candidate_reply", "nan_policy", "how"} <= set(published["properties"])
