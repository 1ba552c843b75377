"""The benchmark (``nox -s bench``, or ``python -m conformance.bench``): what a conformance run costs.

In one run, on the machine at hand, it measures and prints:

- per surface, how many requests a conforming candidate is sent per input
  (an input it diverges on is asked again, to tell a flaky answer; one it
  conforms on must cost nothing more);
- per surface, inputs per second through the runner ``certify`` uses (oracle
  harbor 0.13.1, live), with the in-process ``reference`` candidate and with
  the same candidate behind ``exec:``; the corpus is the surface's cases, or
  for the cheap surfaces a bench corpus of many generated inputs run the way
  cases run;
- the rate of the protocol's own coding of the same inputs (wire form and
  JSON, both ways): the limit of any Python harness speaking the protocol;
  and how that compares with plain JSON of the same values (no wire form);
- what the oracle alone and the candidate alone cost on the same inputs,
  through the same runner, beside the run that asks both: the two are asked
  at once, so the run should cost little more than its slower side;
- the raw rate of harbor's own functions called in a loop in the oracle's
  interpreter on the same inputs (no harness, no protocol: the limit), and
  the ratio of the two;
- Hypothesis examples per second per surface in the ``ci`` profile;
- per surface, the inputs per second one campaign worker explores: its tasks
  one after another (``explore``, 100 examples each, the seeds a campaign
  gives them, an example database) on the oracle and candidate it keeps, as
  ``conformance.campaign.tasks`` runs them, without Dask;
- per surface, the draws per second of its input strategy alone (generate
  phase, no shrinking, no database, several seeds), and its share of a
  yardstick strategy's rate measured in the same process (a ratio, so a busy
  machine matters less);
- the wall time and peak memory (harness, and its largest child process: the oracle)
  of a warm ``certify --candidate reference --profile ci`` that asks the oracle
  everything and draws every input (``--no-oracle-cache --no-input-cache``),
  the wall time of the same run answered from the oracle answer cache with
  its inputs stored (the candidate's side alone), of harbor itself certified
  the same way (the oracle's side alone), of the same run on a machine the
  suite was just installed on (its caches empty: the suite's recorded answers
  and inputs, and how many oracle environments it made), and on a fresh
  machine (every cache empty, uv's too);
- in a checkout, the time of the README's test command and of its offline tier.

Targets are printed beside the figures; nothing here asserts them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import ORACLE_RELEASE
from conformance.connection.base import Connection
from conformance.connection.connectors import connect
from conformance.core import surfaces
from conformance.core.features import present
from conformance.core.outcomes import Outcome
from conformance.corpus import cases as case_corpus
from conformance.kit import wire
from conformance.oracle import answers
from conformance.report.model import Party
from conformance.report.writer import ReportWriter, new_header
from conformance.run import generate as generation
from conformance.run import stored_inputs
from conformance.run.plan import DEFAULT_ORACLE
from conformance.run.runner import Input, Oracle, run_inputs

ORACLE = DEFAULT_ORACLE
EXEC_REFERENCE = f"exec:{sys.executable} -m conformance.reference"
TARGETS = {  # what the figures should show on a 2-core machine; a surface's own are in its declaration's `bench`
    "run / slower side": 1.3,
    "warm certify s": 60,
    "warm ÷ cached certify": 5,  # live oracle and fresh draws, against answers and inputs kept from a run before
    "fresh machine ÷ cached certify": 1.5,  # empty caches, the suite's recordings: no oracle environment made
    "oracle environments a fresh machine makes": 0,
    "uncached certify ÷ slower side": 1.3,
    "fresh certify s": 180,
    "harness MB": 300,
    "offline tests s": 45,  # "well under a minute"
    "tests s": 120,
    # An input a candidate diverges on is asked again (flaky answers); one it conforms on, never: the requests a
    # conforming candidate is sent, per input, stay at 1 (the figure is counted, so timing noise cannot hide it).
    "candidate requests per conforming input": 1.05,
}




# The figures a surface's declaration may set a target for (Bench.targets): where each is kept among a surface's
# figures, whether lower is better, and what the line says besides.
SURFACE_FIGURES = {
    "exec inputs/s": ("exec_recorded", False, " (recorded oracle)"),
    "exec / raw": ("exec_over_raw", False, ""),
    "wire / plain JSON": ("wire_over_plain", True, ""),
    "draws ÷ yardstick": ("draw_share", False, ""),
    "ci examples/s": ("examples_per_second", False, ""),
    "campaign inputs/s": ("campaign_rate", False, " (one worker)"),
}
# How long a surface's campaign tasks run for the campaign figure, at least one whole task: a task's inputs
# differ in cost (a job's trials), and a worker's rate counts whole tasks, each round's fixed costs included.
CAMPAIGN_SECONDS = 12.0


@dataclass
class Results:
    rates: dict[str, dict[str, Any]] = field(default_factory=dict)  # surface -> figures
    examples_per_second: dict[str, float] = field(default_factory=dict)
    campaign_rate: dict[str, float] = field(default_factory=dict)  # surface -> a campaign worker's inputs/s
    yardstick_draws_per_second: float = 0.0
    draws_per_second: dict[str, float] = field(default_factory=dict)  # surface -> its strategy's draws/s
    draw_shares: dict[str, float] = field(default_factory=dict)  # surface -> its draws/s ÷ the yardstick's
    # "warm" / "cached" / "oracle side" / "fresh" -> seconds, MB
    runs: dict[str, dict[str, float]] = field(default_factory=dict)
    tests: dict[str, float] = field(default_factory=dict)  # "offline" / "all" -> seconds of the test suite
    machine: dict[str, Any] = field(default_factory=dict)


def bench_corpus(surface: str, count: int, seed: int = 0) -> list[Any]:
    """``count`` inputs drawn by the surface's generator (fixed seed), none that runs a uv-script."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed

    drawn: list[Any] = []
    spec = surfaces.get(surface)

    @with_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(spec.inputs())
    def collect(value: Any) -> None:
        if spec.batchable(value):
            drawn.append(value)

    collect()
    return drawn


def corpus_for(surface: str, count: int) -> tuple[str, list[Input]]:
    """The inputs a surface is measured on: many generated ones for the cheap surfaces, else its cases."""
    if surfaces.get(surface).bench.generated and count:
        values = bench_corpus(surface, count)
        return f"{len(values)} generated", [Input(f"{surface}::bench-{i}", surface, v) for i, v in enumerate(values)]
    loaded, _ = case_corpus.check_corpus(case_corpus.default_root())
    chosen = case_corpus.select(loaded, [surface], ORACLE_RELEASE)
    return f"{len(chosen)} cases", [Input(c.id, surface, c.case.input) for c in chosen]


def _nodes(inputs: list[Input]) -> float:
    """Mean size of an input: the values in its wire form (what every side encodes and decodes)."""
    def count(value: Any) -> int:
        if isinstance(value, list):
            return 1 + sum(count(v) for v in value)
        if isinstance(value, dict):
            return 1 + sum(count(v) for v in value.values())
        return 1
    return sum(count(wire.encode(i.value)) for i in inputs) / max(len(inputs), 1)


REPEAT = 2  # each rate is the best of this many runs: the machine's noise only ever slows a run down


def best(measure: Callable[..., float], *args: Any) -> float:
    return max(measure(*args) for _ in range(REPEAT))


def wire_round_trip(inputs: list[Input]) -> float:
    """Inputs per second through the protocol's own coding alone: encode, JSON out, JSON in, decode.

    Every input makes this trip once from harness to candidate, so no Python
    harness speaking the protocol runs faster than this on these inputs.
    """
    values = [i.value for i in inputs]
    started = time.perf_counter()
    for value in values:
        wire.decode(wire.loads(wire.dump_line({"input": wire.encode(value)}))["input"])
    return len(values) / (time.perf_counter() - started)


def _plain_value(value: Any) -> Any:
    """``value`` as plain JSON can hold it: bytes as text (one character a byte), keys as strings."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    if isinstance(value, list):
        return [_plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain_value(v) for k, v in value.items()}
    return value


def plain_round_trip(inputs: list[Input], codec: str) -> float:
    """Inputs per second through plain JSON of the same values, both ways: what the wire form is weighed against.

    ``codec``: ``json`` (the standard library's, as ``wire`` writes a line: ASCII, no NaN token) or ``msgspec``.
    """
    values = [_plain_value(i.value) for i in inputs]
    encode: Callable[[Any], str | bytes]
    decode: Callable[[Any], Any]
    if codec == "msgspec":
        import msgspec

        encode, decode = msgspec.json.Encoder().encode, msgspec.json.Decoder().decode
    else:
        encode, decode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode, json.loads
    started = time.perf_counter()
    with wire.gc_paused:  # as the wire's own coding is measured
        for value in values:
            decode(encode({"input": value}))["input"]
    return len(values) / (time.perf_counter() - started)


class CountedReference:
    """The reference candidate in process, counting the inputs it is asked (each item of a batch)."""

    def __init__(self) -> None:
        self.asked = 0

    def handle(self, request: dict[str, Any]) -> dict[str, Any] | None:
        from conformance.connection.connectors import CANDIDATES
        from conformance.core.loading import import_object

        target = CANDIDATES.get("reference")  # by its registered name: the harness imports no candidate
        reference = import_object(target) if isinstance(target, str) else target
        if request.get("cmd") == "run":
            self.asked += 1
        elif request.get("cmd") == "batch":
            self.asked += len(request.get("items", []))
        answer: dict[str, Any] | None = reference.handle(request)
        return answer


COUNTED = CountedReference()
COUNTED_SPEC = "conformance.bench:COUNTED"


def requests_per_input(inputs: list[Input]) -> float:
    """How many requests the runner sends a conforming candidate per input (recorded oracle)."""
    from conformance.core.loading import import_object

    # The instance the connection imports: run as `python -m conformance.bench`, this module is __main__, and its
    # own COUNTED another object than conformance.bench's.
    counted: CountedReference = import_object(COUNTED_SPEC)
    counted.asked = 0
    with connect(COUNTED_SPEC) as candidate:
        for _ in run_inputs(inputs, candidate, Oracle(None)):
            pass
    return counted.asked / len(inputs)


def through_runner(inputs: list[Input], candidate: Connection, oracle: Oracle) -> float:
    """Inputs per second through the runner, each record written to a report as certify writes it."""
    with tempfile.TemporaryDirectory() as folder:
        head = new_header(oracle=Party(spec=oracle.spec), candidate=Party(spec=candidate.spec.text), nan_policy="",
                          surfaces=[], cases_root="")
        writer = ReportWriter(Path(folder) / "bench.jsonl", head)
        started = time.perf_counter()
        bad = 0
        for record in run_inputs(inputs, candidate, oracle):
            writer.write(record)
            bad += record.outcome is not Outcome.PASS
        elapsed = time.perf_counter() - started
        writer.close()
    if bad:
        print(f"  warning: {bad} of {len(inputs)} inputs did not pass", file=sys.stderr)
    return len(inputs) / elapsed


RAW_LOOP = r"""
import importlib.util, json, sys, tempfile, time
from pathlib import Path
adapter_path, kit_dir, inputs_path, surface, *folders = sys.argv[1:]
sys.argv = [adapter_path, kit_dir, *folders]
spec = importlib.util.spec_from_file_location("harbor_adapter", adapter_path)
adapter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adapter)
oracle = adapter.build(Path(tempfile.mkdtemp()), adapter.surface_folders(folders))
handler = oracle.handlers[surface]
values = [adapter.conformance_kit.wire.decode(v) for v in json.loads(Path(inputs_path).read_text())]
for value in values[:5]:  # first calls import and set up what later calls reuse: not part of the rate
    try:
        handler(value)
    except Exception:
        pass
started = time.perf_counter()
for value in values:
    try:
        handler(value)
    except Exception:
        pass
print(len(values) / (time.perf_counter() - started))
"""


def record(inputs: list[Input], oracle: Oracle) -> list[Input]:
    """The inputs with the oracle's results recorded, as a case file holds them."""
    from conformance.run.runner import ask

    surface = surfaces.get(inputs[0].surface)
    out = []
    for start in range(0, len(inputs), 256):
        chunk = inputs[start:start + 256]
        live = oracle.for_surface(surface)
        assert live is not None, "recording needs a live oracle"
        replies = ask(live, surface.name, [wire.encode(i.value) for i in chunk])
        out += [Input(i.id, i.surface, i.value, r.result(surface)) for i, r in zip(chunk, replies, strict=True)]
    return [i for i in out if i.recorded is not None]


def raw_rate(surface: str, inputs: list[Input]) -> float:
    """harbor's functions (as the oracle adapter calls them) in a loop in the oracle's interpreter."""
    from conformance.connection.harbor import adapter_path, harbor_argv, kit_dir, surface_arguments

    python = harbor_argv(ORACLE_RELEASE)[0]
    adapter, kit = str(adapter_path()), str(kit_dir())
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "inputs.json"
        data.write_text(json.dumps([wire.encode(i.value) for i in inputs]))
        out = subprocess.run([python, "-I", "-X", "utf8", "-c", RAW_LOOP, adapter, kit, str(data), surface,
                              *surface_arguments()],
                             capture_output=True, text=True, check=True, cwd=folder)
    return float(out.stdout.strip().splitlines()[-1])


def features_rate(inputs: list[Input]) -> float:
    """Inputs per second whose features are counted: what a generator adds to each input it draws (beside the
    ci examples per second, it shows that counting costs a generator next to nothing)."""
    declared = surfaces.get(inputs[0].surface).features
    values = [i.value for i in inputs]
    started = time.perf_counter()
    for value in values:
        present(declared, value)
    return len(values) / (time.perf_counter() - started)


def examples_per_second(surface: str, candidate: Connection, oracle: Oracle) -> float:
    profile = generation.PROFILES["ci"]
    started = time.perf_counter()
    result = generation.generate(surface, candidate, oracle, profile=profile, seed=profile.fixed_seed or 0)
    return result.inputs_run / (time.perf_counter() - started)


def campaign_rate(surface: str, candidate: Connection, oracle: Oracle, seconds: float = CAMPAIGN_SECONDS) -> float:
    """Inputs per second a campaign worker explores on ``surface``: whole tasks one after another for
    ``seconds``, each as the worker runs it (conformance.campaign.tasks.run_task, without Dask)."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    from conformance.campaign.plan import DEFAULT_TASK_EXAMPLES, task_seed
    from conformance.run.engine import Engine, Stream

    explore = generation.PROFILES["explore"]
    with tempfile.TemporaryDirectory() as folder:  # a campaign always has an example database
        engine = Engine(candidate, oracle, Stream([]), database=DirectoryBasedExampleDatabase(folder))
        inputs = tasks = 0
        started = time.perf_counter()
        while tasks == 0 or time.perf_counter() - started < seconds:
            _, line = engine.generate(surface, profile=explore, seed=task_seed(1, surface, tasks),
                                      budget=DEFAULT_TASK_EXAMPLES)
            inputs += line.inputs_run
            tasks += 1
        return inputs / (time.perf_counter() - started)


def yardstick() -> Any:
    """What the strategies' draw rates are weighed against, measured in the same process (a busy machine slows
    both): a small dictionary of text keys and numbers."""
    from hypothesis import strategies as st

    return st.dictionaries(st.text(max_size=8), st.one_of(st.floats(), st.integers(), st.none()), max_size=6)


DRAWS = 300  # draws per run: enough for Hypothesis to leave its first, simplest examples behind
# Runs per rate, seeded 0, 1, ...: one run is one sequence of inputs, and its share of costly inputs (and of
# the variations Hypothesis spends on them) moves a rate by half for reasons that are not speed. A single
# derandomized sequence put pass_at_k at 0.13 of the yardstick, which four seeds (and long runs) put at 0.6.
DRAW_SEEDS = 4


def draw_rate(strategy: Any, count: int = DRAWS, seeds: int = DRAW_SEEDS) -> float:
    """Draws per second of ``strategy`` alone: the generate phase, no shrinking, no database, ``count`` draws
    from each of ``seeds`` seeds (the same inputs every time)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    drawn, spent = 0, 0.0
    for number in range(seeds):

        @seed(number)
        @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def draw(_: Any) -> None:
            nonlocal drawn
            drawn += 1

        started = time.perf_counter()
        draw()
        spent += time.perf_counter() - started
    return drawn / spent


def measure_draws(results: Results, only: list[str] | None = None, count: int = DRAWS) -> None:
    """Each surface's strategy's draws per second, and its share of the yardstick's, into ``results``.

    The yardstick is measured again before each measure of a surface and each share is the best of ``REPEAT``
    such pairs: a busy machine slows a pair alike, and only ever slows a run down.
    """
    measuring = yardstick()
    draw_rate(measuring, 20, 1)  # the first draws import and build what later ones reuse
    for name in surfaces.SURFACES:
        if only and name not in only:
            continue
        strategy = surfaces.get(name).inputs()
        draw_rate(strategy, 20, 1)
        for _ in range(REPEAT):
            against, rate = draw_rate(measuring, count), draw_rate(strategy, count)
            results.yardstick_draws_per_second = max(results.yardstick_draws_per_second, against)
            results.draws_per_second[name] = max(results.draws_per_second.get(name, 0.0), rate)
            results.draw_shares[name] = max(results.draw_shares.get(name, 0.0), rate / against)


MEASURED_RUN = r"""
import os, sys, threading, time
from conformance.cli import main

def hwm_kb(pid):  # the peak resident set of one process's address space (getrusage's counts the fork parent's)
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return 0

children = {}
def watch():
    while True:
        try:
            pids = open(f"/proc/self/task/{os.getpid()}/children").read().split()
        except OSError:
            pids = []
        for pid in pids:
            children[pid] = max(children.get(pid, 0), hwm_kb(pid))
        time.sleep(0.2)

threading.Thread(target=watch, daemon=True).start()
try:
    main()
except SystemExit:
    pass
print("BENCH-MEMORY", hwm_kb("self"), max(children.values(), default=0), file=sys.stderr)
"""


def certify_run(env: dict[str, str] | None = None, *options: str, candidate: str = "reference") -> dict[str, float]:
    """A whole ``certify --candidate reference --profile ci`` in its own process: seconds and peak MB, and how
    many oracle environments it made (in the suite cache folder ``env`` names, when it names one)."""
    cache = Path(env["HARBOR_CONFORMANCE_CACHE"]) if env and "HARBOR_CONFORMANCE_CACHE" in env else None
    before = _environments(cache)
    with tempfile.TemporaryDirectory() as folder:
        argv = [sys.executable, "-c", MEASURED_RUN, "certify", "--candidate", candidate, "--profile", "ci",
                "--report", str(Path(folder) / "r.jsonl"), *options]
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - started
    line = next((x for x in done.stderr.splitlines() if x.startswith("BENCH-MEMORY")), None)
    if line is None:
        raise RuntimeError(f"certify did not finish: {done.stderr[-2000:]}")
    harness_kb, child_kb = map(int, line.split()[1:])
    return {"seconds": seconds, "harness_mb": harness_kb / 1024, "oracle_mb": child_kb / 1024,
            "conforms": "conforms" in done.stdout, "environments_made": len(_environments(cache) - before)}


def _environments(cache: Path | None) -> set[str]:
    return {p.name for p in (cache / "oracle-envs").glob("harbor-*")} if cache is not None else set()


def fresh_environment(folder: Path) -> dict[str, str]:
    """Empty caches: the oracle's virtualenv and every wheel must be made or fetched again."""
    env = dict(os.environ)
    env["HARBOR_CONFORMANCE_CACHE"] = str(folder / "harbor-conformance")
    env[answers.FOLDER_ENV] = str(folder / "oracle-answers")
    env["UV_CACHE_DIR"] = str(folder / "uv")
    env[stored_inputs.FOLDER_ENV] = str(folder / "inputs")
    return env


def fresh_machine(folder: Path) -> dict[str, str]:
    """A machine the suite was just installed on: its caches empty (no oracle environment, no answers, no stored
    inputs), uv's own cache as the installation left it."""
    env = dict(os.environ)
    env["HARBOR_CONFORMANCE_CACHE"] = str(folder / "harbor-conformance")
    env[answers.FOLDER_ENV] = str(folder / "oracle-answers")
    env[stored_inputs.FOLDER_ENV] = str(folder / "inputs")
    return env


def measure(count: int, fresh: bool, only: list[str] | None) -> Results:
    results = Results(machine={"cpus": os.cpu_count(), "python": sys.version.split()[0], "json": wire.CODEC,
                               "load average": os.getloadavg()[0]})
    # The draws first: after the corpora and the ci generators, the same process drew the strategies a tenth
    # slower beside the yardstick (its heap and Hypothesis's caches grown), and a fresh process measures what a
    # run's generation meets.
    print("strategies' draws", file=sys.stderr)
    measure_draws(results, only)
    oracle = Oracle(connect(ORACLE))
    in_process = connect("reference")
    behind_exec = connect(EXEC_REFERENCE)
    try:
        for name in surfaces.SURFACES:
            if only and name not in only:
                continue
            # The generators before the corpus: with its inputs and records alive, the same process ran a ci round
            # of reason.normalize a third slower (each of the collector's passes walks them), a heap no run has.
            print(f"{name}: ci examples", file=sys.stderr)
            results.examples_per_second[name] = examples_per_second(name, in_process, oracle)
            print(f"{name}: a campaign worker", file=sys.stderr)
            results.campaign_rate[name] = campaign_rate(name, in_process, oracle)
            print(f"{name}: drawing the corpus", file=sys.stderr)
            what, inputs = corpus_for(name, count)
            figures: dict[str, Any] = {"inputs": what, "nodes": _nodes(inputs)}
            figures["in_process"] = best(through_runner, inputs, in_process, oracle)
            figures["exec"] = best(through_runner, inputs, behind_exec, oracle)
            figures["raw"] = best(raw_rate, name, inputs)
            # The way declarative cases run with --oracle recorded: the oracle's results are the inputs' own. It is
            # also the candidate alone on these inputs (the harness's own work included); the oracle alone is the
            # oracle asked as the candidate is, against the same recordings.
            recorded = record(inputs, oracle)
            figures["exec_recorded"] = best(through_runner, recorded, behind_exec, Oracle(None))
            figures["requests_per_input"] = requests_per_input(recorded)
            assert oracle.connection is not None
            figures["oracle_alone"] = best(through_runner, recorded, oracle.connection, Oracle(None))
            slower = max(len(recorded) / figures["exec_recorded"], len(recorded) / figures["oracle_alone"])
            figures["run_over_slower"] = (len(inputs) / figures["exec"]) / slower
            figures["wire"] = best(wire_round_trip, inputs)
            figures["plain"] = best(plain_round_trip, inputs, "json")
            figures["wire_over_plain"] = figures["plain"] / figures["wire"]
            if wire.CODEC != "json":
                figures["plain_msgspec"] = best(plain_round_trip, inputs, "msgspec")
                figures["wire_over_plain_msgspec"] = figures["plain_msgspec"] / figures["wire"]
            figures["exec_over_raw"] = figures["exec"] / figures["raw"]
            figures["features"] = best(features_rate, inputs)
            results.rates[name] = figures
    finally:
        for connection in (in_process, behind_exec):
            connection.close()
        oracle.close()
    if not only:
        with tempfile.TemporaryDirectory() as folder:  # caches of its own: the user's are left alone
            own = {**os.environ, answers.FOLDER_ENV: str(Path(folder) / "answers"),
                   stored_inputs.FOLDER_ENV: str(Path(folder) / "inputs")}
            print("warm certify", file=sys.stderr)
            certify_run(own)  # warms every cache (the oracle's scripts, its answers, the inputs) first
            # The live oracle asked everything, every input drawn: what a rerun cost before anything was kept.
            results.runs["warm"] = certify_run(own, "--no-oracle-cache", "--no-input-cache")
            print("cached certify", file=sys.stderr)
            results.runs["cached"] = certify_run(own)  # answers and inputs kept: the candidate's side
            # The oracle's side: harbor itself certified as the candidate (the same inputs), the oracle from the cache.
            print("the oracle's side", file=sys.stderr)
            results.runs["oracle side"] = certify_run(own, candidate=DEFAULT_ORACLE)
        print("fresh machine certify (the suite's caches empty)", file=sys.stderr)
        with tempfile.TemporaryDirectory() as folder:
            results.runs["fresh machine"] = certify_run(fresh_machine(Path(folder)))
        if fresh:
            print("fresh certify (empty caches)", file=sys.stderr)
            with tempfile.TemporaryDirectory() as folder:
                results.runs["fresh"] = certify_run(fresh_environment(Path(folder)))
    return results


def test_suite_times(checkout: Path) -> dict[str, float]:
    """The README's test command, and its offline tier, timed in a checkout (the wheel carries no tests)."""
    times: dict[str, float] = {}
    for name, options in (("offline", ["-m", "not oracle"]), ("all", [])):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider",
                               *options], cwd=checkout, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the tests failed ({name}): {(done.stdout + done.stderr)[-2000:]}")
        times[name] = time.perf_counter() - started
    return times


def table(results: Results) -> str:
    """The figures as a Markdown table, with the targets."""
    lines = ["| surface | inputs | wire values per input | in process /s | exec: /s | harbor raw /s | exec ÷ raw "
             "| exec:, recorded oracle /s | oracle alone /s | exec: ÷ slower side | wire coding alone /s "
             "| wire ÷ plain JSON | ci examples /s | campaign worker /s | features counted /s | draws /s "
             "| draws ÷ yardstick |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, f in results.rates.items():
        plain = f"{f.get('wire_over_plain', 0):.1f}"
        if "wire_over_plain_msgspec" in f:
            plain += f" ({f['wire_over_plain_msgspec']:.1f})"
        lines.append(f"| `{name}` | {f['inputs']} | {f['nodes']:.0f} | {f['in_process']:,.0f} | {f['exec']:,.0f} | "
                     f"{f['raw']:,.0f} | "
                     f"{f['exec_over_raw']:.2f} | {f['exec_recorded']:,.0f} | {f.get('oracle_alone', 0):,.0f} | "
                     f"{f.get('run_over_slower', 0):.2f} | {f['wire']:,.0f} | {plain} | "
                     f"{results.examples_per_second.get(name, 0):,.0f} | {results.campaign_rate.get(name, 0):,.0f} | "
                     f"{f.get('features', 0):,.0f} | "
                     f"{results.draws_per_second.get(name, 0):,.0f} | {results.draw_shares.get(name, 0):.2f} |")
    lines.append("")
    if results.yardstick_draws_per_second:
        lines.append(f"Yardstick of the draws: `{yardstick()!r}`, {results.yardstick_draws_per_second:,.0f} draws/s")
        lines.append("")
    machine = results.machine
    lines.append(f"JSON codec: {machine.get('json', '?')}; wire ÷ plain JSON is against the standard library's json, "
                 "in brackets against msgspec; load average at the start: "
                 f"{machine.get('load average', 0):.2f} on {machine.get('cpus')} CPUs")
    lines.append("")
    for name, run in results.runs.items():
        candidate = DEFAULT_ORACLE if name == "oracle side" else "reference"  # harbor certified as the candidate
        made = run.get("environments_made", 0)
        lines.append(f"- {name} `certify --candidate {candidate} --profile ci` (every case, the ci generators): "
                     f"{run['seconds']:.1f} s; peak memory: harness {run['harness_mb']:.0f} MB, "
                     f"oracle {run['oracle_mb']:.0f} MB" + (f"; oracle environments made: {made:.0f}"
                                                            if name.startswith("fresh") else ""))
    for name, seconds in results.tests.items():
        command = "pytest -n auto -m 'not oracle'" if name == "offline" else "pytest -n auto"
        lines.append(f"- the test suite, {'offline tier' if name == 'offline' else 'slow tests left out'} "
                     f"(`{command}`): {seconds:.1f} s")
    lines.append("")
    lines.append("| target | figure | met |")
    lines.append("|---|---:|---|")
    for name, target, figure, lower_is_better in _against_targets(results):
        met = figure <= target if lower_is_better else figure >= target
        lines.append(f"| {name} {'≤' if lower_is_better else '≥'} {target:,} | {figure:,.2f} | "
                     f"{'yes' if met else 'NO'} |")
    return "\n".join(lines)


def _against_targets(results: Results) -> Iterator[tuple[str, float, float, bool]]:
    rates, runs = results.rates, results.runs
    for surface in surfaces.SURFACES:
        figures = {**rates.get(surface, {})}
        if surface in results.draw_shares:
            figures["draw_share"] = results.draw_shares[surface]
        if surface in results.examples_per_second:
            figures["examples_per_second"] = results.examples_per_second[surface]
        if surface in results.campaign_rate:
            figures["campaign_rate"] = results.campaign_rate[surface]
        for figure, target in surfaces.get(surface).bench.targets.items():
            key, lower_is_better, note = SURFACE_FIGURES[figure]
            if key in figures:
                yield f"{surface} {figure}{note}", target, figures[key], lower_is_better
    for surface, figures in rates.items():
        if "run_over_slower" in figures:
            yield f"{surface} run / slower side", TARGETS["run / slower side"], figures["run_over_slower"], True
        if "requests_per_input" in figures:
            key = "candidate requests per conforming input"
            yield f"{surface} {key}", TARGETS[key], figures["requests_per_input"], True
    if "warm" in runs:
        yield "warm certify s", TARGETS["warm certify s"], runs["warm"]["seconds"], True
        yield "harness MB", TARGETS["harness MB"], runs["warm"]["harness_mb"], True
    if "cached" in runs and "warm" in runs:
        yield ("warm ÷ cached certify", TARGETS["warm ÷ cached certify"],
               runs["warm"]["seconds"] / runs["cached"]["seconds"], False)
    if "cached" in runs and "oracle side" in runs and "warm" in runs:
        slower = max(runs["cached"]["seconds"], runs["oracle side"]["seconds"])
        yield ("uncached certify ÷ slower side", TARGETS["uncached certify ÷ slower side"],
               runs["warm"]["seconds"] / slower, True)
    if "fresh machine" in runs and "cached" in runs:
        yield ("fresh machine ÷ cached certify", TARGETS["fresh machine ÷ cached certify"],
               runs["fresh machine"]["seconds"] / runs["cached"]["seconds"], True)
        yield ("oracle environments a fresh machine makes", TARGETS["oracle environments a fresh machine makes"],
               runs["fresh machine"].get("environments_made", 0), True)
    if "fresh" in runs:
        yield "fresh certify s", TARGETS["fresh certify s"], runs["fresh"]["seconds"], True
    for name, key in (("offline", "offline tests s"), ("all", "tests s")):
        if name in results.tests:
            yield key, TARGETS[key], results.tests[name], True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=3_000, help="bench corpus size per cheap surface")
    parser.add_argument("--no-fresh", action="store_true", help="skip the run with empty caches")
    parser.add_argument("--surface", action="append", help="only this surface (skips the whole runs)")
    parser.add_argument("--no-tests", action="store_true", help="skip timing the test suite")
    parser.add_argument("--json", type=Path, default=Path("reports/bench.json"), help="where to write the figures")
    args = parser.parse_args(argv)
    results = measure(args.inputs, not args.no_fresh, args.surface)
    checkout = Path(__file__).resolve().parent.parent
    failed = None  # the tests' failure ends the bench, after the figures measured before it are written
    if not args.no_tests and not args.surface and (checkout / "tests").is_dir():
        print("the test suite", file=sys.stderr)
        try:
            results.tests = test_suite_times(checkout)
        except RuntimeError as error:
            failed = str(error)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results.__dict__, indent=2) + "\n")
    print(table(results))
    if failed is not None:
        raise SystemExit(failed)


if __name__ == "__main__":
    main()
