#include "common/node_query.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "common/resp.h"

namespace shardctl::common {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

int MillisLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on `fd` until the deadline; false on timeout.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  pollfd entry{fd, events, 0};
  for (;;) {
    const int ready = poll(&entry, 1, MillisLeft(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

Result<int> Connect(const Endpoint& node, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(node.port);
  if (int rc = getaddrinfo(node.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error("cannot resolve host: " + std::string(gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline))) {
      int error = 0;
      socklen_t length = sizeof error;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (error == 0) {
        freeaddrinfo(found);
        return fd;
      }
      last_error = std::strerror(error);
    } else {
      last_error = errno == EINPROGRESS ? "connect timed out" : std::strerror(errno);
    }
    close(fd);
  }
  freeaddrinfo(found);
  return Error(last_error);
}

Status SendAll(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<size_t>(sent));
    } else if (sent < 0 && errno == EAGAIN) {
      if (!WaitFor(fd, POLLOUT, deadline)) return Error("send timed out");
    } else if (sent < 0 && errno != EINTR) {
      return Error(std::strerror(errno));
    }
  }
  return Ok();
}

}  // namespace

Result<std::vector<std::string>> QueryNode(const Endpoint& node,
                                           std::span<const std::vector<std::string_view>> commands,
                                           std::chrono::milliseconds timeout,
                                           const TlsContext* tls) {
  const auto deadline = Clock::now() + timeout;
  const std::string where = node.ToString();
  auto fd = Connect(node, deadline);
  if (!fd) return fd.error().Context(where);
  Fd socket(*fd);
  std::string request;
  for (const auto& args : commands) AppendCommand(request, args);
  std::optional<TlsSession> session;
  if (tls != nullptr) session.emplace(*tls);
  // Plain: the request goes out at once. TLS: the handshake first, then the sealed request.
  auto send_pending = [&]() -> Status {
    if (!session) return SendAll(socket.get(), std::exchange(request, {}), deadline);
    if (auto sealed = session->Seal(request); !sealed) return sealed;
    std::string& wire = session->wire();
    const Status sent = SendAll(socket.get(), wire, deadline);
    wire.clear();
    return sent;
  };
  RespLimits limits;
  limits.max_line_length = 1 << 24;
  RespScanner scanner(limits);
  std::vector<std::string> replies;
  char buffer[16384];
  while (replies.size() < commands.size()) {
    if (auto sent = send_pending(); !sent) return sent.error().Context(where);
    ScanResult frame = scanner.Next();
    if (frame.status == ScanStatus::kFrame) {
      replies.emplace_back(scanner.FrameBytes(frame));
      continue;
    }
    if (frame.status == ScanStatus::kError) return Error(where + ": " + frame.error);
    if (!WaitFor(socket.get(), POLLIN, deadline)) {
      return Error(where + ": no reply within " + std::to_string(timeout.count()) + "ms");
    }
    const ssize_t got = recv(socket.get(), buffer, sizeof buffer, 0);
    if (got == 0) return Error(where + ": connection closed before the reply");
    if (got < 0 && errno != EINTR && errno != EAGAIN) {
      return Error(where + ": " + std::strerror(errno));
    }
    if (got <= 0) continue;
    const std::string_view bytes(buffer, static_cast<size_t>(got));
    if (!session) {
      scanner.Feed(bytes);
      continue;
    }
    auto plain = session->Open(bytes);
    if (!plain) return plain.error().Context(where);
    scanner.Feed(*plain);
  }
  return replies;
}

}  // namespace shardctl::common
