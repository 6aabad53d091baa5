// MetricsEndpoint: shardproxy's Prometheus endpoint (--metrics-port), on a thread and libuv loop
// of its own, so a scrape never runs on (or waits for) a worker. The HTTP side is the shared
// common::uv::MetricsHttpServer; this file only gives it its thread.
//
//   main: Listen() (before the cluster is contacted: a taken port fails the start) ─▶ Start(body)
//   thread: MetricsHttpServer on the endpoint's loop (GET /metrics: body(); anything else 404 /
//           405 / 400 / 431; connections over 5 s old or past 32 at once closed)
//   Stop(): closes every handle, the loop ends, the thread is joined
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/uv/http_server.h"

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
  // On the endpoint's thread (or before it started): closes the server and the stop handle.
  void CloseAll();

  uv_loop_t loop_{};
  uv_async_t stop_{};
  bool initialized_ = false;
  bool listening_ = false;
  Body body_;
  std::unique_ptr<common::uv::MetricsHttpServer> server_;
  std::thread thread_;
};

}  // namespace shardctl::proxy
