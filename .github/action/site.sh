#!/usr/bin/env bash
# The site step of the GitHub Action (action.yml, input `site: true`): the report certify wrote, as a static
# site (`conformance site`) in REPORT-DIR/site, for actions/upload-pages-artifact. Runs in any CI, or by hand.
#
#   CONFORMANCE_REPORT      the report (the certify step's `report` output); empty or missing: certify wrote
#                           none (a usage error), so there is no site
#   CONFORMANCE_REPORT_DIR  the report folder; the site goes in its site/ folder; default conformance-report
#   GITHUB_OUTPUT           if set: site (the site's folder, absolute; empty when none was built) is written to it
#
# Exit status: 0 when the site was built, or when there was no report to build it from; 2 when
# `conformance site` failed (its error says why).

set -o pipefail

report="${CONFORMANCE_REPORT:-}"
report_dir="${CONFORMANCE_REPORT_DIR:-}"
[ -n "$report_dir" ] || report_dir="conformance-report"
case "$report_dir" in
    *$'\n'*) echo "::error title=harbor conformance::the report directory name holds a newline"; exit 2 ;;
esac

mkdir -p -- "$report_dir" || exit 2
target="$(cd -- "$report_dir" && pwd)/site" || exit 2
site=""
status=0
if [ -n "$report" ] && [ -f "$report" ]; then
    conformance site "$report" --out "$target"
    status=$?
    if [ "$status" -eq 0 ]; then
        site="$target"
    else
        echo "::error title=harbor conformance::conformance site exited $status: see the log above"
    fi
else
    echo "no report was written: no site"
    # A site left by an earlier run in the same folder must not pass for this run's.
    if [ -f "$target/site.json" ]; then
        rm -rf -- "$target"
    fi
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "site=$site" >> "$GITHUB_OUTPUT"
else
    echo "site=$site"
fi
[ "$status" -eq 0 ] || exit 2
