// PubSubCounts: how many of the proxy's clients are subscribed to each channel and pattern, over
// every worker thread, so that PUBLISH answers the receivers as one Redis would (each client
// subscribed to the channel, plus each client-pattern pair matching it). The shards cannot say:
// their subscribers are the proxy's shared connections. Written on (P)(UN)SUBSCRIBE, read on
// PUBLISH and PUBSUB NUMPAT, never on the data path; behind one mutex.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace shardctl::proxy {

class PubSubCounts {
 public:
  // One client subscribed to (delta +1) or left (-1) a channel or a pattern.
  void Add(bool pattern, std::string_view name, int delta);
  // PUBLISH channel: the clients that receive it. `matches(pattern, channel)` is the pattern
  // match (pubsub_frames.h's GlobMatch; the merge room is above this one).
  using Matcher = bool (*)(std::string_view pattern, std::string_view channel);
  int64_t Receivers(std::string_view channel, Matcher matches) const;
  // PUBSUB NUMPAT: distinct patterns with at least one client.
  int64_t Patterns() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int64_t, std::less<>> channels_, patterns_;
};

}  // namespace shardctl::proxy
