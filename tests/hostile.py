"""What every attack on the harness is held to, and the harness run apart from the test runner to measure it.

A run under attack ends with a whole report, exit status 1 (the candidate
does not conform; 2 would be the harness refusing its own input), no
traceback, the harness under ``RSS_LIMIT_MB`` resident, and no process left.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

RSS_LIMIT_MB = 300


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it only waits for whoever reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


# Runs the CLI in this process and writes the process's peak resident memory, in KiB, on stderr's last line.
# VmHWM, not getrusage's ru_maxrss: Linux carries the parent's high-water mark across fork and exec into
# ru_maxrss, so a test runner that has grown would be measured instead of the harness.
CLI = """
import re, sys
from pathlib import Path
from conformance.cli.app import main
sys.argv = ["conformance", *sys.argv[1:]]
try:
    main()
    code = 0
except SystemExit as e:
    code = e.code
peak = re.search(r"^VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text(), re.M)
sys.stderr.write(f"\\nmaxrss-kib {peak[1]}\\n")
sys.exit(code)
"""


class CliRun:
    def __init__(self, tmp_path: Path, spec: str, *options: str) -> None:
        self.temp = tmp_path / "temp"  # the harness's TMPDIR: its candidates' working directories go there
        self.temp.mkdir(exist_ok=True)
        self.report = tmp_path / "report.jsonl"
        self.argv = [sys.executable, "-c", CLI, "certify", "-c", spec, "--oracle", "recorded", "-s", "reward.parse",
                     "--no-generate", "--progress", "none", "--report", str(self.report), *options]
        self.env = {**os.environ, "TMPDIR": str(self.temp)}

    def start(self) -> subprocess.Popen[str]:
        self.started = time.monotonic()
        return subprocess.Popen(self.argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, process: subprocess.Popen[str]) -> int:
        out, err = process.communicate(timeout=120)
        self.seconds = time.monotonic() - self.started
        self.stderr = err
        assert "maxrss-kib" in err, f"the harness did not finish: {out}\n{err}"
        self.rss_mb = int(err.rsplit("maxrss-kib", 1)[1]) / 1024
        print(f"peak RSS {self.rss_mb:.0f} MB, {self.seconds:.1f} s")
        return process.returncode

    def run(self) -> int:
        return self.finish(self.start())


def processes_naming(marker: str) -> list[int]:
    """The running processes whose command line holds ``marker`` (a test's own temporary path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline and running(int(entry.name)):
                found.append(int(entry.name))
    return found
