#include "proxy/session/reply_queue.h"

#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

void ReplyQueue::Fill(PendingReply& pending, std::string_view bytes, std::string& out) {
  if (closing_) return;
  if (IsFront(pending) && !pending.close_after) {
    if (!pending.silent) out += bytes;
    if (!pending.trailer.empty()) [[unlikely]]
      out += pending.trailer;
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
    out += front.trailer;
    if (front.close_after) {
      closing_ = true;
      pending_.clear();
      return;
    }
    pending_.pop_front();
  }
}

void ReplyQueue::PlacePush(std::string_view push, std::string& out) {
  if (closing_) return;
  for (auto pending = pending_.rbegin(); pending != pending_.rend(); ++pending) {
    if (pending->progressed || pending->ready) {
      pending->trailer += push;
      return;
    }
  }
  out += push;
}

void ReplyQueue::Silence(PendingReply& pending) {
  pending.silent = true;
  if (mode_ == Mode::kSkipNext) mode_ = Mode::kOn;
}

}  // namespace shardctl::proxy
