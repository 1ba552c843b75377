#!/usr/bin/env bash
# The cache-key step of the GitHub Action (action.yml), run only when the oracle's environment is needed and
# after its CPython 3.12 is set up: where the oracle's environments are cached and under which key
# (oracle_cache.py, whose key names that very interpreter).
#
#   CONFORMANCE_ORACLE         the oracle spec (part of the key); empty: harbor==0.13.1
#   CONFORMANCE_ORACLE_PYTHON  a CPython 3.12 for the oracle, used when HARBOR_CONFORMANCE_PYTHON is unset
#   RUNNER_OS, RUNNER_ARCH     set by GitHub (part of the key)
#   GITHUB_OUTPUT              if set: cache-dir and cache-key are written to it
#
# Always exits 0: without a key nothing is cached, and the run goes on.

set -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ -z "${HARBOR_CONFORMANCE_PYTHON:-}" ] && [ -n "${CONFORMANCE_ORACLE_PYTHON:-}" ]; then
    export HARBOR_CONFORMANCE_PYTHON="$CONFORMANCE_ORACLE_PYTHON"
fi

python="python"
command -v python > /dev/null || python="python3"
if ! outputs="$("$python" "$here/oracle_cache.py")"; then
    echo "::warning title=harbor conformance::cannot work out where the oracle is cached: it will not be"
    exit 0
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s\n' "$outputs" >> "$GITHUB_OUTPUT"
else
    printf '%s\n' "$outputs"
fi
