"""harbor's releases, as the package index lists them (PEP 691 JSON simple API).

The index is PyPI unless ``UV_INDEX_URL`` or ``PIP_INDEX_URL`` names another
(``.../simple``). Pre-releases, development releases and releases whose every
file is yanked are left out: the upgrade gate is for what a team would install.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any
from urllib.error import URLError

from packaging.version import InvalidVersion, Version

from conformance.oracle.environments import OracleSetupError

DEFAULT_INDEX = "https://pypi.org/simple"


def index_url() -> str:
    return (os.environ.get("UV_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX).rstrip("/")


def releases(project: str = "harbor", *, since: str | None = None, timeout: float = 30.0) -> list[str]:
    """Final releases of ``project``, oldest first, from ``since`` on (inclusive)."""
    request = urllib.request.Request(f"{index_url()}/{project}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.load(response)
    except (URLError, OSError, ValueError) as e:
        raise OracleSetupError(f"cannot list {project}'s releases from {index_url()}: {e}") from None
    return select(data, since)


def select(data: dict[str, Any], since: str | None = None) -> list[str]:
    """The final, not wholly yanked releases in a PEP 691 project page, oldest first."""
    live: set[Version] = set()
    for entry in data.get("files", []):
        version = _version_of(entry.get("filename", ""), data.get("name", ""))
        if version is not None and not entry.get("yanked"):
            live.add(version)
    floor = Version(since) if since else None
    chosen = sorted(v for v in live if not (v.is_prerelease or v.is_devrelease or v.is_postrelease)
                    and (floor is None or v >= floor))
    return [str(v) for v in chosen]


def _version_of(filename: str, name: str) -> Version | None:
    """The version in a wheel or sdist file name (``harbor-0.13.1-py3-none-any.whl``, ``harbor-0.13.1.tar.gz``)."""
    for suffix in (".whl", ".tar.gz", ".zip"):
        if filename.endswith(suffix):
            parts = filename[: -len(suffix)].split("-")
            break
    else:
        return None
    # Wheels and current sdists write the name with "_" for "-"; the version is the next part.
    if len(parts) < 2 or parts[0].lower().replace("_", "-") != name.lower():
        return None
    try:
        return Version(parts[1])
    except InvalidVersion:
        return None


def newest(project: str = "harbor") -> str:
    found = releases(project)
    if not found:
        raise OracleSetupError(f"{index_url()} lists no final release of {project}")
    return found[-1]
