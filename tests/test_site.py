"""`conformance site`: reports into a static site. Offline and quick: reports made by hand (tests/site_reports.py).

Expected figures are counted here from the report lines, or worked out by
hand (float bits), never taken from the site's own code. The browser test
(what a reader sees, in Chromium) is tests/test_site_browser.py.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.connection.protocol import Implementation
from conformance.core.compare import Mismatch, MismatchClass
from conformance.core.outcomes import Outcome
from conformance.kit import wire
from conformance.report.model import CaseLine, ExpectedDivergence, GeneratedLine, Generation, OutputResult
from conformance.site import build, floatbits, interop
from conformance.site.collect import collect, load, run_cases
from tests import site_reports
from tests.site_reports import header, write

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def _cli(*args: str) -> Ran:
    result = CliRunner().invoke(app, list(args))
    return Ran(result.exit_code, result.stdout, result.stderr)


def _case(case_id: str, outcome: Outcome, **fields) -> CaseLine:
    return CaseLine(id=case_id, surface=case_id.split("::")[0], outcome=outcome, **fields)


def _html(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in folder.rglob("*.html")}


# -- float bits -------------------------------------------------------------------------------------------------


def test_one_ulp_below_one_differs_in_the_last_exponent_bit_and_every_mantissa_bit():
    # 1.0 is 0 01111111111 000…0; the float just below it is 0 01111111110 111…1.
    diff = floatbits.compare("3ff0000000000000", "3fefffffffffffff", 1)
    assert diff is not None
    assert [f.text for f in diff.expected.fields] == ["0", "01111111111", "0" * 52]
    assert [f.text for f in diff.actual.fields] == ["0", "01111111110", "1" * 52]
    assert diff.differing == 53 and diff.fields_differing == ["exponent", "mantissa"]
    assert [b.differs for b in diff.actual.fields[1].bits] == [False] * 10 + [True]
    assert (diff.expected.value, diff.actual.value, diff.ulps) == ("1.0", "0.9999999999999999", 1)


def test_signed_zeros_differ_in_the_sign_bit_alone():
    diff = floatbits.compare("0000000000000000", "8000000000000000")
    assert diff is not None and diff.differing == 1 and diff.fields_differing == ["sign"]
    assert diff.actual.text == "1" + "0" * 63 and diff.actual.value == "-0.0"


@pytest.mark.parametrize(("expected", "actual"), [(None, "3ff0000000000000"), ("3ff0", "3ff0000000000000"),
                                                  ("not hex at all!!", "3ff0000000000000")])
def test_a_mismatch_without_two_float_patterns_has_no_bits(expected, actual):
    assert floatbits.compare(expected, actual) is None


# -- the matrix -------------------------------------------------------------------------------------------------


def _mixed_report(path: Path, candidate: str = "cand", started_at: str = "2026-01-01T00:00:00+00:00") -> Path:
    lines = [
        _case("reward.parse::a", Outcome.PASS), _case("reward.parse::b", Outcome.PASS),
        _case("reward.parse::c", Outcome.FAIL, mismatches=[Mismatch(MismatchClass.VALUE, "$", "1", "2")]),
        _case("reward.parse::d", Outcome.XPASS), _case("reward.parse::e", Outcome.CRASH, detail="died"),
        _case("reward.parse::f", Outcome.SKIP, detail="not mine"),
        _case("reward.parse::g", Outcome.XFAIL, expected_divergence=ExpectedDivergence(
            outcome=Outcome.FAIL, classes=[MismatchClass.VALUE], reason="known")),
        _case("pass_at_k::a", Outcome.PASS), _case("pass_at_k::b", Outcome.SKIP),
        _case("pass_at_k::gen-1", Outcome.FAIL, origin="generated", input=wire.encode({"trials": []})),
    ]
    head = header(candidate, surfaces=["evsys.metric", "pass_at_k", "reward.parse"], started_at=started_at,
                  generation=Generation(profile="ci", seed=0, max_examples=5))
    generated = GeneratedLine(surface="pass_at_k", profile="ci", seed=0, max_examples=5, inputs_run=5,
                              divergences=["pass_at_k::gen-1"])
    write(path, head, [*lines, generated], site_reports.footer(lines, conforms=False))
    return path


def test_each_cell_counts_its_surface_by_outcome(tmp_path):
    site = collect([_mixed_report(tmp_path / "mixed.jsonl"), site_reports.gate_report(tmp_path / "gate.jsonl")])
    assert site.index.surfaces == ("evsys.metric", "multi_step.reward", "pass_at_k", "reward.parse")
    row = next(r for r in site.index.rows if r.title == "cand")
    cells = {cell.surface: cell for cell in row.cells}
    # reward.parse: pass a, b; fail c and the out-of-date xpass d; error: the crash e; skip f; known: the xfail g.
    parse = cells["reward.parse"].counts
    assert parse is not None
    assert (parse.passed, parse.failed, parse.errored, parse.skipped, parse.known) == (2, 2, 1, 1, 1)
    assert cells["reward.parse"].status.label == "fail" and cells["reward.parse"].status.symbol == "✘"
    # pass_at_k: one pass, one skip, and a generated divergence (counted apart from the cases): a failure.
    pak = cells["pass_at_k"].counts
    assert pak is not None
    assert (pak.passed, pak.skipped, pak.generated_inputs, pak.generated_divergences) == (1, 1, 5, 1)
    assert cells["pass_at_k"].status.label == "fail"
    # A surface the run covered with no line, and one only the gate report has.
    assert cells["evsys.metric"].status.label == "not run"
    assert cells["multi_step.reward"].counts is None and cells["multi_step.reward"].status.symbol == "·"
    assert row.facts.profile == "ci" and row.facts.seed == 0 and row.facts.oracle == "recorded"
    gate = next(r for r in site.index.rows if r.kind == "release")
    assert gate.title == f"harbor {site_reports.RELEASE}" and gate.verdict_text == "gate FAILED"


@pytest.mark.parametrize(("outcomes", "label", "symbol"), [
    ([Outcome.PASS, Outcome.XFAIL], "pass", "✔"), ([Outcome.PASS, Outcome.TIMEOUT, Outcome.SKIP], "error", "⚠"),
    ([Outcome.PASS, Outcome.SKIP], "skipped", "–"), ([Outcome.PROTOCOL_ERROR, Outcome.FAIL], "fail", "✘"),
])
def test_a_cell_shows_the_worst_of_its_cases(tmp_path, outcomes, label, symbol):
    lines = [_case(f"reward.parse::c{i}", outcome) for i, outcome in enumerate(outcomes)]
    report = write(tmp_path / "r.jsonl", header("cand", surfaces=["reward.parse"], started_at="2026-01-01T00:00:00"),
                   lines, site_reports.footer(lines, conforms=False))
    (cell,) = collect([report]).index.rows[0].cells
    assert (cell.status.label, cell.status.symbol) == (label, symbol)


# -- pages ------------------------------------------------------------------------------------------------------


def test_runs_of_one_candidate_make_a_trend_oldest_first(tmp_path):
    def run(name: str, started_at: str, failing: int) -> Path:
        lines = [_case(f"reward.parse::c{i}", Outcome.FAIL if i < failing else Outcome.PASS) for i in range(4)]
        return write(tmp_path / name, header("cand", surfaces=["reward.parse"], started_at=started_at), lines,
                     site_reports.footer(lines, conforms=not failing))

    # Given out of order; "east" reads later as text but started earlier, in another time zone.
    west = run("west.jsonl", "2026-03-01T07:30:00+00:00", 1)
    east = run("east.jsonl", "2026-03-01T09:00:00+02:00", 0)
    oldest = run("oldest.jsonl", "2026-02-01T00:00:00+00:00", 3)
    site = collect([west, oldest, east])
    (page,) = site.candidates
    assert page.trend is not None
    assert [Path(p.facts.file).name for p in page.trend.points] == ["oldest.jsonl", "east.jsonl", "west.jsonl"]
    assert [p.counts.percent for p in page.trend.points] == [25.0, 100.0, 75.0]
    trend = page.trend
    assert trend.floor == 0 and trend.points[1].y == trend.top
    assert trend.points[0].y == pytest.approx(trend.bottom - (trend.bottom - trend.top) / 4)
    assert Path(page.facts.file).name == "west.jsonl"  # the page and its matrix row show the latest run
    out = tmp_path / "site"
    build([west, oldest, east], out)
    text = (out / page.path).read_text()
    assert re.search(r'<polyline class="series" points="[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+"/>', text)


def test_a_candidate_is_its_handshake_s_name_and_language_whatever_path_ran_it(tmp_path):
    def run(name: str, spec: str, started_at: str, failing: int, named: Implementation | None) -> Path:
        lines = [_case(f"reward.parse::c{i}", Outcome.FAIL if i < failing else Outcome.PASS) for i in range(4)]
        return write(tmp_path / name, header(spec, surfaces=["reward.parse"], started_at=started_at, named=named),
                     lines, site_reports.footer(lines, conforms=not failing))

    linux, windows = "exec:/home/runner/work/fastsum/bin/fastsum", r"exec:C:\actions-runner\_work\fastsum.exe"
    reports = [
        run("old.jsonl", linux, "2026-03-01T00:00:00Z", 2, site_reports.implementation("fastsum", "1.0")),
        run("new.jsonl", windows, "2026-03-02T00:00:00Z", 0, site_reports.implementation("fastsum", "1.1")),
        # Another candidate of the same name, in another language; and a run that never started, from the old path.
        run("py.jsonl", "exec:./fastsum.py", "2026-03-01T00:00:00Z", 0,
            site_reports.implementation("fastsum", "0.1", "python")),
        run("dead.jsonl", linux, "2026-03-03T00:00:00Z", 4, None),
    ]
    site = collect(reports)
    assert sorted((page.name, page.language) for page in site.candidates) == [
        ("exec:/home/runner/work/fastsum/bin/fastsum", None), ("fastsum", "python"), ("fastsum", "rust")]
    (rust,) = [page for page in site.candidates if page.language == "rust"]
    assert rust.trend is not None
    assert [(p.facts.version, p.facts.candidate, p.counts.percent) for p in rust.trend.points] == [
        ("1.0", linux, 50.0), ("1.1", windows, 100.0)]
    assert (rust.facts.candidate_name, rust.facts.candidate) == ("fastsum 1.1", windows)  # the latest run
    (dead,) = [page for page in site.candidates if page.language is None]
    assert dead.trend is None and dead.facts.candidate_name == f"{linux} (never started)"
    out = tmp_path / "site"
    build(reports, out)
    index = (out / "index.html").read_text()
    rows = re.findall(r'<tr class="row-candidate" data-row="([^"]*)">\n<th scope="row">(.*?)<span class="row-facts">',
                      index)
    assert [(title, re.sub(r"<[^>]+>", "", th)) for title, th in rows] == [
        (linux, f"{linux} never started: named by its spec"),
        ("fastsum", "fastsum 0.1 · python · exec:./fastsum.py"),
        ("fastsum", f"fastsum 1.1 · rust · {windows}"),
    ]
    page = (out / rust.path).read_text()
    assert "<h1><code>fastsum</code>" in page and f"<code>{windows}</code>" in page


def test_the_trend_s_axis_starts_just_below_its_lowest_run(tmp_path):
    # 199 and 197 of 200 cases: 99.5 % and 98.5 %, drawn from 98 % (from 0 % the two would look the same).
    runs = []
    for n, (failing, started_at) in enumerate([(1, "2026-01-01T00:00:00Z"), (3, "2026-01-02T00:00:00Z")]):
        lines = [_case(f"reward.parse::c{i}", Outcome.FAIL if i < failing else Outcome.PASS) for i in range(200)]
        runs.append(write(tmp_path / f"r{n}.jsonl", header("cand", surfaces=["reward.parse"], started_at=started_at),
                          lines, site_reports.footer(lines, conforms=False)))
    (page,) = collect(runs).candidates
    assert page.trend is not None and page.trend.floor == 98
    first, last = page.trend.points
    span = page.trend.bottom - page.trend.top
    assert first.y == pytest.approx(page.trend.bottom - span * 1.5 / 2)
    assert last.y == pytest.approx(page.trend.bottom - span * 0.5 / 2)


def test_a_single_run_has_no_trend(tmp_path):
    (page,) = collect([_mixed_report(tmp_path / "one.jsonl")]).candidates
    assert page.trend is None


def test_the_release_page_groups_changes_by_reason_with_the_smallest_example(tmp_path):
    report = site_reports.gate_report(tmp_path / "gate.jsonl")
    lines = [json.loads(text) for text in report.read_text().splitlines()]
    changed = {line["id"]: line for line in lines if line["type"] == "case" and line["outcome"] != "pass"}
    entries = {e["id"]: e for e in yaml.safe_load(site_reports.EXPECTATIONS.read_text())["divergences"]}
    (page,) = collect([report]).releases
    assert not page.passed and page.baseline == "0.13.1" and page.version == site_reports.RELEASE
    first, *listed = page.groups
    assert not first.listed and first.ids == (("reward.parse", (site_reports.UNLISTED,)),)
    by_reason: dict[str, list[str]] = {}
    for case_id in site_reports.LISTED:
        by_reason.setdefault(entries[case_id]["reason"], []).append(case_id)
    assert {group.reason: sorted(i for _, ids in group.ids for i in ids) for group in listed} == {
        reason: sorted(ids) for reason, ids in by_reason.items()}
    for group in listed:
        ids = [i for _, group_ids in group.ids for i in group_ids]
        smallest = min(ids, key=lambda i: len(json.dumps(changed[i]["input"], ensure_ascii=False)))
        assert group.example.id == smallest
        assert group.link == entries[smallest]["link"]


def test_a_case_links_to_its_line_in_a_copy_of_its_case_file(tmp_path):
    out = tmp_path / "site"
    build([site_reports.gate_report(tmp_path / "gate.jsonl")], out)
    html = _html(out)
    (release,) = [text for name, text in html.items() if name.startswith("releases/")]
    links = re.findall(r'<a class="case-file" href="\.\./(cases/[^"#]+)#L(\d+)">', release)
    assert links
    for page, line in links:
        # The case file's own line, read here from the corpus: the case's mapping starts on it.
        source = (REPO / page.removesuffix(".html")).read_text(encoding="utf-8").splitlines()
        assert re.match(r"\s*- id: \S+::", source[int(line) - 1]), (page, line)
        assert f'<tr id="L{line}">' in html[page]


# -- what the site must never do -----------------------------------------------------------------------------------

def test_a_hostile_candidate_s_text_is_shown_as_text_never_as_markup(tmp_path):
    out = tmp_path / "site"
    build(site_reports.hostile_reports(tmp_path), out)
    html = _html(out)
    assert len(html) >= 3
    for name, text in html.items():
        assert len(re.findall(r"<script", text, re.I)) == 1, name  # the site's own script tag, nothing else
        assert "<img" not in text and 'href="javascript' not in text, name
    candidate = next(text for name, text in html.items() if name.startswith("candidates/"))
    assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in candidate
    release = html[next(n for n in html if n.startswith("releases/"))]
    assert "&lt;/pre&gt;&lt;script&gt;" in release  # the expectation entry's reason; its link is no web link: none


def test_a_malformed_report_stops_the_site_with_its_file_and_line_and_writes_nothing(tmp_path):
    good = _mixed_report(tmp_path / "good.jsonl")
    bad = tmp_path / "bad.jsonl"
    lines = good.read_text().splitlines()
    lines[2] = '{"type": "case", "id": "reward.parse::x"'  # cut short, and not the last line
    bad.write_text("\n".join(lines) + "\n")
    proc = _cli("site", str(good), str(bad), "--out", str(tmp_path / "new"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad}:3" in proc.stderr
    assert not (tmp_path / "new").exists()
    # An earlier site stays as it was, and no staging folder is left beside it.
    earlier = tmp_path / "earlier"
    assert _cli("site", str(good), "--out", str(earlier)).returncode == 0
    before = {p: p.read_bytes() for p in earlier.rglob("*") if p.is_file()}
    proc = _cli("site", str(bad), "--out", str(earlier))
    assert proc.returncode == 2 and f"{bad}:3" in proc.stderr
    assert {p: p.read_bytes() for p in earlier.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "earlier", "good.jsonl"]


def test_an_empty_report_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = _cli("site", str(empty), "--out", str(tmp_path / "site"))
    assert proc.returncode == 2 and str(empty) in proc.stderr and not (tmp_path / "site").exists()


def test_a_folder_holding_other_files_is_not_overwritten(tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    proc = _cli("site", str(_mixed_report(tmp_path / "r.jsonl")), "--out", str(out))
    assert proc.returncode == 2 and "holds other files" in proc.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_site_written_before_is_replaced_whole(tmp_path):
    out = tmp_path / "site"
    mixed = _mixed_report(tmp_path / "mixed.jsonl", candidate="first")
    assert _cli("site", str(mixed), "--out", str(out)).returncode == 0
    assert (out / "candidates" / "first.html").is_file()
    proc = _cli("site", str(_mixed_report(tmp_path / "other.jsonl", candidate="second")), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert not (out / "candidates" / "first.html").exists() and (out / "candidates" / "second.html").is_file()
    manifest = json.loads((out / "site.json").read_text())
    assert manifest["reports"] == [str(tmp_path / "other.jsonl")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed.jsonl", "other.jsonl", "site"]


def test_the_site_loads_nothing_from_the_network(tmp_path):
    out = tmp_path / "site"
    build([_mixed_report(tmp_path / "r.jsonl"), site_reports.gate_report(tmp_path / "gate.jsonl")], out)
    for path in [*out.rglob("*.html"), *out.rglob("*.css"), *out.rglob("*.js")]:
        text = path.read_text(encoding="utf-8")
        # Only a plain link may lead off the site (an expectation entry's); nothing is fetched from elsewhere.
        assert not re.search(r"""(src|srcset)=["']?(https?:)?//""", text), path
        assert not re.search(r"""<link[^>]+href=["']?(https?:)?//""", text), path
        assert not re.search(r"""(url\(|@import)\s*["']?(https?:)?//""", text), path
        assert not re.search(r"""fetch\(|XMLHttpRequest|import\(""", text), path
    assert {p.name for p in (out / "assets").iterdir()} == {"site.css", "site.js"}


def test_the_command_says_where_the_site_is(tmp_path):
    proc = _cli("site", str(_mixed_report(tmp_path / "r.jsonl")), "-o", str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path / "site" / "index.html") in proc.stdout
    assert (tmp_path / "site" / "index.html").is_file()


def test_nox_has_a_site_session():
    text = (REPO / "noxfile.py").read_text()
    assert re.search(r"@nox\.session\ndef site\(session", text)
    assert '"conformance", "site"' in text


# -- across candidates ----------------------------------------------------------------------------------------------

VALUE = [Mismatch(MismatchClass.VALUE, "$['reward']", "1.0", "0.5")]
ONE_POINT_O, HALF = OutputResult(output=wire.encode({"reward": 1.0})), OutputResult(output=wire.encode({"reward": 0.5}))


def _answered(case_id: str, outcome: Outcome, **fields) -> CaseLine:
    """A line as a run writes it: the oracle's answer, and the candidate's (a pass may leave its own out)."""
    if outcome in (Outcome.PASS, Outcome.FAIL, Outcome.XFAIL, Outcome.CRASH):
        fields.setdefault("oracle", ONE_POINT_O)
    if outcome is Outcome.FAIL or outcome is Outcome.XFAIL:
        fields.setdefault("candidate", HALF)
        fields.setdefault("mismatches", VALUE)
    if outcome is Outcome.XFAIL:
        fields.setdefault("expected_divergence", ExpectedDivergence(outcome=Outcome.FAIL, reason="ours"))
    return _case(case_id, outcome, **fields)


def _candidate_report(folder: Path, name: str, lines: list[CaseLine], started_at: str = "2026-01-01T00:00:00Z",
                      version: str = "1.0") -> Path:
    named = site_reports.implementation(name, version)
    return write(folder / f"{name}-{version}.jsonl", header(f"exec:./{name}", surfaces=["reward.parse"],
                                                            started_at=started_at, named=named),
                 lines, site_reports.footer(lines, conforms=False))


def _three_candidates(folder: Path) -> list[Path]:
    """alpha, beta and gamma on eight cases (what each case is, beside it), a candidate that never started, and a
    gate report that fails a case every candidate passes."""
    p, f = Outcome.PASS, Outcome.FAIL
    alpha = [_answered("reward.parse::a", p), _answered("reward.parse::b", p),
             _answered("reward.parse::c", p),  # a passing line without the candidate's answer: the oracle's
             _answered("reward.parse::d", f), _answered("reward.parse::e", p), _answered("reward.parse::f", p),
             _answered("reward.parse::g", f), _answered("reward.parse::h", f)]
    beta = [_answered("reward.parse::a", p, candidate=ONE_POINT_O), _answered("reward.parse::b", p),
            _answered("reward.parse::c", f),  # fails in beta alone
            _answered("reward.parse::d", Outcome.CRASH, detail="died on it"),  # d fails in every candidate
            _answered("reward.parse::e", p),  # f: no line (beta's run did not hold it)
            _answered("reward.parse::g", p), _answered("reward.parse::h", Outcome.SKIP, detail="not mine")]
    gamma = [_answered("reward.parse::a", p), _answered("reward.parse::b", p),
             _answered("reward.parse::c", p, candidate=ONE_POINT_O),
             _answered("reward.parse::d", Outcome.XFAIL),  # a listed divergence is still a divergence
             _answered("reward.parse::e", Outcome.SKIP, detail="declined"), _answered("reward.parse::f", p),
             _answered("reward.parse::g", f)]  # h: no line
    never = [_case("reward.parse::a", Outcome.BROKEN), _case("reward.parse::c", Outcome.BROKEN)]
    gate = [_answered("reward.parse::a", f)]
    return [_candidate_report(folder, "alpha", alpha), _candidate_report(folder, "beta", beta),
            _candidate_report(folder, "gamma", gamma),
            write(folder / "never.jsonl", header("exec:./never", surfaces=["reward.parse"],
                                                  started_at="2026-01-01T00:00:00Z"), never, None),
            write(folder / "gate.jsonl", header("harbor==9.9.9", "harbor==0.13.1", surfaces=["reward.parse"],
                                                started_at="2026-01-01T00:00:00Z"), gate, None)]


def test_the_view_across_candidates_tells_one_candidate_s_bug_from_a_case_all_fail(tmp_path):
    site = collect(_three_candidates(tmp_path))
    (view,) = site.index.interop
    assert view.surface == "reward.parse" and view.candidates == ("alpha", "beta", "gamma")
    assert view.absent == ("exec:./never",)  # it never started: it answered nothing
    # Run by all three: a, b, c, d, g; every one of them passes a and b: 2 of 5. e (gamma declined it), f (not in
    # beta's report) and h (declined by beta, not in gamma's report) are counted apart; the gate's failure of a is a
    # harbor release's, not a candidate's.
    assert (view.cases, view.common, view.agreed, view.partial) == (8, 5, 2, 3)
    assert view.share == pytest.approx(2 / 5 * 100)

    def told(items):
        return [(d.id, [(x.name, x.outcome) for x in d.failing], d.ran, d.not_run) for d in items]

    assert told(view.one) == [("reward.parse::c", [("beta", "fail")], 3, ())]
    assert told(view.all) == [("reward.parse::d", [("alpha", "fail"), ("beta", "crash"), ("gamma", "xfail")], 3, ())]
    assert told(view.some) == [("reward.parse::g", [("alpha", "fail"), ("gamma", "fail")], 3, ())]
    assert told(view.lone) == [("reward.parse::h", [("alpha", "fail")], 1, ("beta", "gamma"))]
    (beta_c,) = view.one[0].failing
    assert beta_c.difference == VALUE[0].describe(bits=False)  # the line's first difference, as core words it

    out = tmp_path / "site"
    build(_three_candidates(tmp_path), out)
    index = (out / "index.html").read_text()
    across = index[index.index('<h2 id="across">'):index.index("<h2>Reports</h2>")]
    assert '<td class="share">2 of 5 (40.0 %)</td>' in across and '<td class="n-partial">3</td>' in across
    one = across[across.index('data-spread="one"'):across.index('data-spread="all"')]
    assert re.findall(r'<tr data-id="([^"]+)">', one) == ["reward.parse::c"]
    assert re.findall(r'<td class="failing-in"><a href="candidates/\w+\.html">(\w+) ', one) == ["beta"]


def test_a_case_page_shows_every_candidate_s_answer_beside_the_oracle_s(tmp_path):
    reports = _three_candidates(tmp_path)
    site = collect(reports)
    pages = {page.id: page for page in site.case_pages}
    # A page for each case failing in some candidate's latest run; none for a case every candidate passes.
    assert sorted(pages) == ["reward.parse::c", "reward.parse::d", "reward.parse::g", "reward.parse::h"]
    answers = {a.name: a for a in pages["reward.parse::c"].answers}
    assert list(answers) == ["alpha", "beta", "gamma"]
    assert (answers["alpha"].status.label, answers["alpha"].candidate_text) == ("pass", "same as the oracle")
    assert (answers["beta"].status.label, answers["beta"].candidate_text) == ("fail", "{'reward': 0.5}")
    assert answers["gamma"].candidate_text == "{'reward': 1.0}"  # its passing line holds its answer
    assert {a.oracle_text for a in answers.values()} == {"{'reward': 1.0}"}
    assert answers["beta"].difference == VALUE[0].describe(bits=False) and answers["alpha"].difference == ""
    lone = {a.name: a for a in pages["reward.parse::h"].answers}
    assert lone["beta"].status.label == "not run" and lone["beta"].candidate_text == "declined (skip): not mine"
    assert lone["gamma"].candidate_text == "not in its report"
    out = tmp_path / "site"
    build(reports, out)
    page = pages["reward.parse::d"]
    text = (out / page.path).read_text()
    rows = re.findall(r'<tr class="answer status-(\w+)" data-candidate="(\w+)">', text)
    assert rows == [("fail", "alpha"), ("fail", "beta"), ("fail", "gamma")]
    assert "died on it" in text and "{&#39;reward&#39;: 0.5}" in text
    # beta's failure entry links to the case page.
    (beta,) = [c for c in site.candidates if c.name == "beta"]
    assert f'href="../{pages["reward.parse::c"].path}"' in (out / beta.path).read_text()


def test_a_case_s_history_collapses_repeated_results(tmp_path):
    outcomes = {"reward.parse::x": [Outcome.PASS, Outcome.PASS, Outcome.FAIL, Outcome.FAIL, Outcome.PASS],
                "reward.parse::y": [Outcome.PASS, Outcome.FAIL, Outcome.PASS, Outcome.FAIL, Outcome.FAIL],
                "reward.parse::z": [Outcome.FAIL] * 5}
    reports = []
    for run in (3, 0, 4, 1, 2):  # given out of order: the start times order them
        lines = [_answered(case_id, said[run]) for case_id, said in outcomes.items()]
        reports.append(_candidate_report(tmp_path, "delta", lines, f"2026-01-0{run + 1}T00:00:00Z", f"1.{run}"))
    # x fails in runs 3 and 4 and passes again in run 5: read as the site reads it (x has no case page: it fails in
    # no latest run).
    runs = sorted(load(reports), key=lambda run: run.started)
    delta = interop.Candidate("delta", "rust", "candidates/delta.html", tuple(run_cases(run) for run in runs))
    x = delta.history("reward.parse::x")
    assert [(s.status.label, s.first, s.count, s.version) for s in x.stretches] == [
        ("pass", 1, 2, "1.0"), ("fail", 3, 2, "1.2"), ("pass", 5, 1, "1.4")]
    assert x.text == "pass ×2 → fail ×2 (since run 3, version 1.2) → pass (fixed in run 5, version 1.4)"
    assert x.since is None
    site = collect(reports)
    assert sorted(c.id for c in site.case_pages) == ["reward.parse::y", "reward.parse::z"]
    (page,) = site.candidates
    entries = {e.id: e for group in page.groups for e in group.entries}
    assert entries["reward.parse::y"].since == "failing again since run 4, version 1.3"
    assert entries["reward.parse::z"].since == "failing in every run (5)"
    histories = {c.id: c.answers[0].history.text for c in site.case_pages}
    assert histories == {"reward.parse::y": "pass → fail (since run 2, version 1.1) → pass (fixed in run 3, version "
                                            "1.2) → fail ×2 (since run 4, version 1.3)",
                         "reward.parse::z": "fail ×5"}
    out = tmp_path / "site"
    build(reports, out)
    text = (out / page.path).read_text()
    assert '<span class="since">failing again since run 4, version 1.3</span>' in text


def test_a_single_run_says_nothing_of_since_when(tmp_path):
    report = _candidate_report(tmp_path, "solo", [_answered("reward.parse::a", Outcome.FAIL)])
    site = collect([report])
    (entry,) = [e for group in site.candidates[0].groups for e in group.entries]
    assert entry.since is None and entry.case_page == site.case_pages[0].path
    assert site.index.interop == ()  # one candidate: nothing to compare it with
    assert site.case_pages[0].spread.value == "fails in the only candidate that ran it"


HOSTILE_IDS = ["reward.parse::../../../escaped", "reward.parse::<script>alert(1)</script>", "reward.parse::AB",
               "reward.parse::ab", "reward.parse::" + "\U0001d400" * 120, "reward.parse::a/b\\c\x00d",
               "reward.parse::" + "x" * 300 + "1", "reward.parse::" + "x" * 300 + "2", "reward.parse::."]


def test_hostile_case_ids_make_safe_file_names(tmp_path):
    lines = [_answered(case_id, Outcome.FAIL) for case_id in HOSTILE_IDS]
    reports = [_candidate_report(tmp_path, "eve", lines),
               _candidate_report(tmp_path, "mallory", [_answered(i, Outcome.PASS) for i in HOSTILE_IDS])]
    out = tmp_path / "site"
    written = build(reports, out)
    site = collect(reports)
    paths = {page.id: page.path for page in site.case_pages}
    assert sorted(paths) == sorted(HOSTILE_IDS)
    assert len({p.lower() for p in paths.values()}) == len(HOSTILE_IDS)  # two per case-insensitive file system too
    for case_id, path in paths.items():
        folder, name = path.split("/")
        assert folder == "by-case" and name.endswith(".html") and not name.startswith("."), (case_id, path)
        assert len(name.encode("utf-8")) <= 255 and "\\" not in name and "\x00" not in name, (case_id, path)
        assert (out / path).resolve().parent == (out / "by-case").resolve() and path in written
    # Every one of them is listed (exactly one of the two fails them) and linked from the index.
    index = (out / "index.html").read_text()
    assert index.count('class="case-link"') == len(HOSTILE_IDS)
    assert "<script>alert" not in index and "&lt;script&gt;alert(1)&lt;/script&gt;" in index


def test_a_surface_page_holds_its_interop_lists_and_says_when_a_run_has_no_distribution(tmp_path):
    reports = _three_candidates(tmp_path)
    site = collect(reports)
    (surface,) = site.surface_pages
    assert surface.path == "surfaces/reward.parse.html"
    out = tmp_path / "site"
    build(reports, out)
    text = (out / surface.path).read_text()
    for spread, ids in (("one", ["c"]), ("all", ["d"]), ("some", ["g"]), ("lone", ["h"])):
        section = text[text.index(f'data-spread="{spread}"'):]
        section = section[:section.index("</section>")]
        # One row per candidate a case fails in, each naming the case.
        assert list(dict.fromkeys(re.findall(r'<tr data-id="reward\.parse::(\w)">', section))) == ids, spread
    # None of the three generated inputs or has a float mismatch: each says so, in a sentence.
    for key, said in (("shapes", "Its latest run generated no input: it ran cases only."),
                      ("ulps", "No float mismatch in its latest run.")):
        drawn = _drawn(text, key)
        assert list(drawn) == ["alpha", "beta", "gamma"], key
        assert all(f'<p class="absent">{said}</p>' in part and "<svg" not in part for part in drawn.values()), key
    for report in reports[:3]:
        page = (out / "candidates" / f"{report.name.split('-')[0]}.html").read_text()
        assert '<p class="absent">No float mismatch in the latest run.</p>' in page


# -- distributions: generated inputs by feature, float mismatches by ULP distance -----------------------------------

BAR = re.compile(r'<g class="bar( bar-short)?" data-bin="([^"]*)" data-count="(\d+)">(.*?)</g>', re.S)
TABLE_ROW = re.compile(r'<tr data-bin="([^"]*)"(?: class="short")?><th scope="row">(.*?)</th><td>(\d+)</td>'
                       r'<td>([^<]*)</td>(?:<td>([^<]*)</td><td>(.*?)</td>)?</tr>')
BUCKET_NAMES = site_reports.BUCKET_NAMES
_bucket = site_reports.ulp_bucket


def _floats(report: Path) -> dict[str, tuple[Counter[str], dict]]:
    """Each surface's float mismatches by bucket, counted from the report's case lines (generated findings' too),
    and the furthest: a far one first, then the larger distance, then the first id."""
    found: dict[str, tuple[Counter[str], list[dict]]] = {}
    for line in map(json.loads, report.read_text(encoding="utf-8").splitlines()):
        for m in line.get("mismatches", []) if line["type"] == "case" else []:
            if m.get("ulps") is not None:
                counted, seen = found.setdefault(line["surface"], (Counter(), []))
                counted[_bucket(m)] += 1
                seen.append({"id": line["id"], "far": _bucket(m) == "far", **m})
    return {s: (counted, min(seen, key=lambda m: (not m["far"], -m["ulps"], m["id"], m["path"])))
            for s, (counted, seen) in found.items()}


def _drawn(text: str, key: str) -> dict[str, str]:
    """A surface page's section (``shapes`` or ``ulps``): each candidate's part, by its name."""
    section = text[text.index(f'<section id="{key}"') + 1:]
    section = section[:section.find('<section id="')]  # up to the next section of the page, or its end
    parts = re.split(r'<section class="drawn" data-candidate="([^"]*)">', section)[1:]
    return {html.unescape(name): part for name, part in zip(parts[::2], parts[1::2], strict=True)}


def _bars(part: str) -> list[tuple[str, int, bool, str]]:
    """The chart's bars: (bin, count, marked short, its inner SVG)."""
    return [(html.unescape(key), int(count), bool(short), inner) for short, key, count, inner in BAR.findall(part)]


def _table(part: str) -> list[tuple[str, int, str, str | None, str | None]]:
    """The table's rows: (bin, count, share, minimum, reached) (minimum and reached None without those columns)."""
    return [(html.unescape(key), int(count), share, minimum or None, re.sub("<[^>]+>", "", reached) or None)
            for key, _, count, share, minimum, reached in TABLE_ROW.findall(part)]


def _check_chart(part: str, expected: dict[str, int], whole: int) -> list[tuple[str, int, bool, str]]:
    """The chart holds a bar per bin with its count, as long as its share; its table the same numbers; the svg is
    an image with a title and a description."""
    drawn = _bars(part)
    assert [(key, count) for key, count, _, _ in drawn] == list(expected.items())
    widths = [float(re.search(r'<rect [^>]*width="([\d.]+)"', inner).group(1)) for _, _, _, inner in drawn]
    longest = max(expected.values())
    for (key, count, _, inner), width in zip(drawn, widths, strict=True):
        assert width == pytest.approx(max(widths) * count / longest, abs=0.06), key
        assert f">{count} ({100 * count / whole:.1f} %)" in inner, key
    rows = _table(part)
    assert [(key, count, share) for key, count, share, _, _ in rows] == [
        (key, count, f"{100 * count / whole:.1f} %") for key, count in expected.items()]
    svg = re.search(r'<svg [^>]*role="img" aria-labelledby="([^"]+)"', part)
    assert svg is not None
    title, desc = svg.group(1).split()
    assert f'<title id="{title}">' in part and f'<desc id="{desc}">' in part
    return drawn


@pytest.fixture(scope="module")
def wrong_floats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real reports (the recorded oracle): a mean summed with fsum (ULPs off in the last bits, a far one where ints
    overflow) and a pass rate averaged per task (another formula: far off)."""
    folder = tmp_path_factory.mktemp("floats")
    reports = {}
    for name, surface in (("mean_fsum", "metric.compute"), ("pass_rate_macro", "evsys.metric")):
        reports[surface] = folder / f"{name}.jsonl"
        ran = _cli("certify", "--candidate", f"tests.wrong_candidates:{name}", "--oracle", "recorded",
                   "--surface", surface, "--report", str(reports[surface]), "--progress", "none")
        assert ran.returncode == 1, ran.stdout + ran.stderr
    return reports


@pytest.mark.slow
def test_a_surface_page_draws_each_candidate_s_float_mismatches_by_ulp_distance(tmp_path, wrong_floats):
    out = tmp_path / "site"
    build(list(wrong_floats.values()), out)
    candidates = {"metric.compute": "wrong-mean-fsum", "evsys.metric": "wrong-pass-rate-macro"}
    for surface, report in wrong_floats.items():
        counted, worst = _floats(report)[surface]
        expected = {name: counted[name] for name in BUCKET_NAMES}
        assert sum(expected.values()) >= 2, surface
        text = (out / "surfaces" / f"{surface}.html").read_text()
        part = _drawn(text, "ulps")[candidates[surface]]
        _check_chart(part, expected, sum(expected.values()))
        # The furthest apart is a case that fails: it links to the case's page.
        shown = re.search(r'<p class="worst">The furthest apart: <a class="case-link" href="\.\./([^"]+)"><code>'
                          r'([^<]+)</code></a> ([^<]*)</p>', part)
        assert shown is not None, part
        assert html.unescape(shown.group(2)) == worst["id"] and f"{worst['ulps']} ULPs" in html.unescape(shown.group(3))
        assert f"<h1><code>{worst['id']}</code></h1>" in (out / shown.group(1)).read_text()
        # Its candidate's page: the same counts, in a row of its table.
        page = (out / "candidates" / f"{candidates[surface]}.html").read_text()
        row = re.search(rf'<tr data-surface="{re.escape(surface)}">(.*?)</tr>', page, re.S)
        assert row is not None
        cells = dict(re.findall(r'<td data-bin="([^"]+)">(\d+)</td>', row.group(1)))
        assert {html.unescape(k): int(v) for k, v in cells.items()} == expected
    fsum = _floats(wrong_floats["metric.compute"])["metric.compute"][0]
    assert fsum["1"] and fsum["far"]  # last bits off, and the overflowing ints
    assert set(_floats(wrong_floats["evsys.metric"])["evsys.metric"][0]) == {"far"}  # never a last bit off


def test_a_surface_page_draws_generated_inputs_by_feature_marking_a_shortfall(tmp_path):
    report = site_reports.shapes_report(tmp_path / "shaper.jsonl")
    out = tmp_path / "site"
    build([report], out)
    text = (out / "surfaces" / "reward.parse.html").read_text()
    part = _drawn(text, "shapes")["shaper"]
    drawn = _check_chart(part, site_reports.FEATURES, site_reports.DRAWN)
    short = {name for name, least in site_reports.MINIMUMS.items()
             if site_reports.FEATURES.get(name, 0) / site_reports.DRAWN < least}
    assert short == {"negative"}  # 4 of 200 is 2 %, below 5 %
    for key, _, marked, inner in drawn:
        assert marked == (key in short), key
        # A minimum is a mark on the bar's row; one below it says so in words, not by colour alone.
        assert ('<line class="minimum"' in inner) == (key in site_reports.MINIMUMS), key
        assert (f"✘ below its minimum, {100 * site_reports.MINIMUMS.get(key, 0):.1f} %" in inner) == (key in short)
    reached = {key: (minimum, said) for key, _, _, minimum, said in _table(part)}
    assert reached == {key: ((f"{100 * site_reports.MINIMUMS[key]:.1f} %", "✘ no: below its minimum" if key in short
                              else "✔ yes") if key in site_reports.MINIMUMS else ("–", "–"))
                       for key in site_reports.FEATURES}
    assert "gate fail: the run does not conform" in part
    # The float mismatches: the furthest is a generated finding, which no case page has: its id, not a link.
    counted, worst = _floats(report)["reward.parse"]
    floats = _drawn(text, "ulps")["shaper"]
    _check_chart(floats, {name: counted[name] for name in BUCKET_NAMES}, sum(counted.values()))
    assert worst["id"] == "reward.parse::gen-far"
    assert f'<p class="worst">The furthest apart: <code>{worst["id"]}</code> at' in floats


def test_hostile_feature_and_surface_names_are_text(tmp_path):
    hostile = site_reports.HOSTILE
    report = site_reports.shapes_report(tmp_path / "hostile.jsonl", name=hostile, surface=hostile,
                                        features={hostile: 3, "plain": 1}, minimums={hostile: 0.5})
    out = tmp_path / "site"
    build([report], out)
    (page,) = (out / "surfaces").glob("*.html")
    text = page.read_text()
    part = _drawn(text, "shapes")[hostile]
    assert [(key, count, short) for key, count, short, _ in _bars(part)] == [(hostile, 3, True), ("plain", 1, False)]
    assert [row[0] for row in _table(part)] == [hostile, "plain"]
    for written in _html(out).values():
        assert "<script>alert" not in written and "<img src=x" not in written
    assert "&lt;/pre&gt;&lt;script&gt;alert(" in part  # the name whole, as text
