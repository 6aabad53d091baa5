#include "launcher/cluster/frame_link.h"

#include "common/numbers.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

Result<FrameLink> FrameLink::Connect(const Access& access, const std::string& host, int port,
                                     std::chrono::milliseconds timeout) {
  // The login (AUTH, TLS) is RedisConnection's; only the replies after it are read as frames.
  auto connection = RedisConnection::Connect(access, host, port, timeout);
  if (!connection.ok()) return connection.error();
  std::string address = connection->address();
  auto link = std::move(connection).value().ReleaseLink();
  if (!link.ok()) return link.error();
  return FrameLink(std::move(link).value(), std::move(address));
}

common::Status FrameLink::Write(std::string_view requests) {
  if (auto wrote = link_.WriteAll(requests); !wrote.ok()) return wrote.error().Context(address_);
  return common::Ok();
}

Result<std::string_view> FrameLink::Next() {
  scanner_.Consume(returned_end_);
  returned_end_ = 0;
  while (true) {
    auto scanned = scanner_.Next();
    if (scanned.status == common::ScanStatus::kFrame) {
      returned_end_ = scanned.end;
      return scanner_.FrameBytes(scanned);
    }
    if (scanned.status == common::ScanStatus::kError) return Error(address_ + ": " + scanned.error);
    char buffer[64 * 1024];
    auto got = link_.ReadSome(buffer, sizeof buffer);
    if (!got.ok()) return got.error().Context(address_);
    scanner_.Feed(std::string_view(buffer, *got));
  }
}

std::optional<int64_t> FrameInteger(std::string_view frame) {
  if (!frame.starts_with(':') || frame.size() < 3) return std::nullopt;
  return common::ParseInteger<int64_t>(frame.substr(1, frame.size() - 3));
}

std::string ErrorText(std::string_view frame) {
  if (frame.size() < 3) return std::string(frame);
  return std::string(frame.substr(1, frame.size() - 3));
}

size_t BulkLength(std::string_view frame) {
  const size_t header_end = frame.find('\n');
  if (header_end == std::string_view::npos || frame.size() < header_end + 3) return 0;
  return frame.size() - header_end - 3;
}

}  // namespace shardctl::launcher
