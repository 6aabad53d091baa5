#include "proxy/net/pubsub.h"

#include <netinet/in.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "common/reply_tree.h"
#include "common/resp.h"
#include "common/slots.h"
#include "common/tls.h"
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
      : hub_(hub), owner_(owner), host_(std::move(host)), port_(port) {
    uv_tcp_init(owner_.loop(), &tcp_);
    tcp_.data = this;
    out_ = owner_.auth().BackendLogin();
    if (!out_.empty()) ++preamble_replies_;
    out_ += "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
    ++preamble_replies_;
    sockaddr_storage address{};
    if (uv_ip4_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in*>(&address)) != 0 &&
        uv_ip6_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
      Close();
      return;
    }
    connect_.data = this;
    if (uv_tcp_connect(&connect_, &tcp_, reinterpret_cast<sockaddr*>(&address), &OnConnect) != 0) {
      Close();
    }
  }

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  bool closing() const { return closing_; }

  void Send(std::string_view command) {
    out_ += command;
    if (connected_ && !writing_) StartWrite();
  }

  // In TLS (the host's shard_tls()), what the socket gets is out_ sealed; out_ waits for the
  // handshake.

  void Close() {
    if (closing_) return;
    closing_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &OnClose);
  }

 private:
  static void OnConnect(uv_connect_t* req, int status) {
    auto* self = static_cast<SubscriberLink*>(req->data);
    if (self->closing_) return;
    if (status != 0) return self->Close();
    self->connected_ = true;
    if (const auto tls = self->owner_.shard_tls()) {
      self->tls_ = std::make_unique<common::TlsSession>(*tls);
    }
    uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), &OnAlloc, &OnRead);
    self->StartWrite();
  }

  static void OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
    *buf = static_cast<SubscriberLink*>(handle->data)->owner_.ReadBuffer();
  }

  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
    auto* self = static_cast<SubscriberLink*>(stream->data);
    if (nread == 0 || self->closing_) return;
    if (nread < 0) return self->Close();
    std::string_view received(buf->base, static_cast<size_t>(nread));
    if (self->tls_) {
      auto plain = self->tls_->Open(received);
      if (!plain) return self->Close();
      received = *plain;
      if (!self->writing_) self->StartWrite();  // the handshake's answer, or what waited for it
    }
    self->in_.Feed(received);
    const bool peer_closed = self->tls_ && self->tls_->peer_closed();
    size_t consumed = 0;
    while (!self->closing_) {
      const common::ScanResult frame = self->in_.Next();
      if (frame.status == common::ScanStatus::kIncomplete) break;
      if (frame.status == common::ScanStatus::kError) return self->Close();
      consumed = frame.end;
      const std::string_view bytes = self->in_.FrameBytes(frame);
      if (bytes[0] == '>') {
        self->hub_.OnPush(self, bytes);
      } else if (self->preamble_replies_ > 0) {
        --self->preamble_replies_;
        if (bytes[0] == '-') return self->Close();  // refused login or HELLO 3
      } else if (bytes[0] == '-') {
        self->hub_.OnLinkError(self, bytes);
      }
    }
    if (!self->closing_) self->in_.Consume(consumed);
    if (peer_closed) self->Close();
  }

  void StartWrite() {
    std::string* wire = &out_;
    if (tls_) {
      if (!tls_->Seal(out_)) return Close();
      wire = &tls_->wire();
    }
    if (wire->empty()) return;
    std::swap(*wire, in_write_);
    wire->clear();
    writing_ = true;
    write_.data = this;
    uv_buf_t buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
    if (uv_write(&write_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, &OnWrite) != 0) {
      writing_ = false;
      Close();
    }
  }

  static void OnWrite(uv_write_t* req, int status) {
    auto* self = static_cast<SubscriberLink*>(req->data);
    self->writing_ = false;
    self->in_write_.clear();
    if (self->closing_) return;
    if (status != 0) return self->Close();
    self->StartWrite();
  }

  static void OnClose(uv_handle_t* handle) {
    auto* self = static_cast<SubscriberLink*>(handle->data);
    self->hub_.OnLinkClosed(self);
    delete self;
  }

  PubSubHub& hub_;
  BackendHost& owner_;
  const std::string host_;
  const int port_;
  std::unique_ptr<common::TlsSession> tls_;  // null for plain RESP
  uv_tcp_t tcp_{};
  uv_connect_t connect_{};
  uv_write_t write_{};
  std::string out_;
  std::string in_write_;
  common::RespScanner in_;
  int preamble_replies_ = 0;
  bool connected_ = false;
  bool writing_ = false;
  bool closing_ = false;
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
  if (subscribers.size() == 1) SendSubscribe(kind, name, /*subscribe=*/true);
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
  for (SubscriberLink* link : links) link->Close();
}

}  // namespace shardctl::proxy
