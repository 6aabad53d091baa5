#include "proxy/services/pubsub_counts.h"

namespace shardctl::proxy {

void PubSubCounts::Add(bool pattern, std::string_view name, int delta) {
  std::lock_guard lock(mutex_);
  auto& table = pattern ? patterns_ : channels_;
  auto found = table.find(name);
  if (found == table.end()) found = table.emplace(std::string(name), 0).first;
  found->second += delta;
  if (found->second <= 0) table.erase(found);
}

int64_t PubSubCounts::Receivers(std::string_view channel, Matcher matches) const {
  std::lock_guard lock(mutex_);
  int64_t receivers = 0;
  if (auto found = channels_.find(channel); found != channels_.end()) receivers = found->second;
  for (const auto& [pattern, clients] : patterns_) {
    if (matches(pattern, channel)) receivers += clients;
  }
  return receivers;
}

int64_t PubSubCounts::Patterns() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(patterns_.size());
}

}  // namespace shardctl::proxy
