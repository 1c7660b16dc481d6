# Jobs side by side inside one phase of .ci/run (sourced after timing.sh). Each job's output goes
# to its own log, printed whole (never interleaved) when the job ends, with its duration and the
# load average; the timing table gets one `|` line per job.
#
#   jobs_start NAME COMMAND [ARGS...]    start COMMAND (a function of the script or a program)
#   jobs_wait                            wait for every started job; the names of the failed ones
#                                        are in JOBS_FAILED; returns non-zero when any failed
#   job_step NAME COMMAND [ARGS...]      inside a job: run COMMAND, timed; its line goes under the
#                                        job's line in the table (a job made of steps in a row)
#
# A job runs in a subshell: what it exports (PATH, a Node version) stays in that job.

JOBS_DIR="${JOBS_DIR:-}"
JOB_NAMES=()
JOB_PIDS=()
JOB_STARTS=()
JOB_LOGS=()
JOBS_FAILED=()

# The log file of job NAME (a file name made of the name's safe characters).
job_log() {
  printf '%s/%s.log' "$JOBS_DIR" "$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_')"
}

jobs_start() {
  local name="$1"
  shift
  if [ -z "$JOBS_DIR" ]; then JOBS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/cairn-ci-jobs.XXXXXX")"; fi
  local log
  log="$(job_log "$name")"
  rm -f "$log.steps"
  ( export JOB_STEPS="$log.steps"; "$@" ) > "$log" 2>&1 < /dev/null &
  JOB_NAMES+=("$name")
  JOB_PIDS+=("$!")
  JOB_STARTS+=("$(date +%s)")
  JOB_LOGS+=("$log")
  echo "=== [ci] started: $name (pid $!, output in $log, printed when it ends)"
}

job_step() {
  local name="$1" start status=0
  shift
  start=$(date +%s)
  echo "=== [ci] | step: $name (load $(ci_load))"
  "$@" || status=$?
  local took=$(( $(date +%s) - start ))
  echo "=== [ci] | step: $name: $([ "$status" -eq 0 ] && echo ok || echo "FAILED (exit $status)") in ${took}s (load $(ci_load))"
  if [ -n "${JOB_STEPS:-}" ]; then
    printf '%s\t%s\n' "$took" "$name$([ "$status" -eq 0 ] || echo ' (FAILED)')" >> "$JOB_STEPS"
  fi
  return "$status"
}

jobs_wait() {
  local pending=() i pid status took name rest
  JOBS_FAILED=()
  for i in "${!JOB_PIDS[@]}"; do pending+=("${JOB_PIDS[$i]}"); done
  while [ "${#pending[@]}" -gt 0 ]; do
    # Polled rather than `wait -n`, which in a non-interactive bash can miss a job that ended
    # before it was called ("no such job"); `wait PID` still has the status of an ended child.
    rest=()
    for pid in "${pending[@]}"; do
      if kill -0 "$pid" 2> /dev/null; then
        rest+=("$pid")
        continue
      fi
      status=0
      wait "$pid" || status=$?
      for i in "${!JOB_PIDS[@]}"; do
        [ "${JOB_PIDS[$i]}" = "$pid" ] || continue
        name="${JOB_NAMES[$i]}"
        took=$(( $(date +%s) - JOB_STARTS[i] ))
        echo
        echo "=== [ci] | $name: output"
        cat "${JOB_LOGS[$i]}"
        if [ "$status" -eq 0 ]; then
          echo "=== [ci] | $name: ok in ${took}s (load $(ci_load))"
          timing_detail "$took" "$name"
        else
          echo "=== [ci] | $name: FAILED (exit $status) after ${took}s (load $(ci_load))"
          timing_detail "$took" "$name (FAILED)"
          JOBS_FAILED+=("$name")
        fi
        if [ -f "${JOB_LOGS[$i]}.steps" ]; then
          local step_took step_name
          while IFS=$'\t' read -r step_took step_name; do timing_detail "$step_took" "  $step_name"; done < "${JOB_LOGS[$i]}.steps"
        fi
      done
    done
    pending=("${rest[@]+"${rest[@]}"}")
    if [ "${#pending[@]}" -gt 0 ]; then sleep 1; fi
  done
  JOB_NAMES=()
  JOB_PIDS=()
  JOB_STARTS=()
  JOB_LOGS=()
  [ "${#JOBS_FAILED[@]}" -eq 0 ]
}
