#!/usr/bin/env bash
# `make test`: each suite in turn, every one run even after an earlier one failed, so that
# one CI run tells all that is wrong; then a summary as the last lines of the output (what a
# CI log's tail shows): each suite's result and time, and the start of each failure's message
# (scripts/test_failures.py, from pytest's JUnit files and Playwright's JSON report).
#   scripts/test-suites.sh lint test-js test-python-local test-ui+test-kube
# Suites joined by '+' run at the same time: the first one's output as it comes, each other's
# kept in artifacts/<suite>.log and printed when it ends. The UI suite spends its time waiting
# on pages and servers, not computing, and the Kubernetes suite mostly on its cluster: side by
# side on 2 cores they took 19.1 and 24.1 min (alone: 19.2 and 16.9), instead of 36 in turn.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p artifacts
rm -f artifacts/junit-*.xml artifacts/ui-results.json
summary=()
failed=0
trap 'kill $(jobs -p) 2>/dev/null' INT TERM

record() {  # suite exit-code seconds
  local result=passed
  if [ "$2" -ne 0 ]; then result="FAILED (exit $2)"; failed=1; fi
  summary+=("$(printf '  %-18s %-16s %3dm%02ds' "$1" "$result" $(($3 / 60)) $(($3 % 60)))")
}

for arg in "$@"; do
  IFS=+ read -r -a group <<<"$arg"
  first=${group[0]}
  beside=("${group[@]:1}")
  for suite in "${beside[@]}"; do
    rm -f "artifacts/$suite.log" "artifacts/$suite.result"
    printf '==> %s runs beside %s; its output follows when it ends (artifacts/%s.log)\n' \
      "$suite" "$first" "$suite"
    (
      started=$SECONDS
      make --no-print-directory "$suite" >"artifacts/$suite.log" 2>&1
      echo "$? $((SECONDS - started))" >"artifacts/$suite.result"
    ) &
  done
  started=$SECONDS
  make --no-print-directory "$first"
  record "$first" $? $((SECONDS - started))
  wait
  for suite in "${beside[@]}"; do
    printf '\n==> %s (ran beside %s)\n' "$suite" "$first"
    cat "artifacts/$suite.log"
    read -r rc took <"artifacts/$suite.result" 2>/dev/null || { rc=1; took=0; }
    record "$suite" "$rc" "$took"
  done
done
printf '\n==> test summary\n'
printf '%s\n' "${summary[@]}"
if [ $failed -ne 0 ]; then
  python3 scripts/test_failures.py artifacts
fi
exit $failed
