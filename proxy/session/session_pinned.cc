// WATCH, UNWATCH and WAIT: the commands that need a connection of the client's own
// (PinnedLinks holds those connections and the WATCH).
#include <algorithm>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/frames.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {
namespace {

// One self-erasing write: its effect (SET then DEL of a key no client uses) is propagated to the
// replicas, so the shard's write offset for this connection moves past every write the shard
// had already run, which WAIT then counts. The key never exists outside the script.
std::string CatchUpWrite(int slot) {
  const std::string key = "__shardproxy:wait:{" + std::string(common::TagForSlot(slot)) + "}";
  const std::string_view command[] = {
      "EVAL", "redis.call('SET', KEYS[1], '1') redis.call('DEL', KEYS[1]) return 0", "1", key};
  std::string out;
  common::AppendCommand(out, command);
  return out;
}

// The first slot primaries()[primary] serves in `map`, -1 when none.
int FirstSlotOf(const SlotMap& map, size_t primary) {
  for (int slot = 0; slot < common::kSlotCount; ++slot) {
    if (map.PrimaryFor(slot) == static_cast<int>(primary)) return slot;
  }
  return -1;
}

// Where one WAIT part goes, and the write that must run before it there (if any).
struct WaitTarget {
  std::string host;
  int port = 0;
  std::string preamble;
};

}  // namespace

// ---- WATCH / UNWATCH ----

void Session::HandleWatch(std::string_view frame, std::span<const std::string_view> args,
                          const CommandInfo& info) {
  auto slot = RequestSlot(info, args);
  if (!slot) return ReplyError(slot.error().message());
  std::optional<PinnedLinks::Watch>& watch = pinned_.watch();
  if (watch && watch->slot != *slot) {
    // A transaction runs on one shard: its watched keys must share the slot of its keys.
    return ReplyError("CROSSSLOT Keys in request don't hash to the same slot");
  }
  if (!watch) watch.emplace(PinnedLinks::Watch{.slot = *slot});
  if (watch->broken) return Reply("+OK\r\n");  // EXEC will answer null whatever is watched
  Forward(frame, *slot, /*pinned=*/true);      // NewSubRequest() marks it watched
}

void Session::HandleUnwatch(std::string_view frame) {
  std::optional<PinnedLinks::Watch>& watch = pinned_.watch();
  if (!watch) return Reply("+OK\r\n");
  if (watch->broken) {
    pinned_.EndWatch();
    return Reply("+OK\r\n");
  }
  Forward(frame, watch->slot, /*pinned=*/true);  // over the watch's connection: Redis says +OK
  watch.reset();
}

// ---- WAIT ----

// WAIT numreplicas timeout: sent over this client's pinned connections, the reply is the fewest
// replicas any of those shards counted. The first WAIT after keyed commands that went over
// shared connections cannot know which shards they reached, so it goes to every primary,
// preceded on each by CatchUpWrite(), and only once the replies before it are in (so those
// writes have run). From then on the client's keyed commands stay on its pinned connections.
void Session::ForwardWait(std::string_view frame, std::span<const std::string_view> args) {
  if (args.size() != 3) return ReplyError(WrongArgCountError(args[0]));
  const bool catch_up = shared_keyed_;
  pinned_.EnterWaitMode();
  shared_keyed_ = false;
  std::vector<WaitTarget> targets;
  if (!catch_up) {
    for (PinnedLink* link : pinned_.links()) {
      if (link->protocol() == protocol_ && !link->closing()) {
        targets.push_back({link->host(), link->port(), {}});
      }
    }
  }
  if (targets.empty()) {
    // Nothing pinned yet: every primary. A fresh connection has written nothing, so a shard
    // answers how many replicas it has in sync, which is what Redis answers such a client.
    const SlotMap& map = router_.CurrentMap();
    for (size_t i = 0; i < map.primaries().size(); ++i) {
      const int slot = FirstSlotOf(map, i);
      if (slot < 0) continue;
      targets.push_back(
          {map.primaries()[i].host, map.primaries()[i].port, catch_up ? CatchUpWrite(slot) : ""});
    }
  }
  if (targets.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  PendingReply& pending = replies_.Push();
  pending.assembly = FanOutAssembly(FanOutMerge::kMinInteger, targets.size());
  std::vector<SubRequest*> requests;
  for (size_t i = 0; i < targets.size(); ++i) {
    SubRequest* request = NewSubRequest(pending, -1, /*pinned=*/true);
    request->part = static_cast<int>(i);
    request->request.assign(frame);
    request->host = std::move(targets[i].host);
    request->port = targets[i].port;
    if (!targets[i].preamble.empty()) request->Extras().preamble = std::move(targets[i].preamble);
    request->mode.may_block = true;  // WAIT has its own timeout (0: forever)
    requests.push_back(request);
  }
  if (catch_up && !replies_.IsFront(pending)) {
    barrier_pending_ = &pending;
    barrier_requests_ = std::move(requests);
    return;
  }
  for (SubRequest* request : requests) router_.Route(request);
}

// The replies before a held WAIT are all in: its writes have run on the shards.
void Session::RunWaitBarrier() {
  barrier_pending_ = nullptr;
  std::vector<SubRequest*> requests;
  requests.swap(barrier_requests_);
  for (SubRequest* request : requests) router_.Route(request);
}

}  // namespace shardctl::proxy
