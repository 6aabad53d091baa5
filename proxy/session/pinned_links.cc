#include "proxy/session/pinned_links.h"

#include <algorithm>

namespace shardctl::proxy {

PinnedLink* PinnedLinks::For(const SubRequest& request, const std::string& host, int port) {
  if (request.mode.receiver) {
    // Receivers speak RESP3: a RESP3 redirect target gets invalidations without subscribing.
    if (Receiver* receiver = FindReceiver(host, port)) return receiver->link;
    PinnedLink* link = router_.AcquirePinned(host, port, /*protocol=*/3, owner_);
    link->tracking = true;  // never pooled: its id is what the shard redirects to
    receivers_.push_back({link});
    return link;
  }
  PinnedLink* link = nullptr;
  if (request.mode.watched && watch_ && !watch_->broken && watch_->link != nullptr) {
    link = watch_->link;  // where the watch lives, even if the map now says otherwise
  }
  for (size_t i = 0; link == nullptr && i < links_.size(); ++i) {
    PinnedLink* candidate = links_[i];
    if (candidate->host() == host && candidate->port() == port &&
        candidate->protocol() == request.protocol && !candidate->closing()) {
      link = candidate;
    }
  }
  if (link == nullptr) {
    link = router_.AcquirePinned(host, port, request.protocol, owner_);
    links_.push_back(link);
  }
  if (request.mode.watched) {
    link->MarkWatched();
    if (watch_ && !watch_->broken && watch_->link == nullptr) watch_->link = link;
  }
  return link;
}

PinnedLink* PinnedLinks::Find(const std::string& host, int port, int protocol) const {
  for (PinnedLink* link : links_) {
    if (link->host() == host && link->port() == port && link->protocol() == protocol &&
        !link->closing()) {
      return link;
    }
  }
  return nullptr;
}

PinnedLinks::Receiver* PinnedLinks::FindReceiver(const std::string& host, int port) {
  for (Receiver& receiver : receivers_) {
    if (receiver.link->host() == host && receiver.link->port() == port &&
        !receiver.link->closing()) {
      return &receiver;
    }
  }
  return nullptr;
}

int64_t PinnedLinks::ReceiverId(const std::string& host, int port) const {
  for (const Receiver& receiver : receivers_) {
    if (receiver.link->host() == host && receiver.link->port() == port &&
        !receiver.link->closing()) {
      return receiver.shard_id;
    }
  }
  return -1;
}

void PinnedLinks::SetReceiverId(const std::string& host, int port, int64_t id) {
  if (Receiver* receiver = FindReceiver(host, port)) receiver->shard_id = id;
}

bool PinnedLinks::IsReceiver(const PinnedLink* link) const {
  return std::any_of(receivers_.begin(), receivers_.end(),
                     [&](const Receiver& receiver) { return receiver.link == link; });
}

void PinnedLinks::Forget(PinnedLink* link) {
  std::erase_if(receivers_, [&](const Receiver& receiver) { return receiver.link == link; });
  std::erase(links_, link);
  if (watch_ && watch_->link == link) {
    watch_->link = nullptr;
    BreakWatch();
  }
}

void PinnedLinks::ReleaseIdle() {
  // Each connection's write offset is what WAIT counts, its tracked keys what the shard
  // invalidates: keep them.
  if (wait_mode_ || tracking_) return;
  for (PinnedLink* link : std::vector<PinnedLink*>(links_)) {
    if (watch_ && watch_->link == link) continue;
    if (link->closing() || link->HasRequests()) continue;
    std::erase(links_, link);
    router_.ReleasePinned(link);
  }
}

void PinnedLinks::ReleaseAll() {
  watch_.reset();
  std::vector<PinnedLink*> links;
  links.swap(links_);
  for (const Receiver& receiver : receivers_) links.push_back(receiver.link);
  receivers_.clear();
  for (PinnedLink* link : links) router_.ReleasePinned(link);
}

void PinnedLinks::EndWatch() {
  watch_.reset();
  ReleaseIdle();
}

}  // namespace shardctl::proxy
