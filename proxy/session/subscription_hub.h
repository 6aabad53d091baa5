// What a client's session and its worker's pub/sub hub (pubsub.h) say to each other:
//
//   Session ──Subscribe(kind, name, this)──▶ SubscriptionHub   (the hub refcounts the name)
//   Session ◀──PushMessage(frame)─────────── hub, for every message on a name it subscribed to
#pragma once

#include <string>
#include <string_view>

namespace shardctl::proxy {

enum class SubscriptionKind { kChannel, kPattern, kShardChannel };

// A client that receives messages.
class Subscriber {
 public:
  virtual ~Subscriber() = default;
  virtual int protocol() const = 0;  // 2 or 3: how the message must be framed
  // A message, already framed for protocol(). The subscriber may disconnect itself if it cannot
  // keep up (--pubsub-buffer-limit).
  virtual void PushMessage(std::string_view frame) = 0;
  // The hub's connections now receive every name this subscriber subscribed to (after
  // SubscriptionHub::AwaitReady() said not yet).
  virtual void SubscriptionsReady() {}
};

// One thread's subscriptions to the cluster, shared by its clients.
class SubscriptionHub {
 public:
  virtual ~SubscriptionHub() = default;
  // Adds `subscriber` to `name`'s subscribers; the hub subscribes at the cluster for the first.
  virtual void Subscribe(SubscriptionKind kind, const std::string& name,
                         Subscriber* subscriber) = 0;
  // Removes it; the hub unsubscribes at the cluster after the last.
  virtual void Unsubscribe(SubscriptionKind kind, const std::string& name,
                           Subscriber* subscriber) = 0;
  // True when the names subscribed so far already receive their messages; false when a
  // connection is still subscribing them: the hub then calls subscriber->SubscriptionsReady()
  // once it has (Redis answers SUBSCRIBE once the subscription is in place).
  virtual bool AwaitReady(Subscriber* /*subscriber*/) { return true; }
  // The subscriber is going away: no SubscriptionsReady() for it.
  virtual void Forget(Subscriber* /*subscriber*/) {}
};

}  // namespace shardctl::proxy
