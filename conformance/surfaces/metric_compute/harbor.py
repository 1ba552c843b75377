"""metric.compute on the oracle's side: harbor's MetricConfig, MetricFactory and the metric's compute.

Runs inside the oracle's virtualenv (standard library and harbor), loaded by
path by ``oracles/harbor_adapter.py``, which calls :func:`serve` once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harbor.metrics.factory import MetricFactory
from harbor.models.metric.config import MetricConfig

if TYPE_CHECKING:  # the adapter's Context and the kit's Handler, for the type check only (oracles/harbor_adapter.py)
    from conformance_kit.candidate import Handler
    from harbor_adapter import Context


def serve(context: Context) -> Handler:
    def metric_compute(request: dict[str, Any]) -> Any:
        if not context.kit.reads_files(request["metric"], request.get("scripts")):
            return _metric(request)
        # A uv-script metric's script_path resolves against the folder holding the request's scripts.
        with context.kit.working_folder(request.get("scripts")):
            return _metric(request)

    return metric_compute


def _metric(request: dict[str, Any]) -> Any:
    config = MetricConfig.model_validate(request["metric"])
    metric = MetricFactory.create_metric(config.type, **config.kwargs)
    return metric.compute(request["rewards"])
