"""The site's pages drawn from their templates, with its assets, into a folder: whole or not at all.

Templates and assets ship inside the package (``templates/``, ``assets/``);
the site needs no server and no network: its pages link only to each other
and to the copied assets, so it opens from ``file://`` as well as from a
static host. Autoescaping is on for every template: each text a report holds
(a candidate's output, a message, a spec) is written as text, never as markup.

The pages are written into a new folder beside ``out`` and moved into place
once all are written; a site written before (it holds ``site.json``) is
replaced, any other folder that is not empty is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from conformance import SUITE, __version__
from conformance.errors import UsageError
from conformance.site.model import ERROR, FAIL, PASS, STATUSES, Site

MANIFEST = "site.json"  # says a folder is a site this command wrote, so it may be replaced


class SiteError(UsageError):
    """The site cannot be written where asked."""


def environment() -> Environment:
    env = Environment(loader=PackageLoader("conformance.site", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(suite=SUITE, suite_version=__version__, statuses=STATUSES, PASS=PASS, FAIL=FAIL, ERROR=ERROR)
    return env


def _root(page: str) -> str:
    """The way back to the site's root from a page: every link on the page starts with it."""
    return "../" * (len(PurePosixPath(page).parts) - 1)


def pages(site: Site) -> dict[str, str]:
    """Each page's text, by its path from the site's root."""
    env = environment()

    def draw(template: str, path: str, **values: Any) -> tuple[str, str]:
        return path, env.get_template(template).render(root=_root(path), page_path=path, **values)

    drawn = [draw("index.html", "index.html", site=site, index=site.index)]
    drawn += [draw("candidate.html", page.path, site=site, page=page) for page in site.candidates]
    drawn += [draw("release.html", page.path, site=site, page=page) for page in site.releases]
    drawn += [draw("case_file.html", page.path, site=site, page=page) for page in site.case_files]
    drawn += [draw("surface.html", page.path, site=site, page=page) for page in site.surface_pages]
    drawn += [draw("case.html", page.path, site=site, page=page) for page in site.case_pages]
    return dict(drawn)


def _copy_assets(source: Traversable, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_dir():
            _copy_assets(item, target / item.name)
        elif not item.name.startswith("."):
            (target / item.name).write_bytes(item.read_bytes())


def _manifest(site: Site, written: list[str]) -> str:
    return json.dumps({"suite": SUITE, "suite_version": __version__, "pages": sorted(written),
                       "reports": [facts.file for facts in site.index.reports]}, indent=2) + "\n"


def _check_target(out: Path) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SiteError(f"--out {out}: not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise SiteError(f"--out {out}: a folder that holds other files (no {MANIFEST}: not a site this command "
                        "wrote); give an empty or new folder")


def write(site: Site, out: Path) -> list[str]:
    """Write the site into ``out``; the pages' paths (from ``out``). Nothing is left in ``out`` unless every page
    was written."""
    _check_target(out)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        drawn = pages(site)
        for path, text in drawn.items():
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _copy_assets(resources.files("conformance.site") / "assets", staging / "assets")
        (staging / MANIFEST).write_text(_manifest(site, list(drawn)), encoding="utf-8")
        os.chmod(staging, 0o755)  # mkdtemp's 0700 would keep a web server out
        _replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return list(drawn)


def _replace(staging: Path, out: Path) -> None:
    """Move the new site into place; an earlier one (or an empty folder) is moved aside, then removed."""
    if not out.exists():
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.absolute().parent))
    old.rmdir()
    out.rename(old)
    try:
        staging.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
