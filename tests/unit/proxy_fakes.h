// Fakes of the interfaces a proxy Session talks through (proxy/routing/routing.h, services.h,
// subscription_hub.h, session.h), so session logic is unit-tested without sockets or threads:
// what the session routes is recorded, and the test answers it with Session::OnReply().
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "proxy/routing/routing.h"
#include "proxy/routing/slot_map.h"
#include "proxy/services/key_load.h"
#include "proxy/services/services.h"
#include "proxy/services/stats.h"
#include "proxy/session/session.h"
#include "proxy/session/subscription_hub.h"

namespace shardctl::proxy::testing_fakes {

// Two primaries: 127.0.0.1:7000 serves slots 0-8191, 127.0.0.1:7001 serves 8192-16383.
inline SlotMap TwoPrimaries() {
  return SlotMap::FromClusterNodes(
             "aaaa 127.0.0.1:7000@17000 master - 0 0 1 connected 0-8191\n"
             "bbbb 127.0.0.1:7001@17001 master - 0 0 2 connected 8192-16383\n")
      .value();
}

class FakeLink : public PinnedLink {
 public:
  FakeLink(std::string host, int port, int protocol)
      : host_(std::move(host)), port_(port), protocol_(protocol) {}
  const std::string& host() const override { return host_; }
  int port() const override { return port_; }
  int protocol() const override { return protocol_; }
  bool closing() const override { return closing_; }
  bool HasRequests() const override { return busy; }
  void MarkWatched() override { watched = true; }
  void SendUnanswered(std::string_view command) override { unanswered.emplace_back(command); }
  std::vector<std::string> unanswered;  // SendUnanswered()'s commands, in order
  bool busy = false;
  bool watched = false;
  bool closing_ = false;

 private:
  std::string host_;
  int port_;
  int protocol_;
};

class FakeHub : public SubscriptionHub {
 public:
  void Subscribe(SubscriptionKind kind, const std::string& name, Subscriber* who) override {
    subscribers[{kind, name}].push_back(who);
  }
  void Unsubscribe(SubscriptionKind kind, const std::string& name, Subscriber* who) override {
    std::erase(subscribers[{kind, name}], who);
  }
  bool AwaitReady(Subscriber* who) override {
    if (!ready) waiting.push_back(who);
    return ready;
  }
  void Forget(Subscriber* who) override { std::erase(waiting, who); }
  size_t Count(SubscriptionKind kind, const std::string& name) {
    return subscribers[{kind, name}].size();
  }
  std::map<std::pair<SubscriptionKind, std::string>, std::vector<Subscriber*>> subscribers;
  bool ready = true;                 // false: subscriptions wait (AwaitReady)
  std::vector<Subscriber*> waiting;  // told to wait, not forgotten
};

class FakeRouter : public RequestRouter {
 public:
  const SlotMap& CurrentMap() override { return map; }
  SubRequest* NewRequest() override {
    ++made;
    return new SubRequest;
  }
  void FreeRequest(SubRequest* request) override {
    ++freed;
    delete request;
  }
  void Route(SubRequest* request) override { routed.push_back(request); }
  PinnedLink* AcquirePinned(const std::string& host, int port, int protocol, ReplySink*) override {
    links.push_back(std::make_unique<FakeLink>(host, port, protocol));
    return links.back().get();
  }
  void ReleasePinned(PinnedLink* link) override { released.push_back(link); }
  SubscriptionHub& subscriptions() override { return hub; }
  uint64_t NowMs() override { return now_ms; }
  KeyLoad* key_load() override { return load.get(); }
  bool PostInvalidation(uint64_t client, std::string keys) override {
    if (!clients.contains(client)) return false;
    posted[client].push_back(std::move(keys));
    return true;
  }
  bool ClientExists(uint64_t client) override { return clients.contains(client); }

  // The routed requests not yet answered, oldest first; the test takes them out.
  SubRequest* Take() {
    if (routed.empty()) return nullptr;
    SubRequest* request = routed.front();
    routed.erase(routed.begin());
    return request;
  }

  SlotMap map = TwoPrimaries();
  std::vector<SubRequest*> routed;
  std::vector<std::unique_ptr<FakeLink>> links;
  std::vector<PinnedLink*> released;
  FakeHub hub;
  std::unique_ptr<KeyLoad> load;  // set before a Session is made to count its keys
  std::set<uint64_t> clients;     // the other clients of the proxy (CLIENT TRACKING REDIRECT)
  std::map<uint64_t, std::vector<std::string>> posted;  // invalidations posted to them
  uint64_t now_ms = 1000;
  int made = 0;
  int freed = 0;
};

class FakeServices : public ProxyServices {
 public:
  const ProxyOptions& options() const override { return proxy_options; }
  const AuthConfig& auth() const override { return users; }
  ProxyStats& stats() override { return counters; }
  void RememberScript(std::string sha, std::string body) override { scripts[sha] = body; }
  void ForgetScripts() override { scripts.clear(); }
  std::string InfoText(std::string_view section) const override {
    return "# Proxy\r\nsection:" + std::string(section) + "\r\n";
  }
  std::string ServerVersion() const override { return "7.0.15"; }
  EngineIdentity ServerEngine() const override { return engine; }
  KeyLoadBoard* key_load_board() override { return board.get(); }
  PubSubCounts& pubsub_counts() override { return counts_of_subscribers; }

  ProxyOptions proxy_options;
  AuthConfig users;
  ProxyStats counters;
  PubSubCounts counts_of_subscribers;
  std::map<std::string, std::string> scripts;
  EngineIdentity engine{.name = "redis", .version = "7.0.15"};  // what INFO would say
  std::unique_ptr<KeyLoadBoard> board;                          // null: --hot-keys 0
};

class FakeClientLink : public ClientLink {
 public:
  void OutputReady() override { ++output_ready; }
  size_t BytesInFlight() const override { return in_flight; }
  void CloseNow() override { closed_now = true; }
  void SessionIdle() override { idle = true; }
  int output_ready = 0;
  size_t in_flight = 0;
  bool closed_now = false;
  bool idle = false;
};

}  // namespace shardctl::proxy::testing_fakes
