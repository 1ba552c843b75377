#!/usr/bin/env bash
# The install step of the GitHub Action (action.yml): pip-installs harbor-conformance into the
# active Python, then says where the oracle's environments are cached and under which key.
#
#   CONFORMANCE_VERSION        what to install (the action's `version` input):
#                                (empty)            the release this action belongs to (the version
#                                                   in conformance/__init__.py of this checkout)
#                                latest             the newest release on the index
#                                0.2.0              harbor-conformance==0.2.0
#                                '>=0.2,<0.3'       harbor-conformance>=0.2,<0.3 (any specifier)
#                                installed          nothing: use the `conformance` already installed
#                                anything else      given to pip as it is: a path, a URL, git+https://...,
#                                                   a wheel, or a whole requirement
#   CONFORMANCE_ORACLE         the oracle spec (part of the cache key); empty: the config file's, else
#                              harbor==0.13.1
#   CONFORMANCE_ORACLE_PYTHON  a CPython 3.12 for the oracle, used when HARBOR_CONFORMANCE_PYTHON is unset
#   RUNNER_OS, RUNNER_ARCH     set by GitHub (part of the cache key)
#   GITHUB_OUTPUT              if set: suite-version, cache-dir, cache-key and oracle are written to it
#
# `install.sh --print-requirement` prints what would be installed and stops.

set -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="harbor-conformance"

requirement() {
    local spec="${CONFORMANCE_VERSION:-}"
    case "$spec" in
        "")
            local own
            own="$(sed -n 's/^__version__ *= *"\([^"]*\)".*/\1/p' "$here/../../conformance/__init__.py" | head -n 1)"
            if [ -z "$own" ]; then
                echo "cannot read the action's own version from $here/../../conformance/__init__.py: set the version input" >&2
                return 2
            fi
            echo "$project==$own" ;;
        latest) echo "$project" ;;
        installed) echo "" ;;
        [0-9]*) echo "$project==$spec" ;;
        "=="* | ">="* | "<="* | "~="* | "!="* | "<"* | ">"*) echo "$project$spec" ;;
        *) echo "$spec" ;;
    esac
}

wanted="$(requirement)" || exit 2
if [ "${1:-}" = "--print-requirement" ]; then
    echo "$wanted"
    exit 0
fi

case "${RUNNER_OS:-$(uname -s)}" in
    Windows | MINGW* | MSYS* | CYGWIN*)
        echo "::error title=harbor conformance::harbor-conformance runs on Linux and macOS only: use a Linux runner (or WSL)"
        exit 2 ;;
esac

if [ -z "${HARBOR_CONFORMANCE_PYTHON:-}" ] && [ -n "${CONFORMANCE_ORACLE_PYTHON:-}" ]; then
    export HARBOR_CONFORMANCE_PYTHON="$CONFORMANCE_ORACLE_PYTHON"
fi

python="python"
command -v python > /dev/null || python="python3"
if [ -n "$wanted" ]; then
    echo "pip install $wanted"
    "$python" -m pip install --disable-pip-version-check "$wanted" || exit 2
fi
if ! command -v conformance > /dev/null; then
    echo "::error title=harbor conformance::no 'conformance' command on PATH after installing '$wanted'"
    exit 2
fi
conformance --version || exit 2

# The oracle: the input's, else the config file's (certify reads the file itself), else the default; the steps
# that prepare and cache its environment take it from this step's output.
oracle="${CONFORMANCE_ORACLE:-}"
if [ -z "$oracle" ]; then
    oracle="$(conformance config oracle)" || exit 2
fi
[ -n "$oracle" ] || oracle="harbor==0.13.1"
export CONFORMANCE_ORACLE="$oracle"

outputs="$("$python" "$here/oracle_cache.py")" || { echo "::warning title=harbor conformance::cannot work out where the oracle is cached: it will not be"; outputs=""; }
outputs="$outputs
oracle=$oracle"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s\n' "$outputs" >> "$GITHUB_OUTPUT"
else
    printf '%s\n' "$outputs"
fi
