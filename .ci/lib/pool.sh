# CI's test pool (sourced after timing.sh, node.sh and containers.sh; needs ROOT, CACHE, LOG_DIR,
# TEST_LOG and UNIT_LOG). Every test job of the run on two lanes, the longest chain first
# (scripts/ci/pool: plan.ts orders, main.ts runs, ci-jobs.ts lists the jobs): the container
# runtime's set-up (the conformance tasks wait for it), each task of
# `pnpm test` on Node 24 (turbo runs it, as `pnpm test` would), each task of `pnpm test:unit` on
# Node 22 in its own tree, the release check and the bench smoke. A lane never waits for a phase
# to end while there is work left, which two phases in a row did (the last conformance suite ran
# alone for minutes; see docs/testing.md, "CI").
#
#   run_test_pool COVERAGE_DIR    runs every job; the timing table gets one `|` line per job;
#                                 returns non-zero when any job failed (or was skipped)

# The jobs call these through `bash -c` (exported below): each sets its own environment, so a
# job sees what it saw as a phase of its own. Turbo is called directly, not through `pnpm exec`:
# one pnpm start less per job (some 30 jobs).

# One task of `pnpm test` (Node 24, the checkout): the conformance files get every server backend
# from Testcontainers, required (CAIRN_TEST_CONFORMANCE_PROVIDER=testcontainers: no fallback to a
# local server; CAIRN_TEST_REQUIRE=all: no skip); every other test uses local servers
# (CAIRN_TEST_PROVIDER=local), so the unit tests never probe a container runtime. Ryuk (the reaper
# image) cannot be pulled here; each test file stops its containers, and the run fails if any
# container is left. Core's and the stores' tests write their coverage to CI_POOL_COVERAGE.
ci_pool_node24_task() {
  cd "$ROOT" || return 1
  CAIRN_TEST_COVERAGE="$CI_POOL_COVERAGE" \
  DOCKER_HOST="unix://$DOCKER_SOCK" \
  TESTCONTAINERS_RYUK_DISABLED=true \
  TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
  CAIRN_TEST_PROVIDER=local \
  CAIRN_TEST_CONFORMANCE_PROVIDER=testcontainers \
  CAIRN_TEST_MONGODB_IMAGE="$CI_POOL_MONGO_IMAGE" \
    "$ROOT/node_modules/.bin/turbo" run "$2" --filter="$1"
}

# The container runtime (containers.sh): the tests that need it wait for this job, the others run
# meanwhile. The daemon outlives the job; .ci/run stops it after the pool (by its pidfile).
ci_pool_container_runtime() {
  ensure_container_tools && start_private_docker \
    && DOCKER_HOST="unix://$DOCKER_SOCK" CAIRN_CI_CACHE="$CACHE" bash "$ROOT/scripts/images/build.sh"
}

# The Node 22 tree's install (node.sh: node22_tree_install); the copy was made before the pool.
ci_pool_node22_install() {
  use_node 22 && node22_tree_install "$NODE22_TREE"
}

# One task of `pnpm test:unit` (Node 22, its own tree), with no container runtime and no coverage.
ci_pool_node22_task() {
  use_node 22 > /dev/null
  cd "$NODE22_TREE" || return 1
  "$NODE22_TREE/node_modules/.bin/turbo" run "$2" --filter="$1"
}

ci_pool_release_check() { cd "$ROOT" && pnpm release:check; }
# Every scenario completes; round-trip targets hold; no timing asserted. Its scenarios have a time
# limit: on two lanes it never runs beside more than one other job.
ci_pool_bench_smoke() { cd "$ROOT" && pnpm bench --smoke; }

run_test_pool() {
  local coverage="$1" jobs="$LOG_DIR/pool-jobs.json" summary="$LOG_DIR/pool-summary.tsv" status=0 took name
  mkdir -p "$coverage"
  : > "$TEST_LOG"
  : > "$UNIT_LOG"
  export ROOT CACHE BASE_PATH NODE22_TREE DOCKER_DIR DOCKER_SOCK DOCKER_BRIDGE DOCKER_BRIDGE_ADDR
  export CI_POOL_COVERAGE="$coverage"
  CI_POOL_MONGO_IMAGE="$(TAG=; source "$ROOT/scripts/images/ferretdb/image.conf"; echo "$TAG")"
  export CI_POOL_MONGO_IMAGE
  export -f node_dir use_node node22_tree_install check_native_modules \
    ensure_container_tools start_private_docker stop_private_docker ci_pool_container_runtime \
    ci_pool_node24_task ci_pool_node22_install ci_pool_node22_task ci_pool_release_check ci_pool_bench_smoke
  # The Node 22 tree is copied now, before a test writes into the checkout.
  node22_tree_copy "$NODE22_TREE" || return 1
  node --import tsx "$ROOT/scripts/ci/pool/write-ci-jobs.ts" --out "$jobs" --test-log "$TEST_LOG" --unit-log "$UNIT_LOG" || return 1
  node --import tsx "$ROOT/scripts/ci/pool/main.ts" --jobs "$jobs" --lanes "${CAIRN_CI_LANES:-2}" --dir "$LOG_DIR/pool" \
    --summary "$summary" --learned "$CACHE/ci-pool-durations.json" || status=1
  if [ -f "$summary" ]; then
    while IFS=$'\t' read -r took name; do timing_detail "$took" "$name"; done < "$summary"
  fi
  rm -rf "$NODE22_TREE"
  return "$status"
}
