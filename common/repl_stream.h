// The command stream a Redis/Valkey primary sends its replica after the RDB payload, cut into
// commands with the replication offset after each one. No I/O: the connection that speaks PSYNC
// feeds the bytes it reads and pulls commands, as with RespScanner (resp.h), which does the
// framing here too.
//
//   socket bytes ──Feed()──▶ [ RespScanner, one level deep ] ──Next()──▶ ReplCommand{args, offset}
//                    "\n" keepalives are counted and dropped      │      nullopt: feed more
//                                                                 └────▶ Error: stop replicating
//
// What the primary sends is RESP arrays of bulk strings, the commands as it propagates them
// (already rewritten for replication: SET EX comes as SET PXAT, EXPIRE as PEXPIREAT, ...), and
// may send a bare "\n" between them to keep the link alive. repl_plan.h decides what the cluster
// gets for each command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "common/result.h"

namespace shardctl::common {

// Bounds on one replicated command. A command beyond a bound is an error: the stream is not one
// a Redis primary sends, and nothing is allocated for it beyond the bytes that really arrived.
struct ReplStreamLimits {
  // Bytes in one argument: Redis' proto-max-bulk-len default.
  int64_t max_argument_length = int64_t{512} * 1024 * 1024;
  // Arguments in one command. MSET or DEL of a million keys is already far beyond what a client
  // sends in one call; a larger header is taken for garbage.
  int64_t max_arguments = 1024 * 1024;
};

// One command of the stream. `args[0]` is the command name as the primary sent it (Redis sends
// upper or lower case); arguments are binary safe.
struct ReplCommand {
  std::vector<std::string> args;
  // The replication offset after the command's last byte: what the replica acknowledges with
  // REPLCONF ACK once the command is applied, and where PSYNC resumes.
  int64_t offset = 0;

  friend bool operator==(const ReplCommand&, const ReplCommand&) = default;
};

// Cuts a replication stream into commands.
//
// Owns a buffer of the bytes fed and not yet returned. Commands come out in order, however the
// bytes were split between Feed() calls. The offset counts every byte consumed from `start_offset`
// on, keepalive newlines included, as a Redis replica counts what it reads from its primary.
// An empty command ("*0\r\n") is consumed and counted, and not returned (Redis ignores it too).
//
// Errors are sticky: after one, every Next() returns it again, since the stream cannot be
// resynchronised; the caller drops the link and starts a new PSYNC from offset().
class ReplStreamParser {
 public:
  explicit ReplStreamParser(int64_t start_offset, ReplStreamLimits limits = {});

  // Appends bytes read from the primary.
  void Feed(std::string_view bytes);

  // The next complete command; nullopt when more bytes are needed. An error is one line naming
  // the stream offset where the bad command (or byte) starts and what was expected there:
  // "replication stream offset 1234: expected a command ('*') or a keepalive ('\n'), got '+'".
  Result<std::optional<ReplCommand>> Next();

  // The offset after the last byte consumed: the last command returned, or a keepalive or an
  // empty command after it.
  int64_t offset() const { return offset_; }

 private:
  Result<std::optional<ReplCommand>> Fail(std::string what);
  // Drops keepalive newlines at a command boundary; false when another byte starts there.
  bool SkipKeepalives();

  RespScanner scanner_;
  int64_t offset_;
  std::optional<Error> error_;
};

}  // namespace shardctl::common
