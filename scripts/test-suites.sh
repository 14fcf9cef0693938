#!/usr/bin/env bash
# `make test`: each suite in turn, every one run even after an earlier one failed, so that
# one CI run tells all that is wrong; then a summary as the last lines of the output (what a
# CI log's tail shows): each suite's result and time, and the start of each failure's message
# (scripts/test_failures.py, from pytest's JUnit files and Playwright's JSON report).
#   scripts/test-suites.sh lint test-js test-python-local test-ui test-kube
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p artifacts
rm -f artifacts/junit-*.xml artifacts/ui-results.json
summary=()
failed=0
for suite in "$@"; do
  started=$SECONDS
  make --no-print-directory "$suite"
  rc=$?
  took=$((SECONDS - started))
  if [ $rc -eq 0 ]; then result=passed; else result="FAILED (exit $rc)"; failed=1; fi
  summary+=("$(printf '  %-18s %-16s %3dm%02ds' "$suite" "$result" $((took / 60)) $((took % 60)))")
done
printf '\n==> test summary\n'
printf '%s\n' "${summary[@]}"
if [ $failed -ne 0 ]; then
  python3 scripts/test_failures.py artifacts
fi
exit $failed
