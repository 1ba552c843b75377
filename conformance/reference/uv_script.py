"""The ``uv-script`` metric: rewards to a JSONL file, ``uv run SCRIPT -i IN -o OUT``, the JSON it writes.

What harbor 0.13.1 does, written from its observed behaviour: one line per
trial, ``null`` for a trial without rewards, otherwise ``json.dump`` with its
default spelling (``NaN``/``Infinity`` tokens, ASCII escapes); a non-zero exit
is a RuntimeError; the output file is read back as whatever JSON it holds.
The script runs in the request's working folder (``kit.candidate.working_folder``)
and in the environment the suite gives every side (uv on PATH, the oracle's
Python; see ``conformance.oracle.environments.script_environment``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conformance.kit.candidate import current_folder, held_folder, in_folder


class UvScriptMetric:
    def __init__(self, script_path: Any) -> None:
        self.script_path = Path(script_path)
        if not in_folder(self.script_path).exists():  # relative to the request's folder, as to a job's
            raise FileNotFoundError(f"Script file not found: {self.script_path}")

    @staticmethod
    def jsonl_line(reward: dict[str, Any] | None) -> str:
        """One trial's line of the rewards file."""
        return "null\n" if reward is None else json.dumps(reward) + "\n"

    def compute(self, rewards: list[Any]) -> Any:
        from conformance.oracle.environments import script_environment

        with held_folder("metric-") as folder:
            input_path, output_path = folder / "rewards.jsonl", folder / "metric.json"
            input_path.write_text("".join(map(self.jsonl_line, rewards)), encoding="utf-8")
            result = subprocess.run(
                ["uv", "run", str(self.script_path), "-i", str(input_path), "-o", str(output_path)],
                capture_output=True, text=True, env=script_environment(), cwd=current_folder(),
            )
            if result.returncode != 0:
                raise RuntimeError(f"Failed to compute custom metric: {result.stderr}")
            return json.loads(output_path.read_text(encoding="utf-8"))
