#include "common/endpoint.h"

#include <arpa/inet.h>

#include "common/numbers.h"

namespace shardctl::common {
namespace {

constexpr int kMaxPort = 65535;

std::string_view StripBrackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

bool IsIpAddress(std::string_view text) {
  const std::string address(text);
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, address.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, address.c_str(), buffer) == 1;
}

std::string FormatEndpoint(std::string_view host, int port) {
  std::string text;
  if (host.find(':') != std::string_view::npos) {
    text.append("[").append(host).append("]");
  } else {
    text.append(host);
  }
  return text + ":" + std::to_string(port);
}

std::string Endpoint::ToString() const { return FormatEndpoint(host, port); }

Result<Endpoint> ParseEndpoint(std::string_view text, std::string_view default_host) {
  const auto bad = [&](std::string_view why) {
    return Error("bad address \"" + std::string(text) + "\": " + std::string(why) +
                 " (write HOST:PORT, e.g. 127.0.0.1:7000)");
  };
  Endpoint endpoint{std::string(default_host), 0};
  std::string_view port_text = text;
  const size_t colon = text.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.starts_with('[')) {
      if (!host.ends_with(']') || host.size() < 3) return bad("unbalanced [ ] around the host");
      host = StripBrackets(host);
    } else if (host.find(':') != std::string_view::npos) {
      return bad("put an IPv6 host in brackets");
    }
    if (!host.empty()) endpoint.host = std::string(host);
  }
  std::optional<int> port = ParseIntegerIn(port_text, 1, kMaxPort);
  if (!port) return bad("the port must be a number from 1 to 65535");
  endpoint.port = *port;
  return endpoint;
}

std::optional<Endpoint> ParseServerEndpoint(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::optional<int> port = ParseIntegerIn(text.substr(colon + 1), 1, kMaxPort);
  if (!port) return std::nullopt;
  return Endpoint{std::string(StripBrackets(text.substr(0, colon))), *port};
}

}  // namespace shardctl::common
