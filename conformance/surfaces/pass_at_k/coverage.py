"""pass_at_k: harbor's pass@k estimator and its grouping by evals key."""

from conformance.oracle.coverage import Never, Target

PASS_AT_K = "harbor/utils/pass_at_k.py"

TARGETS = (
    Target(PASS_AT_K, "compute_pass_at_k_by_evals"),
    Target(PASS_AT_K, "_compute_pass_at_k_for_trials", never=(
        Never("if not isinstance(reward_value, int | float):", True,
              "rewards come from VerifierResult, whose pydantic field has already made "
              "every value a float or an int"),
        Never("if not task_successes:", True,
              "compute_pass_at_k_by_evals passes only non-empty groups, and every trial "
              "either appends to task_successes or returns early"),
    )),
    Target(PASS_AT_K, "_eligible_k_values"),
    Target(PASS_AT_K, "_pass_at_k_for_task"),
)
