"""Reports made by hand for the site's tests: a gate report of a harbor release, and small candidate reports.

A real gate report needs a second harbor release's environment; this one is
built from the report's model classes, from the corpus's recorded results
(the baseline's side) and the release's committed expectation file (the
reasons), so it looks as the gate writes one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.connection.protocol import Implementation
from conformance.core.compare import Mismatch, MismatchClass
from conformance.core.features import Gate
from conformance.core.outcomes import Outcome
from conformance.corpus import cases
from conformance.kit import wire
from conformance.report.model import (
    CaseLine,
    ExpectedDivergence,
    Footer,
    GeneratedLine,
    Generation,
    Header,
    OutputResult,
    Party,
    RaisedResult,
    result_line,
)
from conformance.run import expectations

REPO = Path(__file__).resolve().parent.parent
RELEASE = "0.24.0"
EXPECTATIONS = REPO / "oracles" / "expectations" / f"harbor-{RELEASE}.yaml"
# Listed in the release's expectation file: four reward.parse changes sharing one reason, one multi_step.reward
# change with another.
LISTED = ["reward.parse::json-list-value", "reward.parse::json-nan-token", "reward.parse::txt-infinity-word",
          "reward.parse::json-null-value", "multi_step.reward::timeout-is-plain-timeouterror"]
UNLISTED = "reward.parse::json-true"  # no entry: the gate fails on it
PASSING = ["reward.parse::txt-utf16-as-powershell-writes", "reward.parse::json-utf16",
           "multi_step.reward::abort-after-first-step"]


def implementation(name: str, version: str, language: str = "rust") -> Implementation:
    """What a candidate's handshake says of it."""
    return Implementation(name=name, version=version, language=language, surfaces=["reward.parse"])


def header(candidate: str, oracle: str = "recorded", *, surfaces: list[str], started_at: str,
           named: Implementation | None = None, **fields: Any) -> Header:
    """A header; ``named``: the candidate's handshake (None: a candidate that never started)."""
    return Header(suite="harbor-conformance", suite_version="0.1.0", protocol=1, comparator="1.1",
                  nan_policy="any-nan-equal", oracle=Party(spec=oracle),
                  candidate=Party(spec=candidate, implementation=named), surfaces=surfaces,
                  cases_root=str(REPO / "cases"), python="3.11", argv=[], started_at=started_at, **fields)


def footer(lines: Sequence[CaseLine], conforms: bool) -> Footer:
    counted = [line for line in lines if not line.generated]
    by_surface: dict[str, Counter[Outcome]] = {}
    for line in counted:
        by_surface.setdefault(line.surface, Counter())[line.outcome] += 1
    return Footer(finished_at="2026-01-02T00:00:00+00:00", total=len(counted),
                  outcomes=dict(Counter(line.outcome for line in counted)),
                  by_surface={s: dict(c) for s, c in by_surface.items()}, conforms=conforms)


def write(path: Path, head: Header, lines: Sequence[CaseLine | GeneratedLine], end: Footer | None) -> Path:
    rows = [head.to_json(), *(line.to_json() for line in lines)] + ([end.to_json()] if end is not None else [])
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def corpus() -> dict[str, cases.LoadedCase]:
    return {item.id: item for item in cases.load_corpus(REPO / "cases")}


def _changed(item: cases.LoadedCase, entry: expectations.KnownDivergence | None) -> CaseLine:
    expect = item.case.expect
    assert expect is not None, item.id
    oracle = expect.result()
    if item.case.surface == "multi_step.reward":
        value = wire.decode(wire.encode(oracle.value))
        value["steps"][0]["exception_type"] = "VerifierTimeoutError"
        candidate: OutputResult | RaisedResult = OutputResult(output=wire.encode(value))
        mismatch = Mismatch(MismatchClass.VALUE, "$['steps'][0]['exception_type']", "'TimeoutError'",
                            "'VerifierTimeoutError'")
    else:
        candidate = RaisedResult(raised="VerifierOutputParseError")
        if oracle.raised is not None:
            mismatch = Mismatch(MismatchClass.ERROR_TYPE, "$", oracle.raised, "VerifierOutputParseError")
        else:
            mismatch = Mismatch(MismatchClass.ERROR_VS_VALUE, "$", repr(oracle.value), "VerifierOutputParseError")
    expected = None
    if entry is not None:
        expected = ExpectedDivergence(outcome=Outcome.FAIL, classes=[mismatch.cls], reason=entry.reason,
                                      link=entry.link)
    return CaseLine(id=item.id, surface=item.case.surface, outcome=Outcome.XFAIL if entry else Outcome.FAIL,
                    input=wire.encode(item.case.input), oracle=result_line(oracle), candidate=candidate,
                    mismatches=[mismatch], expected_divergence=expected)


def gate_report(path: Path, known: dict[str, cases.LoadedCase] | None = None) -> Path:
    """harbor RELEASE against harbor 0.13.1: LISTED as xfail with the expectation file's reasons, UNLISTED as a
    failure, PASSING as passes."""
    known = known if known is not None else corpus()
    entries = {entry.id: entry for entry in expectations.load(EXPECTATIONS).divergences}
    lines = [_changed(known[case_id], entries[case_id]) for case_id in LISTED]
    lines.append(_changed(known[UNLISTED], None))
    for case_id in PASSING:
        recorded = known[case_id].case.expect
        assert recorded is not None, case_id
        lines.append(CaseLine(id=case_id, surface=known[case_id].case.surface, outcome=Outcome.PASS,
                              oracle=result_line(recorded.result()), candidate=result_line(recorded.result())))
    head = header(f"harbor=={RELEASE}", "harbor==0.13.1", surfaces=["multi_step.reward", "reward.parse"],
                  started_at="2026-01-03T00:00:00+00:00", expectations=str(EXPECTATIONS))
    return write(path, head, lines, footer(lines, conforms=False))


# A candidate whose every text tries to become markup: its output, the input it was given, a detail, a mismatch's
# side, its spec, its name, version and language, a surface's name, a start time; and a gate report whose
# expectation entry links to a script.
HOSTILE = '</pre><script>alert("owned")</script><img src=x onerror=alert(1)>'


def hostile_reports(folder: Path) -> list[Path]:
    output = OutputResult(output=wire.encode({"reward": HOSTILE}))
    lines = [
        CaseLine(id="reward.parse::json-true", surface="reward.parse", outcome=Outcome.FAIL, candidate=output,
                 input=wire.encode({"reward_txt": HOSTILE}), oracle=OutputResult(output=wire.encode({"reward": 1.0})),
                 detail=HOSTILE, mismatches=[Mismatch(MismatchClass.TYPE, "$['reward']", "1.0", repr(HOSTILE))]),
        CaseLine(id=f"reward.parse::gen-{HOSTILE}", surface="reward.parse", outcome=Outcome.ERROR, origin="generated",
                 input=wire.encode(HOSTILE), detail=HOSTILE),
    ]
    named = Implementation(name=HOSTILE, version=HOSTILE, language=HOSTILE, surfaces=[])
    candidate = write(folder / "hostile.jsonl", header(f"exec:{HOSTILE}", surfaces=["reward.parse", HOSTILE],
                                                      started_at=HOSTILE, named=named),
                      lines, footer(lines, conforms=False))
    gate = [CaseLine(id="reward.parse::json-true", surface="reward.parse", outcome=Outcome.XFAIL, candidate=output,
                     input=wire.encode(HOSTILE), expected_divergence=ExpectedDivergence(
                         outcome=Outcome.FAIL, reason=HOSTILE, link="javascript:alert(1)"))]
    release = write(folder / "hostile-gate.jsonl", header("harbor==9.9.9", "harbor==0.13.1", surfaces=["reward.parse"],
                                                          started_at="2026-01-01T00:00:00Z"), gate, None)
    return [candidate, release]


# The ULP buckets as the report's model documents them (UlpDistances): each runs up to its top; far is a float-far
# mismatch, or one beyond 2^20.
BUCKET_TOPS = [("1", 1), ("2-4", 4), ("5-16", 16), ("17-2^10", 2**10), ("2^10-2^20", 2**20)]
BUCKET_NAMES = [name for name, _ in BUCKET_TOPS] + ["far"]


def ulp_bucket(mismatch: dict[str, Any]) -> str:
    """The bucket of a report line's mismatch (as JSON) that has a distance."""
    if mismatch["cls"] == "float-far" or mismatch["ulps"] > 2**20:
        return "far"
    return next(name for name, top in BUCKET_TOPS if mismatch["ulps"] <= top)


# A run of profile ci on reward.parse whose generator counted four features over 200 drawn inputs: "nan" above its
# minimum, "negative" below its own (a failing gate), two with no minimum; and float mismatches in three buckets,
# the furthest in a generated finding (no case page has it).
DRAWN = 200
FEATURES = {"nan": 30, "negative": 4, "empty list": 0, "utf-8 bom": 50}
MINIMUMS = {"nan": 0.1, "negative": 0.05}


def _floats(ulps: int, cls: MismatchClass = MismatchClass.ULP) -> list[Mismatch]:
    return [Mismatch(cls, "$['reward']", "0.3", "0.30000000000000004", ulps=ulps)]


def shapes_report(path: Path, name: str = "shaper", surface: str = "reward.parse",
                  features: dict[str, int] | None = None, minimums: dict[str, float] | None = None) -> Path:
    """A candidate's report with a generator's features (``features`` over DRAWN inputs, ``minimums`` under profile
    ci, gate fail) and float mismatches 1, 3, 3 and 20 ULPs apart in cases, and a far one in a generated finding."""
    one = OutputResult(output=wire.encode({"reward": 1.0}))
    lines = [
        CaseLine(id=f"{surface}::ok", surface=surface, outcome=Outcome.PASS, oracle=one),
        CaseLine(id=f"{surface}::one-ulp", surface=surface, outcome=Outcome.FAIL, oracle=one, candidate=one,
                 mismatches=_floats(1)),
        CaseLine(id=f"{surface}::three-ulps", surface=surface, outcome=Outcome.FAIL, oracle=one, candidate=one,
                 mismatches=_floats(3) + _floats(3)),
        CaseLine(id=f"{surface}::listed", surface=surface, outcome=Outcome.XFAIL, oracle=one, candidate=one,
                 mismatches=_floats(20), expected_divergence=ExpectedDivergence(outcome=Outcome.FAIL, reason="ours")),
        CaseLine(id=f"{surface}::gen-far", surface=surface, outcome=Outcome.FAIL, origin="generated",
                 input=wire.encode({"reward_txt": "-0.0"}), oracle=one, candidate=one,
                 mismatches=_floats(2**62, MismatchClass.FLOAT_FAR)),
    ]
    generated = GeneratedLine(surface=surface, profile="ci", seed=7, max_examples=DRAWN, inputs_run=DRAWN,
                              divergences=[f"{surface}::gen-far"], drawn=DRAWN,
                              features=FEATURES if features is None else features,
                              feature_minimums=MINIMUMS if minimums is None else minimums, feature_gate=Gate.FAIL)
    head = header(f"exec:./{name}", surfaces=[surface], started_at="2026-01-04T00:00:00+00:00",
                  named=implementation(name, "1.0"), generation=Generation(profile="ci", seed=7, max_examples=DRAWN))
    return write(path, head, [*lines, generated], footer(lines, conforms=False))
