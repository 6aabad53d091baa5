// CLIENT TRACKING, CLIENT CACHING and the invalidations they bring (tracking.h has the design):
// the client's keyed commands go over its own connections, each put in its tracking state, and
// what the shards push back is passed on to the client or to its REDIRECT target.
#include <algorithm>

#include "common/numbers.h"
#include "common/resp.h"
#include "common/text.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {
namespace {

constexpr std::string_view kClientId = "*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n";

// The client's CLIENT TRACKING ON with its REDIRECT naming `shard_redirect` (the receiver's id on
// that shard) instead of the proxy client: what a connection already tracking is sent, so that
// the shard applies the change exactly as Redis would to one connection.
std::string ShardDelta(const std::vector<std::string>& args, int64_t shard_redirect) {
  std::vector<std::string> words = args;
  for (size_t i = 3; i + 1 < words.size(); ++i) {
    if (common::MatchesUpperCase(words[i], "REDIRECT")) {
      // A RESP3 connection tracks without one: the proxy passes its pushes to the target.
      if (shard_redirect > 0) {
        words[i + 1] = std::to_string(shard_redirect);
      } else {
        words.erase(words.begin() + static_cast<std::ptrdiff_t>(i),
                    words.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      }
      break;
    }
    if (common::MatchesUpperCase(words[i], "PREFIX")) ++i;  // a prefix may read "REDIRECT"
  }
  const std::vector<std::string_view> views(words.begin(), words.end());
  std::string out;
  common::AppendCommand(out, views);
  return out;
}

}  // namespace

void Session::HandleClientTracking(std::span<const std::string_view> args) {
  if (args.size() < 3) return ReplyError(WrongArgCountError("client|tracking"));
  auto request =
      ParseTracking(args, [this](uint64_t client) { return router_.ClientExists(client); });
  if (!request) return ReplyError(request.error().message());
  if (!request->on) return TrackingOff(args[2]);
  holding_for_receivers_ = true;
  tracking_setup_.emplace(TrackingSetup{.pending = &replies_.Push(),
                                        .args = std::vector<std::string>(args.begin(), args.end()),
                                        .before = tracking_});
  // Assumed accepted from here on, so that the commands the client pipelines behind it are
  // tracked; undone if the shards refuse it (their checks are Redis' own).
  tracking_.Enable(*request);
  pinned_.set_tracking(true);
  if (tracking_.redirect() != 0) {
    // A RESP2 connection's shard redirects to the client's receiver there: its id comes first.
    std::vector<SubRequest*> asks;
    for (const TrackingTarget& target : TrackingTargets()) {
      if (target.protocol >= 3 || pinned_.ReceiverId(target.host, target.port) >= 0) continue;
      SubRequest* ask = NewSubRequest(*tracking_setup_->pending, -1, /*pinned=*/true);
      ask->request.assign(kClientId);
      ask->host = target.host;
      ask->port = target.port;
      ask->mode.receiver = true;
      asks.push_back(ask);
    }
    tracking_setup_->receivers_waiting = asks.size();
    for (SubRequest* ask : asks) router_.Route(ask);
    if (!asks.empty()) return;
  }
  SendTracking();
}

std::vector<Session::TrackingTarget> Session::TrackingTargets() const {
  std::vector<TrackingTarget> targets;
  for (const common::NodeAddress& primary : router_.CurrentMap().primaries()) {
    targets.push_back({primary.host, primary.port, protocol_});
  }
  for (const PinnedLink* link : pinned_.links()) {
    if (!link->tracking || link->closing()) continue;
    const bool listed = std::any_of(targets.begin(), targets.end(), [&](const auto& target) {
      return target.host == link->host() && target.port == link->port() &&
             target.protocol == link->protocol();
    });
    if (!listed) targets.push_back({link->host(), link->port(), link->protocol()});
  }
  return targets;
}

void Session::SendTracking() {
  TrackingSetup setup = std::move(*tracking_setup_);
  tracking_setup_.reset();
  holding_for_receivers_ = false;
  link_.OutputReady();  // reading resumes
  const std::vector<TrackingTarget> targets = TrackingTargets();
  if (!setup.error.empty() || targets.empty()) {
    tracking_ = setup.before;
    pinned_.set_tracking(tracking_.on());
    std::string frame;
    common::AppendError(frame, targets.empty() ? "CLUSTERDOWN Hash slot not served"
                                               : "ERR CLIENT TRACKING: a shard did not answer (" +
                                                     setup.error + "); try again");
    return Fill(*setup.pending, frame);
  }
  std::vector<TrackingTarget> fresh;  // new to tracking while it was on: given the whole state
  std::vector<SubRequest*> requests;
  for (size_t i = 0; i < targets.size(); ++i) {
    const TrackingTarget& target = targets[i];
    const int64_t shard_redirect = ShardRedirect(target.host, target.port, target.protocol);
    const PinnedLink* link = pinned_.Find(target.host, target.port, target.protocol);
    SubRequest* request = NewSubRequest(*setup.pending, -1, /*pinned=*/true);
    request->part = static_cast<int>(i);
    request->host = target.host;
    request->port = target.port;
    request->protocol = target.protocol;
    request->mode.tracking_command = true;
    // A connection in the client's tracking state takes the change as the client wrote it (so
    // the shard checks it as Redis would); one new to tracking while it is on, the whole state.
    const bool in_state = (link != nullptr && link->tracking) || !setup.before.on();
    request->request =
        in_state ? ShardDelta(setup.args, shard_redirect) : tracking_.ShardCommand(shard_redirect);
    if (!in_state) fresh.push_back(target);
    requests.push_back(request);
  }
  setup.pending->assembly = AllOkAssembly(
      targets.size(), [this, before = setup.before, fresh = std::move(fresh)](bool accepted) {
        if (accepted) return;
        tracking_ = before;
        pinned_.set_tracking(tracking_.on());
        // The connections given the whole new state took it: back to the state kept.
        for (const TrackingTarget& target : fresh) {
          PinnedLink* link = pinned_.Find(target.host, target.port, target.protocol);
          if (link == nullptr) continue;
          link->SendUnanswered(ClientTracking().ShardCommand(0));  // OFF
          if (tracking_.on()) {
            link->SendUnanswered(
                tracking_.ShardCommand(ShardRedirect(target.host, target.port, target.protocol)));
          }
        }
      });
  for (SubRequest* request : requests) router_.Route(request);
}

int64_t Session::ShardRedirect(const std::string& host, int port, int protocol) const {
  if (tracking_.redirect() == 0 || protocol >= 3) return 0;
  return pinned_.ReceiverId(host, port);
}

void Session::DeliverReceiverId(const SubRequest& request, std::string_view frame) {
  if (closed_ || !tracking_setup_) return;
  TrackingSetup& setup = *tracking_setup_;
  const auto id = frame.starts_with(':')
                      ? common::ParseInteger<int64_t>(frame.substr(1, frame.size() - 3))
                      : std::nullopt;
  if (id) {
    pinned_.SetReceiverId(request.host, request.port, *id);
  } else if (setup.error.empty()) {
    // The shard's error, or the proxy's about the connection ("-ERR shard ... closed").
    setup.error = frame.size() > 3 && frame[0] == '-' ? frame.substr(1, frame.size() - 3) : frame;
  }
  if (--setup.receivers_waiting == 0) SendTracking();
}

void Session::TrackingOff(std::string_view word) {
  std::vector<TrackingTarget> tracked;
  for (const PinnedLink* link : pinned_.links()) {
    if (link->tracking && !link->closing()) {
      tracked.push_back({link->host(), link->port(), link->protocol()});
    }
  }
  tracking_.Disable();
  pinned_.set_tracking(false);
  if (tracked.empty()) return Reply("+OK\r\n");
  PendingReply& pending = replies_.Push();
  pending.assembly = FanOutAssembly(FanOutMerge::kAllOk, tracked.size());
  const std::string_view off[] = {"CLIENT", "TRACKING", word};
  std::vector<SubRequest*> requests;
  for (size_t i = 0; i < tracked.size(); ++i) {
    SubRequest* request = NewSubRequest(pending, -1, /*pinned=*/true);
    request->part = static_cast<int>(i);
    request->host = tracked[i].host;
    request->port = tracked[i].port;
    request->protocol = tracked[i].protocol;
    request->mode.tracking_command = true;
    common::AppendCommand(request->request, off);
    requests.push_back(request);
  }
  for (SubRequest* request : requests) router_.Route(request);
}

void Session::NoteTrackedRequest(SubRequest& request) {
  read_since_flush_ = true;
  request.mode.tracked = true;
  ++tracked_inflight_;
  if (tracking_.caching_armed()) request.Extras().caching = tracking_.CachingCommand();
}

void Session::BringIntoTracking(PinnedLink* link) {
  const int64_t shard_redirect = ShardRedirect(link->host(), link->port(), link->protocol());
  if (shard_redirect < 0) {
    // A RESP2 connection to a shard without a receiver (it joined the map after CLIENT TRACKING
    // ON, or its receiver was lost): its invalidations have nowhere to go, which is Redis'
    // broken redirect (TRACKINGINFO says so) until the client turns tracking on again.
    tracking_.MarkBroken();
    return;
  }
  link->SendUnanswered(tracking_.ShardCommand(shard_redirect));
  link->tracking = true;
}

// ---- invalidations ----

void Session::ForgetPinned(PinnedLink* link) {
  const bool tracked = link->tracking && tracking_.on();
  const bool receiver = pinned_.IsReceiver(link);
  pinned_.Forget(link);
  if (!tracked || closed_) return;
  // The shard's record of what this client read went with the connection (or, for a receiver,
  // the way its invalidations come back, and with it the redirect): the client must drop
  // everything it cached.
  read_since_flush_ = true;
  ForwardInvalidation("_\r\n");
  if (receiver) tracking_.MarkBroken();
}

void Session::OnPinnedPush(PinnedLink* link, std::string_view push) {
  if (closed_ || replies_.closing()) return;
  const bool receiver = pinned_.IsReceiver(link);
  // A receiver's late invalidations after OFF: the former target is no longer this client's.
  if (receiver && !tracking_.on()) return;
  if (std::optional<std::string_view> keys = InvalidationKeys(push)) {
    return ForwardInvalidation(*keys);
  }
  if (push.starts_with(">2\r\n$21\r\ntracking-redir-broken\r\n")) {
    // The shard's redirect to a receiver of the proxy's failed: the id it names is the
    // receiver's, never the client's. The client hears of its own redirect instead.
    tracking_.MarkBroken();
    if (protocol_ >= 3) PlacePush(RedirectBrokenFrame(tracking_.redirect()));
    return;
  }
  // Anything else a shard pushes on the client's own connection is the client's to see.
  if (receiver || protocol_ < 3) return;
  PlacePush(push);
}

void Session::PlacePush(std::string_view frame) {
  if (ClosedForSlowReading(frame.size())) return;
  replies_.PlacePush(frame, out_);
  link_.OutputReady();
}

void Session::ForwardInvalidation(std::string_view keys) {
  if (InvalidatesEverything(keys)) {
    // One FLUSHALL makes every primary send "everything": after the first, the client has
    // nothing cached to drop until it reads again (a read still unanswered counts: its value
    // may predate the flush of its shard).
    if (!read_since_flush_ && tracked_inflight_ == 0) return;
    read_since_flush_ = false;
  }
  const uint64_t target = tracking_.redirect();
  if (target == 0) {
    // A RESP2 client without REDIRECT hears nothing, as from Redis.
    if (protocol_ < 3) return;
    return PlacePush(InvalidationFrame(keys, 3));
  }
  if (router_.PostInvalidation(target, std::string(keys))) return;
  tracking_.MarkBroken();
  if (protocol_ < 3) return;
  PlacePush(RedirectBrokenFrame(target));
}

void Session::DeliverInvalidation(std::string_view keys) {
  if (closed_ || replies_.closing()) return;
  // A RESP2 target hears them only while in Pub/Sub mode (on __redis__:invalidate), as in Redis.
  const bool subscribed = subscriptions_ && !subscriptions_->empty();
  if (protocol_ < 3 && !subscribed) return;
  const std::string frame = InvalidationFrame(keys, protocol_);
  if (ClosedForSlowReading(frame.size())) return;
  out_ += frame;
  link_.OutputReady();
}

}  // namespace shardctl::proxy
