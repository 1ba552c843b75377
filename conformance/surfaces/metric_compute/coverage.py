"""metric.compute: harbor's metrics and their factory."""

from conformance.oracle.coverage import Never, Target

TARGETS = (
    Target("harbor/metrics/base.py", "aggregate_reward_dicts"),
    Target("harbor/metrics/mean.py", "Mean.compute"),  # its lambda is inside the range
    Target("harbor/metrics/max.py", "Max.compute"),
    Target("harbor/metrics/min.py", "Min.compute"),
    Target("harbor/metrics/sum.py", "Sum.compute"),
    Target("harbor/metrics/factory.py", "MetricFactory.create_metric", never=(
        Never("if metric_type not in cls._METRIC_MAP:", True,
              "metric_type is MetricConfig.type, validated into a MetricType member, "
              "and _METRIC_MAP has every member"),
    )),
    Target("harbor/metrics/uv_script.py", "UvScript.__init__"),
    Target("harbor/metrics/uv_script.py", "UvScript.compute"),
)
