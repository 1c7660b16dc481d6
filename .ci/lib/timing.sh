# Phase timing for .ci/run (sourced). `phase NAME` ends the running phase and starts NAME; each phase
# prints its duration when it ends, and `ci_summary` prints every phase's duration and the total.
# Jobs run side by side inside a phase (.ci/lib/jobs.sh) add their own lines under it, marked `|`.
# `trap ci_exit_trap EXIT` prints the table on failure too, after `ci_before_summary` (a function the
# script may define: .ci/run stops its Docker daemon there), and keeps the exit status.

CI_RUN_START=$(date +%s)
CI_PHASE_NAME=""
CI_PHASE_START=0
CI_PHASE_FIRST=0
CI_TIMINGS=()

# The load average at a moment: timings on a shared machine mean little without it.
ci_load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }

phase() {
  end_phase
  CI_PHASE_NAME="$1"
  CI_PHASE_START=$(date +%s)
  CI_PHASE_FIRST=${#CI_TIMINGS[@]}
  echo
  echo "=== [ci] $CI_PHASE_NAME (load $(ci_load))"
}

end_phase() {
  if [ -n "$CI_PHASE_NAME" ]; then
    local took=$(( $(date +%s) - CI_PHASE_START ))
    # The phase's line goes above the lines its jobs added while it ran.
    CI_TIMINGS=(
      "${CI_TIMINGS[@]:0:CI_PHASE_FIRST}"
      "$(printf '%5ss  %s' "$took" "$CI_PHASE_NAME")"
      "${CI_TIMINGS[@]:CI_PHASE_FIRST}"
    )
    echo "=== [ci] $CI_PHASE_NAME: ${took}s (load $(ci_load))"
    CI_PHASE_NAME=""
  fi
}

# A line under the current phase's entry in the table (used for jobs run side by side).
timing_detail() {
  CI_TIMINGS+=("$(printf '%5ss    | %s' "$1" "$2")")
}

# Prints the table. $1 is the exit status of the run; it is returned unchanged.
ci_summary() {
  local status="${1:-0}" t
  end_phase
  echo
  echo "=== [ci] timings"
  for t in "${CI_TIMINGS[@]}"; do echo "$t"; done
  printf '%5ss  total (load at the end %s)\n' "$(( $(date +%s) - CI_RUN_START ))" "$(ci_load)"
  if [ "$status" -ne 0 ]; then echo "=== [ci] FAILED (exit $status)"; else echo "=== [ci] OK"; fi
  return "$status"
}

# The EXIT trap: whatever failed, the table is printed and the run's exit status is kept.
ci_exit_trap() {
  local status=$?
  set +e
  if declare -F ci_before_summary > /dev/null; then ci_before_summary; fi
  ci_summary "$status"
  exit "$status"
}

# Installs the traps: the table at exit, and a run stopped by a signal ends with that signal's
# status (143 for TERM, 130 for INT) instead of the status of whatever command it interrupted.
ci_traps() {
  trap ci_exit_trap EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
}
