// Client-side caching (CLIENT TRACKING) through the proxy: what one client asked for, kept by the
// proxy, and the frames it turns into. Pure: no sockets.
//
// A tracking client's reads go over its own connections to the shards (PinnedLinks), and each of
// those connections is put in the client's tracking state. Invalidations then come back one of
// two ways:
//
//   no REDIRECT (RESP3): the shard pushes ">2 invalidate [keys]" on the client's own connection,
//                        in its place among the replies; the proxy passes it on.
//   REDIRECT <client>:   the proxy passes them to the client named, on any worker
//                        (ClientDirectory), framed for its protocol. A RESP3 connection of the
//                        client's tracks without REDIRECT (its pushes are passed on); a RESP2 one
//                        cannot carry pushes, so its shard sends them to a "receiver", one more
//                        RESP3 connection of the client's there (REDIRECT <the receiver's id on
//                        that shard>).
//
// The client's own state (flags, prefixes, the redirect) is kept here because the shards only
// know their side of it: TRACKINGINFO and GETREDIR are answered from it, and a connection opened
// later (another shard, or the other protocol after HELLO) is brought into the same state with
// ShardCommand().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::proxy {

// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP].
struct TrackingRequest {
  bool on = false;
  uint64_t redirect = 0;  // the proxy client that gets the invalidations; 0: this one
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
};

// Parses `args` (CLIENT TRACKING ...) with Redis' errors, in Redis' order: a syntax error, a
// REDIRECT that is not an integer, two REDIRECTs, a REDIRECT to no client (`client_exists`
// says, as Redis looks it up while parsing: REDIRECT 0 and OFF REDIRECT <gone> are errors too).
// The checks against the client's state are the shards' (they answer in their words).
common::Result<TrackingRequest> ParseTracking(std::span<const std::string_view> args,
                                              const std::function<bool(uint64_t)>& client_exists);

class ClientTracking {
 public:
  bool on() const { return on_; }
  // The proxy client id invalidations go to; 0 when they come to this client itself.
  uint64_t redirect() const { return redirect_; }
  bool broken() const { return broken_; }

  // Redis' enableTracking(): the options replace the previous ones, prefixes add up.
  void Enable(const TrackingRequest& request);
  void Disable() { *this = ClientTracking(); }
  // The redirect target has gone: TRACKINGINFO says broken_redirect from now on.
  void MarkBroken() { broken_ = true; }

  // The command that puts a fresh shard connection in this state; `shard_redirect` is the id,
  // on that shard, of the connection its invalidations go to (0: none).
  std::string ShardCommand(int64_t shard_redirect) const;

  // CLIENT CACHING YES|NO: allowed in OPTIN (yes) or OPTOUT (no) mode; the next command's reads
  // are then tracked (yes) or not (no). The error is Redis'.
  common::Status ArmCaching(std::string_view answer);
  bool caching_armed() const { return caching_; }
  void DisarmCaching() { caching_ = false; }
  // "CLIENT CACHING yes|no": sent before the next command on the connection it goes over.
  std::string CachingCommand() const;

  // CLIENT TRACKINGINFO and CLIENT GETREDIR, as Redis answers them.
  std::string InfoReply(int protocol) const;
  int64_t GetRedir() const { return on_ ? static_cast<int64_t>(redirect_) : -1; }

 private:
  bool on_ = false;
  uint64_t redirect_ = 0;
  bool bcast_ = false, optin_ = false, optout_ = false, noloop_ = false;
  bool broken_ = false;
  bool caching_ = false;
  std::set<std::string> prefixes_;  // sorted, as Redis lists them
};

// The invalidation a shard pushed (">2 invalidate <keys>"): the <keys> part, an array of keys or
// a null (everything: FLUSHALL, FLUSHDB). nullopt for any other push.
std::optional<std::string_view> InvalidationKeys(std::string_view push);
// True when `keys` (InvalidationKeys()) is a null: the whole keyspace is invalidated.
bool InvalidatesEverything(std::string_view keys);
// The invalidation of `keys` as a client of `protocol` receives it: a RESP3 push, or for RESP2
// (a redirect target in Pub/Sub mode) a message on __redis__:invalidate.
std::string InvalidationFrame(std::string_view keys, int protocol);
// The push a RESP3 client gets when its redirect target has gone.
std::string RedirectBrokenFrame(uint64_t redirect);

}  // namespace shardctl::proxy
