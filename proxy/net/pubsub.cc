#include "proxy/net/pubsub.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "common/reply_tree.h"
#include "common/resp.h"
#include "common/slots.h"
#include "common/tls.h"
#include "common/uv/address.h"
#include "common/uv/stream.h"
#include "proxy/merge/pubsub_frames.h"
#include "proxy/net/backend.h"
#include "proxy/services/auth.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {

// One RESP3 subscriber connection. It only ever receives pushes after its preamble (AUTH,
// HELLO 3), plus error replies to a misplaced SSUBSCRIBE. Owned by the hub; deleted in its close
// callback, after telling the hub.
class SubscriberLink {
 public:
  SubscriberLink(PubSubHub& hub, BackendHost& owner, std::string host, int port)
      : hub_(hub),
        owner_(owner),
        host_(std::move(host)),
        port_(port),
        stream_(owner_.loop(), this) {
    out_ = owner_.auth().BackendLogin();
    if (!out_.empty()) ++preamble_replies_;
    out_ += "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
    ++preamble_replies_;
    sockaddr_storage address{};
    if (!common::uv::ParseIpAddress(host_, port_, address)) {
      Close();
      return;
    }
    // In TLS (the host's shard_tls()), out_ waits for the handshake.
    if (const auto tls = owner_.shard_tls()) stream_.UseTls(*tls);
    if (stream_.Connect(address) != 0) Close();
  }

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  bool closing() const { return stream_.closing(); }

  void Send(std::string_view command) {
    out_ += command;
    Flush();
  }

  void Close() { stream_.Close(); }

 private:
  // common::uv::Stream's hooks (stream.h).
  friend class common::uv::Stream;
  uv_buf_t StreamReadBuffer() { return owner_.ReadBuffer(); }
  void OnStreamConnected() { Flush(); }
  void OnStreamFlushWanted() { Flush(); }  // the handshake's answer, or what waited for it
  void OnStreamWritten() { Flush(); }
  void OnStreamFailure(common::uv::StreamFailure, std::string_view) { Close(); }
  void OnStreamClosed() {
    hub_.OnLinkClosed(this);
    delete this;
  }

  void OnStreamRead(std::string_view received) {
    in_.Feed(received);
    size_t consumed = 0;
    while (!closing()) {
      const common::ScanResult frame = in_.Next();
      if (frame.status == common::ScanStatus::kIncomplete) break;
      if (frame.status == common::ScanStatus::kError) return Close();
      consumed = frame.end;
      const std::string_view bytes = in_.FrameBytes(frame);
      if (bytes[0] == '>') {
        hub_.OnPush(this, bytes);
      } else if (preamble_replies_ > 0) {
        --preamble_replies_;
        if (bytes[0] == '-') return Close();  // refused login or HELLO 3
      } else if (bytes[0] == '-') {
        hub_.OnLinkError(this, bytes);
      }
    }
    if (!closing()) in_.Consume(consumed);
  }

  // Subscriptions are rare: written at once, not batched per loop turn.
  void Flush() {
    if (stream_.Flush(out_).failed) Close();
  }

  PubSubHub& hub_;
  BackendHost& owner_;
  const std::string host_;
  const int port_;
  common::uv::Stream stream_;  // TCP, in TLS with the host's shard_tls()
  std::string out_;
  common::RespScanner in_;
  int preamble_replies_ = 0;
};

namespace {

constexpr uint64_t kResubscribeDelayMs = 200;

std::string Command(std::string_view verb, const std::vector<std::string_view>& names) {
  std::vector<std::string_view> argv = {verb};
  argv.insert(argv.end(), names.begin(), names.end());
  std::string out;
  common::AppendCommand(out, argv);
  return out;
}

}  // namespace

PubSubHub::PubSubHub(BackendHost& owner, RequestRouter& router) : owner_(owner), router_(router) {
  uv_timer_init(owner_.loop(), &timer_);
  timer_.data = this;
}

PubSubHub::Subscribers& PubSubHub::Table(SubscriptionKind kind) {
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

void PubSubHub::Subscribe(SubscriptionKind kind, const std::string& name, Subscriber* subscriber) {
  std::vector<Subscriber*>& subscribers = Table(kind)[name];
  subscribers.push_back(subscriber);
  if (subscribers.size() != 1) return;
  SendSubscribe(kind, name, /*subscribe=*/true);
  if (kind != SubscriptionKind::kShardChannel &&
      MayMatchKeyspace(name, kind == SubscriptionKind::kPattern) && ++keyspace_names_ == 1) {
    EnsureEventLinks();
  }
}

void PubSubHub::Unsubscribe(SubscriptionKind kind, const std::string& name,
                            Subscriber* subscriber) {
  Subscribers& table = Table(kind);
  auto found = table.find(name);
  if (found == table.end()) return;
  std::erase(found->second, subscriber);
  if (!found->second.empty()) return;
  table.erase(found);
  SendSubscribe(kind, name, /*subscribe=*/false);
  if (kind != SubscriptionKind::kShardChannel &&
      MayMatchKeyspace(name, kind == SubscriptionKind::kPattern) && --keyspace_names_ == 0) {
    // Nobody left whom a keyspace notification could reach: the event links go.
    for (auto& [key, link] : event_links_) link->Close();
  }
}

void PubSubHub::SendSubscribe(SubscriptionKind kind, const std::string& name, bool subscribe) {
  if (shut_down_) return;
  if (kind != SubscriptionKind::kShardChannel) {
    const bool had_link = classic_ != nullptr;
    SubscriberLink* link = ClassicLink();  // a new link subscribes everything itself
    if (link == nullptr || !had_link) return;
    const bool channel = kind == SubscriptionKind::kChannel;
    link->Send(Command(subscribe ? (channel ? "SUBSCRIBE" : "PSUBSCRIBE")
                                 : (channel ? "UNSUBSCRIBE" : "PUNSUBSCRIBE"),
                       {name}));
    return;
  }
  if (!subscribe) {
    unplaced_.erase(name);
    auto placed = shard_placement_.find(name);
    if (placed == shard_placement_.end()) return;
    placed->second->Send(Command("SUNSUBSCRIBE", {name}));
    shard_placement_.erase(placed);
    return;
  }
  SubscriberLink* link = ShardLinkFor(name);
  if (link == nullptr) {
    unplaced_.insert(name);
    return ScheduleResubscribe();
  }
  link->Send(Command("SSUBSCRIBE", {name}));
  shard_placement_[name] = link;
}

SubscriberLink* PubSubHub::ClassicLink() {
  if (classic_ != nullptr || shut_down_) return classic_;
  if (channels_.empty() && patterns_.empty()) return nullptr;
  const auto& backends = router_.CurrentMap().primaries();
  if (backends.empty()) {
    ScheduleResubscribe();
    return nullptr;
  }
  const common::NodeAddress& node = backends[classic_node_ % backends.size()];
  classic_ = new SubscriberLink(*this, owner_, node.host, node.port);
  std::vector<std::string_view> names;
  for (const auto& [name, sessions] : channels_) names.push_back(name);
  if (!names.empty()) classic_->Send(Command("SUBSCRIBE", names));
  names.clear();
  for (const auto& [name, sessions] : patterns_) names.push_back(name);
  if (!names.empty()) classic_->Send(Command("PSUBSCRIBE", names));
  return classic_;
}

SubscriberLink* PubSubHub::ShardLinkFor(const std::string& channel) {
  const SlotMap& map = router_.CurrentMap();
  const int owner = map.PrimaryFor(common::KeySlot(channel));
  if (owner == SlotMap::kNoNode) return nullptr;
  const common::NodeAddress& node = map.primaries()[static_cast<size_t>(owner)];
  SubscriberLink*& link = shard_links_[BackendKey(node.host, node.port, 3)];
  if (link == nullptr || link->closing()) {
    link = new SubscriberLink(*this, owner_, node.host, node.port);
  }
  return link;
}

void PubSubHub::OnPush(SubscriberLink* link, std::string_view frame) {
  auto push = common::DecodeReply(frame);
  if (!push || push->elements.size() < 3) return;
  const std::string_view kind = push->elements[0].text;
  const std::string_view name = push->elements[1].text;
  if (IsEventLink(link)) {
    if (kind == "pmessage" && push->elements.size() >= 4) {
      DeliverKeyspaceEvent(push->elements[2].text, push->elements[3].text);
    }
    if (kind == "psubscribe") Confirmed(link, /*closed=*/false);
    return;
  }
  // With event links, keyspace events come from them only (each exactly once).
  const std::string_view channel = kind == "pmessage" && push->elements.size() >= 4
                                       ? std::string_view(push->elements[2].text)
                                       : name;
  if (!event_links_.empty() && IsKeyspaceChannel(channel)) return;
  if (kind == "message") return Deliver(channels_, name, frame);
  if (kind == "pmessage") return Deliver(patterns_, name, frame);
  if (kind == "smessage") return Deliver(shard_channels_, name, frame);
  if (kind != "sunsubscribe") return;
  // Still wanted and still placed on this link: the server dropped it (the slot moved away).
  auto placed = shard_placement_.find(name);
  if (placed == shard_placement_.end() || placed->second != link) return;
  if (shard_channels_.find(name) == shard_channels_.end()) return;
  unplaced_.insert(placed->first);
  shard_placement_.erase(placed);
  owner_.RequestMapRefresh();
  ScheduleResubscribe();
}

// An error reply on a subscriber link: an SSUBSCRIBE sent to a node that no longer owns the slot
// (MOVED) or a cluster that is down. Which channel it was is not said, so every shard channel
// placed on that link is placed again once the map is fresh (SSUBSCRIBE twice is harmless).
void PubSubHub::OnLinkError(SubscriberLink* link, std::string_view /*frame*/) {
  UnplaceChannelsOn(link);
  owner_.RequestMapRefresh();
  ScheduleResubscribe();
}

void PubSubHub::OnLinkClosed(SubscriberLink* link) {
  if (classic_ == link) {
    classic_ = nullptr;
    ++classic_node_;  // try the next primary: this one may be the one that went away
  }
  for (auto it = shard_links_.begin(); it != shard_links_.end();) {
    it = it->second == link ? shard_links_.erase(it) : std::next(it);
  }
  for (auto it = event_links_.begin(); it != event_links_.end();) {
    it = it->second == link ? event_links_.erase(it) : std::next(it);
  }
  Confirmed(link, /*closed=*/true);
  UnplaceChannelsOn(link);
  if (shut_down_) return;
  owner_.RequestMapRefresh();
  ScheduleResubscribe();
}

void PubSubHub::UnplaceChannelsOn(SubscriberLink* link) {
  for (auto it = shard_placement_.begin(); it != shard_placement_.end();) {
    if (it->second != link) {
      ++it;
      continue;
    }
    unplaced_.insert(it->first);
    it = shard_placement_.erase(it);
  }
}

void PubSubHub::ScheduleResubscribe() {
  if (shut_down_ || timer_started_) return;
  timer_started_ = true;
  uv_timer_start(&timer_, &OnResubscribeTimer, kResubscribeDelayMs, 0);
}

void PubSubHub::OnResubscribeTimer(uv_timer_t* timer) {
  auto* self = static_cast<PubSubHub*>(timer->data);
  self->timer_started_ = false;
  self->Resubscribe();
}

void PubSubHub::Resubscribe() {
  ClassicLink();
  EnsureEventLinks();
  std::set<std::string> unplaced;
  unplaced.swap(unplaced_);
  for (const std::string& name : unplaced) {
    if (shard_channels_.find(name) != shard_channels_.end()) {
      SendSubscribe(SubscriptionKind::kShardChannel, name, /*subscribe=*/true);
    }
  }
}

void PubSubHub::Deliver(const Subscribers& table, std::string_view name, std::string_view push) {
  auto found = table.find(name);
  if (found == table.end()) return;
  // A copy: a client over its buffer limit closes and unsubscribes while we iterate.
  const std::vector<Subscriber*> subscribers = found->second;
  std::string resp2;
  for (Subscriber* subscriber : subscribers) {
    if (subscriber->protocol() >= 3) {
      subscriber->PushMessage(push);
      continue;
    }
    if (resp2.empty()) resp2 = MessageForProtocol(push, 2);  // framed once for all of them
    subscriber->PushMessage(resp2);
  }
}

void PubSubHub::ShutDown() {
  shut_down_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  std::vector<SubscriberLink*> links;
  if (classic_ != nullptr) links.push_back(classic_);
  for (auto& [key, link] : shard_links_) links.push_back(link);
  for (auto& [key, link] : event_links_) links.push_back(link);
  for (SubscriberLink* link : links) link->Close();
}

void PubSubHub::EnsureEventLinks() {
  if (keyspace_names_ == 0 || shut_down_) return;
  for (const common::NodeAddress& node : router_.CurrentMap().primaries()) {
    SubscriberLink*& link = event_links_[BackendKey(node.host, node.port, 3)];
    if (link != nullptr && !link->closing()) continue;
    link = new SubscriberLink(*this, owner_, node.host, node.port);
    link->Send(Command("PSUBSCRIBE", {"__keyspace@*", "__keyevent@*"}));
    unconfirmed_[link] = 2;
  }
}

bool PubSubHub::AwaitReady(Subscriber* subscriber) {
  if (unconfirmed_.empty()) return true;
  waiting_.push_back(subscriber);
  return false;
}

void PubSubHub::Forget(Subscriber* subscriber) { std::erase(waiting_, subscriber); }

void PubSubHub::Confirmed(SubscriberLink* link, bool closed) {
  auto found = unconfirmed_.find(link);
  if (found == unconfirmed_.end()) return;
  // A link that failed will not confirm: its subscribers are not kept waiting for it.
  if (closed || --found->second == 0) unconfirmed_.erase(found);
  if (!unconfirmed_.empty()) return;
  std::vector<Subscriber*> ready;
  ready.swap(waiting_);
  for (Subscriber* subscriber : ready) subscriber->SubscriptionsReady();
}

bool PubSubHub::IsEventLink(const SubscriberLink* link) const {
  for (const auto& [key, event_link] : event_links_) {
    if (event_link == link) return true;
  }
  return false;
}

// A keyspace notification from the node that owns the key: to the clients of that channel and
// of every pattern that matches it, framed as if they had subscribed on that node.
void PubSubHub::DeliverKeyspaceEvent(std::string_view channel, std::string_view payload) {
  if (channels_.find(channel) != channels_.end()) {
    Deliver(channels_, channel, MessagePush("", channel, payload));
  }
  // The names first: a client over its buffer limit unsubscribes while messages are delivered.
  std::vector<std::string> matching;
  for (const auto& [pattern, subscribers] : patterns_) {
    if (GlobMatch(pattern, channel)) matching.push_back(pattern);
  }
  for (const std::string& pattern : matching) {
    Deliver(patterns_, pattern, MessagePush(pattern, channel, payload));
  }
}

}  // namespace shardctl::proxy
