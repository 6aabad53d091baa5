#include "launcher/os/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shardctl::launcher {
namespace {

bool CanBind(const std::string& address, int port) {
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
    return false;
  }
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool bound = bind(fd, reinterpret_cast<sockaddr*>(&storage), length) == 0;
  close(fd);
  return bound;
}

}  // namespace

std::vector<int> TakenPorts(const std::string& address, const std::vector<int>& ports) {
  std::vector<int> taken;
  for (int port : ports) {
    if (!CanBind(address, port)) taken.push_back(port);
  }
  return taken;
}

}  // namespace shardctl::launcher
