"""How far apart a candidate's floats are: the footer's buckets of ULP distances per surface, and the worst input.

Reports are made with the recorded oracle by two deliberately wrong candidates: one whose mean is a last bit
off (``mean_fsum``: correctly rounded where CPython's sum is not) and one with another formula
(``pass_rate_macro``: a pass rate averaged per task, not pooled). The buckets expected are computed here from
each mismatch's two bit patterns, independently of the comparator.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.report import reader
from conformance.report.writer import Tally
from conformance.run import certification
from conformance.run.shards import Shard

SIGN = 1 << 63
# The documented buckets (docs/protocol.md): each bucket's top, then `far`.
TOPS = [(1, "1"), (4, "2-4"), (16, "5-16"), (2**10, "17-2^10"), (2**20, "2^10-2^20")]
BUCKETS = [name for _, name in TOPS] + ["far"]
NEAR = ("tests.wrong_candidates:mean_fsum", "metric.compute")
FAR = ("tests.wrong_candidates:pass_rate_macro", "evsys.metric")


def _rank(bits: int) -> int:
    return -(bits & ~SIGN) if bits & SIGN else bits


def _bucket(expected_bits: str, actual_bits: str) -> tuple[str, int]:
    """The bucket and distance of two finite floats' bit patterns, as docs/cases.md defines them."""
    e, a = int(expected_bits, 16), int(actual_bits, 16)
    ulps = abs(_rank(e) - _rank(a))
    if (e ^ a) & SIGN or ulps > 2**20:
        return "far", ulps
    return next(name for top, name in TOPS if ulps <= top), ulps


def _finite(bits: str) -> bool:
    return int(bits, 16) & 0x7FF0_0000_0000_0000 != 0x7FF0_0000_0000_0000


def _expected(path: Path) -> dict[str, tuple[dict[str, int], tuple[str, str, int]]]:
    """Per surface: each bucket's count and the worst (id, path, ulps), read from the report's raw JSON."""
    counts: dict[str, Counter[str]] = {}
    worst: dict[str, tuple[bool, int, str, str]] = {}
    for line in map(json.loads, path.read_text().splitlines()):
        if line["type"] != "case":
            continue
        for m in line.get("mismatches", []):
            e, a = m.get("expected_bits"), m.get("actual_bits")
            if e is None or not (_finite(e) and _finite(a)) or int(e, 16) & ~SIGN == int(a, 16) & ~SIGN == 0:
                continue  # not two finite floats, or two zeros
            bucket, ulps = _bucket(e, a)
            counts.setdefault(line["surface"], Counter())[bucket] += 1
            here = (bucket == "far", ulps, line["id"], m["path"])
            best = worst.get(line["surface"])
            if best is None or here[:2] > best[:2] or (here[:2] == best[:2] and here[2:] < best[2:]):
                worst[line["surface"]] = here
    return {s: ({b: c[b] for b in BUCKETS}, (worst[s][2], worst[s][3], worst[s][1])) for s, c in counts.items()}


def _footer_distances(path: Path) -> dict[str, tuple[dict[str, int], tuple[str, str, int]]]:
    footer = reader.read(path).footer
    assert footer is not None
    return {s: ({b.value: n for b, n in d.buckets.items()}, (d.worst.id, d.worst.path, d.worst.ulps))
            for s, d in footer.ulp_distances.items()}


def _certify(path: Path, candidate: str, surface: str, **options) -> Path:
    certification.certify(certification.Options(candidate=candidate, oracle="recorded", surfaces=[surface],
                                                **options), path)
    return path


@pytest.fixture(scope="module")
def near(tmp_path_factory) -> Path:
    return _certify(tmp_path_factory.mktemp("near") / "near.jsonl", *NEAR)


@pytest.fixture(scope="module")
def far(tmp_path_factory) -> Path:
    return _certify(tmp_path_factory.mktemp("far") / "far.jsonl", *FAR)


def test_a_last_bit_off_is_counted_in_the_close_buckets(near):
    distances = _footer_distances(near)
    assert distances == _expected(near)
    buckets, (worst_id, worst_path, _) = distances["metric.compute"]
    assert buckets["1"] >= 2  # the mean a last bit off, on more than one case
    assert worst_id.startswith("metric.compute::") and worst_path == "$['mean']"
    assert list(buckets) == BUCKETS  # every bucket present, in order


def test_another_formula_is_counted_far(far):
    distances = _footer_distances(far)
    assert distances == _expected(far)
    buckets, (worst_id, worst_path, ulps) = distances["evsys.metric"]
    assert buckets["far"] > 0 and sum(buckets.values()) == buckets["far"]
    assert ulps > 2**20 and worst_id.startswith("evsys.metric::") and worst_path == "$"
    classes = {m.cls.value for r in reader.read(far).records for m in r.mismatches}
    assert classes == {"float-far"}


@pytest.mark.slow
def test_a_conforming_run_has_no_distances(tmp_path):
    path = _certify(tmp_path / "ref.jsonl", "reference", "metric.compute")
    assert reader.read(path).footer.ulp_distances == {}


def test_a_report_read_back_counts_the_same_footer(near):
    data = reader.read(near)
    assert data.footer is not None
    assert Tally.of(data.records, data.generated).footer().ulp_distances == data.footer.ulp_distances
    assert reader.ReportFile(near).overview().tally().footer().ulp_distances == data.footer.ulp_distances


@pytest.mark.slow
@pytest.mark.usefixtures("_wide_console")
def test_shards_combined_keep_the_distribution(tmp_path, near):
    parts = [_certify(tmp_path / f"shard-{i}.jsonl", *NEAR, shard=Shard(i, 2)) for i in (1, 2)]
    shares = [_footer_distances(p).get("metric.compute") for p in parts]
    assert all(share is None or sum(share[0].values()) < sum(_footer_distances(near)["metric.compute"][0].values())
               for share in shares)  # each shard counts its part only
    combined = tmp_path / "all.jsonl"
    result = CliRunner().invoke(app, ["combine", *map(str, reversed(parts)), "--out", str(combined)])
    assert result.exit_code == 1, result.output  # the candidate does not conform
    assert _footer_distances(combined) == _footer_distances(near)
    assert "float mismatches by ULP distance" in result.output


@pytest.fixture
def _wide_console(monkeypatch):
    """Wide enough that no row of the tables wraps, whatever terminal (or none) the tests run in."""
    from conformance.cli.console import out

    monkeypatch.setattr(out, "width", 400)


def _summary(path: Path, *args: str):
    return CliRunner().invoke(app, ["summary", str(path), *args])


@pytest.mark.usefixtures("_wide_console")
def test_summary_shows_the_buckets_and_the_worst_input(near, far):
    (buckets, (worst_id, worst_path, ulps)), = _expected(near).values()
    shown = _summary(near)
    assert shown.exit_code == 1
    table = shown.output[shown.output.index("float mismatches by ULP distance"):]
    assert "17-2^10" in table and "2^10-2^20" in table and "far" in table
    row = next(line for line in table.splitlines() if "metric.compute" in line and worst_id in line)
    assert [int(n) for n in row.split("│")[2:8]] == list(buckets.values())
    assert f"{worst_id} at {worst_path}: {ulps} ULP" in row
    (_, (far_id, _, far_ulps)), = _expected(far).values()
    assert f"{far_id} at $: {far_ulps} ULPs (far)" in _summary(far).output


def test_summary_markdown_shows_the_buckets_and_the_worst_input(near, tmp_path):
    (buckets, (worst_id, worst_path, ulps)), = _expected(near).values()
    out = tmp_path / "summary.md"
    assert _summary(near, "--markdown", str(out)).exit_code == 1
    text = out.read_text()
    assert "| float mismatches | 1 | 2-4 | 5-16 | 17-2^10 | 2^10-2^20 | far | worst |" in text
    cells = " | ".join(str(n) for n in buckets.values())
    assert f"| `metric.compute` | {cells} | {worst_id} at {worst_path}: {ulps} ULP" in text


def test_a_report_without_float_mismatches_shows_no_table(tmp_path):
    path = _certify(tmp_path / "bad.jsonl", "tests.wrong_candidates:empty_by_strip", "reward.parse")
    out = tmp_path / "summary.md"
    shown = _summary(path, "--markdown", str(out))
    assert shown.exit_code == 1 and "error-type" in shown.output
    assert "ULP distance" not in shown.output and "float mismatches" not in out.read_text()


@pytest.mark.slow
@pytest.mark.usefixtures("_wide_console")
def test_certify_ends_with_the_table_when_floats_are_off(tmp_path):
    path = tmp_path / "near.jsonl"
    result = CliRunner().invoke(app, ["certify", "-c", NEAR[0], "--oracle", "recorded", "-s", NEAR[1],
                                      "--report", str(path)])
    assert result.exit_code == 1, result.output
    (_, (worst_id, _, _)), = _expected(path).values()
    end = result.output[result.output.index("float mismatches by ULP distance"):]
    assert worst_id in end and "does not conform" in end  # after the outcome table, before the verdict


def test_diff_says_when_two_comparator_versions_are_compared(near, tmp_path):
    older = tmp_path / "older.jsonl"
    lines = near.read_text().splitlines()
    header = json.loads(lines[0])
    older.write_text("\n".join([json.dumps({**header, "comparator": "1.1"}), *lines[1:]]) + "\n")
    same = CliRunner().invoke(app, ["diff", str(near), str(near)])
    assert same.exit_code == 0 and "comparator" not in same.output
    notes = tmp_path / "diff.json"
    other = CliRunner().invoke(app, ["diff", str(older), str(near), "--json", str(notes)])
    assert other.exit_code == 0, other.output  # nothing changed: the note fails nothing
    said = json.loads(notes.read_text())["notes"]
    assert len(said) == 1 and "comparator 1.1" in said[0] and f"by {header['comparator']}" in said[0]


def test_resume_refuses_a_report_of_another_comparator_version(tmp_path):
    path = tmp_path / "r.jsonl"
    _certify(path, "reference", "pass_at_k", case_globs=["pass_at_k::*"])
    lines = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(lines[0]), "comparator": "1.1"}), *lines[1:-1]]) + "\n")
    again = CliRunner().invoke(app, ["certify", "-c", "reference", "--oracle", "recorded", "-s", "pass_at_k",
                                     "--case", "pass_at_k::*", "--report", str(path), "--resume"])
    assert again.exit_code == 2 and "comparator: '1.1' in the report" in again.output
