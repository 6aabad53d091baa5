// Endpoints: one host:port type for launcher, proxy and bench, and its two readers.
//
// Text forms, and which reader takes them:
//   127.0.0.1:7000   redis.local:7000   [::1]:7000       both readers
//   :7000   7000     (the default host)                  ParseEndpoint: what users type
//   ::1:7000         (older servers print IPv6 bare)     ParseServerEndpoint: what servers say
// The host is kept without brackets; ToString() puts them back around an IPv6 address.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::common {

struct Endpoint {
  std::string host;  // a name, an IPv4 address or an IPv6 address without brackets
  int port = 0;
  // "127.0.0.1:7000", "[::1]:7000"
  std::string ToString() const;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// True when `text` is an IPv4 or IPv6 address (no brackets, no port), not a host name.
bool IsIpAddress(std::string_view text);

// host:port with brackets around an IPv6 host, as ToString() writes it.
std::string FormatEndpoint(std::string_view host, int port);

// What a user typed: "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (then the host is
// `default_host`). An IPv6 host must be in brackets. The error says what is wrong and shows the
// form to use ("bad address \"x\": the port must be a number from 1 to 65535 (write HOST:PORT,
// e.g. 127.0.0.1:7000)").
Result<Endpoint> ParseEndpoint(std::string_view text, std::string_view default_host);

// What a server printed (MOVED/ASK targets, CLUSTER NODES addresses): the port follows the last
// colon, brackets are optional, the host may be empty (a node that does not know its own
// address). nullopt when there is no valid port.
std::optional<Endpoint> ParseServerEndpoint(std::string_view text);

}  // namespace shardctl::common
