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
#include <utility>
#include <vector>

#include "proxy/commands/request.h"

namespace shardctl::proxy {

class ReplyQueue {
 public:
  // CLIENT REPLY: on, off (no reply is written), or skip the next command's reply only.
  enum class Mode { kOn, kOff, kSkipNext };

  // A place for the next command's reply. Stays at its address until it is written.
  PendingReply& Push() {
    PendingReply& pending = pending_.emplace_back();
    if (mode_ != Mode::kOn) [[unlikely]]
      Silence(pending);
    return pending;
  }
  // From the next Push() on (CLIENT REPLY ON|OFF|SKIP).
  void set_mode(Mode mode) { mode_ = mode; }
  Mode mode() const { return mode_; }
  // Replies are being dropped: a reply made now must take a PendingReply (Push()) to be dropped.
  bool silencing() const { return mode_ != Mode::kOn; }
  // `pending`'s reply is `bytes`: every ready reply at the front is appended to `out`.
  void Fill(PendingReply& pending, std::string_view bytes, std::string& out);
  // A push frame from a shard (an invalidation), placed as that shard ordered it among the
  // replies: after every reply some part of which has arrived (the shard may have sent the push
  // after it), before the replies nothing has arrived for (it pushed before answering them).
  // Written to `out` now when no reply before it is outstanding.
  void PlacePush(std::string_view push, std::string& out);

  // Replies waiting (for their own bytes or for an older one).
  size_t size() const { return pending_.size(); }
  bool empty() const { return pending_.empty(); }
  bool IsFront(const PendingReply& pending) const {
    return !pending_.empty() && &pending_.front() == &pending;
  }
  // A close_after reply has been written: the connection closes once the output is sent.
  bool closing() const { return closing_; }
  // Forgets everything waiting (the client is gone).
  void Clear() {
    pending_.clear();
    trailers_.clear();
  }

 private:
  void DrainReady(std::string& out);
  void Silence(PendingReply& pending);
  // The pushes placed after `pending` (has_trailer), appended to `out` as it is written.
  void WriteTrailer(const PendingReply& pending, std::string& out);

  std::deque<PendingReply> pending_;
  // Pushes waiting behind a reply, by reply: rare (a tracking client's invalidations), so kept
  // out of PendingReply, which every command makes.
  std::vector<std::pair<const PendingReply*, std::string>> trailers_;
  bool closing_ = false;
  Mode mode_ = Mode::kOn;
};

}  // namespace shardctl::proxy
