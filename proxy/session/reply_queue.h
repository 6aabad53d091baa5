// ReplyQueue: a client's replies in the order it sent the commands, whatever order the shards
// answer in. Pure: it writes into the output string it is given.
//
//   command 1 ─▶ Push() ─▶ [1: waiting] [2: ready] [3: waiting]
//                               ▲ Fill(1, bytes): 1 and 2 go to the output, 3 waits
//
// The common case, the oldest command's reply, goes straight to the output without a copy.
// A reply marked close_after (QUIT, a protocol error) is the last one written: nothing queued
// behind it is answered.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "proxy/commands/request.h"

namespace shardctl::proxy {

class ReplyQueue {
 public:
  // A place for the next command's reply. Stays at its address until it is written.
  PendingReply& Push() { return pending_.emplace_back(); }
  // `pending`'s reply is `bytes`: every ready reply at the front is appended to `out`.
  void Fill(PendingReply& pending, std::string_view bytes, std::string& out);

  // Replies waiting (for their own bytes or for an older one).
  size_t size() const { return pending_.size(); }
  bool empty() const { return pending_.empty(); }
  bool IsFront(const PendingReply& pending) const {
    return !pending_.empty() && &pending_.front() == &pending;
  }
  // A close_after reply has been written: the connection closes once the output is sent.
  bool closing() const { return closing_; }
  // Forgets everything waiting (the client is gone).
  void Clear() { pending_.clear(); }

 private:
  void DrainReady(std::string& out);

  std::deque<PendingReply> pending_;
  bool closing_ = false;
};

}  // namespace shardctl::proxy
