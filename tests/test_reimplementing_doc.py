"""docs/reimplementing.md names the cases that pin each trap: every id it names is in the corpus."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.core import surfaces

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "reimplementing.md"
# A case id in backticks, `surface::slug`, of a registered surface (`char::is_whitespace` is Rust, no case).
NAMED = re.compile(r"`((?:" + "|".join(map(re.escape, surfaces.SURFACES)) + r")::[a-z0-9][a-z0-9._-]*)`")


def _named(text: str) -> list[str]:
    return NAMED.findall(text)


def test_every_case_id_the_page_names_exists(corpus):
    ids = {case.id for case in corpus}
    named = _named(DOC.read_text(encoding="utf-8"))
    assert len(named) >= 150, "the pattern no longer finds the page's ids"
    assert sorted(set(named) - ids) == []


def test_every_section_names_its_cases():
    sections = re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    assert len(sections) >= 9
    assert [s.splitlines()[0] for s in sections if not _named(s)] == []


def test_the_readme_links_the_page():
    assert "(docs/reimplementing.md)" in (REPO / "README.md").read_text(encoding="utf-8")
