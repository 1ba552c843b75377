#!/usr/bin/env bash
# The oracle step of the GitHub Action (action.yml): create the live oracle's virtualenv (or find it,
# restored from the cache) before certify runs, so it can be cached even when certification fails.
#
#   CONFORMANCE_ORACLE         the oracle spec; only harbor==VERSION has an environment to prepare
#   CONFORMANCE_ORACLE_PYTHON  a CPython 3.12 for the oracle, used when HARBOR_CONFORMANCE_PYTHON is unset
#   GITHUB_OUTPUT              if set: ready=true|false is written to it
#
# Always exits 0: when the environment cannot be made, certify meets the same problem and reports it
# (exit status 2, with the outputs and the job summary written).

set -o pipefail

oracle="${CONFORMANCE_ORACLE:-}"
[ -n "$oracle" ] || oracle="harbor==0.13.1"

if [ -z "${HARBOR_CONFORMANCE_PYTHON:-}" ] && [ -n "${CONFORMANCE_ORACLE_PYTHON:-}" ]; then
    export HARBOR_CONFORMANCE_PYTHON="$CONFORMANCE_ORACLE_PYTHON"
fi

ready=false
case "$oracle" in
    harbor==*)
        if conformance oracle --harbor "${oracle#harbor==}"; then
            ready=true
        else
            echo "::warning title=harbor conformance::the oracle environment could not be prepared (see above)"
        fi ;;
    *)
        echo "the oracle is not a harbor release: no environment to prepare" ;;
esac

if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "ready=$ready" >> "$GITHUB_OUTPUT"
else
    echo "ready=$ready"
fi
