// What a shard's error reply asks the proxy to do: follow a redirect, retry later, or pass it on.
//
// Pure: looks at the bytes of one reply frame. Redis words these errors as
//   -MOVED 3999 127.0.0.1:6381     the slot lives elsewhere now: re-route and refresh the map
//   -ASK 3999 127.0.0.1:6381       this key is being imported there: ASKING + the command, once
//   -TRYAGAIN ...                  a multi-key command during a migration: retry shortly
//   -CLUSTERDOWN ...               the cluster cannot serve yet (failover, writable delay): retry
// (an IPv6 endpoint is "[::1]:6381" in newer servers and "::1:6381" in older ones; the port is
// always after the last colon).
#pragma once

#include <string>
#include <string_view>

namespace shardctl::proxy {

enum class ReplyAction {
  kDeliver,  // an ordinary reply (or an error the client should see as is)
  kMoved,
  kAsk,
  kRetry,  // TRYAGAIN or CLUSTERDOWN
};

struct Redirect {
  ReplyAction action = ReplyAction::kDeliver;
  int slot = -1;     // kMoved/kAsk
  std::string host;  // kMoved/kAsk, without IPv6 brackets
  int port = 0;      // kMoved/kAsk
};

// Classifies one complete reply frame. A MOVED/ASK error whose endpoint cannot be parsed is
// kDeliver: the client then sees Redis' own error rather than the proxy guessing.
Redirect ClassifyReply(std::string_view frame);

}  // namespace shardctl::proxy
