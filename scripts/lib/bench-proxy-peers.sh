# The side-by-side mode of scripts/bench-proxy (--peer): sourced by it, after the cluster and
# shardproxy are up. Uses its variables: PEERS, PORT, PROXY_PORT, PROXY_PID, SHARDS,
# PROXY_THREADS, PIPELINES, DURATION, RUNS, CLIENTS, DATA_SIZE, MEMTIER, PEER_PIDS, SHARDCTL, STATE.

PEER_BASE_PORT=12700  # peer i listens on PEER_BASE_PORT + i

# The generator: memtier_benchmark when given or installed, else shardctl's own.
pick_generator() {
  if [ -n "$MEMTIER" ]; then
    [ -x "$MEMTIER" ] || { echo "bench-proxy: --memtier $MEMTIER is not executable" >&2; exit 2; }
    GENERATOR="$MEMTIER"
  elif command -v memtier_benchmark >/dev/null; then
    GENERATOR="$(command -v memtier_benchmark)"
  else
    GENERATOR="shardctl"
  fi
}

# Starts peer "NAME=COMMAND" number $2 on its port and waits until it answers PING (20 s).
start_peer() {
  local spec="$1" index="$2"
  local name="${spec%%=*}" command="${spec#*=}"
  local port=$((PEER_BASE_PORT + index))
  local seeds=""
  for ((i = 0; i < SHARDS; i++)); do seeds+="${seeds:+,}127.0.0.1:$((PORT + i))"; done
  command="${command//\{port\}/$port}"
  command="${command//\{seeds\}/$seeds}"
  command="${command//\{threads\}/$PROXY_THREADS}"
  bash -c "exec $command" >"$STATE/peer-$index.log" 2>&1 &
  PEER_PIDS+=("$!")
  for _ in $(seq 200); do
    if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
      TARGET_NAMES+=("$name")
      TARGET_PORTS+=("$port")
      TARGET_PIDS+=("${PEER_PIDS[-1]}")
      return 0
    fi
    kill -0 "${PEER_PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench-proxy: peer $name did not answer PING on port $port; its output:" >&2
  tail -20 "$STATE/peer-$index.log" >&2
  exit 1
}

# One bounded run against port $1 at pipeline $2; prints "ops/s p50 p99 p99.9" (ms).
generate() {
  local port="$1" pipeline="$2" out="$STATE/run.json"
  if [ "$GENERATOR" = shardctl ]; then
    timeout $((DURATION + 60)) "$SHARDCTL" bench run --port "$port" --threads 1 \
      --connections "$CLIENTS" --pipeline "$pipeline" --ratio 1:1 --value-size "$DATA_SIZE" \
      --keyspace 100000 --duration "${DURATION}s" --json >"$out"
    python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
l = d["latency_us"]
print(d["ops_per_sec"], l["p50"] / 1000, l["p99"] / 1000, l["p99_9"] / 1000)
PY
  else
    timeout $((DURATION + 60)) "$GENERATOR" -s 127.0.0.1 -p "$port" -t 1 -c "$CLIENTS" \
      --ratio=1:1 -d "$DATA_SIZE" --pipeline "$pipeline" --test-time="$DURATION" \
      --key-maximum=100000 --hide-histogram --json-out-file="$out" >/dev/null 2>&1
    python3 - "$out" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["ALL STATS"]["Totals"]
p = t["Percentile Latencies"]
print(t["Ops/sec"], p["p50.00"], p["p99.00"], p["p99.90"])
PY
  fi
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

run_side_by_side() {
  pick_generator
  TARGET_NAMES=(shardproxy)
  TARGET_PORTS=("$PROXY_PORT")
  TARGET_PIDS=("$PROXY_PID")
  for ((p = 0; p < ${#PEERS[@]}; p++)); do start_peer "${PEERS[$p]}" "$p"; done
  local hz
  hz=$(getconf CLK_TCK)
  echo "bench-proxy side by side: $SHARDS $ENGINE shards, every proxy with $PROXY_THREADS" \
    "thread(s), generator $(basename "$GENERATOR") (1 thread, $CLIENTS connections, 1:1" \
    "SET:GET, $DATA_SIZE-byte values), ${DURATION}s per run, median of $RUNS, runs alternating;" \
    "$(nproc) CPU(s) shared by everything, load average $(cut -d' ' -f1 /proc/loadavg) at start"
  printf '%-12s %3s | %10s %7s %7s %7s | %9s | %s\n' proxy P "ops/s" p50ms p99ms p999ms \
    "CPU s/1M" "vs best peer"
  local pipeline
  for pipeline in ${PIPELINES//,/ }; do
    declare -A results=() ticks=()
    for ((r = 0; r < RUNS; r++)); do
      # Alternate the order every run, so no proxy always runs first or last.
      local order=()
      for ((t = 0; t < ${#TARGET_NAMES[@]}; t++)); do order+=("$t"); done
      ((r % 2 == 1)) && order=($(printf '%s\n' "${order[@]}" | tac))
      for t in "${order[@]}"; do
        local before after line
        before=$(cpu_ticks "${TARGET_PIDS[$t]}")
        line=$(generate "${TARGET_PORTS[$t]}" "$pipeline")
        after=$(cpu_ticks "${TARGET_PIDS[$t]}")
        results[$t]+="$line"$'\n'
        ticks[$t]=$((${ticks[$t]:-0} + after - before))
      done
    done
    print_pipeline "$pipeline" "$hz"
  done
}

# One table block: each proxy's medians, and shardproxy (row 0) against the best peer.
print_pipeline() {
  local pipeline="$1" hz="$2" best_peer=0 t
  local -a ops
  for ((t = 0; t < ${#TARGET_NAMES[@]}; t++)); do
    ops[$t]=$(printf '%s' "${results[$t]}" | cut -d' ' -f1 | median)
    if ((t > 0)) && awk -v a="${ops[$t]}" -v b="$best_peer" 'BEGIN {exit !(a > b)}'; then
      best_peer="${ops[$t]}"
    fi
  done
  for ((t = 0; t < ${#TARGET_NAMES[@]}; t++)); do
    local col2 col3 col4 ratio="-"
    col2=$(printf '%s' "${results[$t]}" | cut -d' ' -f2 | median)
    col3=$(printf '%s' "${results[$t]}" | cut -d' ' -f3 | median)
    col4=$(printf '%s' "${results[$t]}" | cut -d' ' -f4 | median)
    local requests
    requests=$(awk -v o="${ops[$t]}" -v d="$DURATION" -v r="$RUNS" 'BEGIN {print o * d * r}')
    if ((t == 0)) && awk -v b="$best_peer" 'BEGIN {exit !(b > 0)}'; then
      ratio=$(awk -v a="${ops[0]}" -v b="$best_peer" 'BEGIN {printf "%.2fx", a / b}')
    fi
    awk -v n="${TARGET_NAMES[$t]}" -v p="$pipeline" -v o="${ops[$t]}" -v a="$col2" \
      -v b="$col3" -v c="$col4" -v ticks="${ticks[$t]}" -v hz="$hz" -v req="$requests" \
      -v ratio="$ratio" 'BEGIN {
        printf "%-12s %3d | %10.0f %7.3f %7.3f %7.3f | %9.2f | %s\n",
          n, p, o, a, b, c, (req > 0 ? (ticks / hz) / (req / 1e6) : 0), ratio
      }'
  done
}
