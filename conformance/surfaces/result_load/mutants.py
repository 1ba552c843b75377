"""result.load: a result.json read back through harbor's JobResult or TrialResult, and written again."""

from conformance.mutation.mutants import Mutant

SURFACE = "result.load"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


_JOB_LEGACY = ('        for legacy, current in _LEGACY_COUNTS.items():\n'
               '            if current not in stats and legacy in stats:\n'
               '                stats[current] = stats[legacy]\n')
_STATS_LEGACY = ('        for legacy, current in _LEGACY_COUNTS.items():\n'
                 '            if current not in data and legacy in data:\n'
                 '                data[current] = data[legacy]\n')
_STATUS = ('            for name in _STATUS_COUNTS:\n'
           '                if name not in stats and name in status:\n'
           '                    stats[name] = status[name]\n')
_PENDING = ('            stats["n_pending_trials"] = max(\n'
            '                total - _count(stats, "n_completed_trials") - _count(stats, "n_running_trials"), 0)\n')
_TRIAL_CONFIG_EQ = ('    def __eq__(self, other: object) -> bool:\n'
                    '        # The trial\'s identity is no part of its configuration.\n'
                    '        if not isinstance(other, TrialConfig):\n'
                    '            return NotImplemented\n'
                    '        identity = {"trial_name", "job_id"}\n'
                    '        return self.model_dump(exclude=identity) == other.model_dump(exclude=identity)\n\n'
                    '    __hash__ = None  # type: ignore[assignment]  # as any model that defines __eq__\n')
_JOB_TIMES = ("    trial_results: list[TrialResult] = Field(default_factory=list)\n\n"
              "    @model_validator(mode=\"before\")\n")

MUTANTS = [
    # The migrations: legacy counts, the status block, the derived pending count, updated_at's fallbacks.
    _m("job-legacy-skipped", _JOB_LEGACY, "",
       "the job's migration leaves the legacy n_trials/n_errors to JobStats, so the pending count is derived "
       "before they are read"),
    _m("stats-legacy-skipped", _STATS_LEGACY, "",
       "JobStats' own legacy migration left out",
       equivalent="JobStats is only read inside a JobResult, whose migration has already copied n_trials and "
                  "n_errors into the stats it hands on"),
    _m("status-ignored", _STATUS, "            pass\n", "a status block's counts are not carried into the stats"),
    _m("pending-not-derived", _PENDING, "            pass\n",
       "n_pending_trials left at its default 0 when the file lacks it"),
    _m("pending-may-go-negative", _PENDING,
       '            stats["n_pending_trials"] = (\n'
       '                total - _count(stats, "n_completed_trials") - _count(stats, "n_running_trials"))\n',
       "the derived pending count not floored at 0"),
    _m("pending-ignores-running", ' - _count(stats, "n_running_trials"), 0)', ", 0)",
       "running trials not taken off the pending count"),
    _m("bool-no-count", "return value if isinstance(value, int) else 0",
       "return value if isinstance(value, int) and not isinstance(value, bool) else 0",
       "a count of true or false counts 0 in the derived pending count (Python's bool is an int)"),
    _m("float-total-counted", "        if not isinstance(total, int):\n            total = 0\n",
       "        if isinstance(total, float) and total.is_integer():\n            total = int(total)\n"
       "        elif not isinstance(total, int):\n            total = 0\n",
       "a whole float n_total_trials (4.0) counted in the pending count, where harbor counts 0"),
    _m("updated-at-order",
       'status_updated_at or data.get("finished_at") or data.get("started_at")',
       'data.get("finished_at") or status_updated_at or data.get("started_at")',
       "a missing updated_at taken from finished_at before the status block's"),
    _m("updated-at-only-when-missing", 'if data.get("updated_at") is None:', 'if "updated_at" not in data:',
       "an updated_at written as null kept, not filled"),
    # What the models accept.
    _m("extra-keys-refused", "class JobStats(BaseModel):\n",
       'class JobStats(BaseModel):\n    model_config = ConfigDict(extra="forbid")\n',
       "keys JobStats does not know (legacy n_trials, a writer's own) refused instead of ignored"),
    _m("strict-total", "    n_total_trials: int\n", "    n_total_trials: int = Field(strict=True)\n",
       "n_total_trials read strictly: \"3\", 2.0 and true refused"),
    _m("job-id-as-text", "    id: uuid.UUID\n    started_at: datetime\n",
       "    id: str\n    started_at: datetime\n",
       "the job's id kept as the file spells it, not read as a UUID"),
    _m("trial-id-required", "    id: uuid.UUID = Field(default_factory=uuid.uuid4)\n", "    id: uuid.UUID\n",
       "a trial result without an id refused instead of given a fresh one"),
    _m("rewards-as-floats", "    rewards: dict[str, float | int] | None = None\n",
       "    rewards: dict[str, float] | None = None\n", "integer rewards read (and written) as floats"),
    _m("pass-at-k-text-keys", "    pass_at_k: dict[int, float] = Field(default_factory=dict)\n",
       "    pass_at_k: dict[str, float] = Field(default_factory=dict)\n",
       "pass@k's k kept as text, not read as an int"),
    _m("trial-name-not-trimmed", "self.task.task_name()[:32].rstrip('_-')", "self.task.task_name()[:32]",
       "a generated trial name keeps the task name's trailing '_' and '-'"),
    # How the value is written and read back.
    _m("nan-written-as-nan", "    dumped = value.model_dump_json(indent=4)\n",
       '    dumped = json.dumps(value.model_dump(mode="json"), indent=4)\n',
       "the value written by json.dumps, which spells NaN and infinities NaN and Infinity where pydantic "
       "writes null"),
    _m("datetimes-isoformat", _JOB_TIMES,
       '    trial_results: list[TrialResult] = Field(default_factory=list)\n\n'
       '    @field_serializer("started_at", "updated_at", "finished_at")\n'
       '    def _iso(self, value: datetime | None) -> str | None:\n'
       '        return None if value is None else value.isoformat()\n\n'
       '    @model_validator(mode="before")\n',
       "a job's datetimes written by isoformat() (+00:00 where harbor writes Z)"),
    _m("secrets-written", 'out[key] = "****" if len(value) <= 8 else value[:4] + "****" + value[-3:]',
       "out[key] = value", "a sensitive env value written as it is, not redacted"),
    _m("suppress-warnings-written", "    suppress_override_warnings: bool = Field(default=False, exclude=True)",
       "    suppress_override_warnings: bool = False", "the deprecated suppress_override_warnings written out"),
    _m("config-plain-equality", _TRIAL_CONFIG_EQ, "",
       "trial configs compared field by field, not by their written form without trial_name and job_id"),
    _m("reload-by-text", "return SAME if again == value else DIFFERS",
       "return SAME if again.model_dump_json(indent=4) == dumped else DIFFERS",
       "the reload judged by the text it writes, not by the value it reads"),
    # Reading the bytes.
    _m("bom-skipped", 'return data.decode("utf-8")', 'return data.decode("utf-8-sig")',
       "a byte order mark skipped (Path.read_text keeps it, and JSON refuses it)"),
    _m("undecodable-replaced", 'return data.decode("utf-8")', 'return data.decode("utf-8", errors="replace")',
       "bytes that are not UTF-8 replaced instead of refused"),
]
