// The framing of a full resync as a primary sends it to a replica (`PSYNC ? -1`), so a snapshot can
// be taken over the network: shardctl backup reads one per primary. Pure: the caller feeds bytes
// and writes out the payload slices this hands back; the RDB inside is never parsed here.
//
//   "\n"…                          keepalives while the primary prepares (any number)
//   "+FULLRESYNC <replid> <offset>\r\n"
//   "\n"…                          keepalives while the snapshot is forked and written
//   "$<length>\r\n" <length bytes>                  disk-based sync
//   "$EOF:<40-byte mark>\r\n" <bytes> <the mark>    diskless sync (the replica said capa eof)
//
// Anything after the payload (the command stream that follows) is left unread: Remaining() gives
// it back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::common {

class RdbTransferReader {
 public:
  enum class Stage { kAwaitingReply, kAwaitingHeader, kPayload, kDone };

  // Feeds the next bytes and returns the payload bytes among them (with bytes held back from an
  // earlier call: the last 40 of a diskless stream wait until they are known not to be its end
  // mark). An error (a reply other than +FULLRESYNC, such as "-NOAUTH", or a bad header) is
  // sticky.
  Result<std::string> Feed(std::string_view bytes);

  Stage stage() const { return stage_; }
  bool done() const { return stage_ == Stage::kDone; }
  // From the +FULLRESYNC line.
  const std::string& replication_id() const { return replication_id_; }
  int64_t replication_offset() const { return replication_offset_; }
  // Payload bytes handed out so far.
  uint64_t payload_bytes() const { return payload_bytes_; }
  // The payload's length when the primary announced it (disk-based), else -1 until done.
  int64_t announced_length() const { return announced_length_; }
  // Bytes fed after the payload ended.
  const std::string& Remaining() const { return remaining_; }

 private:
  // Consumes one "\r\n"-terminated line from the front of `pending_` into `line`; false when the
  // line is not complete yet.
  bool TakeLine(std::string& line);
  Status OnReplyLine(const std::string& line);
  Status OnHeaderLine(const std::string& line);
  std::string PayloadOfEofStream();

  Stage stage_ = Stage::kAwaitingReply;
  std::string pending_;  // bytes fed but not yet consumed (lines, or the held-back mark)
  std::string replication_id_;
  int64_t replication_offset_ = -1;
  int64_t announced_length_ = -1;
  uint64_t payload_bytes_ = 0;
  std::string eof_mark_;  // diskless: the 40 bytes that end the payload
  std::string remaining_;
  std::string error_;
};

}  // namespace shardctl::common
