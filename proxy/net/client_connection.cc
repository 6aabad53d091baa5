#include "proxy/net/client_connection.h"

#include <utility>

#include "common/request_text.h"
#include "common/uv/address.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {
namespace {

const common::RespLimits& RequestLimits() {
  static const common::RespLimits limits = [] {
    common::RespLimits request_limits;
    request_limits.max_depth = 8;  // requests are flat arrays; nesting is a protocol error anyway
    return request_limits;
  }();
  return limits;
}

constexpr size_t kMaxInlineBytes = 64 * 1024;  // Redis' PROTO_INLINE_MAX_SIZE
// An incomplete request is left to the fast path again (parsed from its start when more bytes
// come) while it is this small; a bigger one goes to the resumable scanner.
constexpr size_t kFastPathBytes = 16 * 1024;

}  // namespace

ClientConnection::ClientConnection(ConnectionHost& host, RequestRouter& router,
                                   ProxyServices& services, uint64_t id, int thread,
                                   const common::TlsContext* tls)
    : host_(host),
      services_(services),
      session_(router, services, *this, id, thread),
      stream_(host_.loop(), this),
      requests_(RequestLimits()) {
  if (tls != nullptr) stream_.UseTls(*tls);
}

void ClientConnection::Start() {
  admitted_ = true;
  session_.set_peer(common::uv::PeerName(stream_.tcp()));
  session_.set_local(common::uv::LocalName(stream_.tcp()));
  stream_.SetNoDelay();
  UpdateReading();
}

void ClientConnection::Refuse(std::string_view error) {
  session_.Refuse(error);
  // A TLS client hears the refusal only after its handshake, which needs reading.
  if (stream_.tls() != nullptr) UpdateReading();
}

void ClientConnection::OnStreamRead(std::string_view bytes) {
  const ThreadMetrics::ReadBatch batch(session_.metrics());
  // Requests are parsed in the thread's read buffer; only a partial one is copied (Detach).
  requests_.FeedBorrowed(bytes);
  ProcessInput();
  requests_.Detach();
}

void ClientConnection::OnStreamFailure(common::uv::StreamFailure failure, std::string_view) {
  if (failure == common::uv::StreamFailure::kTls) {
    services_.stats().tls_errors.fetch_add(1, std::memory_order_relaxed);
  }
  if (failure == common::uv::StreamFailure::kPeerClosed && stream_.tls() == nullptr && !closed_) {
    peer_closed_ = true;
    reading_ = false;
    stream_.ReadStop();
    return EndInput();
  }
  // A reset, a failed handshake, or a TLS peer's close_notify (answering after it is not
  // something every TLS stack accepts): the client is gone.
  Close();
}

void ClientConnection::EndInput() {
  if (closed_ || input_ended_) return;
  ProcessInput();  // requests still buffered behind --max-pending
  // Over a limit: the rest once replies drain (UpdateReading() comes back here).
  if (session_.OverLimits() && !session_.done_reading()) return;
  input_ended_ = true;
  if (!session_.EndOfRequests()) Close();
}

// An inline command ("PING\r\n", as telnet, nc and HAProxy's redis-check send): arguments
// separated by spaces, no quoting. Returns false when the line is not complete yet.
bool ClientConnection::HandleInlineCommand() {
  const std::string_view rest = requests_.Unreturned();
  const size_t newline = rest.find('\n');
  if (newline == std::string_view::npos) {
    if (rest.size() > kMaxInlineBytes) session_.ProtocolError("too big inline request");
    return false;
  }
  const std::string_view line = rest.substr(0, newline);
  if (line.find_first_of("\"'") != std::string_view::npos) return HandleQuotedInline(line);
  const std::vector<std::string_view> args = common::SplitInlineArgs(line);
  std::string request;
  common::AppendCommand(request, args);
  requests_.SkipUnreturned(newline + 1);  // the views stay valid until the next Consume()
  if (!args.empty()) session_.HandleCommand(request, args);
  return true;
}

// An inline command with quotes: its arguments are unescaped copies (Redis' sdssplitargs rules).
bool ClientConnection::HandleQuotedInline(std::string_view line) {
  auto words = common::SplitQuotedArgs(line);
  if (!words) {
    session_.ProtocolError(words.error().message().substr(sizeof("Protocol error: ") - 1));
    return false;
  }
  const std::vector<std::string_view> args(words->begin(), words->end());
  std::string request;
  common::AppendCommand(request, args);
  requests_.SkipUnreturned(line.size() + 1);
  if (!args.empty()) session_.HandleCommand(request, args);
  return true;
}

void ClientConnection::ProcessInput() {
  while (!closed_ && !session_.done_reading() && !session_.OverLimits()) {
    const std::string_view rest = requests_.Unreturned();
    if (!rest.empty() && common::IsInlineCommand(rest[0])) {
      if (!HandleInlineCommand()) break;
      continue;
    }
    // The usual request in one pass; the resumable scanner for the rest (a big request arriving
    // in pieces, whose header would otherwise be parsed again on every read) and for errors.
    const common::FastRequest fast = common::ScanRequest(rest, RequestLimits(), args_);
    if (fast.kind == common::FastRequest::Kind::kRequest && requests_.SkipUnreturned(fast.length)) {
      if (!args_.empty()) session_.HandleCommand(rest.substr(0, fast.length), args_);
      continue;
    }
    if (fast.kind == common::FastRequest::Kind::kIncomplete && rest.size() < kFastPathBytes &&
        requests_.AtFrameStart()) {
      break;
    }
    // Redis' own parser ignores some headers and names its errors its way: before the scanner.
    if (fast.kind == common::FastRequest::Kind::kSlowPath && requests_.AtFrameStart()) {
      if (auto problem = common::ExamineBadRequest(rest, RequestLimits().max_bulk_length)) {
        if (!problem->error.empty()) {
          session_.ProtocolError(problem->error.substr(sizeof("Protocol error: ") - 1));
          break;
        }
        requests_.SkipUnreturned(problem->skip);
        continue;
      }
    }
    const common::ScanResult frame = requests_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) {
      session_.ProtocolError(frame.error.substr(frame.error.find(':') + 2));
      break;
    }
    const std::string_view bytes = requests_.FrameBytes(frame);
    if (auto parsed = common::ParseCommandArgsInto(bytes, args_); !parsed) {
      session_.ProtocolError(parsed.error().message());
      break;
    }
    if (!args_.empty()) session_.HandleCommand(bytes, args_);
  }
  if (!closed_) requests_.Consume(requests_.Buffered().size() - requests_.Unreturned().size());
  if (peer_closed_) return;  // reading is over: EndInput(), the caller, goes on
  UpdateReading();
}

void ClientConnection::UpdateReading() {
  if (closed_) return;
  if (peer_closed_) return EndInput();
  const common::TlsSession* tls = stream_.tls();
  const bool handshaking = tls != nullptr && !tls->established();
  const bool want = handshaking || (!session_.done_reading() && !session_.OverLimits());
  if (want == reading_) return;
  if (want) {
    reading_ = true;
    stream_.ReadStart<ClientConnection>();
    // Requests read before the pause are still buffered: serve them first.
    if (!requests_.Buffered().empty()) ProcessInput();
  } else {
    reading_ = false;
    stream_.ReadStop();
    if (!session_.done_reading()) {
      services_.stats().paused_reads.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void ClientConnection::OutputReady() {
  if (!closed_) host_.ScheduleFlush(this);
}

void ClientConnection::Flush() {
  if (closed_ || stream_.writing()) return;
  const common::uv::FlushOutcome flushed = stream_.Flush(session_.output());
  if (flushed.failed) return Close();
  if (stream_.writing()) return;  // the rest goes with the uv_write; OnStreamWritten() follows
  if (session_.close_after_output() && session_.output().empty()) return Close();
  // Also when nothing was written: the session may have stopped holding its reads (a silent
  // reply, CLIENT REPLY OFF, ended what it waited for).
  UpdateReading();
}

void ClientConnection::OnStreamWritten() {
  Flush();
  UpdateReading();
}

void ClientConnection::Close() {
  if (closed_) return;
  closed_ = true;
  session_.Close();
  stream_.Close();
}

void ClientConnection::OnStreamClosed() {
  handle_closed_ = true;
  host_.OnConnectionClosed(this, admitted_);
  MaybeDelete();
}

void ClientConnection::MaybeDelete() {
  if (handle_closed_ && session_.inflight() == 0) delete this;
}

}  // namespace shardctl::proxy
