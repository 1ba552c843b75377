"""job.result: a whole job's result.json, as harbor 0.13.1 writes it."""

from conformance.mutation.mutants import Mutant

SURFACE = "job.result"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


MUTANTS = [
    _m("model-provider-kept", 'return (model.split("/", 1)[1] if "/" in model else model) or None',
       'return model or None', "the model's provider prefix kept in the evals key"),
    _m("model-last-segment", 'return (model.split("/", 1)[1] if "/" in model else model) or None',
       'return model.rsplit("/", 1)[-1] or None', "the model's name taken after its last '/', not its first"),
    _m("empty-model-kept", 'return (model.split("/", 1)[1] if "/" in model else model) or None',
       'return model.split("/", 1)[1] if "/" in model else model',
       "an empty model name kept instead of None",
       equivalent="the model's name reaches the result only through the evals key, which leaves out a model "
                  "that is empty and one that is None alike (a truthiness test)"),
    _m("job-metrics-first", "table.setdefault(dataset[\"name\"], []).extend(own + job)",
       "table.setdefault(dataset[\"name\"], []).extend(job + own)",
       "the job's metrics listed before the dataset's own"),
    _m("adhoc-without-job-metrics", 'table: dict[str, list[MetricFn]] = {"adhoc": list(job)}',
       'table: dict[str, list[MetricFn]] = {"adhoc": []}', "ad-hoc tasks scored by mean alone, not the job's metrics"),
    _m("final-metrics-by-source", 'return evals_key.split("__")[-1]', "return dataset",
       "each evals key's final metrics those of its own dataset, not of the name after its last '__'"),
    _m("infinity-written", "if isinstance(value, float) and not math.isfinite(value):",
       "if isinstance(value, float) and math.isnan(value):",
       "an infinite value written as it is, where harbor's result.json has null"),
    _m("reward-buckets-by-text", 'stats["reward_stats"].setdefault(name, {}).setdefault(value, [])',
       'stats["reward_stats"].setdefault(name, {}).setdefault(str(value), [])',
       "reward_stats buckets keyed by the value's text: 1 and 1.0, 0.0 and -0.0 apart, NaNs together"),
    _m("reward-bucket-keys-repr", "distinct_keys([(str(value), list(names))",
       "distinct_keys([(repr(value), list(names))",
       "reward_stats keys written with repr() instead of str()",
       equivalent="rewards are ints and floats only (bools become floats), and on those repr() and str() "
                  "give the same text"),
    _m("empty-rewards-not-counted", 'stats["n_trials"] += 1', 'stats["n_trials"] += 1 if trial["rewards"] else 0',
       "a trial whose rewards are an empty dict not counted in n_trials (a truthiness test for 'has a result')"),
    # The result.json files written while the job runs (its snapshots).
    _m("pending-ignores-running", '"n_pending_trials": max(n_total - self.n_completed - n_running, 0)',
       '"n_pending_trials": max(n_total - self.n_completed, 0)',
       "n_pending_trials counted as total less completed: the running trial counted pending too"),
    _m("cancel-request-not-written",
       'self.cancelled.add(trial["trial"])  # the cancel hook writes result.json too, the trial still running\n'
       '            self._write()',
       'self.cancelled.add(trial["trial"])',
       "no result.json written when a trial's cancellation is requested: the next write is the trial's end"),
    _m("retry-earlier-run-kept", "            self.stats.remove(earlier)\n", "",
       "a retry's start leaves the earlier run in the running stats (counted twice once the retry ends)"),
    _m("finished-at-last-trial-end", "self.n_retries, finished=False))",
       "self.n_retries, finished=self.stats.n_completed == self.n_total))",
       "finished_at written once every trial has completed, before the final pass (and in a cancelled job)"),
    _m("trial-start-not-written", "self.running.add(name)\n        self._write()", "self.running.add(name)",
       "no result.json written when a trial starts: a viewer never sees a trial running"),
    _m("live-metrics-by-last-part", "metrics = self.table.setdefault(dataset, [])",
       "metrics = self.table.setdefault(final_metrics_name(key, dataset), [])",
       "the live metrics looked up as the final pass does (the name after the evals key's last '__'), "
       "not by the trial's dataset"),
    # Resume (``harbor jobs resume``).
    _m("resume-cancelled-kept", 'filtered = set(settings.get("filter_error_types", [CANCELLED]))',
       'filtered = set(settings.get("filter_error_types", []))',
       "a resume without --filter-error-type keeps the cancelled trials, where harbor's default removes them"),
    _m("resume-n-retries-reset", 'job.n_retries = earlier.n_retries if job_file == "ok" else 0',
       "job.n_retries = 0", "a resumed job counts n_retries from 0, not from the earlier result.json's"),
    _m("resume-kept-rewards-not-live", 'job.live_rewards.setdefault(run["key"], {})[run["trial"]] = run["rewards"]',
       'job.live_rewards.setdefault(run["key"], {})',
       "the kept trials' rewards left out of the running metrics a resumed job refreshes after each trial"),
    _m("resume-removed-result-kept",
       'files[f"trial-{change[\'trial\']}"] = "missing" if change.get("replace") is None else "unreadable"',
       'files[f"trial-{change[\'trial\']}"] = "ok" if change.get("replace") is None else "unreadable"',
       "a trial folder without result.json kept on a resume, where harbor removes it and runs the trial again"),
    _m("resume-interrupted-takes-no-outcome", "outcome = self._outcome(trial)\n        if stopped:",
       "outcome = {} if stopped else self._outcome(trial)\n        if stopped:",
       "the trial interrupted by the stop takes up no outcome, so the resumed run's trials take theirs one early"),
    _m("resume-nan-reward-read-back", "return any(isinstance(value, float) and not math.isfinite(value)",
       "return any(isinstance(value, float) and math.isinf(value)",
       "a NaN reward, written as null, read back on a resume as if harbor could"),
]
