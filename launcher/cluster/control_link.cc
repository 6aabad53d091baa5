#include "launcher/cluster/control_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/tls.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

// A socket connected to `address` within `timeout`, then blocking with every read and write
// bounded by `timeout`; -1 with `error` set when it cannot be.
int ConnectOne(const addrinfo* address, std::chrono::milliseconds timeout, std::string& error) {
  const int fd = socket(address->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int failure = 0;
  if (connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
    failure = errno;
    if (failure == EINPROGRESS) {
      pollfd waiting{.fd = fd, .events = POLLOUT, .revents = 0};
      const int ready = poll(&waiting, 1, static_cast<int>(timeout.count()));
      failure = ready == 0 ? ETIMEDOUT : ready < 0 ? errno : 0;
      socklen_t length = sizeof failure;
      if (ready > 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length);
    }
  }
  if (failure != 0) {
    error = std::strerror(failure);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval limit{.tv_sec = timeout.count() / 1000,
                .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

// Tries every address `host` resolves to, in order, until one connects.
Result<int> ConnectTcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Error(gai_strerror(rc));
  }
  std::string error = "no address";
  int fd = -1;
  for (const addrinfo* address = found; address != nullptr && fd < 0; address = address->ai_next) {
    fd = ConnectOne(address, timeout, error);
  }
  freeaddrinfo(found);
  if (fd < 0) return Error(error);
  return fd;
}

// The system's words for a failed read or write, except for the socket timeout running out: its
// EAGAIN reads "Resource temporarily unavailable", which names neither the wait nor the likely
// cause (a node stopped with SIGSTOP, paused by a debugger, or stuck in a long command).
std::string SocketErrorText(int failure, std::chrono::milliseconds timeout,
                            const char* waited_for) {
  if (failure == EAGAIN || failure == EWOULDBLOCK) {
    return std::string("no ") + waited_for + " within " + std::to_string(timeout.count()) +
           "ms (is the server stopped, or busy with a long command?)";
  }
  return std::strerror(failure);
}

}  // namespace

struct ControlLink::State {
  int fd = -1;
  SSL* ssl = nullptr;
  std::chrono::milliseconds timeout{0};
  ~State() {
    if (ssl != nullptr) {
      SSL_shutdown(ssl);  // best effort: the peer may be gone
      SSL_free(ssl);
    }
    if (fd >= 0) close(fd);
  }
};

ControlLink::ControlLink(std::unique_ptr<State> state) : state_(std::move(state)) {}
ControlLink::ControlLink(ControlLink&&) noexcept = default;
ControlLink& ControlLink::operator=(ControlLink&&) noexcept = default;
ControlLink::~ControlLink() = default;

Result<ControlLink> ControlLink::Open(const std::string& host, int port,
                                      std::chrono::milliseconds timeout,
                                      const common::TlsContext* tls) {
  auto fd = ConnectTcp(host, port, timeout);
  if (!fd.ok()) return fd.error();
  auto state = std::make_unique<State>();
  state->fd = *fd;
  state->timeout = timeout;
  if (tls == nullptr) return ControlLink(std::move(state));
  // OpenSSL writes with write(), not send(MSG_NOSIGNAL): a shard that dies mid-write must be an
  // error for the caller, not a SIGPIPE that ends this process.
  signal(SIGPIPE, SIG_IGN);
  state->ssl = SSL_new(tls->native());
  if (state->ssl == nullptr || SSL_set_fd(state->ssl, state->fd) != 1) {
    return Error("TLS: " + common::TlsErrorText("cannot set up the connection"));
  }
  // The chain is checked against --tls-ca; names are not (shards are reached by address, and
  // their certificates need not list every address), as redis-cli --tls does.
  errno = 0;
  if (SSL_connect(state->ssl) != 1) {
    // A server that does not speak TLS on this port either stays silent (Redis reads the hello
    // as the start of an inline command and waits for its end) or answers in plain text.
    const unsigned long reason = ERR_GET_REASON(ERR_peek_error());
    if (errno == EAGAIN || errno == EWOULDBLOCK || reason == SSL_R_WRONG_VERSION_NUMBER ||
        reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
      ERR_clear_error();
      return Error("TLS handshake: " + host + ":" + std::to_string(port) +
                   " did not answer it within " + std::to_string(timeout.count()) +
                   " ms, or answered in plain text: it does not serve TLS on this port (drop the "
                   "TLS options for a plain server)");
    }
    return Error("TLS handshake: " +
                 common::TlsErrorText(errno != 0 ? std::strerror(errno)
                                                 : "the server closed the connection"));
  }
  return ControlLink(std::move(state));
}

common::Status ControlLink::WriteAll(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t wrote = state_->ssl != nullptr
                              ? SSL_write(state_->ssl, bytes.data(), static_cast<int>(bytes.size()))
                              : send(state_->fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (wrote <= 0) {
      if (wrote < 0 && errno == EINTR && state_->ssl == nullptr) continue;
      const std::string text = SocketErrorText(errno, state_->timeout, "room to write");
      return Error(state_->ssl != nullptr ? common::TlsErrorText(text) : text);
    }
    bytes.remove_prefix(static_cast<size_t>(wrote));
  }
  return common::Ok();
}

Result<size_t> ControlLink::ReadSome(char* buffer, size_t size) {
  for (;;) {
    errno = 0;
    const ssize_t got = state_->ssl != nullptr
                            ? SSL_read(state_->ssl, buffer, static_cast<int>(size))
                            : recv(state_->fd, buffer, size, 0);
    if (got > 0) return static_cast<size_t>(got);
    if (got < 0 && errno == EINTR && state_->ssl == nullptr) continue;
    if (got == 0 && state_->ssl == nullptr) return Error("Server closed the connection");
    if (errno != 0) return Error(SocketErrorText(errno, state_->timeout, "reply"));
    return Error(state_->ssl != nullptr ? common::TlsErrorText("Server closed the connection")
                                        : "Server closed the connection");
  }
}

bool ControlLink::WaitReadable(std::chrono::milliseconds wait) {
  // TLS may hold a decrypted record already: no poll would report it.
  if (state_->ssl != nullptr && SSL_pending(state_->ssl) > 0) return true;
  pollfd readable{.fd = state_->fd, .events = POLLIN, .revents = 0};
  return poll(&readable, 1, static_cast<int>(wait.count())) > 0;
}

}  // namespace shardctl::launcher
