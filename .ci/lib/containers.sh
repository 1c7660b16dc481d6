# The container runtime of .ci/run (sourced; needs CACHE and ROOT).

# ---------------------------------------------------------------------------------------------
# Container runtime for the Testcontainers conformance run (docs/testing.md, "Testcontainers in
# CI"): Debian's docker.io and a PRIVATE Docker daemon with its own data root, exec root, pidfile,
# socket and bridge under $CACHE/docker. It adds no iptables rules (--iptables=false,
# --ip-masq=false), does not switch on IP forwarding, and publishes ports on 127.0.0.1 only; the
# tests reach containers through those ports (Docker's userland proxy). A system Docker daemon, if
# the machine has one, is neither used nor touched: only this run's DOCKER_HOST points here.
# ---------------------------------------------------------------------------------------------
DOCKER_DIR="$CACHE/docker"
DOCKER_SOCK="$DOCKER_DIR/docker.sock"
# The daemon's own bridge (docker0 would be a system daemon's): created for the run, then removed.
DOCKER_BRIDGE=cairn-ci0
DOCKER_BRIDGE_ADDR=10.231.37.1/24
DOCKERD_PID=""

ensure_container_tools() {
  if command -v dockerd >/dev/null 2>&1 && command -v debootstrap >/dev/null 2>&1 \
    && command -v docker >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
    echo "present: dockerd $(dockerd --version | cut -d' ' -f3 | tr -d ,), debootstrap, ip"
    return
  fi
  echo "installing docker.io debootstrap iproute2 (Debian packages)"
  # Keep Debian from starting a system Docker daemon after install: ours is private.
  local added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  local status=0
  DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      docker.io debootstrap iproute2 </dev/null \
    || status=1
  if [ -n "$added_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
  return "$status"
}

start_private_docker() {
  mkdir -p "$DOCKER_DIR"
  # A daemon left by an interrupted run of this script (its own pidfile) is stopped first.
  if [ -s "$DOCKER_DIR/docker.pid" ] && kill -0 "$(cat "$DOCKER_DIR/docker.pid")" 2>/dev/null; then
    DOCKERD_PID="$(cat "$DOCKER_DIR/docker.pid")"
    echo "stopping a private dockerd left by an earlier run (pid $DOCKERD_PID)"
    stop_private_docker
  fi
  if ! ip link show "$DOCKER_BRIDGE" >/dev/null 2>&1; then
    ip link add "$DOCKER_BRIDGE" type bridge || return 1
    ip addr add "$DOCKER_BRIDGE_ADDR" dev "$DOCKER_BRIDGE" || return 1
  fi
  ip link set "$DOCKER_BRIDGE" up || return 1
  dockerd \
    --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/exec" \
    --pidfile "$DOCKER_DIR/docker.pid" -H "unix://$DOCKER_SOCK" \
    --containerd-namespace cairn-ci --containerd-plugins-namespace cairn-ci-plugins \
    --bridge "$DOCKER_BRIDGE" --ip 127.0.0.1 \
    --iptables=false --ip6tables=false --ip-masq=false --ip-forward=false \
    --log-level warn > "$DOCKER_DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  local i
  for i in $(seq 1 120); do
    if DOCKER_HOST="unix://$DOCKER_SOCK" docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
      echo "private dockerd $(DOCKER_HOST="unix://$DOCKER_SOCK" docker version --format '{{.Server.Version}}') (pid $DOCKERD_PID) answers on unix://$DOCKER_SOCK after ~$(( i / 2 ))s"
      # Containers of an earlier run that was killed before its cleanup (they persist in the data
      # root) are removed now, so that the check after the tests sees only this run's.
      local stale
      stale="$(DOCKER_HOST="unix://$DOCKER_SOCK" docker ps -aq 2>/dev/null || true)"
      if [ -n "$stale" ]; then
        echo "removing containers left by an interrupted earlier run: $(echo $stale)"
        # shellcheck disable=SC2086
        DOCKER_HOST="unix://$DOCKER_SOCK" docker rm -f $stale >/dev/null 2>&1 || true
      fi
      return 0
    fi
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "error: the private dockerd did not answer; its log:" >&2
  tail -20 "$DOCKER_DIR/dockerd.log" >&2
  return 1
}

# Stops the private daemon by its PID (containers first), and removes its bridge. Idempotent; also
# run by the EXIT trap, so that a failed or interrupted run leaves nothing behind.
stop_private_docker() {
  # Started by a job of the test pool (another process): found by its pidfile, if it is a dockerd.
  if [ -z "${DOCKERD_PID:-}" ] && [ -s "$DOCKER_DIR/docker.pid" ]; then
    local pid
    pid="$(cat "$DOCKER_DIR/docker.pid")"
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then DOCKERD_PID="$pid"; fi
  fi
  if [ -n "${DOCKERD_PID:-}" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
    local left
    left="$(DOCKER_HOST="unix://$DOCKER_SOCK" timeout 20 docker ps -aq 2>/dev/null || true)"
    # shellcheck disable=SC2086
    if [ -n "$left" ]; then DOCKER_HOST="unix://$DOCKER_SOCK" timeout 30 docker rm -f $left >/dev/null 2>&1 || true; fi
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    local i
    for i in $(seq 1 60); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$DOCKERD_PID" 2>/dev/null; then kill -KILL "$DOCKERD_PID" 2>/dev/null || true; fi
    wait "$DOCKERD_PID" 2>/dev/null || true
    echo "private dockerd (pid $DOCKERD_PID) stopped"
  fi
  DOCKERD_PID=""
  if ip link show "$DOCKER_BRIDGE" >/dev/null 2>&1; then ip link delete "$DOCKER_BRIDGE" 2>/dev/null || true; fi
}

# After the tests: every test file stops its containers (Ryuk, the reaper image, cannot be pulled
# here), so a container still there is a test's leak, and fails the run.
check_no_containers_left() {
  local left
  left="$(DOCKER_HOST="unix://$DOCKER_SOCK" docker ps -a --format '{{.ID}} {{.Image}} {{.Status}}' 2>&1)"
  if [ -n "$left" ]; then
    echo "error: containers left after the test run:" >&2
    echo "$left" >&2
    return 1
  fi
}
