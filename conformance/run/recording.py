"""Recording the answers and inputs that ship with the suite, and telling when they are stale.

``write`` certifies the reference with the ``ci`` profile against the live
oracle, in an answer cache and an input store of its own (and with no
earlier recording looked up), then keeps what they hold in
``oracles/recordings/`` (:mod:`conformance.oracle.recordings`). The
reference conforms, so the run's inputs are exactly those any conforming
candidate's ``ci`` run draws, and its answers all such a run asks.

``problems`` is what ``conformance recordings check`` (in ``nox -s lint``)
says: a recording of another oracle (lock, adapter, protocol), or stored
inputs whose key no longer matches the strategy code they were drawn with.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance import ORACLE_RELEASE, __version__
from conformance.connection import cached
from conformance.connection.connectors import connect, parse
from conformance.core import surfaces
from conformance.errors import UsageError
from conformance.oracle import answers, recordings
from conformance.run import certification, stored_inputs
from conformance.run.generate import PROFILES, surface_budget
from conformance.run.plan import Options
from conformance.run.runner import Oracle

PROFILE = "ci"


@dataclass(frozen=True)
class Written:
    answers: int
    sequences: int
    path: Path


def write(harbor_version: str = ORACLE_RELEASE, log: Callable[[str], None] = lambda message: None) -> Written:
    """Record harbor ``VERSION``'s answers to the corpus and to the ``ci`` inputs; UsageError when the reference
    does not conform (its answers would not be the ones a conforming candidate needs)."""
    from hypothesis import __version__ as hypothesis_version

    with tempfile.TemporaryDirectory(prefix="conformance-recording-") as scratch:
        folder = Path(scratch)
        store = answers.AnswerStore(folder / "answers" / answers.FILE)
        inputs = stored_inputs.InputStore(folder / "inputs", shipped=folder / "none")
        spec = parse(f"harbor=={harbor_version}")
        connection = cached.CachedOracle(spec, lambda: answers.identity(harbor_version, log), store,
                                         lambda: connect(spec, log=log))
        options = Options(candidate=parse("reference"), oracle=spec, profile=PROFILE)
        with Oracle(connection) as oracle:
            run = certification.certify(options, folder / "report.jsonl", log=log, oracle=oracle, inputs=inputs)
            identity = connection.oracle
            implementation = store.implementation(identity.digest) if identity is not None else None
            entries = store.entries(identity.digest) if identity is not None else []
        if not run.conforms:
            raise UsageError(f"the reference does not conform to harbor {harbor_version}: nothing recorded "
                             f"(its report: run `conformance certify -c reference --profile {PROFILE}`)")
        if identity is None or implementation is None:
            raise UsageError("the oracle answered nothing: nothing recorded")
        target = recordings.inputs_folder()
        shutil.rmtree(target, ignore_errors=True)
        copied = 0
        for file in sorted((folder / "inputs").glob("*/*.jsonl")):
            (target / file.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target / file.parent.name / file.name)
            copied += 1
        header = recordings.RecordingHeader(
            harbor_version=harbor_version, lock_hash=identity.lock_hash, python=identity.python,
            adapter=identity.adapter, protocol=identity.protocol, implementation=implementation,
            suite_version=__version__, hypothesis=hypothesis_version, entries=len(entries))
        path = recordings.path(harbor_version)
        recordings.write(path, header, entries)
        store.close()
    return Written(len(entries), copied, path)


def problems(harbor_version: str = ORACLE_RELEASE) -> list[str]:
    """What makes the shipped recording of ``VERSION`` stale or incomplete; none when it applies as it is."""
    path = recordings.path(harbor_version)
    header = recordings.read_header(path) if path.is_file() else None
    if header is None:
        return [f"{path}: no recording (`nox -s recordings` writes it)"]
    found = [f"{path}: {problem}" for problem in recordings.stale(header)]
    profile = PROFILES[PROFILE]
    assert profile.fixed_seed is not None
    for name in surfaces.with_generators():
        expected = stored_inputs.key(name, profile=PROFILE, seed=profile.fixed_seed,
                                     budget=surface_budget(profile, name), claimed=None)
        expected = stored_inputs.InputKey(**{**asdict(expected), "hypothesis": header.hypothesis})
        file = expected.file(recordings.inputs_folder())
        if stored_inputs.read_sequence(file, expected) is None:
            found.append(f"{file}: no {PROFILE} inputs recorded for {name} with its strategy code as it is now")
    return found
