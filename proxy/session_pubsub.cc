// A client's side of pub/sub: the proxy keeps the client's subscriptions, answers
// (P|S)(UN)SUBSCRIBE itself with the counts Redis would give, and registers with its worker's
// PubSubHub, which holds the shared subscriber connections and hands messages back through
// PushMessage().
#include "common/slots.h"
#include "proxy/pubsub.h"
#include "proxy/pubsub_frames.h"
#include "proxy/server.h"
#include "proxy/session.h"
#include "proxy/worker.h"

namespace shardctl::proxy {
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
  if (!subscriptions_) subscriptions_ = std::make_unique<Subscriptions>();
  const SubscriptionKind kind = sharded                 ? SubscriptionKind::kShardChannel
                                : name.starts_with("P") ? SubscriptionKind::kPattern
                                                        : SubscriptionKind::kChannel;
  std::set<std::string>& mine = kind == SubscriptionKind::kShardChannel
                                    ? subscriptions_->shard_channels
                                : kind == SubscriptionKind::kPattern ? subscriptions_->patterns
                                                                     : subscriptions_->channels;
  // Redis' counts: shard channels alone for the s-variants, channels + patterns otherwise.
  auto count = [&] {
    return static_cast<int64_t>(sharded ? subscriptions_->shard_channels.size()
                                        : subscriptions_->channels.size() +
                                              subscriptions_->patterns.size());
  };
  const std::string lower = LowerCase(name);
  PubSubHub& hub = worker_.pubsub();
  std::string replies;
  if (subscribe) {
    for (size_t i = 1; i < args.size(); ++i) {
      std::string channel(args[i]);
      if (mine.insert(channel).second) hub.Subscribe(kind, channel, this);
      replies += SubscriptionReply(lower, channel, count(), protocol_);
    }
    return Reply(replies);
  }
  std::vector<std::string> names(args.begin() + 1, args.end());
  if (names.empty()) names.assign(mine.begin(), mine.end());
  if (names.empty()) return Reply(SubscriptionReply(lower, std::nullopt, count(), protocol_));
  for (const std::string& channel : names) {
    if (mine.erase(channel) > 0) hub.Unsubscribe(kind, channel, this);
    replies += SubscriptionReply(lower, channel, count(), protocol_);
  }
  Reply(replies);
}

void Session::UnsubscribeAll() {
  PubSubHub& hub = worker_.pubsub();
  for (const std::string& channel : subscriptions_->channels) {
    hub.Unsubscribe(SubscriptionKind::kChannel, channel, this);
  }
  for (const std::string& pattern : subscriptions_->patterns) {
    hub.Unsubscribe(SubscriptionKind::kPattern, pattern, this);
  }
  for (const std::string& channel : subscriptions_->shard_channels) {
    hub.Unsubscribe(SubscriptionKind::kShardChannel, channel, this);
  }
  subscriptions_.reset();
}

void Session::PushMessage(std::string_view frame) {
  if (closed_ || close_after_write_) return;
  ProxyStats& stats = worker_.server().stats();
  if (out_.size() + in_write_.size() + frame.size() >
      worker_.server().options().pubsub_buffer_limit) {
    // A subscriber that does not read would make the proxy hold every message for it.
    stats.pubsub_slow_disconnects.fetch_add(1, std::memory_order_relaxed);
    return Close();
  }
  stats.pubsub_messages.fetch_add(1, std::memory_order_relaxed);
  out_ += frame;
  worker_.ScheduleFlush(this);
}

}  // namespace shardctl::proxy
