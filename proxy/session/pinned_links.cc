#include "proxy/session/pinned_links.h"

#include <algorithm>

namespace shardctl::proxy {

PinnedLink* PinnedLinks::For(const SubRequest& request, const std::string& host, int port) {
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

void PinnedLinks::Forget(PinnedLink* link) {
  std::erase(links_, link);
  if (watch_ && watch_->link == link) {
    watch_->link = nullptr;
    BreakWatch();
  }
}

void PinnedLinks::ReleaseIdle() {
  if (wait_mode_) return;  // each connection's write offset is what WAIT counts: keep them
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
  for (PinnedLink* link : links) router_.ReleasePinned(link);
}

void PinnedLinks::EndWatch() {
  watch_.reset();
  ReleaseIdle();
}

}  // namespace shardctl::proxy
