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

``oracle_environment`` is what ``conformance recordings needed`` says (the
GitHub Action asks it before it sets up a CPython 3.12 and the oracle's
virtualenv): whether a certify run with these options could be answered
entirely from the recordings, were its candidate to conform.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance import ORACLE_RELEASE, __version__
from conformance.connection import cached
from conformance.connection.connectors import connect, parse
from conformance.core import surfaces
from conformance.errors import UsageError
from conformance.oracle import answers, recordings
from conformance.run import certification, config, stored_inputs
from conformance.run.flags import FLAGS
from conformance.run.generate import PROFILES, surface_budget
from conformance.run.plan import Options
from conformance.run.runner import RECORDED, Oracle

PROFILE = "ci"
# The certify options with which a run draws other inputs than the recorded ones, asks other cases, or asks harbor
# itself: given (on the command line or in the config file), the recordings do not cover the run.
UNCOVERING = ("seed", "max-examples", "shard", "cases", "no-oracle-cache", "no-input-cache", "example-database",
              "observations", "oracle-processes")


@dataclass(frozen=True)
class Written:
    answers: int
    sequences: int
    path: Path


def write(harbor_version: str = ORACLE_RELEASE, log: Callable[[str], None] = lambda message: None) -> Written:
    """Record harbor ``VERSION``'s answers to the corpus and to the ``ci`` inputs; UsageError when the reference
    does not conform (its answers would not be the ones a conforming candidate needs)."""
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
            suite_version=__version__, hypothesis=stored_inputs.hypothesis_version(), entries=len(entries))
        path = recordings.path(harbor_version)
        recordings.write(path, header, entries)
        store.close()
    return Written(len(entries), copied, path)


def _ci_inputs(profile_name: str, hypothesis: str | None = None) -> Iterator[tuple[str, stored_inputs.InputKey]]:
    """Each generator's stored-input key in a run of a profile with a fixed seed, drawing with Hypothesis
    ``hypothesis`` (None: the installed release) and a candidate that claims no values."""
    profile = PROFILES[profile_name]
    assert profile.fixed_seed is not None
    for name in surfaces.with_generators():
        expected = stored_inputs.key(name, profile=profile_name, seed=profile.fixed_seed,
                                     budget=surface_budget(profile, name), claimed=None)
        if hypothesis is not None:
            expected = stored_inputs.InputKey(**{**asdict(expected), "hypothesis": hypothesis})
        yield name, expected


def problems(harbor_version: str = ORACLE_RELEASE) -> list[str]:
    """What makes the shipped recording of ``VERSION`` stale or incomplete; none when it applies as it is."""
    path = recordings.path(harbor_version)
    header = recordings.read_header(path) if path.is_file() else None
    if header is None:
        return [f"{path}: no recording (`nox -s recordings` writes it)"]
    found = [f"{path}: {problem}" for problem in recordings.stale(header)]
    for name, expected in _ci_inputs(PROFILE, header.hypothesis):
        file = expected.file(recordings.inputs_folder())
        if stored_inputs.read_sequence(file, expected) is None:
            found.append(f"{file}: no {PROFILE} inputs recorded for {name} with its strategy code as it is now")
    return found


@dataclass(frozen=True)
class OracleNeed:
    """Whether a certify run needs the oracle's environment (a CPython 3.12, harbor's virtualenv), and why."""

    needed: bool
    reason: str  # one line


def given_options(args: Sequence[str]) -> dict[str, str | None]:
    """The certify options named in an argument list (``--NAME VALUE``, ``--NAME=VALUE``, or a switch), each with
    its last value (None for a switch), as click takes them: the last one given wins."""
    found: dict[str, str | None] = {}
    words = iter(args)
    for word in words:
        if word == "--":
            break
        written = re.fullmatch(r"--([A-Za-z0-9][A-Za-z0-9-]*)(?:=(.*))?", word, re.S)
        if written is None:
            continue
        name, value = written.group(1), written.group(2)
        flag = FLAGS.get(name)
        if value is None and flag is not None and not flag.switch:
            value = next(words, None)
        found[name] = value
    return found


def oracle_environment(oracle: str | None = None, profile: str | None = None, args: Sequence[str] = (),
                       where: Path | None = None) -> OracleNeed:
    """Whether ``conformance certify --oracle ORACLE --profile PROFILE ARGS``, run in ``where`` (default: the
    current folder, whose config file it reads), needs the oracle's environment when its candidate conforms.

    ``oracle`` and ``profile`` left None are the arguments', else the config file's, else ``harbor==`` the suite's
    release and ``ci``, as the GitHub Action's certify step takes them. It is not needed when the oracle is
    ``recorded``, or when the recording of its harbor release applies and the profile's fixed-seed inputs are
    stored for the installed Hypothesis, with no option given that draws or asks otherwise (:data:`UNCOVERING`).
    A diverging candidate still needs it to shrink what it finds; that cannot be known before the run."""
    given = given_options(args)
    explicit = given.get("config")
    file = config.locate(Path(explicit) if explicit else None, "no-config" in given, where or Path.cwd())
    from_file = dict(config.load(file).values) if file is not None else {}
    oracle = given.get("oracle") or oracle or from_file.get("oracle") or f"harbor=={ORACLE_RELEASE}"
    profile_name = given.get("profile") or profile or from_file.get("profile") or PROFILE

    def is_given(name: str) -> bool:
        return name in given or from_file.get(name) not in (None, False)

    if oracle == RECORDED:
        return OracleNeed(False, "the recorded oracle starts no harbor")
    release = re.fullmatch(r"harbor==(.+)", oracle)
    if release is None:
        return OracleNeed(True, f"the oracle {oracle} is no harbor release with recorded answers")
    recorded = recordings.applying(release.group(1))
    if recorded is None:
        return OracleNeed(True, f"the suite has no recorded answers of {oracle} that apply "
                                f"(`conformance recordings check --harbor {release.group(1)}` says why)")
    uncovering = [f"--{name}" for name in UNCOVERING if is_given(name)]
    if uncovering:
        return OracleNeed(True, f"{', '.join(uncovering)}: the run draws or asks other than the recordings hold")
    if is_given("no-generate"):
        return OracleNeed(False, f"the recordings answer every case of {oracle} (no generated inputs)")
    chosen = PROFILES.get(profile_name)
    if chosen is None:
        return OracleNeed(True, f"no profile is named {profile_name} (certify will refuse it)")
    if chosen.fixed_seed is None:
        return OracleNeed(True, f"the profile {profile_name} draws its inputs from a fresh seed")
    for name, expected in _ci_inputs(profile_name):
        if stored_inputs.read_sequence(expected.file(recordings.inputs_folder()), expected) is not None:
            continue
        if expected.hypothesis != recorded.hypothesis:
            return OracleNeed(True, f"the {profile_name} inputs were recorded with Hypothesis "
                                    f"{recorded.hypothesis}, {expected.hypothesis} is installed "
                                    "(`pip install 'harbor-conformance[pinned]'` installs theirs)")
        return OracleNeed(True, f"no {profile_name} inputs of {name} are recorded with its strategy code as it is "
                                "(`conformance recordings check` says what is stale)")
    return OracleNeed(False, f"the recordings answer a conforming candidate's {profile_name} run against {oracle}")
