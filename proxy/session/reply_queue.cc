#include "proxy/session/reply_queue.h"

#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

PendingReply* PendingReplyPool::Take() { return spare_.Take(); }

void PendingReplyPool::Give(PendingReply* reply) {
  // Enough for every reply in flight at a deep pipeline over many clients; past it, freed.
  constexpr size_t kMaxSpare = 16384;
  // A reply parked in `bytes` (it came before an older one) is usually small; a bigger buffer is
  // freed rather than kept, so the pool holds at most kMaxSpare small buffers (a few MiB), not
  // one big value's worth each.
  constexpr size_t kMaxKeptBytes = 1024;
  if (spare_.size() >= kMaxSpare || reply->bytes.capacity() > kMaxKeptBytes) {
    delete reply;
    return;
  }
  reply->Reset();
  spare_.Keep(reply);
}

void ReplyQueue::PopFront() {
  PendingReply* front = pending_.front();
  pending_.pop_front();
  if (pool_ != nullptr) {
    pool_->Give(front);
  } else {
    delete front;
  }
}

void ReplyQueue::Clear() {
  while (!pending_.empty()) PopFront();
  trailers_.clear();
}

void ReplyQueue::Fill(PendingReply& pending, std::string_view bytes, std::string& out) {
  if (closing_) return;
  if (IsFront(pending) && !pending.close_after) {
    if (!pending.silent) out += bytes;
    if (pending.has_trailer) [[unlikely]]
      WriteTrailer(pending, out);
    PopFront();
  } else {
    pending.bytes.assign(bytes);
    pending.ready = true;
    pending.assembly.reset();
  }
  DrainReady(out);
}

void ReplyQueue::DrainReady(std::string& out) {
  while (!pending_.empty() && pending_.front()->ready) {
    PendingReply& front = *pending_.front();
    if (!front.silent) out += front.bytes;
    if (front.has_trailer) [[unlikely]]
      WriteTrailer(front, out);
    if (front.close_after) {
      closing_ = true;
      Clear();
      return;
    }
    PopFront();
  }
}

void ReplyQueue::PlacePush(std::string_view push, std::string& out) {
  if (closing_) return;
  for (size_t i = pending_.size(); i-- > 0;) {
    PendingReply* pending = pending_[i];
    if (pending->progressed || pending->ready) {
      pending->has_trailer = true;
      for (auto& [after, pushes] : trailers_) {
        if (after == pending) {
          pushes.append(push);
          return;
        }
      }
      trailers_.emplace_back(pending, std::string(push));
      return;
    }
  }
  out += push;
}

void ReplyQueue::WriteTrailer(const PendingReply& pending, std::string& out) {
  for (auto trailer = trailers_.begin(); trailer != trailers_.end(); ++trailer) {
    if (trailer->first != &pending) continue;
    out += trailer->second;
    trailers_.erase(trailer);
    return;
  }
}

void ReplyQueue::Silence(PendingReply& pending) {
  pending.silent = true;
  if (mode_ == Mode::kSkipNext) mode_ = Mode::kOn;
}

}  // namespace shardctl::proxy
