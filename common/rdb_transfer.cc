#include "common/rdb_transfer.h"

#include <algorithm>
#include <optional>

#include "common/numbers.h"

namespace shardctl::common {
namespace {

constexpr size_t kEofMarkLength = 40;  // Redis' RDB_EOF_MARK_SIZE
constexpr size_t kMaxLine = 1024;      // the reply and header lines are short

// Keepalive newlines come before the reply and before the payload's header.
void DropKeepalives(std::string& pending) {
  const size_t first = pending.find_first_not_of('\n');
  pending.erase(0, first == std::string::npos ? pending.size() : first);
}

}  // namespace

bool RdbTransferReader::TakeLine(std::string& line) {
  const size_t end = pending_.find("\r\n");
  if (end == std::string::npos) return false;
  line = pending_.substr(0, end);
  pending_.erase(0, end + 2);
  return true;
}

Status RdbTransferReader::OnReplyLine(const std::string& line) {
  // "+FULLRESYNC <40-char replid> <offset>"; "+CONTINUE" would mean a partial sync, which a
  // replica that asked for "? -1" never gets.
  constexpr std::string_view kFull = "+FULLRESYNC ";
  if (!line.starts_with(kFull)) {
    return Error("the primary refused the snapshot: " +
                 (line.starts_with("-") ? line.substr(1) : "unexpected reply \"" + line + "\""));
  }
  const std::string rest = line.substr(kFull.size());
  const size_t space = rest.find(' ');
  auto offset =
      space == std::string::npos ? std::nullopt : ParseInteger<int64_t>(rest.substr(space + 1));
  if (!offset) return Error("the primary's reply \"" + line + "\" has no replication offset");
  replication_id_ = rest.substr(0, space);
  replication_offset_ = *offset;
  stage_ = Stage::kAwaitingHeader;
  return Ok();
}

Status RdbTransferReader::OnHeaderLine(const std::string& line) {
  constexpr std::string_view kEof = "$EOF:";
  if (line.starts_with(kEof)) {
    eof_mark_ = line.substr(kEof.size());
    if (eof_mark_.size() != kEofMarkLength) {
      return Error("the snapshot's end mark is " + std::to_string(eof_mark_.size()) +
                   " bytes, not 40");
    }
  } else {
    auto length = line.starts_with("$") ? ParseInteger<int64_t>(line.substr(1)) : std::nullopt;
    if (!length || *length < 0) {
      return Error("the snapshot header \"" + line + "\" is not \"$<length>\" or \"$EOF:<mark>\"");
    }
    announced_length_ = *length;
  }
  stage_ = Stage::kPayload;
  return Ok();
}

std::string RdbTransferReader::PayloadOfEofStream() {
  // The mark ends the payload when it ends what has arrived: the primary sends nothing after it
  // until the replica acknowledges, so it is never followed by more bytes in one read.
  if (pending_.size() >= kEofMarkLength &&
      std::string_view(pending_).substr(pending_.size() - kEofMarkLength) == eof_mark_) {
    std::string payload = pending_.substr(0, pending_.size() - kEofMarkLength);
    pending_.clear();
    stage_ = Stage::kDone;
    return payload;
  }
  // Hold back the last 40 bytes: they may be the start of the mark.
  const size_t safe = pending_.size() > kEofMarkLength ? pending_.size() - kEofMarkLength : 0;
  std::string payload = pending_.substr(0, safe);
  pending_.erase(0, safe);
  return payload;
}

Result<std::string> RdbTransferReader::Feed(std::string_view bytes) {
  if (!error_.empty()) return Error(error_);
  if (stage_ == Stage::kDone) {
    remaining_.append(bytes);
    return std::string();
  }
  pending_.append(bytes);
  std::string line;
  while (stage_ == Stage::kAwaitingReply || stage_ == Stage::kAwaitingHeader) {
    DropKeepalives(pending_);
    if (!TakeLine(line)) {
      if (pending_.size() > kMaxLine) {
        error_ = "the primary sent " + std::to_string(pending_.size()) +
                 " bytes without a line end where a reply or header was expected";
        return Error(error_);
      }
      return std::string();
    }
    Status step = stage_ == Stage::kAwaitingReply ? OnReplyLine(line) : OnHeaderLine(line);
    if (!step.ok()) {
      error_ = step.error().message();
      return Error(error_);
    }
  }
  std::string payload;
  if (!eof_mark_.empty()) {
    payload = PayloadOfEofStream();
  } else {
    const uint64_t left = static_cast<uint64_t>(announced_length_) - payload_bytes_;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(left, pending_.size()));
    payload = pending_.substr(0, take);
    pending_.erase(0, take);
    if (payload_bytes_ + take == static_cast<uint64_t>(announced_length_)) stage_ = Stage::kDone;
  }
  payload_bytes_ += payload.size();
  if (stage_ == Stage::kDone) {
    remaining_ = std::move(pending_);
    pending_.clear();
    if (announced_length_ < 0) announced_length_ = static_cast<int64_t>(payload_bytes_);
  }
  return payload;
}

}  // namespace shardctl::common
