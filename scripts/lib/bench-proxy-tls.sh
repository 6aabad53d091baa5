# The TLS mode of scripts/bench-proxy (--tls): sourced by it, after the plain cluster and its
# shardproxy are up. A second deployment beside it runs TLS end to end (`up --tls-*
# --proxy-port`: TLS shards, cluster bus and replication, shardproxy serving TLS and speaking it
# to the shards), with a throwaway CA and certificate made here by openssl. redis-benchmark --tls
# drives both proxies in alternating runs; the table shows what TLS costs the proxy path: ops/s,
# latency and proxy CPU per million requests, plain beside TLS.
# Uses its variables: SHARDCTL, ENGINE, SHARDS, STATE, PROXY_PORT, PROXY_PID, PIPELINES, RUNS,
# REQUESTS, CLIENTS, threads_flag, UP_FLAGS; and its functions run, median, proxy_cpu_ticks.

TLS_PORT=12650        # the TLS deployment's shards (bus ports at +10000)
TLS_PROXY_PORT=12695

# A CA and a certificate for 127.0.0.1 it signs, in $1 (key mode 0600, as up requires).
make_tls_files() {
  local dir="$1"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=bench-proxy CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>&1 | grep -v '^[.+*-]*$' >&2 || true
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>&1 | grep -v '^[.+*-]*$' >&2 || true
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 1 -copy_extensions copy -out "$dir/server.crt" >&2
  chmod 600 "$dir/server.key" "$dir/ca.key"
}

run_tls_comparison() {
  command -v openssl >/dev/null || {
    echo "bench-proxy: --tls needs the openssl command (apt-get install openssl)" >&2
    exit 1
  }
  STATE_TLS="$STATE/tls"
  mkdir -p "$STATE_TLS/certs"
  make_tls_files "$STATE_TLS/certs"
  local certs="$STATE_TLS/certs"
  "$SHARDCTL" up --engine "$ENGINE" --shards "$SHARDS" --base-port "$TLS_PORT" \
    --state-dir "$STATE_TLS" --proxy-port "$TLS_PROXY_PORT" "${threads_flag[@]}" "${UP_FLAGS[@]}" \
    --tls-cert "$certs/server.crt" --tls-key "$certs/server.key" --tls-ca "$certs/ca.crt" \
    >/dev/null
  local tls_pid
  tls_pid=$(cut -d' ' -f1 "$STATE_TLS/default/proxy.pid")
  tls_cpu_ticks() { awk '{print $14 + $15}' "/proc/$tls_pid/stat"; }

  echo "bench-proxy --tls: $SHARDS $ENGINE shards each side, proxy threads" \
    "${PROXY_THREADS:-default}, $CLIENTS clients, $REQUESTS requests per run, median of $RUNS," \
    "$(nproc) CPU(s) shared by everything, load average $(cut -d' ' -f1 /proc/loadavg) at start"
  echo "plain: redis-benchmark -> shardproxy -> shards, all plain RESP;" \
    "TLS: redis-benchmark --tls -> shardproxy (TLS) -> shards (TLS)"
  printf '%-5s %3s | %10s %7s %7s | %10s %7s %7s | %6s | %s\n' test P "plain/s" p50ms p99ms \
    "TLS/s" p50ms p99ms ratio "proxy CPU s/1M req plain, TLS"
  for test in set get mset; do
    for pipeline in ${PIPELINES//,/ }; do
      local plain=() tls=() plain_ticks=0 tls_ticks=0 before
      for ((r = 0; r < RUNS; r++)); do
        before=$(proxy_cpu_ticks)
        plain+=("$(run "$test" "$pipeline" -p "$PROXY_PORT")")
        plain_ticks=$((plain_ticks + $(proxy_cpu_ticks) - before))
        before=$(tls_cpu_ticks)
        tls+=("$(run "$test" "$pipeline" -p "$TLS_PROXY_PORT" --tls --cacert "$certs/ca.crt")")
        tls_ticks=$((tls_ticks + $(tls_cpu_ticks) - before))
      done
      col() { local i="$1"; shift; for line in "$@"; do echo "$line" | cut -d' ' -f"$i"; done | median; }
      awk -v t="$test" -v p="$pipeline" -v prps="$(col 1 "${plain[@]}")" \
        -v p50="$(col 2 "${plain[@]}")" -v p99="$(col 3 "${plain[@]}")" \
        -v trps="$(col 1 "${tls[@]}")" -v t50="$(col 2 "${tls[@]}")" -v t99="$(col 3 "${tls[@]}")" \
        -v pt="$plain_ticks" -v tt="$tls_ticks" -v hz="$TICKS" -v n=$((REQUESTS * RUNS)) 'BEGIN {
          printf "%-5s %3d | %10.0f %7.3f %7.3f | %10.0f %7.3f %7.3f | %5.0f%% | %.2f, %.2f\n",
            t, p, prps, p50, p99, trps, t50, t99, 100 * trps / prps, (pt / hz) / (n / 1e6),
            (tt / hz) / (n / 1e6)
        }'
    done
  done
}
