#!/usr/bin/env bash
# Runs a command and, while it runs, prints "    … LABEL: 45 s so far" every 15 s.
#
# Some install steps are quiet for minutes (yarn's fetch, code-server's download and
# its native build) and look hung without it. The lines start with "    … " so a
# caller that filters the command's output keeps them: grep -E '...|^    … '.
# The exit status is the command's. CGU_HEARTBEAT_SECONDS changes the interval.
#
# Usage: scripts/heartbeat.sh LABEL COMMAND [ARGS...]
set -uo pipefail
label="${1:?usage: scripts/heartbeat.sh LABEL COMMAND [ARGS...]}"
shift
every="${CGU_HEARTBEAT_SECONDS:-15}"
start=$(date +%s)
(
  # sleep's output is not the pipe's: a sleep left over after the kill below must not
  # hold a caller's `| grep` open until it ends.
  while sleep "$every" </dev/null >/dev/null 2>&1; do
    printf '    … %s: %d s so far\n' "$label" $(($(date +%s) - start))
  done
) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null' EXIT
"$@"
