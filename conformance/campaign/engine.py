"""A campaign on Dask: the cluster, tasks submitted until the budget is spent, the end however it comes.

The cluster is an embedded ``LocalCluster`` (one single-threaded worker
process per core, or ``--workers N``) or a running one, reached through its
scheduler (``--scheduler tcp://HOST:PORT``). Both sides are started here once
first: their handshakes go into the report's header, and a candidate that
cannot start is a usage error before any worker tries it. The campaign's
worker plugin (:mod:`conformance.campaign.tasks`) carries what to connect to.

As many tasks are kept in flight as the cluster has worker threads; each
one that ends is merged into the report and another takes its place, until
the budget is spent. Tasks under way then are waited for
(a slice of examples each), so what they found is kept. However the
campaign ends, the plugin is unregistered, which closes every worker's
oracle and candidate, and a local cluster is shut down.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import signal
import threading
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.campaign.findings import CampaignReport
from conformance.campaign.plan import Plan, Task
from conformance.connection.base import ConnectError
from conformance.connection.connectors import connect
from conformance.connection.protocol import Implementation
from conformance.connection.spec import Spec
from conformance.core.scope import Scope
from conformance.errors import UsageError
from conformance.kit.candidate import cores
from conformance.report.model import CaseLine, Footer, Party
from conformance.report.writer import Tally

if TYPE_CHECKING:
    from distributed import Client, Future

    from conformance.campaign.tasks import TaskResult

# Consecutive tasks that raised (a worker that cannot connect, a harness bug) after which no task is submitted.
FAILED_TASKS_LIMIT = 3
HEARTBEAT_SECONDS = 30.0


@dataclass
class CampaignRun:
    footer: Footer
    findings: list[CaseLine]
    tally: Tally
    candidate: Implementation | None
    oracle_spec: str
    by_worker: Counter[str]  # tasks run, by worker address


def _handshake(spec: Spec, role: str, timeout: float, log: Callable[[str], None]) -> Party:
    log(f"starting the {role}, {spec.text}")
    try:
        with connect(spec, timeout=timeout, log=log) as side:
            return Party(spec=spec.text, implementation=side.implementation)
    except ConnectError as e:
        raise UsageError(f"{role} {spec}: {e}") from None


@contextmanager
def _cluster(plan: Plan, log: Callable[[str], None]) -> Iterator[Client]:
    from distributed import Client, LocalCluster

    if plan.scheduler is not None:
        try:
            client = Client(plan.scheduler, timeout=plan.connect_timeout)
        except (OSError, ValueError) as e:
            raise UsageError(f"scheduler {plan.scheduler}: cannot connect ({e})") from None
        with client:
            try:
                client.wait_for_workers(1, timeout=plan.connect_timeout)
            except TimeoutError:
                raise UsageError(f"scheduler {plan.scheduler}: no worker within {plan.connect_timeout:g}s") from None
            yield client
        return
    workers = plan.workers or cores()
    log(f"starting a local cluster of {workers} worker process(es)")
    with warnings.catch_warnings(), _children_ignore_ctrl_c():
        warnings.simplefilter("ignore")  # the dashboard's port taken: Dask takes another, and its link is printed
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               silence_logs=logging.WARNING)
    with cluster, Client(cluster) as client:
        yield client


@contextmanager
def _children_ignore_ctrl_c() -> Iterator[None]:
    """The worker processes started meanwhile ignore SIGINT (an ignored signal stays ignored in a child).

    A terminal's Ctrl-C reaches its whole process group: workers that shut themselves down would race the
    campaign, which ends in order (tasks stopped, connections closed, then the cluster).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _quietly(action: Callable[[], object]) -> Callable[[], None]:
    """A clean-up step that may meet a cluster already going down: its workers then close their plugins."""

    def run() -> None:
        with contextlib.suppress(Exception):
            action()

    return run


def _dashboard(client: Client) -> str:
    if "dashboard" in client.scheduler_info().get("services", {}):
        return f"dashboard: {client.dashboard_link}"
    return ("no dashboard: the scheduler serves one only with bokeh installed "
            "(pip install 'harbor-conformance[campaign]')")


def run(plan: Plan, log: Callable[[str], None] = lambda message: None,
        on_finding: Callable[[CaseLine], None] = lambda record: None) -> CampaignRun:
    """Carry the campaign out; UsageError (exit 2) for one that cannot start as asked, KeyboardInterrupt through
    (the report then holds every finding so far, without a footer)."""
    if importlib.util.find_spec("distributed") is None:
        raise UsageError("a campaign runs on Dask: pip install 'harbor-conformance[campaign]'")
    oracle = _handshake(plan.connections.oracle, "oracle", plan.connections.timeout, log)
    candidate = _handshake(plan.connections.candidate, "candidate", plan.connections.timeout, log)
    claimed: Scope | None = candidate.implementation.scope if candidate.implementation is not None else None
    plan = plan.within(claimed)
    if plan.connections.example_database is not None:
        from conformance.run.examples import open_database

        open_database(plan.connections.example_database)  # a usage error here, not on every worker
    from conformance.campaign.tasks import CampaignPlugin

    name = f"campaign-{uuid.uuid4().hex[:8]}"
    with ExitStack() as stack:
        client = stack.enter_context(_cluster(plan, log))
        log(_dashboard(client))
        try:
            client.register_plugin(CampaignPlugin(plan.connections), name=name)
        except Exception as e:  # noqa: BLE001 - whatever a worker raised setting the plugin up
            raise UsageError(f"the workers cannot take the campaign: {type(e).__name__}: {e}") from None
        stack.callback(_quietly(lambda: client.unregister_worker_plugin(name)))  # closes every worker's pairs
        report = stack.enter_context(CampaignReport(plan, oracle, candidate, workers=len(client.nthreads())))
        tasks = _Tasks(client, plan, name, report, log, on_finding)
        stack.callback(_quietly(tasks.cancel))  # an interrupted campaign's
        log(f"campaign: {', '.join(plan.generators)}; profile {plan.profile.name}, base seed {plan.base_seed}, "
            f"{plan.task_examples} examples a task, for {plan.budget:g}s; report: {plan.report}")
        tasks.run()
        footer = report.finish()
        log(tasks.summary())
    return CampaignRun(footer, report.findings, report.tally, candidate.implementation, oracle.spec,
                       tasks.by_worker)


class _Tasks:
    """As many tasks in flight as the cluster has worker threads, until the deadline; each merged as it ends."""

    def __init__(self, client: Client, plan: Plan, plugin: str, report: CampaignReport, log: Callable[[str], None],
                 on_finding: Callable[[CaseLine], None]) -> None:
        self.client, self.plan, self.plugin, self.report = client, plan, plugin, report
        self.log, self.on_finding = log, on_finding
        self.todo = plan.tasks()
        self.in_flight: dict[Future[TaskResult], Task] = {}
        self.started = self.heartbeat = time.monotonic()
        self.deadline = self.started + plan.budget
        self.failed = self.inputs = 0  # failed: consecutive tasks that raised
        self.by_worker: Counter[str] = Counter()

    def run(self) -> None:
        """Tasks taken as they end; woken at each heartbeat and at the deadline too, so both are said on time
        however long a task runs."""
        from distributed import TimeoutError as Waited
        from distributed import wait

        spent = False
        self.submit()
        while self.in_flight:
            now = time.monotonic()
            wake = self.heartbeat + HEARTBEAT_SECONDS if spent else min(self.heartbeat + HEARTBEAT_SECONDS,
                                                                        self.deadline)
            try:
                ended = wait(list(self.in_flight), timeout=max(0.05, wake - now), return_when="FIRST_COMPLETED").done
            except (Waited, TimeoutError):
                ended = set()
            for future in ended:
                self.take(future, self.in_flight.pop(future))
            now = time.monotonic()
            if now - self.heartbeat >= HEARTBEAT_SECONDS:
                self.heartbeat = now
                self.log(f"{now - self.started:.0f}s: {self.report.tasks} task(s), {self.inputs} input(s), "
                         f"{len(self.report.findings)} finding(s); {max(0.0, self.deadline - now):.0f}s left")
            if now >= self.deadline and self.in_flight and not spent:
                spent = True
                self.log(f"budget spent: waiting for the {len(self.in_flight)} task(s) under way")
            self.submit()

    def submit(self) -> None:
        from conformance.campaign.tasks import run_task

        slots = sum(self.client.nthreads().values())
        while len(self.in_flight) < slots and time.monotonic() < self.deadline and self.failed < FAILED_TASKS_LIMIT:
            task = next(self.todo)
            # The key's first word is the surface: the dashboard's progress bars go by surface.
            future = self.client.submit(run_task, task, self.plugin, key=f"{task.surface}-{task.number}-{self.plugin}",
                                        pure=False)
            self.in_flight[future] = task

    def take(self, future: Future[TaskResult], task: Task) -> None:
        try:
            result = future.result()
        except Exception as e:  # noqa: BLE001 - a task's exception is the campaign's to record, not to raise
            self.failed += 1
            error = f"{type(e).__name__}: {e}"
            self.report.fail(task, error)
            self.log(f"{task}: the task failed: {error}"
                     + ("; no more tasks are submitted" if self.failed == FAILED_TASKS_LIMIT else ""))
            return
        self.failed = 0
        new = self.report.add(result.findings, result.line, result.cached_answers)
        self.by_worker[result.worker] += 1
        self.inputs += result.line.inputs_run
        for record in new:
            self.on_finding(record)
        if result.findings or result.line.error:
            self.log(f"{task} on {result.worker}: {len(result.findings)} finding(s), {len(new)} new"
                     + (f", generator error: {result.line.error[:200]}" if result.line.error else ""))

    def cancel(self) -> None:
        self.client.cancel(list(self.in_flight))

    def summary(self) -> str:
        return (f"{self.report.tasks} task(s) in {time.monotonic() - self.started:.0f}s, {self.inputs} input(s), "
                f"on {len(self.by_worker)} worker(s): "
                + ", ".join(f"{worker} ({n})" for worker, n in sorted(self.by_worker.items())))
