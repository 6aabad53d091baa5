// MetricsServer: the supervisor's Prometheus endpoint, served on the supervisor's own libuv loop
// (no thread of its own).
//
//   accept ─▶ read the request head (common::MetricsRequest, at most 8 KiB) ─▶ GET /metrics:
//   body() ─▶ write the response ─▶ close.   Anything else: 404 / 405 / 400 / 431, then close.
//   sweep timer (1 s): connections open longer than 5 s are closed; past 32 at once, new ones
//   are closed at once.
//
// body() runs on the loop thread and must not block: it formats what the MetricsPoller thread
// has already collected. Every handle is an OwnedHandle, so the supervisor's final uv_walk may
// close and free them; the server and its handles tell each other when either goes first.
#pragma once

#include <uv.h>

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

class MetricsServer {
 public:
  using Body = std::function<std::string()>;

  MetricsServer(uv_loop_t* loop, Body body);
  ~MetricsServer();  // closes the listener, the timer and every connection
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds host:port and starts accepting. The error names the address and why
  // ("127.0.0.1:9121: address already in use").
  common::Status Listen(const std::string& host, int port);

  // Connections open now (for tests and the sweep).
  size_t connections() const { return connections_.size(); }

 private:
  struct Listener;
  struct Connection;
  struct Sweeper;

  void Accept();
  void Sweep();
  void Forget(Connection* connection);

  uv_loop_t* loop_;
  Body body_;
  Listener* listener_ = nullptr;
  Sweeper* sweeper_ = nullptr;
  std::vector<Connection*> connections_;
};

}  // namespace shardctl::launcher
