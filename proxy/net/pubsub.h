// PubSubHub: one worker's pub/sub subscriptions to the cluster, shared by its clients.
//
//   Subscriber ──Subscribe(kind, name)──▶ refcount per name ──first one──▶ SUBSCRIBE on a link
//      ▲                                                       last one───▶ UNSUBSCRIBE
//      └──PushMessage()◀── every subscriber of the name ◀── message / pmessage / smessage push
//
//   classic link: one RESP3 connection to any primary, for channels and patterns (Redis Cluster
//                 broadcasts PUBLISH over the bus, so one node hears every message)
//   shard links:  one RESP3 connection per primary, for shard channels (SSUBSCRIBE lives on
//                 the owner of the channel's slot)
//   event links:  while clients subscribe to names a keyspace notification could reach ("*",
//                 "__keyspace@0__:k"), one RESP3 connection per primary subscribed to every
//                 keyspace notification: a node publishes the events of its own keys to its own
//                 subscribers only. Those events reach clients from the event links alone,
//                 matched against their channels and patterns; the classic link drops its own.
//
// A link that fails, a shard channel the server unsubscribes (its slot moved: Redis pushes
// "sunsubscribe"), or an SSUBSCRIBE answered with MOVED: the affected names are subscribed again
// after a short delay at their owner per the (refreshed) slot map. Clients see nothing of it but
// the messages published while nobody was subscribed. Loop thread only.
#pragma once

#include <uv.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/session/subscription_hub.h"

namespace shardctl::proxy {

class BackendHost;
class RequestRouter;
class SubscriberLink;

class PubSubHub final : public SubscriptionHub {
 public:
  // Links are opened on `owner`'s loop (with its login); shard channels are placed by `router`'s
  // slot map.
  PubSubHub(BackendHost& owner, RequestRouter& router);
  PubSubHub(const PubSubHub&) = delete;
  PubSubHub& operator=(const PubSubHub&) = delete;

  // SubscriptionHub.
  void Subscribe(SubscriptionKind kind, const std::string& name, Subscriber* subscriber) override;
  void Unsubscribe(SubscriptionKind kind, const std::string& name, Subscriber* subscriber) override;
  // Only the event links make a subscriber wait: they are opened by the subscription itself.
  bool AwaitReady(Subscriber* subscriber) override;
  void Forget(Subscriber* subscriber) override;

  // From a link (pubsub.cc).
  void OnPush(SubscriberLink* link, std::string_view frame);
  void OnLinkError(SubscriberLink* link, std::string_view frame);
  void OnLinkClosed(SubscriberLink* link);

  // Closes the links and the timer (the worker is shutting down).
  void ShutDown();

  size_t names() const { return channels_.size() + patterns_.size() + shard_channels_.size(); }

 private:
  using Subscribers = std::map<std::string, std::vector<Subscriber*>, std::less<>>;

  static void OnResubscribeTimer(uv_timer_t* timer);
  Subscribers& Table(SubscriptionKind kind);
  SubscriberLink* ClassicLink();
  SubscriberLink* ShardLinkFor(const std::string& channel);
  void SendSubscribe(SubscriptionKind kind, const std::string& name, bool subscribe);
  // The shard channels placed on `link` are to be placed again (Resubscribe()).
  void UnplaceChannelsOn(SubscriberLink* link);
  void ScheduleResubscribe();
  void Resubscribe();
  void Deliver(const Subscribers& table, std::string_view name, std::string_view push);
  // Event links (keyspace notifications from every primary).
  void EnsureEventLinks();
  bool IsEventLink(const SubscriberLink* link) const;
  void DeliverKeyspaceEvent(std::string_view channel, std::string_view payload);
  // One event link confirmed a subscription or went away: waiting subscribers may be ready.
  void Confirmed(SubscriberLink* link, bool closed);

  BackendHost& owner_;
  RequestRouter& router_;
  uv_timer_t timer_{};
  bool timer_started_ = false;
  bool shut_down_ = false;
  Subscribers channels_, patterns_, shard_channels_;
  SubscriberLink* classic_ = nullptr;
  std::map<std::string, SubscriberLink*> shard_links_;                   // BackendKey()
  std::map<std::string, SubscriberLink*, std::less<>> shard_placement_;  // channel -> its link
  std::set<std::string> unplaced_;                      // shard channels to place again
  std::map<std::string, SubscriberLink*> event_links_;  // BackendKey() -> its event link
  size_t keyspace_names_ = 0;  // subscribed names a keyspace notification could reach
  std::map<SubscriberLink*, int> unconfirmed_;  // event link -> its PSUBSCRIBEs not yet confirmed
  std::vector<Subscriber*> waiting_;            // AwaitReady() said no to these
  size_t classic_node_ = 0;  // which primary the classic link uses; moves on after a failure
};

}  // namespace shardctl::proxy
