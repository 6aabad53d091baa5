// Replies the proxy makes from the shards' replies, one kind per class. Pure: frames in, one
// frame out, no sockets, so every kind is unit-tested.
//
//   MGET a b ──split──▶ part 0 ─▶ reply ─┐
//                       part 1 ─▶ reply ─┴─▶ Add(part, frame) ... the last one ─▶ client's reply
//
// A session gives a PendingReply an assembly when a command is answered by several parts (split
// by slot, fanned out to every primary) or when the one reply must be rewritten (SCAN's cursor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/merge/fanout.h"
#include "proxy/merge/split.h"

namespace shardctl::proxy {

class ReplyAssembly {
 public:
  virtual ~ReplyAssembly() = default;
  // How many replies make the client's reply.
  virtual size_t parts() const = 0;
  // Takes part `part`'s reply (each part exactly once); returns the client's reply once the last
  // one is in, nullopt before.
  std::optional<std::string> Add(size_t part, std::string_view frame);

 protected:
  // The client's reply from every part's reply, in part order.
  virtual std::string Assemble(std::span<const std::string_view> replies) = 0;

 private:
  std::vector<std::string> replies_;
  size_t received_ = 0;
};

// MGET/MSET/DEL/EXISTS/TOUCH/UNLINK split by slot: MergeReplies().
std::unique_ptr<ReplyAssembly> SplitAssembly(SplitRequest split);

// A command run on every primary (`shards` of them): MergeFanOut(). `rotate` is where
// kAnyNonNull (RANDOMKEY) starts looking; `limit` is FanOutPlan::limit.
std::unique_ptr<ReplyAssembly> FanOutAssembly(FanOutMerge merge, size_t shards, size_t rotate = 0,
                                              int64_t limit = -1);

// SCRIPT LOAD on every primary: the common sha, and `remember(sha)` once every shard loaded it,
// so the proxy can load the script again where it goes missing (NOSCRIPT).
std::unique_ptr<ReplyAssembly> ScriptLoadAssembly(size_t shards,
                                                  std::function<void(std::string sha)> remember);

// A command every shard must accept (+OK), sent to `shards` connections: kAllOk, and
// `done(accepted)` once every reply is in, so the caller can undo what it assumed.
std::unique_ptr<ReplyAssembly> AllOkAssembly(size_t shards,
                                             std::function<void(bool accepted)> done);

// A server-wide command queued in a transaction: where it is among the transaction's commands,
// and how its shards' replies are merged.
struct ServerWideCommand {
  size_t position = 0;
  FanOutPlan plan;
};

// EXEC of a transaction with server-wide commands (transaction_fanout.cc): replies[0] is the
// home primary's EXEC reply (every command), replies[1..] the other primaries' EXEC replies to
// the `every_shard` commands only, in order. The home's array with each of those merged.
std::string MergeTransactionFanOut(std::span<const std::string_view> replies,
                                   std::span<const ServerWideCommand> commands);
std::unique_ptr<ReplyAssembly> TransactionFanOutAssembly(std::vector<ServerWideCommand> commands,
                                                         size_t shards);

// SCAN on shard `shard` of `shards`: its cursor rewritten to the proxy's (RewriteScanReply()).
std::unique_ptr<ReplyAssembly> ScanAssembly(size_t shard, size_t shards);

// INFO's reply frame for `text`: a bulk string (RESP2) or a verbatim string (RESP3), as Redis.
std::string InfoFrame(std::string_view text, int protocol);

// The 40-hex-digit sha in a bulk string reply ("$40\r\n<sha>\r\n"), nullopt for any other frame.
std::optional<std::string_view> ShaOfBulkReply(std::string_view frame);

}  // namespace shardctl::proxy
