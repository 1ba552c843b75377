#!/usr/bin/env bash
# The certify step of the GitHub Action (action.yml); runs in any CI, or by hand.
#
# It reads everything from environment variables: action.yml maps its inputs onto
# them through `env:`, so no input value is ever pasted into shell text.
#
#   CONFORMANCE_CANDIDATE      the candidate spec, e.g. 'exec:./my-runner --conformance'; empty: the config file's
#   CONFORMANCE_SURFACES       surface names, separated by spaces, commas or newlines; empty: the file's, else all
#   CONFORMANCE_PROFILE        the generated-input profile (ci, dev, explore); empty: the file's, else ci
#   CONFORMANCE_EXPECTATIONS   an expectation file; empty: the file's, else none
#   CONFORMANCE_ORACLE         the oracle spec; empty: the file's, else certify's default (harbor==0.13.1)
#   CONFORMANCE_ARGS           further certify options, split on whitespace (no quoting)
#   CONFORMANCE_REPORT_DIR     where the report and its formats go when the config file names no path for them;
#                              default conformance-report
#
# The config file (conformance.toml, or [tool.conformance] in pyproject.toml, found from the current folder up)
# is read by certify itself: an input left empty gives no option, so the file's value stands.
#   CONFORMANCE_ORACLE_PYTHON  a CPython 3.12 for the oracle, used when HARBOR_CONFORMANCE_PYTHON is unset
#   GITHUB_OUTPUT              if set: report, markdown, junit, badge, verdict and exit-code are written to it
#   GITHUB_STEP_SUMMARY        if set: the Markdown summary is appended to it
#
# Exit status: certify's own (0 conforms, 1 does not, 2 usage or configuration error).
# Written for bash 3.2 too (the one macOS ships): no `set -u` with arrays, no mapfile.

set -o pipefail

candidate="${CONFORMANCE_CANDIDATE:-}"
report_dir="${CONFORMANCE_REPORT_DIR:-}"
[ -n "$report_dir" ] || report_dir="conformance-report"

# What the config file gives, as file_KEY variables (empty for a key it does not give), read by one process; a
# file that cannot be read stops the step here, its line named.
from_file="$(conformance config --shell)" || exit 2
eval "$from_file"
if [ -z "$candidate" ] && [ -z "$file_candidate" ]; then
    echo "::error title=harbor conformance::no candidate given (the action's 'candidate' input, CONFORMANCE_CANDIDATE, or candidate in the config file)"
    exit 2
fi
case "$report_dir" in
    *$'\n'*) echo "::error title=harbor conformance::the report directory name holds a newline"; exit 2 ;;
esac

if [ -z "${HARBOR_CONFORMANCE_PYTHON:-}" ] && [ -n "${CONFORMANCE_ORACLE_PYTHON:-}" ]; then
    export HARBOR_CONFORMANCE_PYTHON="$CONFORMANCE_ORACLE_PYTHON"
fi

mkdir -p -- "$report_dir" || exit 2
report_dir="$(cd -- "$report_dir" && pwd)" || exit 2
# Where the config file names a path for the report or a format, it is written there; else in the report folder.
report="${file_report:-$report_dir/report.jsonl}"
markdown="${file_markdown:-$report_dir/summary.md}"
junit="${file_junit:-$report_dir/junit.xml}"
badge="${file_badge:-$report_dir/badge.json}"
# A report left by an earlier run in the same folder must not pass for this run's.
rm -f -- "$report" "$markdown" "$junit" "$badge"

args=(certify --report "$report" --markdown "$markdown" --junit "$junit" --badge "$badge")
if [ -n "$candidate" ]; then
    args+=(--candidate "$candidate")
fi
if [ -n "${CONFORMANCE_ORACLE:-}" ]; then
    args+=(--oracle "$CONFORMANCE_ORACLE")
fi
if [ -n "${CONFORMANCE_PROFILE:-}" ]; then
    args+=(--profile "$CONFORMANCE_PROFILE")
elif [ -z "$file_profile" ]; then
    args+=(--profile ci)  # the action's own default: a repeatable gate
fi
if [ -n "${CONFORMANCE_EXPECTATIONS:-}" ]; then
    args+=(--expectations "$CONFORMANCE_EXPECTATIONS")
fi

# Word splitting of these two is deliberate: globbing is off while it happens.
set -f
saved_ifs="$IFS"
IFS=$' \t\r\n,'
for surface in ${CONFORMANCE_SURFACES:-}; do
    if [ -n "$surface" ]; then args+=(--surface "$surface"); fi
done
IFS=$' \t\r\n'
for extra in ${CONFORMANCE_ARGS:-}; do
    args+=("$extra")
done
IFS="$saved_ifs"
set +f

printf 'conformance'
printf ' %q' "${args[@]}"
printf '\n'

# Nothing the candidate (or a case) prints may act as a workflow command.
stop_token=""
if [ "${GITHUB_ACTIONS:-}" = "true" ]; then
    stop_token="conformance-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    echo "::stop-commands::$stop_token"
fi
conformance "${args[@]}"
status=$?
if [ -n "$stop_token" ]; then
    echo "::$stop_token::"
fi

case "$status" in
    0) verdict="conforms" ;;
    1) verdict="does-not-conform" ;;
    *) verdict="error" ;;
esac

existing() {
    if [ -f "$1" ]; then printf '%s' "$1"; fi
}

write_outputs() {
    echo "report=$(existing "$report")"
    echo "markdown=$(existing "$markdown")"
    echo "junit=$(existing "$junit")"
    echo "badge=$(existing "$badge")"
    echo "verdict=$verdict"
    echo "exit-code=$status"
}

if [ -n "${GITHUB_OUTPUT:-}" ]; then
    write_outputs >> "$GITHUB_OUTPUT"
else
    write_outputs
fi

# GitHub refuses a step summary over 1 MiB: keep the head of a larger one and say where the rest is.
summary_limit=1000000
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        if [ -f "$markdown" ]; then
            size=$(wc -c < "$markdown" | tr -d ' ')
            if [ "$size" -gt "$summary_limit" ]; then
                head -c "$((summary_limit - 2000))" "$markdown"
                printf '\n\n*(summary cut at %s of %s bytes: the whole one is %s, in the report artifact)*\n' \
                    "$((summary_limit - 2000))" "$size" "$(basename "$markdown")"
            else
                cat "$markdown"
            fi
        else
            printf '## harbor conformance: certify exited %s\n\nNo summary was written: see the step log.\n' "$status"
        fi
        printf '\n'
    } >> "$GITHUB_STEP_SUMMARY"
fi

case "$verdict" in
    conforms) ;;
    does-not-conform)
        echo "::error title=harbor conformance::the candidate does not conform: see the job summary and $report" ;;
    *)
        echo "::error title=harbor conformance::conformance certify exited $status (a usage or configuration error): see the log above" ;;
esac

exit "$status"
