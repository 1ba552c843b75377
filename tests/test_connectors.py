"""Specs are parsed once, by the connectors table, into values; a new kind of spec is one registration."""

from __future__ import annotations

import pytest

from conformance.connection import connectors
from conformance.connection.base import ConnectError, Settings
from conformance.connection.breaker import Breaker
from conformance.connection.connectors import connect, parse
from conformance.connection.in_process import InProcess
from conformance.connection.spec import Spec
from conformance.core.outcomes import ReplyKind
from conformance.core.registry import Registry


@pytest.mark.parametrize(("text", "kind", "target"), [
    ("exec:./my-runner --conformance", "exec", "./my-runner --conformance"),
    ("harbor==0.25.0", "harbor", "0.25.0"),
    ("evsys:pass@3", "evsys", "pass@3"),
    ("evsys:my_pkg.metrics:Worst", "evsys", "my_pkg.metrics:Worst"),  # evsys: before module:attr
    ("my_pkg.scoring:candidate", "python", "my_pkg.scoring:candidate"),
    ("reference", "registered", "reference"),
])
def test_each_kind_of_spec_is_recognised_by_its_connector(text, kind, target):
    assert parse(text) == Spec(text, kind, target)


def test_a_spec_says_its_harbor_release_and_its_report_id():
    assert parse("harbor==0.25.0").harbor_version == "0.25.0"
    assert parse("exec:./my-runner").harbor_version is None
    assert parse("exec:./my runner --flag").report_id == "exec_._my_runner_--flag"
    assert str(parse("reference")) == "reference"


def test_an_unknown_spec_names_the_kinds_there_are():
    with pytest.raises(ConnectError) as refused:
        parse("no-such-runner")
    message = str(refused.value)
    assert "unknown candidate 'no-such-runner'" in message
    assert all(usage in message for usage in ("reference", "exec:COMMAND", "harbor==VERSION", "evsys:NAME",
                                              "module:attr"))
    assert refused.value.exit_code == 2


def test_a_registered_name_is_reported_under_the_name_asked_for():
    with connect("reference") as connection:
        assert connection.spec == Spec("reference", "python", "conformance.reference:candidate")
        assert connection.implementation is not None and connection.implementation.name == "reference"


class _Echo:
    """A connector of another kind: ``echo:NAME`` serves the reference under that name."""

    kind = "echo"
    usage = "echo:NAME"
    description = "the reference, renamed"

    def target(self, text):
        return text[len("echo:"):] if text.startswith("echo:") else None

    def connect(self, spec, settings: Settings):
        from conformance.reference import candidate

        return InProcess(spec, candidate, validate=settings.validate)


def test_a_new_kind_of_spec_is_one_registration_in_the_table(monkeypatch):
    table = Registry("connector", "harbor_conformance.test-connectors")
    table.register("echo")(_Echo())
    for kind, connector in connectors.CONNECTORS.items():
        table.register(kind)(connector)
    monkeypatch.setattr(connectors, "CONNECTORS", table)
    spec = parse("echo:renamed")
    assert spec == Spec("echo:renamed", "echo", "renamed")
    with connect(spec, validate=True) as connection:
        assert connection.spec is spec and connection.implementation is not None
    with pytest.raises(ConnectError, match="echo:NAME"):
        parse("nothing-of-the-sort")


def test_a_candidate_that_never_started_is_still_a_connection_answering_broken():
    breaker = Breaker.never_started(parse("exec:./gone"), "crash: exited at once")
    assert breaker.implementation is None and breaker.spec.text == "exec:./gone"
    reply = breaker.run(1, "reward.parse", None)
    assert reply.kind is ReplyKind.BROKEN and "did not start" in reply.detail
    assert [r.kind for r in breaker.run_batch([(2, "reward.parse", None), (3, "reward.parse", None)])] == [
        ReplyKind.BROKEN, ReplyKind.BROKEN]
    assert breaker.close() is None and breaker.batch_fallbacks == []


def test_the_reference_spec_the_commands_default_to_is_what_parsing_gives():
    from conformance.connection.connectors import REFERENCE

    assert REFERENCE == parse("reference")
