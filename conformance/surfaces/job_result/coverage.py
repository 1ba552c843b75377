"""job.result: the Job's scoring, its retries, and JobStats."""

from conformance.oracle.coverage import Never, Target

JOB = "harbor/job.py"
JOB_RESULT = "harbor/models/job/result.py"
_NO_TOKENS = ("the suite's scripted agent reports no token counts or cost; they are not part of the "
              "job.result output")
_CANCELLED_NOT_RETRIED = ("a cancelled run is never retried: CancelledError is no Exception and leaves "
                          "TrialQueue's retry loop, so no earlier run taken out by a retry is a cancelled one")
_RETRIED_RUN = ("the run a retry takes out ended with an exception (else it is not retried), and its END "
                "added its name to its reward buckets and its exception's list, which nothing empties before")
_WHOLE_RESULT = ("the job's result.json is written without its trial results at every write, the final one "
                  "included (Job.run and its hooks pass exclude_trial_results=True)")
_RETRY_POPPED = ("a retry's start (Job._remove_completed_attempt_for_retry) pops the trial's previous run "
                 "before the retry runs, so none is left when it ends")
_NO_UPLOAD = "the oracle resumes without --upload: uploading needs Harbor Hub and a network"
_SAME_CONFIG = ("`harbor jobs resume` makes the job from the folder's own config.json, which is the config the "
                "job compares it with")
_REGISTRY_ONLY = ("job.result serves datasets from a registry.json only: a local dataset's tasks come in "
                  "directory-listing order, which is not deterministic")

TARGETS = (
    Target(JOB, "Job._resolve_metrics"),
    # The local and package branches before it are not served (see _REGISTRY_ONLY).
    Target(JOB, "Job._resolve_dataset_metrics", start_at="elif dataset_config.is_registry():", never=(
        Never("elif dataset_config.is_registry():", False, _REGISTRY_ONLY),
        Never("if dataset_config.name is None:", True,
              "DatasetConfig requires a name or a path, and a registry dataset has its name"),
    )),
    Target(JOB, "Job._evals_key_for_result"),
    Target(JOB, "Job._refresh_metrics_for_eval"),
    # Retries: which exceptions are retried, and what a retry takes out of the running stats.
    Target("harbor/trial/queue.py", "TrialQueue._should_retry_exception"),
    Target(JOB, "Job._remove_completed_attempt_for_retry", never=(
        Never("if self._is_cancelled_result(previous_result):", True, _CANCELLED_NOT_RETRIED),)),
    Target(JOB, "Job._update_metric_display", never=(
        Never("if not self._metrics or event.result is None:", True,
              "_resolve_metrics always holds the adhoc entry, and a trial's END event has its result"),
        Never("if dataset_name not in self._metrics:", True,
              "every dataset's name and adhoc are keys of the metrics table"),
        Never("if rewards:", False, "the trial's own rewards were just added under its evals key"),
    )),
    # The live progress: the result.json written at the job's start, each trial's start, cancellation
    # request and end (JobStats.from_counts is the viewer's, never the job's).
    Target(JOB, "Job._on_trial_started"),
    Target(JOB, "Job._on_trial_cancelled"),
    Target(JOB, "Job._on_trial_completed", never=(
        Never("if event.result is None:", True, "a trial's END event carries the result it has just written"),
        Never("if previous_result is not None and self._is_cancelled_result(", True, _RETRY_POPPED),
    )),
    Target(JOB, "Job._refresh_job_progress"),
    Target(JOB, "Job._write_job_result", never=(Never("if exclude_trial_results:", False, _WHOLE_RESULT),)),
    Target(JOB, "Job._write_job_result_async"),
    Target(JOB_RESULT, "JobStats.update_progress_counts"),
    # Job.run's scoring: from the trials' results to the final stats and pass@k.
    Target(JOB, "Job.run", start_at="combined_trial_results = self._existing_trial_results + trial_results"),
    Target(JOB_RESULT, "JobStats.format_agent_evals_key"),
    Target(JOB_RESULT, "JobStats.increment", never=(
        Never("if n_input is not None:", True, _NO_TOKENS),
        Never("if n_cache is not None:", True, _NO_TOKENS),
        Never("if n_output is not None:", True, _NO_TOKENS),
        Never("if cost is not None:", True, _NO_TOKENS),
    )),
    Target(JOB_RESULT, "JobStats.remove_trial", never=(
        # Only a retry's start removes a run (update_trial's own removal never runs, below): the run
        # it removes ended with an exception, and its END added its name to its lists.
        Never("if trial_result.exception_info is not None:", False, _RETRIED_RUN),
        Never("                if trial_result.trial_name in trial_list:", False, _RETRIED_RUN),
        Never("            if trial_result.trial_name in trial_list:", False, _RETRIED_RUN),
        Never('if exception_type == "CancelledError":', True, _CANCELLED_NOT_RETRIED),
        Never("if n_input is not None and self.n_input_tokens is not None:", True, _NO_TOKENS),
        Never("if n_cache is not None and self.n_cache_tokens is not None:", True, _NO_TOKENS),
        Never("if n_output is not None and self.n_output_tokens is not None:", True, _NO_TOKENS),
        Never("if cost is not None and self.cost_usd is not None:", True, _NO_TOKENS),
    )),
    Target(JOB_RESULT, "JobStats.update_trial", never=(
        Never("if previous_result is not None:", True,
              "Job._on_trial_completed passes the trial's previous run, which the retry's start "
              "(Job._remove_completed_attempt_for_retry) has already popped and removed"),)),
    # Resume: `harbor jobs resume`'s filter, then the job reading its folder back.
    Target("harbor/cli/jobs.py", "resume", start_at="if filter_error_types:", never=(
        Never("if upload:", True, _NO_UPLOAD),
        Never("if hub_plugin is not None:", True, _NO_UPLOAD),
    )),
    Target(JOB, "Job._maybe_init_existing_job", never=(
        Never("if existing_config != self.config:", True, _SAME_CONFIG),)),
    Target(JOB, "Job._init_progress_tracking"),
    Target(JOB, "Job._init_remaining_trial_configs", never=(
        Never("if len(matched_existing_indices) != len(self._existing_trial_configs):", True,
              "the earlier trials are the same job's, each made from one of its planned configs: each "
              "matches a planned trial"),)),
)
