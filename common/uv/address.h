// Socket addresses for libuv code: an IP literal, or a name resolved once (at start).
#pragma once

#include <uv.h>

#include <string>

#include "common/endpoint.h"
#include "common/result.h"

namespace shardctl::common::uv {

// Fills `address` from an IPv4 or IPv6 literal and a port; false when `host` is neither (a name).
bool ParseIpAddress(const std::string& host, int port, sockaddr_storage& address);

// The first address `target` resolves to: an IP literal as is, else a name looked up on `loop`'s
// thread, blocking (IPv4 first, as hiredis does: "localhost" is often ::1 first in /etc/hosts,
// while servers bound to 127.0.0.1 are the common case). The error says why
// ("cannot resolve it: unknown node or service").
Result<sockaddr_storage> ResolveAddress(uv_loop_t* loop, const Endpoint& target);

// "ip:port" of the peer of a connected TCP handle; "" when it has none (closed, not connected).
std::string PeerName(const uv_tcp_t* tcp);
// "ip:port" of the local end of a connected TCP handle (CLIENT LIST's laddr); "" when unknown.
std::string LocalName(const uv_tcp_t* tcp);

// The local port a TCP handle is bound to; 0 when it is not bound.
int LocalPort(const uv_tcp_t* tcp);

}  // namespace shardctl::common::uv
