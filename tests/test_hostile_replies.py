"""Replies built to break the reader: each is an outcome or a named protocol error, never the harness's end.

A lone surrogate anywhere in a reply, nesting past any parser's stack, a
number past any integer reader, a field of the wrong type: each candidate
below (tests/hostile_reply_candidate.py) answers like the reference
implementation except for one line, and the run must record that line's
case, go on with the next, and leave a whole report in UTF-8. Then a fuzzer
feeds arbitrary lines and values straight to the reply reader.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.connection import replies
from conformance.connection.base import ConnectError, check_started
from conformance.connection.connectors import parse
from conformance.connection.protocol import Implementation
from conformance.connection.replies import Reply
from conformance.core.compare import Mismatch, MismatchClass, Result, compare
from conformance.core.outcomes import ProtocolError, ReplyKind
from conformance.corpus import cases as case_corpus
from conformance.kit import wire
from conformance.report import reader as report
from conformance.report.model import (
    LINE_ADAPTER,
    CaseLine,
    Header,
    OutputResult,
    Party,
    RaisedResult,
    result_text,
)
from conformance.report.writer import dumps, new_header
from conformance.run import certification
from conformance.run.runner import Oracle, run_input
from tests import hostile as hostile_harness
from tests.budget import examples
from tests.report_lines import footer_line, header_line

HOSTILE = Path(__file__).resolve().parent / "hostile_reply_candidate.py"
GLOB = "reward.parse::txt-n*"  # a few cases; the first one (txt-nul-after-number) meets the attack


def hostile(run: str = "ok", start: str = "ok") -> str:
    return f"exec:{sys.executable} {HOSTILE} {run} {start}"


def certify(tmp_path: Path, candidate: str, **options: Any) -> certification.Run:
    options = {"oracle": "recorded", "case_globs": [GLOB], "no_generate": True, "timeout": 10.0,
               "timeout_multiplier": 0.3, **options}
    return certification.certify(certification.Options(candidate=candidate, **options), tmp_path / "report.jsonl")


def selected_ids(glob: str = GLOB) -> list[str]:
    loaded = certification.load_corpus(case_corpus.default_root())
    return [i.id for i in case_corpus.select(loaded, ids=[glob], harbor_version="0.13.1")]


def whole_report(path: Path, ids: list[str]) -> report.Report:
    """Valid UTF-8, every line JSON, the header, every selected case once, the footer."""
    for line in path.read_bytes().decode("utf-8").splitlines():
        json.loads(line)
    data = report.read(path)
    assert data.header is not None and data.footer is not None and not data.truncated
    assert [r.id for r in data.records] == ids
    assert data.footer.total == len(ids)
    return data


# (the first run request's reply, that case's outcome, its protocol error)
RUN_ATTACKS = [
    # lone surrogates: kept as received for the comparison, escaped in the report
    ("surrogate-output", "fail", None),
    ("surrogate-key", "fail", None),
    ("surrogate-raised", "fail", None),
    ("surrogate-skipped", "skip", None),
    ("surrogate-errored", "error", None),
    # nesting
    ("deep-128", "fail", None),  # at the limit: read, and compared
    ("deep-129", "protocol-error", "too-deep"),
    ("deep-900", "protocol-error", "too-deep"),
    ("deep-dicts", "protocol-error", "too-deep"),
    ("deep-5000", "protocol-error", "too-deep"),
    ("deep-unclosed", "protocol-error", "too-deep"),
    ("deep-100000", "protocol-error", "oversized-line"),  # 100,000 values: refused before it is even read whole
    ("deep-elsewhere", "protocol-error", "too-deep"),
    # numbers
    ("huge-seq", "protocol-error", "number-too-large"),
    ("huge-float", "protocol-error", "number-too-large"),
    # field types
    ("traceback-not-string", "protocol-error", "invalid-reply"),
    ("message-not-string", "protocol-error", "invalid-reply"),
]


# The protocol errors these tests provoke (tests/test_hostile_candidates.py checks every name is provoked):
# schema-violation in smoke, below.
PROVOKED = {error for _, _, error in RUN_ATTACKS if error} | {"schema-violation"}


# One attack of each kind in the offline tier; every one with -m slow (each is a whole run through a process).
QUICK_ATTACKS = {"surrogate-output", "deep-129", "huge-float", "message-not-string"}


@pytest.mark.parametrize(("attack", "outcome", "error"), [
    attack if attack[0] in QUICK_ATTACKS else pytest.param(*attack, marks=pytest.mark.slow) for attack in RUN_ATTACKS])
def test_each_hostile_reply_is_its_cases_outcome_and_the_run_goes_on(tmp_path, attack, outcome, error):
    run = certify(tmp_path, hostile(attack))
    data = whole_report(tmp_path / "report.jsonl", selected_ids())
    first, *rest = data.records
    assert (first.outcome, first.protocol_error) == (outcome, error), first.detail
    assert [r.outcome for r in rest] == ["pass"] * len(rest)  # the process was restarted where it was killed
    assert data.footer.protocol_errors == ({error: 1} if error else {})
    assert not run.conforms and data.footer.conforms is False


def test_a_lone_surrogate_is_compared_as_received_and_written_as_its_escape(tmp_path):
    run = certify(tmp_path, hostile("surrogate-output"))
    assert run.records[0].candidate == OutputResult(output="\ud800")  # what the comparison saw
    data = report.read(tmp_path / "report.jsonl")
    assert data.records[0].candidate == OutputResult(output="\\ud800")  # the six characters of its escape
    assert "'\\ud800'" in data.records[0].mismatches[0].actual  # the repr, as the comparison rendered it


def _certified(folder: Path, attack: str) -> Path:
    certify(folder, hostile(attack))
    return folder / "report.jsonl"


def test_every_text_field_of_a_reply_is_escaped_in_the_report(tmp_path):
    raised = certify(tmp_path / "raised", hostile("surrogate-raised")).records[0]
    assert raised.candidate.raised == "Value\ud800Error"
    on_disk = report.read(tmp_path / "raised" / "report.jsonl").records[0]
    assert (on_disk.candidate.raised, on_disk.candidate.message) == ("Value\\ud800Error", "bad \\udc80")
    errored = report.read(_certified(tmp_path / "errored", "surrogate-errored")).records[0]
    assert errored.detail == "oops \\ud800\nat line 1\n  \\udbff"
    skipped = report.read(_certified(tmp_path / "skipped", "surrogate-skipped")).records[0]
    assert skipped.detail == "not \\ud83d served"


def test_two_keys_the_escaping_would_make_equal_stay_two(tmp_path):
    """'\\udfff' (a lone surrogate) and '\\\\udfff' (six characters) are two keys; written, the escaped one gets
    one more backslash, so the stored output still decodes, both keys in their order."""
    run = certify(tmp_path, hostile("surrogate-key"))
    assert run.records[0].candidate.to_result().value == {"\udfff": None, "\\udfff": None}
    data = report.read(tmp_path / "report.jsonl")
    assert data.records[0].candidate.to_result().value == {"\\\\udfff": None, "\\udfff": None}


def test_keys_stay_distinct_in_every_object_and_wire_dict_of_a_line():
    keys = ["\ud800", "\\ud800", "\\\\ud800", "\ud800x", "\\ud800x"]
    line = CaseLine(id="x", surface="reward.parse", outcome="fail", detail="\udc80",
                    candidate=OutputResult(output={"dict": [[key, None] for key in keys]}))
    back = LINE_ADAPTER.validate_python(json.loads(dumps(line)))
    stored = [key for key, _ in back.candidate.output["dict"]]
    assert len(set(stored)) == len(keys) and back.detail == "\\udc80"
    assert stored[1:3] == keys[1:3] and stored[4] == keys[4]  # keys with no lone surrogate are left alone
    header = new_header(oracle=Party(spec="recorded"), nan_policy="any-nan-equal", surfaces=[], cases_root="cases",
                        candidate=Party(spec="x", implementation=Implementation(
                            name="n", version="v", language="l", surfaces=[],
                            dependencies={"\udfff": "1", "\\udfff": "2"})))
    dependencies = LINE_ADAPTER.validate_python(json.loads(dumps(header))).candidate.implementation.dependencies
    assert dependencies == {"\\\\udfff": "1", "\\udfff": "2"}


def test_a_line_made_again_to_be_stored_is_written_as_it_was_otherwise():
    """U+FFFD (e.g. in a stderr tail read with replacement) sends a line the long way; it must come out the same."""
    mismatch = Mismatch(MismatchClass.ULP, "$['reward']", "1.0", "1.0000000000000002", ulps=1,
                        expected_bits="3ff0000000000000", actual_bits="3ff0000000000001")
    lines = [
        CaseLine(id="a\ufffd", surface="reward.parse", outcome="xfail", input={"dict": [["k", {"float": "0" * 16}]]},
                 oracle=OutputResult(output=None), candidate=RaisedResult(raised="E", message="m\ufffd"),
                 mismatches=[mismatch], recording="agrees", detail="crash\ufffd", seconds=0.5,
                 expected_divergence={"outcome": "fail", "classes": ["ulp"], "reason": "r"}),
        LINE_ADAPTER.validate_python(header_line(argv=["\ufffd"])),
        LINE_ADAPTER.validate_python(footer_line(outcomes={"pass": 1}, by_surface={"reward.parse": {"pass": 1}},
                                                 protocol_errors={"too-deep": 1}, candidate_problems=["\ufffd"])),
    ]
    for line in lines:
        assert dumps(line) == json.dumps(line.to_json(), ensure_ascii=False, allow_nan=False)


def _corpus(tmp_path: Path) -> Path:
    """One reward.parse case whose recorded output holds the six characters \\ud800, not a lone surrogate."""
    folder = tmp_path / "cases" / "reward.parse"
    folder.mkdir(parents=True)
    (folder / "escape.yaml").write_text(
        "surface: reward.parse\n"
        "cases:\n"
        "  - id: reward.parse::escape-text\n"
        "    description: a recorded string holding a backslash, u, d, 8, 0, 0\n"
        "    spec: tests/test_hostile_replies.py\n"
        "    input: {reward_txt: !bytes \"1\"}\n"
        "    expect: {output: {\"reward\": '\\ud800'}}\n", encoding="utf-8")
    return tmp_path / "cases"


@pytest.mark.parametrize(("attack", "outcome"), [("reward-surrogate", "fail"), ("reward-escape-text", "pass")])
def test_a_lone_surrogate_never_equals_the_text_of_its_escape(tmp_path, attack, outcome):
    run = certify(tmp_path, hostile(attack), cases_root=_corpus(tmp_path), case_globs=None)
    data = whole_report(tmp_path / "report.jsonl", ["reward.parse::escape-text"])
    assert [r.outcome for r in run.records] == [r.outcome for r in data.records] == [outcome]
    if outcome == "fail":
        (mismatch,) = data.records[0].mismatches
        assert (mismatch.cls, mismatch.expected, mismatch.actual) == ("value", "'\\\\ud800'", "'\\ud800'")


def test_a_report_with_an_escaped_line_is_resumed(tmp_path, monkeypatch):
    monkeypatch.setenv("HOSTILE_STATE", str(tmp_path))  # the resumed run's process does not attack again
    certify(tmp_path, hostile("surrogate-output"))
    path = tmp_path / "report.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # the header and two cases: a killed run
    certify(tmp_path, hostile("surrogate-output"), resume=True)
    data = whole_report(path, selected_ids())
    assert path.read_text(encoding="utf-8").splitlines()[1] == lines[1]  # kept as it was written
    assert data.records[0].candidate == OutputResult(output="\\ud800")
    assert [r.outcome for r in data.records[1:]] == ["pass"] * (len(selected_ids()) - 1)


# -- the handshake ------------------------------------------------------------------------


def test_a_lone_surrogate_in_the_handshake_is_written_escaped(tmp_path):
    run = certify(tmp_path, hostile(start="surrogate-name"))
    assert run.candidate_implementation.name == "ref\ud800erence"
    data = whole_report(tmp_path / "report.jsonl", selected_ids())
    implementation = data.header.candidate.implementation
    assert (implementation.name, implementation.version.endswith("\\udfff")) == ("ref\\ud800erence", True)
    assert {r.outcome for r in data.records} == {"pass"} and run.conforms  # a name is not compared


@pytest.mark.parametrize(("attack", "error"), [
    ("deep", "too-deep"), ("deep-scope", "too-deep"), ("huge-protocol", "number-too-large")])
def test_a_handshake_past_the_bounds_is_a_candidate_that_did_not_start(tmp_path, attack, error):
    run = certify(tmp_path, hostile(start=attack))
    data = whole_report(tmp_path / "report.jsonl", selected_ids())
    (problem,) = data.candidate_problems
    assert (problem.stage, problem.outcome, problem.protocol_error) == ("start", "protocol-error", error)
    assert {r.outcome for r in data.records} == {"broken"} and not run.conforms


# -- the command ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("run_attack", "start_attack", "status", "first"), [
    ("surrogate-key", "ok", 1, ("fail", None)),
    ("surrogate-errored", "ok", 1, ("error", None)),
    ("deep-5000", "ok", 1, ("protocol-error", "too-deep")),
    ("huge-seq", "ok", 1, ("protocol-error", "number-too-large")),
    ("traceback-not-string", "ok", 1, ("protocol-error", "invalid-reply")),
    ("seq-is-bool", "ok", 1, ("protocol-error", "wrong-seq")),  # the run's first request is seq 1
    ("ok", "surrogate-name", 0, ("pass", None)),
    ("ok", "deep", 1, ("broken", None)),
])
def test_the_command_records_it_and_ends_with_its_verdict(tmp_path, run_attack, start_attack, status, first):
    path = tmp_path / "report.jsonl"
    # The candidate's command line names this test's folder (an argument it ignores), to find what it left running.
    spec = f"{hostile(run_attack, start_attack)} {tmp_path}"
    command = [sys.executable, "-c", hostile_harness.CLI, "certify", "-c", spec,
               "--oracle", "recorded", "--case", GLOB, "--no-generate", "--timeout-multiplier", "0.3",
               "--report", str(path), "--markdown", str(tmp_path / "r.md"), "--junit", str(tmp_path / "r.xml"),
               "--progress", "lines"]
    done = subprocess.run(command, capture_output=True, timeout=300)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == status, stderr
    assert "Traceback" not in stderr
    assert int(stderr.rsplit("maxrss-kib", 1)[1]) / 1024 < hostile_harness.RSS_LIMIT_MB
    assert hostile_harness.processes_naming(str(tmp_path)) == []
    data = whole_report(path, selected_ids())
    assert (data.records[0].outcome, data.records[0].protocol_error) == first
    summary = subprocess.run([sys.executable, "-m", "conformance", "summary", str(path)], capture_output=True,
                             timeout=120)
    assert summary.returncode == status and b"Traceback" not in summary.stderr
    assert (tmp_path / "r.md").read_text(encoding="utf-8") and (tmp_path / "r.xml").read_text(encoding="utf-8")


SMOKE_ATTACKS = [
    ("surrogate-output", "ok", "run", "lone surrogate", "no lone surrogate escapes"),
    ("surrogate-errored", "ok", "run", "errored/message", "Unicode text"),
    ("deep-5000", "ok", "run", "too-deep", "at most 128 levels deep"),
    ("huge-seq", "ok", "run", "number-too-large", "at most 4300 characters"),
    ("traceback-not-string", "ok", "run", "errored.traceback must be a string", "their fields strings"),
    ("ok", "surrogate-name", "handshake", "implementation/name", "every string Unicode text"),
    ("ok", "deep", "handshake", "too-deep", "at most 128 levels deep"),
    ("ok", "huge-protocol", "handshake", "number-too-large", "at most 4300 characters"),
]


# A run attack and a handshake attack in the offline tier; every one with -m slow.
@pytest.mark.parametrize(("run_attack", "start_attack", "step", "said", "hint"), [
    attack if i in (0, 5) else pytest.param(*attack, marks=pytest.mark.slow) for i, attack in enumerate(SMOKE_ATTACKS)])
def test_smoke_fails_each_with_what_to_do(run_attack, start_attack, step, said, hint):
    result = CliRunner().invoke(app, ["smoke", "-c", hostile(run_attack, start_attack), "--timeout", "10",
                                      "--timeout-multiplier", "0.3"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    (failed,) = [i for i, line in enumerate(lines) if line.startswith("FAIL")]
    assert lines[failed].startswith(f"FAIL {step}") and said in lines[failed]
    assert lines[failed + 1].lstrip().startswith("->") and hint in lines[failed + 1]


# -- the bounds, and the values at them ----------------------------------------------------


def test_brackets_in_strings_do_not_count_and_unclosed_ones_do():
    assert not wire.nesting_exceeds('["' + "[" * 1000 + '"]')
    assert not wire.nesting_exceeds('["\\"' + "[" * 1000 + '"]')  # an escaped quote does not end the string
    assert wire.nesting_exceeds('["\\\\"' + ", [" * 1000)  # an escaped backslash does not escape the quote
    assert wire.nesting_exceeds("[" * 129)
    assert not wire.nesting_exceeds("[" * 128 + "]" * 128)
    assert not wire.nesting_exceeds("[]" * 10_000)
    assert wire.nesting_exceeds("{" + '"a": {' * 128 + "}" * 129)


def test_the_reader_refuses_any_depth_itself():
    """Whatever the transport lets through: 100,000 levels, closed or not, is too-deep, not a RecursionError."""
    for tail in (b"]" * 100_000 + b"}", b""):
        _, problem = replies.parse_line(b'{"seq": 1, "output": ' + b"[" * 100_000 + tail)
        assert problem is not None and problem.error == "too-deep"


def test_the_deepest_value_read_is_compared_written_and_read_back():
    def nested(leaf: Any) -> str:
        return "[" * 127 + json.dumps(leaf) + "]" * 127

    left, right = (replies.parse_line(f'{{"seq": 1, "output": {nested(leaf)}}}'.encode()) for leaf in ("a", "b"))
    assert left[1] is None and right[1] is None
    expected = Result.of_value(wire.decode(left[0]["output"]), left[0]["output"])
    actual = Result.of_value(wire.decode(right[0]["output"]), right[0]["output"])
    (mismatch,) = compare(expected, actual)
    assert mismatch.path == "$" + "[0]" * 127 and (mismatch.expected, mismatch.actual) == ("'a'", "'b'")
    line = CaseLine(id="x", surface="reward.parse", outcome="fail", oracle=OutputResult(output=left[0]["output"]),
                    candidate=OutputResult(output=right[0]["output"]), mismatches=[mismatch])
    assert LINE_ADAPTER.validate_python(json.loads(dumps(line))) == line


def test_a_boolean_is_no_seq():
    assert replies.interpret({"seq": 1, "output": None}, 1).kind == "output"
    assert replies.interpret({"seq": True, "output": None}, 1).error == "wrong-seq"


def test_an_in_process_output_is_held_to_the_same_depth():
    cycle: list[Any] = []
    cycle.append(cycle)
    for output in (cycle, _nested_list(10_000)):
        reply = replies.interpret({"seq": 1, "output": output}, 1)
        assert (reply.kind, reply.error) == ("protocol-error", "too-deep")


def _nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_the_number_bound_holds_under_a_lower_digit_limit():
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        _, problem = replies.parse_line(b'{"seq": ' + b"9" * 1000 + b', "output": null}')
        reply = replies.interpret({"seq": 10**1000, "output": None}, 1)
    finally:
        sys.set_int_max_str_digits(limit)
    assert problem.error == "number-too-large"
    assert reply.error == "wrong-seq" and "too large to show" in reply.detail


# -- the fuzzer ------------------------------------------------------------------------------
#
# Arbitrary lines (and, in process, arbitrary values) go to the reader the transports use, then through the
# runner into a report line, written and read back: each must come out a Reply and a line, and nothing raise.

SEQ = 7
IMPLEMENTATION = Implementation(name="fuzz", version="0", language="python", surfaces=["reward.parse"])
FUZZ = settings(max_examples=examples(250), derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Replying:
    """A connection that answers every request with one reply: the runner's side of a fuzzed line."""

    broken = ""
    batch_fallbacks: list[str] = []
    implementation = IMPLEMENTATION

    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    def run(self, seq: int, surface: str, input_wire: Any) -> Reply:
        return self.reply

    def run_batch(self, items: list[Any]) -> list[Reply | None]:
        return [None] * len(items)


def recorded_as_a_case(reply: Reply) -> None:
    """The reply is a Reply, becomes a case line (compared with reward 1.0), is written and read back."""
    assert isinstance(reply, Reply)
    if reply.kind is ReplyKind.PROTOCOL_ERROR:
        assert reply.error in set(ProtocolError) and reply.detail
    else:
        assert reply.kind in ("output", "raised", "skipped", "errored") and reply.error is None
    line = run_input("reward.parse::fuzz", "reward.parse", {"reward_txt": b"1"}, Replying(reply), Oracle(None),
                     recorded=Result.of_value({"reward": 1.0}))
    text = dumps(line)
    text.encode("utf-8")
    back = LINE_ADAPTER.validate_python(json.loads(text))
    assert isinstance(back, CaseLine) and back.outcome == line.outcome
    for result in (back.oracle, back.candidate):  # its wire values still decode, as a report reader asks
        if isinstance(result, OutputResult):
            result.to_result()
    back.first_difference(), result_text(back.candidate)  # noqa: B018 - shown without raising


def read(raw: bytes, validate: bool) -> Reply:
    """What the subprocess transport makes of one stdout line."""
    message, problem = replies.parse_line(raw)
    if problem is not None:
        return problem
    return replies.checked(message, SEQ, "reward.parse", IMPLEMENTATION, answered={3}, validate=validate)


SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"])
TRICKY = st.sampled_from(['"', "\\", "[", "{", "]", "}", "\\ud800", "\x00", "\n", "\u2028", "\ufeff"])
texts = st.lists(st.one_of(st.characters(), SURROGATES, TRICKY), max_size=6).map("".join)


def _string(text: str, ascii_only: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii_only)


digits = st.integers(1, 6000).flatmap(lambda n: st.sampled_from(["9" * n, "-" + "1" * n, "0." + "5" * n,
                                                                  "1e" + "9" * min(n, 400)]))
numbers = st.one_of(st.integers().map(str), digits, st.sampled_from(["NaN", "-Infinity", "1e999", "-0.0", "01"]))
strings = st.builds(_string, texts, st.booleans())
scalars = st.one_of(st.sampled_from(["null", "true", "false"]), numbers, strings)


def _array(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"


# (extend functions are named: Hypothesis cannot read a multi-line lambda's use of its argument, and warns)
def _json_containers(inner):
    return st.one_of(
        st.lists(inner, max_size=4).map(_array),
        st.lists(st.tuples(strings, inner), max_size=4).map(_object),
        st.lists(st.tuples(st.just('"dict"'), st.lists(st.lists(inner, min_size=2, max_size=2).map(_array),
                                                        max_size=3).map(_array)), min_size=1, max_size=1).map(_object),
    )


json_texts = st.recursive(scalars, _json_containers, max_leaves=12)


@st.composite
def deep(draw: st.DrawFn) -> str:
    """A value nested up to far past the limit, closed or not."""
    depth = draw(st.one_of(st.integers(120, 140), st.integers(0, 3000)))
    opening, closing = draw(st.sampled_from([("[", "]"), ('{"dict": [["k", ', "]]}"), ('{"a": ', "}")]))
    inner = draw(scalars)
    return opening * depth + inner + (closing * depth if draw(st.booleans()) else "")


def usually(draw: st.DrawFn) -> bool:
    """True nine times in ten, and in the simplest examples (Hypothesis starts from a list's first element)."""
    return draw(st.sampled_from([True] * 9 + [False]))


def _wire_text(value: Any, depth: int, ascii_only: bool) -> str:
    encoded = wire.encode(value)
    for _ in range(depth):
        encoded = [encoded]
    return json.dumps(encoded, ensure_ascii=ascii_only)

def _python_containers(inner):
    return st.one_of(st.lists(inner, max_size=3),
                     st.dictionaries(st.one_of(python_texts, st.integers()), inner, max_size=3))



# Well-formed wire values (so most replies are answers), holding what is hard: lone surrogates in strings and
# keys, big ints, every float, bytes; now and then nested to about the limit.
python_texts = st.one_of(texts, st.sampled_from(["reward", "\ud800", "\\ud800"]))
wire_texts = st.builds(
    _wire_text,
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(10**4000), 10**4000), st.floats(), python_texts,
                           st.binary(max_size=4)),
                 _python_containers, max_leaves=8),
    st.sampled_from([0] * 6 + [120, 125, 126, 127, 128]), st.booleans())
values = st.one_of(wire_texts, wire_texts, json_texts, deep())
seqs = st.one_of(*[st.just(str(SEQ))] * 6, st.sampled_from(["3", "7.0", "true", '"7"']), numbers)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, str]:
    """One answer: output, raised, skipped, errored or something else; its fields mostly strings."""
    kind = draw(st.sampled_from(["output", "raised", "skipped", "errored", "other"]))
    field = st.one_of(strings, strings, strings, values)
    if kind == "output":
        return '"output"', draw(values)
    if kind == "other":
        return draw(strings), draw(values)
    names = {"raised": ["type", "message"], "skipped": ["reason"], "errored": ["message", "traceback"]}[kind]
    pairs = [(json.dumps(name), draw(field)) for name in names if usually(draw)]
    return json.dumps(kind), _object(pairs) if usually(draw) else draw(values)


@st.composite
def messages(draw: st.DrawFn) -> str:
    pairs = [("\"seq\"", draw(seqs))] if usually(draw) else []
    answers = draw(st.sampled_from([1] * 8 + [0, 2]))  # one answer, as a reply has, or none, or two
    pairs += draw(st.lists(bodies(), min_size=answers, max_size=answers))
    return _object(draw(st.permutations(pairs)))


@st.composite
def answers(draw: st.DrawFn) -> str:
    """A reply of the right shape to the right request: the hostile part is in its strings and values."""
    kind = draw(st.sampled_from(["output", "raised", "skipped", "errored"]))
    if kind == "output":
        body = draw(wire_texts)
    else:
        names = {"raised": ["type", "message"], "skipped": ["reason"], "errored": ["message", "traceback"]}[kind]
        body = _object([(json.dumps(name), draw(strings)) for name in names])
    return _object([('"seq"', str(SEQ)), (json.dumps(kind), body)])


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A reply line as a candidate might write it, then perhaps damaged."""
    text = draw(st.one_of(answers(), messages(), values))
    raw = text.encode("utf-8", "surrogatepass")  # a raw lone surrogate: encoded as UTF-8 would if it could
    damage = draw(st.sampled_from(["none"] * 12 + ["cut", "insert", "bom", "utf-16", "cr", "bytes"]))
    if damage == "cut":
        raw = raw[:draw(st.integers(0, len(raw)))]
    elif damage == "insert":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif damage == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif damage == "utf-16":
        raw = text.encode("utf-16", "surrogatepass")
    elif damage == "cr":
        raw += b"\r"
    elif damage == "bytes":
        raw = draw(st.binary(max_size=64))
    return raw + b"\n"


@FUZZ
@given(lines(), st.booleans())
def test_any_line_is_a_reply_and_a_recorded_case(raw, validate):
    recorded_as_a_case(read(raw, validate))


@FUZZ
@given(answers(), st.booleans())
def test_any_answer_is_a_reply_and_a_recorded_case(text, validate):
    """Well-formed replies (which arbitrary lines seldom are): lone surrogates, big ints, depth at the limit."""
    recorded_as_a_case(read(text.encode("utf-8", "surrogatepass") + b"\n", validate))


python_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts, st.binary(max_size=4),
                           st.sampled_from([5000, -4400, 700]).map(lambda n: (n > 0 or -1) * 10 ** abs(n)))
def _python_value_containers(inner):
    return st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(texts, st.integers()), inner, max_size=3),
        st.tuples(inner), st.builds(lambda v: {"dict": [[v, v]]}, inner), st.builds(lambda v: {"int": v}, inner),
        st.integers(120, 3000).map(_nested_list))


python_values = st.recursive(python_scalars, _python_value_containers, max_leaves=8)
python_replies = st.one_of(python_values, st.fixed_dictionaries(
    {"seq": st.one_of(st.just(SEQ), python_values)},
    optional={"output": python_values, "raised": python_values, "skipped": python_values, "errored": python_values,
              "extra": python_values}), st.builds(
    lambda kind, body: {"seq": SEQ, kind: body}, st.sampled_from(["raised", "skipped", "errored"]),
    st.dictionaries(st.sampled_from(["type", "message", "reason", "traceback"]), python_values, max_size=3)))


@FUZZ
@given(python_replies, st.booleans())
def test_any_value_in_process_is_a_reply_and_a_recorded_case(message, validate):
    recorded_as_a_case(replies.checked(message, SEQ, "reward.parse", IMPLEMENTATION, validate=validate))


@st.composite
def handshakes(draw: st.DrawFn) -> bytes:
    """A reply to start: mostly well typed, with lone surrogates in its strings; any field perhaps wrong."""
    typed = {
        "name": strings, "version": strings, "language": strings,
        "surfaces": st.lists(strings, max_size=3).map(_array),
        "dependencies": st.lists(st.tuples(strings, strings), max_size=2).map(_object),
        "scope": st.lists(st.tuples(strings, st.lists(st.tuples(strings, st.lists(scalars, max_size=2).map(_array)),
                                                      max_size=2).map(_object)), max_size=2).map(_object),
    }
    implementation = []
    for name, well_typed in typed.items():
        if usually(draw):  # most often present, most often well typed
            implementation.append((json.dumps(name), draw(well_typed if usually(draw) else values)))
    protocol = draw(st.sampled_from(["1"] * 8 + ["2", "true"]) | numbers)
    message = _object([('"protocol"', protocol),
                       ('"implementation"', _object(implementation) if usually(draw) else draw(values))])
    return message.encode("utf-8", "surrogatepass") + b"\n"


@pytest.mark.slow
@FUZZ
@given(handshakes(), st.booleans())
def test_any_handshake_is_an_implementation_or_a_failed_start_and_a_header(raw, validate):
    message, problem = replies.parse_line(raw)
    if problem is not None:
        assert problem.error in set(ProtocolError)
        return
    try:
        implementation = check_started(message, parse("reference"), validate)
    except ConnectError as e:
        assert str(e)
        return
    header = new_header(oracle=Party(spec="recorded"), candidate=Party(spec="x", implementation=implementation),
                        nan_policy="any-nan-equal", surfaces=[], cases_root="cases")
    text = dumps(header)
    text.encode("utf-8")
    assert isinstance(LINE_ADAPTER.validate_python(json.loads(text)), Header)
