"""What the harness leaves of the process it runs in: its import path, Hypothesis, the garbage collector.

Campaign workers run tasks in threads, and the pytest plugin runs inside someone else's test session: a
connection, a generator round or a batch's coding changes nothing process-wide that it does not put back, and
what it must change (Hypothesis's mining of local constants) it changes once, on purpose, here tested against
the Hypothesis installed.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import sys
import threading

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from conformance.connection.connectors import connect
from conformance.kit import wire
from conformance.run import generate

CANDIDATE_MODULE = '''
from conformance.kit.candidate import Candidate

candidate = Candidate("beside-the-working-directory", "1.0")


@candidate.surface("pass_at_k")
def pass_at_k(request):
    return 0.0
'''


# -- the import path ---------------------------------------------------------------


def test_a_module_attr_candidate_loads_from_the_working_directory_and_sys_path_is_left_alone(tmp_path, monkeypatch):
    (tmp_path / "beside_here_candidate.py").write_text(CANDIDATE_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "beside_here_candidate", raising=False)
    assert str(tmp_path) not in sys.path
    before = list(sys.path)
    with connect("beside_here_candidate:candidate") as connection:
        assert connection.implementation is not None
        assert connection.implementation.name == "beside-the-working-directory"
    assert sys.path == before


def test_a_missing_module_leaves_sys_path_alone_too(tmp_path, monkeypatch):
    from conformance.connection.base import ConnectError

    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    with pytest.raises(ConnectError, match="cannot import"):
        connect("no_such_module_here:candidate")
    assert sys.path == before


def test_a_working_directory_already_on_sys_path_stays_there(tmp_path, monkeypatch):
    (tmp_path / "already_there_candidate.py").write_text(CANDIDATE_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "already_there_candidate", raising=False)
    before = list(sys.path)
    with connect("already_there_candidate:candidate"):
        pass
    assert sys.path == before


# -- Hypothesis's local constants --------------------------------------------------------


def test_the_private_hypothesis_function_replaced_is_still_there_and_still_used():
    # generate.inputs_independent_of_imports replaces providers._get_local_constants: if a Hypothesis release
    # renames or reshapes it, the replacement would silently do nothing. This says so first.
    from hypothesis.internal.conjecture import providers

    assert callable(providers._get_local_constants)
    assert not [p for p in inspect.signature(providers._get_local_constants).parameters.values()
                if p.default is inspect.Parameter.empty]
    assert len(providers.Constants()) == 0
    assert callable(providers.CONSTANTS_CACHE.cache.clear)
    # the provider looks the function up by its module-global name, each time it needs local constants
    local_constants = providers.HypothesisProvider.__dict__["_local_constants"]
    assert "_get_local_constants" in local_constants.func.__code__.co_names


def test_local_constants_are_turned_off_once_and_stay_off(tmp_path, monkeypatch):
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import constants_from_module, is_local_module_file

    threads = [threading.Thread(target=generate.inputs_independent_of_imports) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    generate.inputs_independent_of_imports()
    assert providers._get_local_constants is generate._no_local_constants

    module_file = tmp_path / "module_with_literals.py"
    module_file.write_text('WORDS = ["0.5e-3", "NaN", "-0", "reward", "1_0", " 1 "]\nNUMBERS = [12345, 99999, 2**70]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("module_with_literals")
    assert is_local_module_file(str(module_file))  # Hypothesis would mine it ...
    assert len(constants_from_module(module)) > 0
    assert len(providers.HypothesisProvider(None)._local_constants) == 0  # ... but finds nothing now


def test_a_seed_draws_the_same_whatever_local_modules_are_imported(tmp_path, monkeypatch):
    generate.inputs_independent_of_imports()
    drawn: list = []

    @seed(7)
    @settings(max_examples=200, database=None, deadline=None)
    @given(st.text(max_size=8) | st.integers())
    def draw(value):
        drawn.append(value)

    draw()
    before = list(drawn)
    (tmp_path / "more_literals.py").write_text('TEXT = ["zebra-crossing", "qq", "9e9"]\nN = [424242, -31337]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("more_literals")
    drawn.clear()
    draw()
    assert drawn == before


# -- the garbage collector's pause ---------------------------------------------------------


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_pause_is_counted_across_threads_whichever_ends_first(collector_on):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with wire.gc_paused:
            first_in.set()
            second_in.wait()
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait()
    with wire.gc_paused:
        second_in.set()
        first_out.wait()
        assert not gc.isenabled()  # the other thread's pause ended first: this one's still holds
        thread.join()
    assert gc.isenabled()


def test_the_pause_nests_and_leaves_a_collector_turned_off_off(collector_on):
    with wire.gc_paused:
        with wire.gc_paused:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with wire.gc_paused:
        pass
    assert not gc.isenabled()


def test_the_pause_ends_on_an_error(collector_on):
    with pytest.raises(wire.WireError):
        wire.decode([{"int": "x"}])
    with pytest.raises(RuntimeError), wire.gc_paused:
        raise RuntimeError
    assert gc.isenabled()


def test_the_shrinkers_repr_warning_is_filtered_for_the_process_not_swapped_per_round():
    import ast
    import warnings
    from pathlib import Path

    from hypothesis.errors import HypothesisWarning

    from conformance.run import generate

    generate.quiet_warnings()
    generate.quiet_warnings()
    assert sum(1 for f in warnings.filters if f[1] is not None and f[1].pattern == "Generating overly large repr") == 1
    assert any(action == "ignore" and category is HypothesisWarning and message is not None
               and message.match("Generating overly large repr") for action, message, category, *_ in warnings.filters)
    # catch_warnings() saves and restores the process's filters: two threads' rounds would undo each other's.
    tree = ast.parse(Path(generate.__file__).read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "catch_warnings"]
