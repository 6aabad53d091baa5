#include "common/http.h"

#include "common/prometheus.h"

namespace shardctl::common {

MetricsRequest::State MetricsRequest::Feed(std::string_view bytes) {
  if (state_ != State::kIncomplete) return state_;
  // Only as much as could still belong to an acceptable head (and its blank line) is kept.
  constexpr size_t kKept = kMaxHttpRequestHead + 4;
  buffer_.append(bytes.substr(0, buffer_.size() < kKept ? kKept - buffer_.size() : 0));
  size_t end = buffer_.find("\r\n\r\n");
  if (end == std::string::npos) end = buffer_.find("\n\n");
  if (end == std::string::npos) {
    if (buffer_.size() > kMaxHttpRequestHead) state_ = State::kTooLarge;
    return state_;
  }
  if (end > kMaxHttpRequestHead) {
    state_ = State::kTooLarge;
    return state_;
  }
  state_ = ParseHead(std::string_view(buffer_).substr(0, end));
  buffer_.clear();
  return state_;
}

MetricsRequest::State MetricsRequest::ParseHead(std::string_view head) {
  std::string_view line = head.substr(0, head.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  const size_t first_space = line.find(' ');
  const size_t last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space) return State::kBad;
  std::string_view method = line.substr(0, first_space);
  std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
  std::string_view version = line.substr(last_space + 1);
  if (method.empty() || target.empty() || !version.starts_with("HTTP/1.")) return State::kBad;
  for (char c : method) {
    if (c < 'A' || c > 'Z') return State::kBad;
  }
  method_.assign(method);
  target_.assign(target.substr(0, target.find('?')));
  return State::kComplete;
}

std::string HttpResponse(int status, std::string_view reason, std::string_view content_type,
                         std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: ";
  out += content_type;
  out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  if (status == 405) out += "Allow: GET\r\n";
  out += "Connection: close\r\n\r\n";
  out += body;
  return out;
}

std::string MetricsResponse(const MetricsRequest& request,
                            const std::function<std::string()>& body) {
  constexpr std::string_view kText = "text/plain; charset=utf-8";
  switch (request.state()) {
    case MetricsRequest::State::kTooLarge:
      return HttpResponse(431, "Request Header Fields Too Large", kText,
                          "request head too large\n");
    case MetricsRequest::State::kBad:
    case MetricsRequest::State::kIncomplete:
      return HttpResponse(400, "Bad Request", kText, "malformed HTTP request\n");
    case MetricsRequest::State::kComplete:
      break;
  }
  if (request.method() != "GET") {
    return HttpResponse(405, "Method Not Allowed", kText, "only GET /metrics is served\n");
  }
  if (request.target() != "/metrics") {
    return HttpResponse(404, "Not Found", kText, "not found: only /metrics is served\n");
  }
  return HttpResponse(200, "OK", kMetricsContentType, body());
}

}  // namespace shardctl::common
