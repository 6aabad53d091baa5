#include "launcher/os/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shardctl::launcher {
namespace {

// Binds a socket to address:port (SO_REUSEADDR, as Redis binds); returns 0 or the errno.
int TryBind(const std::string& address, int port) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    length = sizeof *v4;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    family = AF_INET6;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    length = sizeof *v6;
  } else {
    return EINVAL;
  }
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int error = bind(fd, reinterpret_cast<sockaddr*>(&storage), length) == 0 ? 0 : errno;
  close(fd);
  return error;
}

// A TCP socket bound to 127.0.0.1 on a port the kernel picks, and that port.
common::Result<std::pair<int, int>> BindLoopbackPortZero() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return common::Error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool picked = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  if (!picked) {
    ::close(fd);
    return common::Error(std::string("no free port on 127.0.0.1: ") + std::strerror(error));
  }
  return std::make_pair(fd, static_cast<int>(ntohs(address.sin_port)));
}

}  // namespace

std::vector<int> TakenPorts(const std::string& address, const std::vector<int>& ports) {
  std::vector<int> taken;
  for (int port : ports) {
    if (TryBind(address, port) != 0) taken.push_back(port);
  }
  return taken;
}

common::Status CheckAddressOnHost(const std::string& address, const std::string& flag) {
  const int error = TryBind(address, 0);
  if (error == EADDRNOTAVAIL) {
    return common::Error(flag + " " + address +
                         ": not an address of this host (`ip -br addr` lists them; use one of "
                         "those, or 0.0.0.0 with --announce for a NAT address)");
  }
  if (error == EINVAL) return common::Error(flag + " " + address + ": not an IP address");
  return common::Ok();
}

common::Status RequirePortsFree(const std::string& address, const std::vector<int>& ports,
                                const std::string& fix) {
  const auto taken = TakenPorts(address, ports);
  if (taken.empty()) return common::Ok();
  std::string list;
  for (size_t i = 0; i < taken.size() && i < 8; ++i) {
    list += (i ? ", " : "") + std::to_string(taken[i]);
  }
  if (taken.size() > 8) list += " and " + std::to_string(taken.size() - 8) + " more";
  return common::Error("port(s) " + list + " on " + address + " are in use by another process (" +
                       fix + ")");
}

common::Result<int> UnusedLoopbackPort() {
  auto bound = BindLoopbackPortZero();
  if (!bound.ok()) return bound.error();
  ::close(bound->first);
  return bound->second;
}

common::Result<ClosedLoopbackPort> ClosedLoopbackPort::Open() {
  auto bound = BindLoopbackPortZero();
  if (!bound.ok()) return bound.error();
  return ClosedLoopbackPort(bound->first, bound->second);
}

ClosedLoopbackPort::~ClosedLoopbackPort() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace shardctl::launcher
