"""The ``conformance`` commands a reader of a report is told to run, as they are printed for copy and paste.

Here, below the command line, so that every account of a report (the console, the Markdown summary, the site)
prints them the same way without importing the command line.
"""

from __future__ import annotations

import shlex
from pathlib import Path


def command(*words: str) -> str:
    """A ``conformance`` command as it is printed for copy and paste: each word shell-quoted (a spec or a path
    may hold spaces, quotes or ``$``)."""
    return shlex.join(["conformance", *words])


def repro(report: Path | str, case_id: str) -> str:
    """The command that writes a reproducer of one case of ``report``: its requests and how to judge a reply."""
    words = [str(report), case_id]
    # A word that starts with a dash would be read as an option: `--` ends the options before it.
    return command("repro", *(["--"] if any(word.startswith("-") for word in words) else []), *words)
