// MetricsEndpoint: shardproxy's Prometheus endpoint (--metrics-port), on a thread and libuv loop
// of its own, so a scrape never runs on (or waits for) a worker.
//
//   main: Listen() (before the cluster is contacted: a taken port fails the start) ─▶ Start(body)
//   thread: accept ─▶ read the head (common::MetricsRequest, ≤ 8 KiB) ─▶ GET /metrics: body()
//           ─▶ write ─▶ close; anything else 404 / 405 / 400 / 431, then close
//   sweep timer (1 s): a connection open longer than 5 s is closed; past 32 at once, new ones
//   are closed at once
//   Stop(): closes every handle, the loop ends, the thread is joined
#pragma once

#include <uv.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace shardctl::proxy {

class MetricsEndpoint {
 public:
  using Body = std::function<std::string()>;

  MetricsEndpoint();
  ~MetricsEndpoint();  // Stop()
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Binds and listens on host:port. The error names the address and why
  // ("127.0.0.1:9122: address already in use").
  common::Status Listen(const std::string& host, int port);
  // Serves on a new thread; `body` is called on that thread for every GET /metrics.
  void Start(Body body);
  // Any thread but its own: closes the listener and every connection and joins the thread.
  void Stop();

 private:
  struct Connection;

  void Accept();
  void Sweep();
  void CloseAll();

  uv_loop_t loop_{};
  uv_tcp_t listener_{};
  uv_timer_t sweep_{};
  uv_async_t stop_{};
  bool initialized_ = false;
  bool listening_ = false;
  Body body_;
  std::vector<Connection*> connections_;
  std::thread thread_;
};

}  // namespace shardctl::proxy
