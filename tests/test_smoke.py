"""`conformance smoke`: whether a candidate speaks the protocol, with what to do when it does not."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from tests.test_hostile_candidates import chaos


def smoke(candidate: str, *extra: str):
    return CliRunner().invoke(app, ["smoke", "-c", candidate, "--timeout", "10", "--timeout-multiplier", "0.3",
                                    *extra])


def test_a_candidate_that_speaks_the_protocol(tmp_path):
    result = smoke(chaos(tmp_path))
    assert result.exit_code == 0, result.output
    assert "speaks the protocol" in result.output and "FAIL" not in result.output
    assert "run reward.parse" in result.output and "run smoke.no-such-surface: skipped" in result.output


# A hang on start waits out the whole start timeout (120 s, scaled): the smallest scale that still starts a
# well-behaved candidate on a loaded machine keeps it short.
HANG_ON_START = ("--timeout-multiplier", "0.02")


@pytest.mark.slow
@pytest.mark.parametrize(("plan", "step", "said", "hint"), [
    ({"starts": ["hang"]}, "handshake", "no handshake within", "flush stdout"),
    ({"starts": ["garbage"]}, "handshake", "not-protocol", "send logs, banners and progress to stderr"),
    ({"starts": ["bad-handshake"]}, "handshake", "implementation.name", "reply to start with"),
    ({"starts": ["crash"]}, "handshake", "chaos: crash on start", "stderr tail"),
    ({"runs": ["wrong-seq"]}, "run evsys.metric", "wrong-seq", "echo the request's seq"),
    ({"runs": ["split-reply"]}, "run evsys.metric", "split-reply", "no pretty-printing"),
    ({"runs": ["float-seq"]}, "run evsys.metric", "schema-violation", "conformance/schemas/"),
    ({"stop": "hang"}, "stop", "still running", "exit when you read"),
])
def test_each_problem_is_named_with_what_to_do(tmp_path, plan, step, said, hint):
    result = smoke(chaos(tmp_path, **plan), *(HANG_ON_START if plan == {"starts": ["hang"]} else ()))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    failed = [i for i, line in enumerate(lines) if line.startswith(f"FAIL {step}:")]
    assert len(failed) == 1, result.output
    block = lines[failed[0]:]
    said_end = next(i for i, line in enumerate(block) if line.lstrip().startswith("->"))
    assert said in "\n".join(block[:said_end]) and hint in block[said_end]


def test_a_program_that_cannot_start_is_a_usage_error(tmp_path):
    result = smoke(f"exec:{tmp_path / 'no-such-program'}")
    assert result.exit_code == 2 and "cannot start" in result.output
