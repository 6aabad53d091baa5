#include "proxy/redirect.h"

#include <charconv>

namespace shardctl::proxy {
namespace {

bool ParseInt(std::string_view text, int& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// "<slot> <host>:<port>" after "-MOVED " / "-ASK ".
Redirect ParseEndpoint(ReplyAction action, std::string_view rest) {
  const size_t space = rest.find(' ');
  const size_t colon = rest.rfind(':');
  Redirect redirect;
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return redirect;
  }
  int slot = -1;
  int port = 0;
  std::string_view host = rest.substr(space + 1, colon - space - 1);
  if (!ParseInt(rest.substr(0, space), slot) || slot < 0 || slot > 16383 ||
      !ParseInt(rest.substr(colon + 1), port) || port <= 0 || port > 65535 || host.empty()) {
    return redirect;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  redirect.action = action;
  redirect.slot = slot;
  redirect.host = std::string(host);
  redirect.port = port;
  return redirect;
}

}  // namespace

Redirect ClassifyReply(std::string_view frame) {
  if (frame.size() < 3 || frame[0] != '-') return {};
  std::string_view line = frame.substr(1, frame.find('\r') - 1);
  if (line.starts_with("MOVED ")) return ParseEndpoint(ReplyAction::kMoved, line.substr(6));
  if (line.starts_with("ASK ")) return ParseEndpoint(ReplyAction::kAsk, line.substr(4));
  if (line.starts_with("TRYAGAIN") || line.starts_with("CLUSTERDOWN")) {
    return {.action = ReplyAction::kRetry};
  }
  return {};
}

}  // namespace shardctl::proxy
