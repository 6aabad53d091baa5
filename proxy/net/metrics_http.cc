#include "proxy/net/metrics_http.h"

#include <utility>

#include "common/uv/handle.h"

namespace shardctl::proxy {

MetricsEndpoint::MetricsEndpoint() = default;

MetricsEndpoint::~MetricsEndpoint() {
  Stop();
  if (initialized_) {
    // Never started: the handles opened by Listen() are closed here, on this thread.
    CloseAll();
    uv_run(&loop_, UV_RUN_DEFAULT);
    (void)common::uv::CloseLoop(&loop_);
  }
}

common::Status MetricsEndpoint::Listen(const std::string& host, int port) {
  uv_loop_init(&loop_);
  loop_.data = this;
  initialized_ = true;
  uv_async_init(&loop_, &stop_, [](uv_async_t* async) {
    static_cast<MetricsEndpoint*>(async->loop->data)->CloseAll();
  });
  // The body is set by Start(), before the loop runs a first request.
  server_ = std::make_unique<common::uv::MetricsHttpServer>(&loop_, [this] { return body_(); });
  if (auto listening = server_->Listen(host, port); !listening) return listening;
  listening_ = true;
  return common::Ok();
}

void MetricsEndpoint::Start(Body body) {
  if (!listening_) return;
  body_ = std::move(body);
  thread_ = std::thread([this] {
    uv_run(&loop_, UV_RUN_DEFAULT);
    (void)common::uv::CloseLoop(&loop_);
  });
  initialized_ = false;  // the thread closes the loop now
}

void MetricsEndpoint::Stop() {
  if (!thread_.joinable()) return;
  uv_async_send(&stop_);
  thread_.join();
}

void MetricsEndpoint::CloseAll() {
  server_.reset();  // closes its listener, sweep timer and connections
  common::uv::CloseIfOpen(common::uv::AsHandle(&stop_));
}

}  // namespace shardctl::proxy
