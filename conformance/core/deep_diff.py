"""deepdiff's walk of two values, for the comparator (``compare.compare_values``).

Its own module so that deepdiff, and the numpy it imports, load on the first
structural comparison rather than in every process that imports the comparator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deepdiff import DeepDiff
from deepdiff.model import DiffLevel
from deepdiff.operator import BaseOperator


class _FloatOperator(BaseOperator):
    """Wrapped floats are compared by ``differs``, never by deepdiff: a difference is reported as ``float_changed``."""

    def __init__(self, float_type: type, differs: Callable[[Any, Any], bool]) -> None:
        super().__init__(types=[float_type])
        self.differs = differs

    def give_up_diffing(self, level: DiffLevel, diff_instance: DeepDiff) -> bool:
        if self.differs(level.t1, level.t2):
            # deepdiff leaves custom_report_result unannotated.
            diff_instance.custom_report_result("float_changed", level)  # type: ignore[no-untyped-call]
        return True


def tree(expected: Any, actual: Any, float_type: type, differs: Callable[[Any, Any], bool]) -> Any:
    """deepdiff's tree view of two values (report name -> levels), their floats wrapped in ``float_type``."""
    return DeepDiff(expected, actual, custom_operators=[_FloatOperator(float_type, differs)],
                    zip_ordered_iterables=True, threshold_to_diff_deeper=0, view="tree")


def path(level: DiffLevel) -> str:
    path: str | None = level.path(root="$")
    if path is not None:
        return path
    # deepdiff writes no path through a dict key without a literal repr (a nan or inf key): write each step.
    root = level
    while root.up is not None:
        root = root.up
    steps = []
    while root.down is not None:
        relation = root.t1_child_rel or root.t2_child_rel
        steps.append(f"[{relation.param!r}]" if relation is not None else "[?]")
        root = root.down
    return "$" + "".join(steps)
