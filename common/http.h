// The small part of HTTP/1.x a /metrics endpoint needs, for the supervisor and shardproxy alike.
// Pure: request bytes in, response bytes out; each program's event loop does the socket I/O.
//
//   bytes ──Feed()──▶ MetricsRequest (bounded head) ──complete──▶ MetricsResponse(): 200 with
//                                                                 the body for GET /metrics,
//                                                                 404 / 405 / 400 / 431 otherwise
//
// One request per connection: every response says "Connection: close" and the server closes
// once it is written, so no connection outlives its scrape.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace shardctl::common {

// A request head larger than this is refused (431); a scraper sends a few hundred bytes.
inline constexpr size_t kMaxHttpRequestHead = 8192;

// One request being read from a connection.
class MetricsRequest {
 public:
  enum class State {
    kIncomplete,  // the head has not ended yet: feed more
    kComplete,    // method() and target() are set
    kBad,         // not an HTTP/1.x request line
    kTooLarge,    // no end of the head within kMaxHttpRequestHead bytes
  };

  // Appends bytes read from the connection and says where the request stands. Once the state is
  // not kIncomplete, further bytes are ignored.
  State Feed(std::string_view bytes);
  State state() const { return state_; }
  const std::string& method() const { return method_; }
  // The request target without its query string ("/metrics" for "/metrics?x=1").
  const std::string& target() const { return target_; }

 private:
  State ParseHead(std::string_view head);

  std::string buffer_;
  std::string method_;
  std::string target_;
  State state_ = State::kIncomplete;
};

// The whole response to a finished request (state() != kIncomplete): GET /metrics gets 200 with
// `body()` as Prometheus text; another path 404, another method 405, a malformed request 400,
// an oversized head 431. `body` is called only for the 200.
std::string MetricsResponse(const MetricsRequest& request,
                            const std::function<std::string()>& body);

// A response with the given status line, content type and body, closing the connection.
std::string HttpResponse(int status, std::string_view reason, std::string_view content_type,
                         std::string_view body);

}  // namespace shardctl::common
