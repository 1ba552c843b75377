#!/usr/bin/env bash
# The install step of the GitHub Action (action.yml): pip-installs harbor-conformance into the
# active Python, then says whether the run needs the oracle's environment (a CPython 3.12 and harbor's
# virtualenv, which the later steps set up and cache only then).
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
#                              The four first take the `pinned` extra: the Hypothesis release the recorded
#                              ci inputs were drawn with, without which they are drawn anew.
#   CONFORMANCE_ORACLE         the oracle spec; empty: the config file's, else harbor==0.13.1
#   CONFORMANCE_PROFILE        the profile certify is given; empty: the config file's, else ci
#   CONFORMANCE_ARGS           further certify options, split on whitespace as certify.sh splits them
#   CONFORMANCE_ORACLE_ENVIRONMENT
#                              auto (or empty): the oracle environment is needed when the suite's recordings
#                              do not answer the whole run (`conformance recordings needed`); always: it is
#   RUNNER_OS                  set by GitHub: a Windows runner is refused
#   GITHUB_OUTPUT              if set: suite-version, oracle and oracle-needed (true|false) are written to it
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
            echo "$project[pinned]==$own" ;;
        latest) echo "$project[pinned]" ;;
        installed) echo "" ;;
        [0-9]*) echo "$project[pinned]==$spec" ;;
        "=="* | ">="* | "<="* | "~="* | "!="* | "<"* | ">"*) echo "$project[pinned]$spec" ;;
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

environment="${CONFORMANCE_ORACLE_ENVIRONMENT:-}"
case "$environment" in
    "" | auto | always) ;;
    *)
        echo "::error title=harbor conformance::oracle-environment is 'auto' or 'always', not '$environment'"
        exit 2 ;;
esac

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

suite="$("$python" -c 'import importlib.metadata as m; print(m.version("harbor-conformance"))')" || exit 2

# The oracle: the input's, else the config file's (certify reads the file itself), else the default; the steps
# that prepare and cache its environment take it from this step's output.
oracle="${CONFORMANCE_ORACLE:-}"
if [ -z "$oracle" ]; then
    oracle="$(conformance config oracle)" || exit 2
fi
[ -n "$oracle" ] || oracle="harbor==0.13.1"

# Whether certify will need the oracle's environment: not when the suite's recordings answer the whole run (a
# conforming candidate's). The question is put with the options certify.sh gives; a suite too old to answer it,
# or one that cannot, gets the environment.
if [ "$environment" = "always" ]; then
    needed=true
    echo "oracle environment needed: the oracle-environment input is 'always'"
else
    question=(recordings needed --oracle "$oracle")
    if [ -n "${CONFORMANCE_PROFILE:-}" ]; then
        question+=(--profile "$CONFORMANCE_PROFILE")
    fi
    question+=(--)
    set -f
    saved_ifs="$IFS"
    IFS=$' \t\r\n'
    for extra in ${CONFORMANCE_ARGS:-}; do
        question+=("$extra")
    done
    IFS="$saved_ifs"
    set +f
    answer="$(conformance "${question[@]}")"
    case "$?:$answer" in
        "0:needed=true") needed=true ;;
        "0:needed=false") needed=false ;;
        *)
            echo "::warning title=harbor conformance::cannot tell whether the run needs the oracle environment: it is set up"
            needed=true ;;
    esac
fi

outputs="suite-version=$suite
oracle=$oracle
oracle-needed=$needed"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s\n' "$outputs" >> "$GITHUB_OUTPUT"
else
    printf '%s\n' "$outputs"
fi
