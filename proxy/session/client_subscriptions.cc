#include "proxy/session/client_subscriptions.h"

#include <vector>

#include "proxy/merge/pubsub_frames.h"

namespace shardctl::proxy {

std::set<std::string>& ClientSubscriptions::Names(SubscriptionKind kind) {
  switch (kind) {
    case SubscriptionKind::kChannel:
      return channels_;
    case SubscriptionKind::kPattern:
      return patterns_;
    case SubscriptionKind::kShardChannel:
      break;
  }
  return shard_channels_;
}

void ClientSubscriptions::Register(SubscriptionKind kind, const std::string& name, int delta) {
  if (delta > 0) {
    hub_.Subscribe(kind, name, self_);
  } else {
    hub_.Unsubscribe(kind, name, self_);
  }
  // Shard channels are not counted: SPUBLISH goes to the one node that has them.
  if (counts_ != nullptr && kind != SubscriptionKind::kShardChannel) {
    counts_->Add(kind == SubscriptionKind::kPattern, name, delta);
  }
}

int64_t ClientSubscriptions::Count(SubscriptionKind kind) const {
  if (kind == SubscriptionKind::kShardChannel) return static_cast<int64_t>(shard_channels_.size());
  return static_cast<int64_t>(channels_.size() + patterns_.size());
}

std::string ClientSubscriptions::Subscribe(SubscriptionKind kind, std::string_view command,
                                           std::span<const std::string_view> names, int protocol) {
  std::set<std::string>& mine = Names(kind);
  std::string replies;
  for (std::string_view name : names) {
    std::string channel(name);
    if (mine.insert(channel).second) Register(kind, channel, +1);
    replies += SubscriptionReply(command, channel, Count(kind), protocol);
  }
  return replies;
}

std::string ClientSubscriptions::Unsubscribe(SubscriptionKind kind, std::string_view command,
                                             std::span<const std::string_view> names,
                                             int protocol) {
  std::set<std::string>& mine = Names(kind);
  std::vector<std::string> targets(names.begin(), names.end());
  if (targets.empty()) targets.assign(mine.begin(), mine.end());
  if (targets.empty()) return SubscriptionReply(command, std::nullopt, Count(kind), protocol);
  std::string replies;
  for (const std::string& channel : targets) {
    if (mine.erase(channel) > 0) Register(kind, channel, -1);
    replies += SubscriptionReply(command, channel, Count(kind), protocol);
  }
  return replies;
}

void ClientSubscriptions::Clear() {
  hub_.Forget(self_);
  for (SubscriptionKind kind :
       {SubscriptionKind::kChannel, SubscriptionKind::kPattern, SubscriptionKind::kShardChannel}) {
    for (const std::string& name : Names(kind)) Register(kind, name, -1);
    Names(kind).clear();
  }
}

}  // namespace shardctl::proxy
