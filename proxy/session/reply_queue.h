// ReplyQueue: a client's replies in the order it sent the commands, whatever order the shards
// answer in. Pure: it writes into the output string it is given.
//
//   command 1 ─▶ Push() ─▶ [1: waiting] [2: ready] [3: waiting]
//                               ▲ Fill(1, bytes): 1 and 2 go to the output, 3 waits
//
// The common case, the oldest command's reply, goes straight to the output without a copy.
// A reply marked close_after (QUIT, a protocol error) is the last one written: nothing queued
// behind it is answered.
//
// Allocation: a warm worker allocates nothing per command here. PendingReplies come from the
// worker's PendingReplyPool and go back to it once written, keeping the capacity of their
// `bytes` (where a reply that arrived before an older one waits); the queue of them is a
// RingQueue, which keeps its array.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/free_list.h"
#include "common/ring_queue.h"
#include "proxy/commands/request.h"

namespace shardctl::proxy {

// PendingReplies of one worker thread, reused by all its sessions. Loop thread only.
class PendingReplyPool {
 public:
  // A PendingReply as new (its `bytes` may have capacity).
  PendingReply* Take();
  // Takes back one that is written or dropped; kept for reuse up to a bound.
  void Give(PendingReply* reply);
  size_t spare() const { return spare_.size(); }

 private:
  common::FreeList<PendingReply> spare_;
};

class ReplyQueue {
 public:
  // `pool`: where PendingReplies come from and go back to (the worker's); null: new and delete.
  explicit ReplyQueue(PendingReplyPool* pool = nullptr) : pool_(pool) {}
  ~ReplyQueue() { Clear(); }
  ReplyQueue(const ReplyQueue&) = delete;
  ReplyQueue& operator=(const ReplyQueue&) = delete;

  // CLIENT REPLY: on, off (no reply is written), or skip the next command's reply only.
  enum class Mode { kOn, kOff, kSkipNext };

  // A place for the next command's reply. Stays at its address until it is written.
  PendingReply& Push() {
    PendingReply& pending =
        *pending_.push_back(pool_ != nullptr ? pool_->Take() : new PendingReply);
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
    return !pending_.empty() && pending_.front() == &pending;
  }
  // A close_after reply has been written: the connection closes once the output is sent.
  bool closing() const { return closing_; }
  // Forgets everything waiting (the client is gone).
  void Clear();

 private:
  void PopFront();
  void DrainReady(std::string& out);
  void Silence(PendingReply& pending);
  // The pushes placed after `pending` (has_trailer), appended to `out` as it is written.
  void WriteTrailer(const PendingReply& pending, std::string& out);

  PendingReplyPool* const pool_;
  common::RingQueue<PendingReply*> pending_;  // owned: given back to pool_ (or deleted)
  // Pushes waiting behind a reply, by reply: rare (a tracking client's invalidations), so kept
  // out of PendingReply, which every command makes.
  std::vector<std::pair<const PendingReply*, std::string>> trailers_;
  bool closing_ = false;
  Mode mode_ = Mode::kOn;
};

}  // namespace shardctl::proxy
