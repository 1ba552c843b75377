"""Cases and generated inputs as pytest items: ``pytest cases --conformance-candidate SPEC [-n auto]``.

Without ``--conformance-candidate`` the plugin only declares its options
(every one namespaced, ``--conformance-*``) and collects nothing. With it,
every folder named after a surface yields its case files' cases and one
item for the surface's generated inputs, each run through the same code as
``conformance certify``; see docs/pytest.md.

The plugin is loaded by every pytest run where the suite is installed: this
module imports nothing of the harness; a run with the plugin on imports it
when it starts.
"""

from __future__ import annotations

import pytest

from conformance.pytest_plugin import options


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add(parser)


@pytest.hookimpl(trylast=True)  # after other plugins have declared their markers: a tag never takes one's name
def pytest_configure(config: pytest.Config) -> None:
    if options.candidate_text(config) is None:
        if stray := options.on_the_command_line(config):  # a forgotten candidate: say so, rather than run nothing
            raise pytest.UsageError(f"{', '.join(stray)} given without --conformance-candidate, without which the "
                                    "plugin collects nothing: add --conformance-candidate SPEC (see docs/pytest.md)")
        return
    from conformance.pytest_plugin import items
    from conformance.pytest_plugin.session import SUITE, Conformance

    suite = Conformance.start(config)
    config.stash[SUITE] = suite
    config.pluginmanager.register(suite, "harbor-conformance")  # the run: connections, report lines, the end
    config.pluginmanager.register(items, "harbor-conformance-items")  # the collection tree
