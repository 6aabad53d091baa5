// Splitting multi-key commands by slot and merging their replies back: MGET, MSET, DEL, UNLINK,
// EXISTS, TOUCH.
//
// Pure: requests in, sub-requests out; reply frames in, one reply frame out. Keys of one slot stay
// in one sub-command (other proxies send one sub-request per key), so "MGET {u}a {u}b c" becomes
// two sub-commands, not three.
//
//   MGET a b c d ──SplitBySlot()──▶ part 0: slot 15495 "MGET a c"   ──▶ shard X ──┐
//                                   part 1: slot  3300 "MGET b d"   ──▶ shard Y ──┤
//                 ◀──MergeReplies()── *4 [a] [b] [c] [d] ◀── replies, one per part ┘
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "proxy/commands/command_table.h"

namespace shardctl::proxy {

// One sub-command: all of the request's keys that hash to `slot`.
struct SubCommand {
  int slot = 0;
  std::string request;            // the encoded RESP request, ready to write to a backend
  std::vector<size_t> key_order;  // for each key in `request`, its index among the original keys
};

struct SplitRequest {
  MergeKind merge = MergeKind::kNone;
  size_t key_count = 0;           // keys in the original request
  std::vector<SubCommand> parts;  // ordered by slot; one part when all keys share a slot
};

// Splits a kSplitBySlot request (args[0] is the command as the client typed it; the
// sub-commands reuse it verbatim). Errors are RESP error texts, as ResolveKeys() returns them.
common::Result<SplitRequest> SplitBySlot(const CommandInfo& info,
                                         std::span<const std::string_view> args);

// Builds the client's reply from one complete reply frame per part (replies[i] answers
// split.parts[i]). If any part failed, the client gets the first part's error frame as is, the
// way a cluster client surfaces the first failure.
// A reply of the wrong shape (an MGET part whose array has the wrong length) becomes
// "-ERR shardproxy: ..." naming the problem; never a crash.
std::string MergeReplies(const SplitRequest& split, std::span<const std::string_view> replies);

}  // namespace shardctl::proxy
