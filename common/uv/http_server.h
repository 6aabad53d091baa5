// MetricsHttpServer: the small HTTP server of a Prometheus endpoint, on the libuv loop it is given
// (no thread of its own): the supervisor's /metrics on its loop, shardproxy's on a thread and loop
// of their own (proxy/net/metrics_http.h).
//
//   accept ─▶ read the request head (common::MetricsRequest, at most 8 KiB) ─▶ GET /metrics:
//   body() ─▶ write the response ─▶ close.   Anything else: 404 / 405 / 400 / 431, then close.
//   sweep timer (1 s): connections open longer than 5 s are closed; past 32 at once, new ones
//   are closed at once.
//
// body() runs on the loop thread and must not block: it formats what the MetricsPoller thread
// has already collected (the supervisor's MetricsPoller thread, the proxy's counters). Every
// handle is an OwnedHandle (handle.h), so a final uv_walk may close and free them; the server and
// its handles tell each other when either goes first.
#pragma once

#include <uv.h>

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/uv/handle.h"

namespace shardctl::common::uv {

class MetricsHttpServer {
 public:
  using Body = std::function<std::string()>;

  // Serves on `loop`; `body` is called on the loop thread for every GET /metrics.
  MetricsHttpServer(uv_loop_t* loop, Body body);
  ~MetricsHttpServer();  // closes the listener, the timer and every connection
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Binds host:port (port 0: any free one, see port()) and starts accepting. The error names the
  // address and why ("127.0.0.1:9121: address already in use").
  Status Listen(const std::string& host, int port);
  // The port it listens on; 0 before a successful Listen().
  int port() const;

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

}  // namespace shardctl::common::uv
