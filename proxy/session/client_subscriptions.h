// ClientSubscriptions: one client's pub/sub state. The proxy answers (P|S)SUBSCRIBE and
// (P|S)UNSUBSCRIBE itself, with the counts Redis would give, and registers the names with its
// thread's SubscriptionHub, which holds the shared subscriber connections. Pure apart from that
// interface.
#pragma once

#include <set>
#include <span>
#include <string>
#include <string_view>

#include "proxy/services/pubsub_counts.h"
#include "proxy/session/subscription_hub.h"

namespace shardctl::proxy {

class ClientSubscriptions {
 public:
  // `self` is the client the hub pushes messages to; `counts` (may be null) counts its channels
  // and patterns for PUBLISH's reply.
  ClientSubscriptions(SubscriptionHub& hub, Subscriber* self, PubSubCounts* counts = nullptr)
      : hub_(hub), self_(self), counts_(counts) {}
  ~ClientSubscriptions() { Clear(); }
  ClientSubscriptions(const ClientSubscriptions&) = delete;
  ClientSubscriptions& operator=(const ClientSubscriptions&) = delete;

  // Subscribes to `names` (one or more); returns Redis' replies, one per name. `command` is the
  // command's name in lower case ("ssubscribe"), as the replies carry it.
  std::string Subscribe(SubscriptionKind kind, std::string_view command,
                        std::span<const std::string_view> names, int protocol);
  // Unsubscribes from `names`, or from every name of the kind when `names` is empty.
  std::string Unsubscribe(SubscriptionKind kind, std::string_view command,
                          std::span<const std::string_view> names, int protocol);
  // Unsubscribes from everything (RESET, the client left).
  void Clear();

  // True with no subscription at all (RESP2 clients leave subscribed mode).
  bool empty() const { return channels_.empty() && patterns_.empty() && shard_channels_.empty(); }
  // How many names of `kind` this client is subscribed to (CLIENT LIST's sub, psub, ssub).
  size_t names(SubscriptionKind kind) const {
    return kind == SubscriptionKind::kChannel   ? channels_.size()
           : kind == SubscriptionKind::kPattern ? patterns_.size()
                                                : shard_channels_.size();
  }

 private:
  std::set<std::string>& Names(SubscriptionKind kind);
  // Redis' count in the replies: shard channels alone for the s-commands, channels and patterns
  // together otherwise.
  int64_t Count(SubscriptionKind kind) const;
  // The hub and the counts learn of one name this client took (+1) or left (-1).
  void Register(SubscriptionKind kind, const std::string& name, int delta);

  SubscriptionHub& hub_;
  Subscriber* self_;
  PubSubCounts* counts_;
  std::set<std::string> channels_, patterns_, shard_channels_;
};

}  // namespace shardctl::proxy
