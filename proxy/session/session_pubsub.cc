// A client's side of pub/sub: ClientSubscriptions keeps its channels and answers with Redis'
// counts; the worker's SubscriptionHub holds the shared subscriber connections and pushes the
// messages back (Session::PushMessage()).
#include "proxy/merge/pubsub_frames.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {
namespace {

// PUBLISH's reply: the node's own count is of the proxy's shared connections, so the count is
// the proxy's clients' (PubSubCounts); an error passes through.
class PublishCount final : public ReplyAssembly {
 public:
  explicit PublishCount(int64_t receivers) : receivers_(receivers) {}
  size_t parts() const override { return 1; }

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    if (replies[0].empty() || replies[0][0] != ':') return std::string(replies[0]);
    return ":" + std::to_string(receivers_) + "\r\n";
  }
  int64_t receivers_;
};

}  // namespace

bool Session::SubscribedModeRefuses(std::span<const std::string_view> args,
                                    const CommandInfo& info) {
  if (protocol_ >= 3 || subscriptions_->empty()) return false;  // RESP3 may run anything
  if (info.kind == RouteKind::kPubSub || info.name == "QUIT" || info.name == "RESET") {
    return false;
  }
  if (info.name == "PING") {
    if (args.size() > 2) return false;  // the usual arity error
    Reply(SubscribedPong(args.size() == 2 ? args[1] : ""));
    return true;
  }
  ReplyError("ERR Can't execute '" + LowerCase(args[0]) +
             "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
             "this context");
  return true;
}

void Session::HandlePubSub(std::span<const std::string_view> args, const CommandInfo& info) {
  const std::string_view name = info.name;
  const bool subscribe = name.ends_with("SUBSCRIBE") && !name.ends_with("UNSUBSCRIBE");
  if (subscribe && args.size() < 2) return ReplyError(WrongArgCountError(args[0]));
  const bool sharded = name == "SSUBSCRIBE" || name == "SUNSUBSCRIBE";
  if (sharded && args.size() >= 2) {
    auto slot = RequestSlot(info, args);  // a shard subscription lives on one shard
    if (!slot) return ReplyError(slot.error().message());
  }
  if (!subscriptions_) {
    subscriptions_ = std::make_unique<ClientSubscriptions>(router_.subscriptions(), this,
                                                           &services_.pubsub_counts());
  }
  const SubscriptionKind kind = sharded                 ? SubscriptionKind::kShardChannel
                                : name.starts_with("P") ? SubscriptionKind::kPattern
                                                        : SubscriptionKind::kChannel;
  const std::string command = LowerCase(name);
  const std::span<const std::string_view> names = args.subspan(1);
  const std::string reply = subscribe
                                ? subscriptions_->Subscribe(kind, command, names, protocol_)
                                : subscriptions_->Unsubscribe(kind, command, names, protocol_);
  // Redis writes (un)subscribe confirmations as it writes messages, whatever CLIENT REPLY says;
  // a SKIP is used up by this command all the same.
  const ReplyQueue::Mode mode = replies_.mode();
  replies_.set_mode(ReplyQueue::Mode::kOn);
  if (subscribe && !router_.subscriptions().AwaitReady(this)) {
    // Held until the hub's connections have subscribed: a message published after the client
    // read its confirmation must reach it.
    held_subscribes_.emplace_back(&replies_.Push(), reply);
  } else {
    Reply(reply);
  }
  replies_.set_mode(mode == ReplyQueue::Mode::kOff ? mode : ReplyQueue::Mode::kOn);
}

// PUBLISH channel message: to any primary (the cluster bus carries it to every node); the reply
// counts this proxy's clients that receive it, as one Redis counts its own.
void Session::ForwardPublish(std::string_view frame, std::span<const std::string_view> args) {
  if (args.size() != 3) return Forward(frame, -1);  // the shard's own error
  PendingReply& pending = replies_.Push();
  pending.assembly =
      std::make_unique<PublishCount>(services_.pubsub_counts().Receivers(args[1], &GlobMatch));
  SubRequest* request = NewSubRequest(pending, -1);
  request->part = 0;  // the one part of its assembly
  request->request.assign(frame);
  // Every PUBLISH of this client goes to the same primary, which passes them on over the cluster
  // bus in order: sent round robin, a message published on the subscriber's own node would
  // overtake the one before it, still on its way from another node.
  const auto& primaries = router_.CurrentMap().primaries();
  if (!primaries.empty()) {
    const common::NodeAddress& node = primaries[id_ % primaries.size()];
    request->host = node.host;
    request->port = node.port;
  }
  router_.Route(request);
}

void Session::SubscriptionsReady() {
  if (closed_) return;
  std::vector<std::pair<PendingReply*, std::string>> held;
  held.swap(held_subscribes_);
  for (auto& [pending, reply] : held) Fill(*pending, reply);
}

}  // namespace shardctl::proxy
