"""multi_step.reward: MultiStepTrial's aggregation of its steps, and which steps run."""

from conformance.oracle.coverage import Never, Target

_STEPS_NEVER_EMPTY = ("a MultiStepTrial needs a task with [[steps]], and _run appends each step's result "
                      "before running it, so step_results is never empty here")

TARGETS = (
    Target("harbor/trial/multi_step.py", "MultiStepTrial._select_multi_step_reward", never=(
        Never("if not self.result.step_results:", True, _STEPS_NEVER_EMPTY),)),
    Target("harbor/trial/multi_step.py", "MultiStepTrial._aggregate_step_rewards", never=(
        Never("if not self.result.step_results:", True, _STEPS_NEVER_EMPTY),)),
    # Which steps run: a failed step, or one below its min_reward, stops the rest.
    Target("harbor/trial/multi_step.py", "MultiStepTrial._should_stop_after_step"),
    Target("harbor/trial/multi_step.py", "MultiStepTrial._min_reward_failure"),
)
