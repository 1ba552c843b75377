"""The site as a reader sees it: Debian's Chromium, headless, driven by Selenium through the installed chromedriver.

The site is built from real reports (the reference and a candidate with one
bug, certified against the recorded oracle: offline) and a gate report made
by hand (tests/site_reports.py), opened from file:// (no server). What is
expected is counted here from the report lines (and the corpus's tags), or
known by hand (the float patterns), never taken from the site's own code.

Nothing is downloaded: the chromedriver's path is given (Selenium Manager is
never asked, and SE_OFFLINE forbids it anyway), the browser is the system's.
Skipped, saying so, only where Chromium or its driver is not installed
(`apt-get install chromium chromium-driver`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from conformance.corpus import cases
from tests import site_reports

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
NAIVE_SPEC = "tests.wrong_candidates:sum_naive"
NAIVE = "wrong-sum-naive"  # the name its handshake gives (tests/wrong_candidates.py): its row's title
SURFACES = ["metric.compute", "reward.parse"]
# How docs/site.md says a cell counts outcomes, and which status (symbol, word) it shows.
BUCKET = {"pass": "pass", "fail": "fail", "xpass": "fail", "error": "error", "crash": "error", "timeout": "error",
          "protocol-error": "error", "broken": "error", "skip": "skip", "xfail": "known"}
SHOWN = {"pass": "✔ pass", "fail": "✘ fail", "error": "⚠ error", "skip": "– skipped", "none": "· not run"}


def _installed(name: str) -> str | None:
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium, driver = _installed("chromium"), _installed("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("no Chromium and chromedriver installed (Debian: apt-get install chromium chromium-driver); "
                    f"found chromium={chromium}, chromedriver={driver}")
    before = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never download a browser or a driver
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,900", "--allow-file-access-from-files"):
        options.add_argument(argument)
    try:
        session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    finally:
        if before is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = before
    yield session
    session.quit()


@dataclass
class Built:
    site: Path
    reports: dict[str, Path]  # the matrix row's title -> its report


def _certify(candidate: str, report: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "conformance", "certify", "--candidate", candidate, "--oracle", "recorded",
            "--report", str(report), "--progress", "none"]
    for surface in SURFACES:
        args += ["--surface", surface]
    return subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("site-browser")
    reports = {"reference": folder / "reference.jsonl", NAIVE: folder / "sum_naive.jsonl"}
    specs = {"reference": "reference", NAIVE: NAIVE_SPEC}
    runs = {name: _certify(specs[name], path) for name, path in reports.items()}
    for name, run in runs.items():
        _, err = run.communicate(timeout=600)
        assert run.returncode == (0 if name == "reference" else 1), err.decode()
    reports[f"harbor {site_reports.RELEASE}"] = site_reports.gate_report(folder / "gate.jsonl")
    site = folder / "site"
    proc = subprocess.run([sys.executable, "-m", "conformance", "site", *map(str, reports.values()),
                           "--out", str(site)], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Built(site, reports)


def _lines(report: Path) -> list[dict]:
    return [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]


def _expected_cells(report: Path) -> dict[str, tuple[Counter[str], str]]:
    """Each surface's counts by bucket and its status, from the report's lines."""
    lines = _lines(report)
    counts: dict[str, Counter[str]] = {surface: Counter() for surface in lines[0]["surfaces"]}
    for line in lines:
        if line["type"] == "case" and line.get("origin", "case") == "case":
            counts.setdefault(line["surface"], Counter())[BUCKET[line["outcome"]]] += 1
    status = {}
    for surface, counted in counts.items():
        status[surface] = next((name for name in ("fail", "error", "skip") if counted[name]),
                               "pass" if counted["pass"] or counted["known"] else "none")
    return {surface: (counts[surface], status[surface]) for surface in counts}


def _number(text: str, n: int, word: str) -> bool:
    return re.search(rf"(?<!\d){n} {word}\b", text) is not None


def _open(browser: WebDriver, path: Path) -> None:
    browser.get(path.as_uri())


def test_the_matrix_shows_each_report_s_counts_and_statuses(browser, built, tmp_path):
    _open(browser, built.site / "index.html")
    rows = {row.get_attribute("data-row"): row for row in browser.find_elements(By.CSS_SELECTOR, "#matrix tbody tr")}
    assert set(rows) == set(built.reports)
    columns = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#matrix thead th")][2:]
    for title, report in built.reports.items():
        expected = _expected_cells(report)
        cells = {cell.get_attribute("data-surface"): cell for cell in rows[title].find_elements(By.CSS_SELECTOR,
                                                                                                 "td.cell")}
        assert list(cells) == columns
        for surface, cell in cells.items():
            text = cell.text
            if surface not in expected:
                assert text == SHOWN["none"], (title, surface, text)
                continue
            counted, status = expected[surface]
            assert text.startswith(SHOWN[status]), (title, surface, text)
            for bucket in ("pass", "fail", "skip", "error"):
                assert _number(text, counted[bucket], bucket), (title, surface, bucket, text)
            if counted["known"]:
                assert _number(text, counted["known"], "known"), (title, surface, text)
        # The row names the report's oracle, suite version and generation.
        head = _lines(report)[0]
        facts = rows[title].find_element(By.CSS_SELECTOR, ".row-facts").text
        assert head["oracle"]["spec"] in facts and head["suite_version"] in facts and "cases only" in facts
    # The failing candidate fails exactly where its report has failures.
    naive = _expected_cells(built.reports[NAIVE])
    assert [s for s, (counted, _) in naive.items() if counted["fail"]] == ["metric.compute"]
    shot = tmp_path / "index.png"
    assert browser.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _entry(browser: WebDriver, case_id: str) -> WebElement:
    return browser.find_element(By.CSS_SELECTOR, f'article.entry[data-id="{case_id}"]')


def test_a_failure_shows_both_sides_and_the_bits_that_differ(browser, built, tmp_path):
    _open(browser, built.site / "index.html")
    browser.find_element(By.LINK_TEXT, NAIVE).click()
    line = next(x for x in _lines(built.reports[NAIVE]) if x.get("id") == "metric.compute::sum-tenth-times-ten")
    (mismatch,) = line["mismatches"]
    entry = _entry(browser, line["id"])
    # Python 3.12's compensated sum of ten 0.1 is 1.0; adding left to right gives the float just below it.
    assert entry.find_element(By.CSS_SELECTOR, ".side-oracle").text == "{'sum': 1.0}"
    assert entry.find_element(By.CSS_SELECTOR, ".side-candidate").text == "{'sum': 0.9999999999999999}"
    assert "Sum of ten 0.1 rewards" in entry.text  # the case's description, from its file
    expected, actual = int(mismatch["expected_bits"], 16), int(mismatch["actual_bits"], 16)
    for kind, bits in (("oracle", expected), ("candidate", actual)):
        fields = entry.find_elements(By.CSS_SELECTOR, f"table.bits tr.pattern-{kind} td.field")
        assert [f.text for f in fields] == [format(bits, "064b")[:1], format(bits, "064b")[1:12],
                                           format(bits, "064b")[12:]]
    marked = entry.find_elements(By.CSS_SELECTOR, "table.bits tr.pattern-candidate .bit.diff")
    assert len(marked) == bin(expected ^ actual).count("1") == 53
    assert "1 ULP apart" in entry.find_element(By.CSS_SELECTOR, "table.bits caption").text
    link = entry.find_element(By.CSS_SELECTOR, "a.case-file")
    assert link.text.startswith("cases/metric.compute/summation.yaml:")
    link.click()
    target = browser.find_element(By.CSS_SELECTOR, "tr:target")
    assert "id: metric.compute::sum-tenth-times-ten" in target.text
    browser.back()
    shot = tmp_path / "candidate.png"
    assert browser.save_screenshot(str(shot))


def test_the_filters_narrow_the_failures(browser, built):
    _open(browser, built.site / "index.html")
    browser.find_element(By.LINK_TEXT, NAIVE).click()
    lines = [x for x in _lines(built.reports[NAIVE]) if x["type"] == "case" and x["outcome"] != "pass"]
    failing = [x["id"] for x in lines]
    tags = {item.id: set(item.case.tags) for item in cases.load_corpus(REPO / "cases")}
    with_mean = [case_id for case_id in failing if "mean" in tags[case_id]]
    assert 0 < len(with_mean) < len(failing)
    classes = {x["id"]: {m["cls"] for m in x.get("mismatches", [])} for x in lines}
    with_mean_ulp = [case_id for case_id in with_mean if "ulp" in classes[case_id]]
    assert with_mean_ulp  # the naive sum is a last bit off somewhere (and far off elsewhere: float-far)

    def shown() -> list[str]:
        return [e.get_attribute("data-id") for e in browser.find_elements(By.CSS_SELECTOR, "article.entry")
                if e.is_displayed()]

    count = browser.find_element(By.ID, "filter-count")
    assert sorted(shown()) == sorted(failing) and count.text == f"{len(failing)} of {len(failing)} shown"
    Select(browser.find_element(By.ID, "filter-tag")).select_by_value("mean")
    assert sorted(shown()) == sorted(with_mean) and count.text == f"{len(with_mean)} of {len(failing)} shown"
    Select(browser.find_element(By.ID, "filter-class")).select_by_value("ulp")
    assert sorted(shown()) == sorted(with_mean_ulp)
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=reset]").click()
    # The page filters again once the form's controls are reset, in a task after the reset event: wait for it.
    WebDriverWait(browser, 10).until(lambda _: count.text == f"{len(failing)} of {len(failing)} shown")
    assert sorted(shown()) == sorted(failing)


def test_a_release_page_lists_what_changed_with_its_reason(browser, built):
    _open(browser, built.site / "index.html")
    browser.find_element(By.LINK_TEXT, f"harbor {site_reports.RELEASE}").click()
    changes = browser.find_elements(By.CSS_SELECTOR, "section.change")
    assert "unlisted" in changes[0].get_attribute("class")
    assert "✘ not in the expectation file" in changes[0].text and site_reports.UNLISTED in changes[0].text
    assert "Gate FAILED" in browser.find_element(By.CSS_SELECTOR, "p.lead").text
    reasons = [c.find_element(By.CSS_SELECTOR, "p.reason").text for c in changes[1:]]
    assert any(r.startswith("harbor 0.23.0: reward files are validated strictly") for r in reasons)


def test_a_hostile_candidate_runs_no_script(browser, tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "conformance", "site",
                           *map(str, site_reports.hostile_reports(tmp_path)), "--out", str(site)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for page in sorted(site.rglob("*.html")):
        _open(browser, page)
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text  # noqa: B018 (reading it is what raises)
        assert not browser.find_elements(By.CSS_SELECTOR, "main img, main script")
    _open(browser, next(site.glob("candidates/*.html")))
    assert site_reports.HOSTILE in browser.find_element(By.CSS_SELECTOR, ".side-candidate").text


RAN = {"pass": "pass", "xpass": "pass", "skip": None, "broken": None}  # any other outcome: a failure, across candidates


def _answers(report: Path) -> dict[str, str | None]:
    """Each case's answer in a report, as docs/site.md says the view across candidates reads it."""
    return {x["id"]: RAN.get(x["outcome"], "fail") for x in _lines(report)
            if x["type"] == "case" and x.get("origin", "case") == "case"}


def test_the_view_across_candidates_and_a_case_page(browser, built, tmp_path):
    reference, naive = _answers(built.reports["reference"]), _answers(built.reports[NAIVE])
    _open(browser, built.site / "index.html")
    table = browser.find_element(By.ID, "interop")
    assert [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")][:5] == [
        "surface", "candidates", "cases", "run by every candidate", "every candidate passes"]
    rows = {tr.get_attribute("data-surface"): tr for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")}
    assert sorted(rows) == SURFACES
    for surface in SURFACES:  # the gate report is not a candidate: only the two candidates' answers count
        ids = {i for i in [*reference, *naive] if i.startswith(f"{surface}::")}
        common = [i for i in ids if reference.get(i) is not None and naive.get(i) is not None]
        agreed = [i for i in common if reference[i] == naive[i] == "pass"]
        share = rows[surface].find_element(By.CSS_SELECTOR, "td.share").text
        assert share == f"{len(agreed)} of {len(common)} ({100 * len(agreed) / len(common):.1f} %)", surface
    # Every case the naive sum fails, the reference passes: each fails in exactly one candidate, named.
    failing = sorted(i for i, said in naive.items() if said == "fail")
    assert failing and all(reference[i] == "pass" for i in failing)
    one = browser.find_elements(By.CSS_SELECTOR, "section.divergences-one tr[data-id]")
    assert [r.get_attribute("data-id") for r in one] == failing[:20]
    assert {r.find_element(By.CSS_SELECTOR, "td.failing-in").text.split()[0] for r in one} == {NAIVE}
    assert not browser.find_elements(By.CSS_SELECTOR, "section.divergences-all tr[data-id]")
    shot = tmp_path / "across.png"
    assert browser.save_screenshot(str(shot))

    # From the candidate's failure entry to the case's page: both candidates' answers beside the oracle's.
    browser.find_element(By.LINK_TEXT, NAIVE).click()
    case_id = "metric.compute::sum-tenth-times-ten"
    _entry(browser, case_id).find_element(By.CSS_SELECTOR, "a.case-page").click()
    assert browser.find_element(By.CSS_SELECTOR, "h1").text == case_id
    answers = {tr.get_attribute("data-candidate"): tr
               for tr in browser.find_elements(By.CSS_SELECTOR, "table#answers-table tbody tr")}
    assert list(answers) == ["reference", NAIVE]
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "table#answers-table thead th")]
    assert headers[2:6] == ["status", "outcome", "oracle's answer", "candidate's answer"]
    below = "0.9999999999999999"  # the float just below 1.0, as the naive sum gives it
    for name, status, said in (("reference", "✔ pass", "{'sum': 1.0}"), (NAIVE, "✘ fail", f"{{'sum': {below}}}")):
        cells = answers[name].find_elements(By.CSS_SELECTOR, "td")
        assert cells[1].text == status and cells[3].text == "{'sum': 1.0}" and cells[4].text == said, name
    differences = [tr.find_elements(By.CSS_SELECTOR, "td")[5].text for tr in answers.values()]
    assert differences[0] == "–" and below in differences[1]
    shot = tmp_path / "case.png"
    assert browser.save_screenshot(str(shot))

    # The surface's page: its lists, and each candidate's distributions (these runs ran cases only).
    browser.find_element(By.CSS_SELECTOR, "p.lead a").click()
    assert browser.find_element(By.CSS_SELECTOR, "h1").text == "metric.compute across candidates"
    listed = browser.find_elements(By.CSS_SELECTOR, "section.divergences-one tr[data-id]")
    assert [r.get_attribute("data-id") for r in listed] == [i for i in failing if i.startswith("metric.compute::")]
    shapes = _parts(browser, "shapes")
    assert {name: part.find_element(By.CSS_SELECTOR, "p.absent").text for name, part in shapes.items()} == {
        "reference": "Its latest run generated no input: it ran cases only.",
        NAIVE: "Its latest run generated no input: it ran cases only."}
    floats = _parts(browser, "ulps")
    assert floats["reference"].find_element(By.CSS_SELECTOR, "p.absent").text == "No float mismatch in its latest run."
    ulps = Counter(site_reports.ulp_bucket(m) for x in _lines(built.reports[NAIVE]) if x["type"] == "case"
                   and x["surface"] == "metric.compute" for m in x.get("mismatches", []) if m.get("ulps") is not None)
    assert ulps["1"]  # the naive sum is a last bit off
    assert _shown_bars(floats[NAIVE]) == {name: ulps[name] for name in site_reports.BUCKET_NAMES}
    shot = tmp_path / "surface.png"
    assert browser.save_screenshot(str(shot))


def _parts(browser: WebDriver, section: str) -> dict[str, WebElement]:
    """A surface page's section (shapes, ulps): each candidate's part, by its name."""
    parts = browser.find_element(By.ID, section).find_elements(By.CSS_SELECTOR, "section.drawn")
    return {part.get_attribute("data-candidate"): part for part in parts}


def _shown_bars(part: WebElement) -> dict[str, int]:
    """A chart as drawn: an image the size the page gives it, a bar per bin (each bar with a label and, when it
    counts something, a length), and its table holding the same counts (in a closed <details>)."""
    svg = part.find_element(By.CSS_SELECTOR, "svg.bar-chart")
    assert svg.get_attribute("role") == "img" and svg.size["width"] > 0 and svg.size["height"] > 0
    assert svg.find_element(By.CSS_SELECTOR, "title").get_attribute("textContent")
    bars = {}
    for bar in svg.find_elements(By.CSS_SELECTOR, "g.bar"):
        count = int(bar.get_attribute("data-count"))
        bars[bar.get_attribute("data-bin")] = count
        assert bar.find_element(By.CSS_SELECTOR, "text.bar-label").size["width"] > 0
        assert (bar.find_element(By.CSS_SELECTOR, "rect").size["width"] > 0) == (count > 0)
    rows = part.find_elements(By.CSS_SELECTOR, "table.distribution tbody tr")
    assert {r.get_attribute("data-bin"): int(r.find_elements(By.CSS_SELECTOR, "td")[0].get_attribute("textContent"))
            for r in rows} == bars
    part.find_element(By.CSS_SELECTOR, "details summary").click()
    assert part.find_element(By.CSS_SELECTOR, "table.distribution").is_displayed()
    return bars


def test_a_surface_page_draws_generated_inputs_by_feature_and_floats_by_ulps(browser, tmp_path):
    report = site_reports.shapes_report(tmp_path / "shaper.jsonl")
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "conformance", "site", str(report), "--out", str(site)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _open(browser, site / "surfaces" / "reward.parse.html")
    shapes = _parts(browser, "shapes")["shaper"]
    assert _shown_bars(shapes) == site_reports.FEATURES
    short = [b for b in shapes.find_elements(By.CSS_SELECTOR, "g.bar")
             if "below its minimum" in b.find_element(By.CSS_SELECTOR, "text.bar-value").text]
    assert [b.get_attribute("data-bin") for b in short] == ["negative"]  # 4 of 200, under its 5 %
    assert short[0].find_element(By.CSS_SELECTOR, "line.minimum").size["height"] > 0
    floats = _parts(browser, "ulps")["shaper"]
    ulps = [m for x in _lines(report) if x["type"] == "case" for m in x.get("mismatches", [])]
    assert sum(_shown_bars(floats).values()) == len(ulps)
    assert "reward.parse::gen-far" in floats.find_element(By.CSS_SELECTOR, "p.worst").text
    assert browser.save_screenshot(str(tmp_path / "distributions.png"))
