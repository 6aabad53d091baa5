#include "proxy/session/reply_queue.h"

#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

void ReplyQueue::Fill(PendingReply& pending, std::string_view bytes, std::string& out) {
  if (closing_) return;
  if (IsFront(pending) && !pending.close_after) {
    if (!pending.silent) out += bytes;
    if (pending.has_trailer) [[unlikely]]
      WriteTrailer(pending, out);
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
    if (front.has_trailer) [[unlikely]]
      WriteTrailer(front, out);
    if (front.close_after) {
      closing_ = true;
      Clear();
      return;
    }
    pending_.pop_front();
  }
}

void ReplyQueue::PlacePush(std::string_view push, std::string& out) {
  if (closing_) return;
  for (auto pending = pending_.rbegin(); pending != pending_.rend(); ++pending) {
    if (pending->progressed || pending->ready) {
      pending->has_trailer = true;
      for (auto& [after, pushes] : trailers_) {
        if (after == &*pending) {
          pushes.append(push);
          return;
        }
      }
      trailers_.emplace_back(&*pending, std::string(push));
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
