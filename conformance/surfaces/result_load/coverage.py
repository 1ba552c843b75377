"""result.load: harbor's result models and the validators loading a result.json runs."""

from conformance.oracle.coverage import Never, Target

JOB_RESULT = "harbor/models/job/result.py"
TRIAL_CONFIG = "harbor/models/trial/config.py"
_FROM_JSON = "a value validated from JSON text is a dict, list or scalar, never a model instance"
_STATS_ARE_A_DICT = ("JobResult._derive_progress_stats always hands the stats on as a dict: what the file holds, "
                     "or {} in place of anything else")
_MIGRATED_FIRST = ("JobResult._derive_progress_stats has already copied n_trials and n_errors into the current "
                   "counts the stats lack, so JobStats' own migration finds them there")
_VALIDATED_SOURCE = ("validate_task_source runs first (TaskConfig's after-validator, before TrialConfig's): a task "
                     "has a path or a name, and a git task (a git_url, no name) has its path")

TARGETS = (
    # The job's migration: the status block, updated_at's fallbacks, legacy counts, the derived pending count.
    Target(JOB_RESULT, "JobResult._derive_progress_stats", never=(
        Never("if isinstance(stats, JobStats):", True, _FROM_JSON),
    )),
    Target(JOB_RESULT, "JobStats._migrate_legacy_progress_fields", never=(
        Never("if not isinstance(data, dict):", True, _STATS_ARE_A_DICT),
        Never("if current_field not in data and legacy_field in data:", True, _MIGRATED_FIRST),
    )),
    Target(JOB_RESULT, "_stats_count", never=(
        Never("if isinstance(stats, JobStats):", True, _STATS_ARE_A_DICT),
        Never("if isinstance(stats, dict):", False, _STATS_ARE_A_DICT),
    )),
    # A trial config's validators, and the trial name it draws when it names none.
    Target(TRIAL_CONFIG, "TrialConfig.set_default_trial_name"),
    Target(TRIAL_CONFIG, "TrialConfig.generate_trial_name"),
    Target(TRIAL_CONFIG, "TrialConfig.__eq__", never=(
        Never("if not isinstance(other, TrialConfig):", True,
              "TrialConfig is only compared inside two trial results of the same model, config with config"),
    )),
    Target(TRIAL_CONFIG, "TaskConfig.validate_task_source"),
    Target(TRIAL_CONFIG, "TaskConfig.get_task_id", never=(
        Never("if self.git_url is None or self.path is None:", True, _VALIDATED_SOURCE),
        Never("if self.path is None:", True, _VALIDATED_SOURCE),
    )),
    Target(TRIAL_CONFIG, "AgentConfig.set_default_name"),
    Target(TRIAL_CONFIG, "EnvironmentConfig._accept_legacy_mounts_json"),
    Target(TRIAL_CONFIG, "EnvironmentConfig._normalize_resource_mode"),
    Target(TRIAL_CONFIG, "EnvironmentConfig._env_list_to_dict"),
    Target(TRIAL_CONFIG, "EnvironmentConfig.set_default_type"),
    # How a config writes its env: a sensitive value redacted, or a template of the process's own variable.
    Target("harbor/utils/env.py", "templatize_sensitive_env", never=(
        Never("elif os.environ.get(key) == value:", True,
              "no generated env value is the value of a variable of the oracle's own environment (it would make "
              "the answer depend on the machine)"),
    )),
)
