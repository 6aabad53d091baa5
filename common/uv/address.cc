#include "common/uv/address.h"

#include <netinet/in.h>

#include <cstring>

namespace shardctl::common::uv {
namespace {

// The IP and port of a socket address; port 0 for another family.
std::string FormatAddress(const sockaddr_storage& address, int& port) {
  char ip[64] = {};
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    uv_ip6_name(v6, ip, sizeof ip);
    port = ntohs(v6->sin6_port);
  } else if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    uv_ip4_name(v4, ip, sizeof ip);
    port = ntohs(v4->sin_port);
  } else {
    port = 0;
  }
  return ip;
}

}  // namespace

bool ParseIpAddress(const std::string& host, int port, sockaddr_storage& address) {
  address = {};
  return uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&address)) == 0 ||
         uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&address)) == 0;
}

Result<sockaddr_storage> ResolveAddress(uv_loop_t* loop, const Endpoint& target) {
  sockaddr_storage address{};
  if (ParseIpAddress(target.host, target.port, address)) return address;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_family = AF_INET;
  uv_getaddrinfo_t request{};
  const std::string service = std::to_string(target.port);
  // No callback: libuv resolves synchronously (connections open at start, or on a redirect).
  int rc = uv_getaddrinfo(loop, &request, nullptr, target.host.c_str(), service.c_str(), &hints);
  if (rc != 0) {
    hints.ai_family = AF_UNSPEC;
    rc = uv_getaddrinfo(loop, &request, nullptr, target.host.c_str(), service.c_str(), &hints);
  }
  if (rc != 0 || request.addrinfo == nullptr) {
    return Error(std::string("cannot resolve it: ") + uv_strerror(rc));
  }
  std::memcpy(&address, request.addrinfo->ai_addr, request.addrinfo->ai_addrlen);
  uv_freeaddrinfo(request.addrinfo);
  return address;
}

namespace {

// "ip:port" of one end of `tcp` (uv_tcp_getpeername or uv_tcp_getsockname); "" when unknown.
template <typename Getter>
std::string EndName(const uv_tcp_t* tcp, Getter get) {
  sockaddr_storage address{};
  int length = sizeof address;
  if (get(tcp, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  int port = 0;
  const std::string ip = FormatAddress(address, port);
  return ip + ":" + std::to_string(port);
}

}  // namespace

std::string PeerName(const uv_tcp_t* tcp) { return EndName(tcp, uv_tcp_getpeername); }

std::string LocalName(const uv_tcp_t* tcp) { return EndName(tcp, uv_tcp_getsockname); }

int LocalPort(const uv_tcp_t* tcp) {
  sockaddr_storage address{};
  int length = sizeof address;
  if (uv_tcp_getsockname(tcp, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  int port = 0;
  FormatAddress(address, port);
  return port;
}

}  // namespace shardctl::common::uv
