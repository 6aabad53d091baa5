#include "proxy/session/reply_queue.h"

#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

void ReplyQueue::Fill(PendingReply& pending, std::string_view bytes, std::string& out) {
  if (closing_) return;
  if (IsFront(pending) && !pending.close_after) {
    if (!pending.silent) out += bytes;
    pending_.pop_front();
  } else {
    pending.bytes.assign(bytes);
    pending.ready = true;
    pending.assembly.reset();
  }
  DrainReady(out);
}

void ReplyQueue::DrainReady(std::string& out) {
  while (!pending_.empty() && pending_.front().ready) {
    PendingReply& front = pending_.front();
    if (!front.silent) out += front.bytes;
    if (front.close_after) {
      closing_ = true;
      pending_.clear();
      return;
    }
    pending_.pop_front();
  }
}

void ReplyQueue::Silence(PendingReply& pending) {
  pending.silent = true;
  if (mode_ == Mode::kSkipNext) mode_ = Mode::kOn;
}

}  // namespace shardctl::proxy
