// Session: one client's commands, from request frames to reply bytes. No sockets: its
// ClientConnection reads the socket and writes output(); the worker routes its requests
// (RequestRouter) and hands the replies back (ReplySink), so all of it is unit-tested with fakes.
//
//   frames ──HandleCommand()──▶ command table ──▶ local reply (PING, HELLO, CLIENT, INFO ...)
//                                  │ one slot: one SubRequest ──▶ RequestRouter::Route()
//                                  │ split by slot, fanned out: one SubRequest per part
//                                  │ MULTI ... EXEC: queued (Transaction), sent as one batch
//                                  │ (P|S)SUBSCRIBE: ClientSubscriptions ◀─▶ SubscriptionHub
//                                  ▼
//          ReplyQueue (one PendingReply per command, in the client's order)
//                                  ▲ OnReply(): a reply, or a part of one (ReplyAssembly)
//   output() ◀── the ready replies at the front, in order
//
// Its parts: SlotSequencer (a slot's commands stay in order across map changes), Transaction
// (MULTI), PinnedLinks (WATCH, WAIT, blocking commands), ClientSubscriptions (pub/sub).
//
// Lifetime: owned by its ClientConnection. After Close() it lives on while requests still point
// at it (inflight()), and calls ClientLink::SessionIdle() when the last one is done.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/commands/command_table.h"
#include "proxy/merge/split.h"
#include "proxy/routing/routing.h"
#include "proxy/services/metrics.h"
#include "proxy/services/services.h"
#include "proxy/session/client_subscriptions.h"
#include "proxy/session/pinned_links.h"
#include "proxy/session/reply_queue.h"
#include "proxy/session/slot_sequencer.h"
#include "proxy/session/subscription_hub.h"
#include "proxy/session/tracking.h"
#include "proxy/session/transaction.h"

namespace shardctl::proxy {

// What a session writes to: its client connection.
class ClientLink {
 public:
  virtual ~ClientLink() = default;
  // Output was appended (Session::output()): write it at the end of this loop turn.
  virtual void OutputReady() = 0;
  // Output handed to the socket and not yet written (counts against --pubsub-buffer-limit).
  virtual size_t BytesInFlight() const = 0;
  // Close the connection now (a subscriber over its buffer limit); replies owed are dropped.
  virtual void CloseNow() = 0;
  // The session is closed and its last request is done: it may be deleted now.
  virtual void SessionIdle() = 0;
};

class Session final : public ReplySink, public Subscriber {
 public:
  // `id` answers CLIENT ID; `thread` is the worker's index, shown by CLIENT INFO.
  Session(RequestRouter& router, ProxyServices& services, ClientLink& link, uint64_t id,
          int thread);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // "ip:port" of the client, for CLIENT INFO.
  void set_peer(std::string peer) { peer_ = std::move(peer); }
  // "ip:port" the client connected to, for CLIENT LIST's laddr.
  void set_local(std::string local) { local_ = std::move(local); }

  // One complete request: `frame` as the client sent it, `args` its arguments (non-empty).
  void HandleCommand(std::string_view frame, std::span<const std::string_view> args);
  // A malformed request: "-ERR Protocol error: <what>" after the replies owed, then close.
  void ProtocolError(std::string_view what);
  // Refuses the client (too many clients): `error`, then close.
  void Refuse(std::string_view error);
  // The client sends nothing more (EOF). True: the replies it is owed are still written, then
  // close_after_output() says to close. False: close at once, as a request is in flight on the
  // client's own connection to a shard, where a blocking command (BLPOP, WAIT) may never
  // answer: Redis frees a blocked client whose peer has closed.
  bool EndOfRequests();
  // The connection is closing: nothing more is answered, held requests are dropped, pinned
  // connections and subscriptions are given back. Replies still in flight are dropped on arrival.
  void Close();

  // Bytes to send to the client, in order; the connection takes them.
  std::string& output() { return out_; }
  // No more requests are read: QUIT or a protocol error is being answered.
  bool done_reading() const { return last_reply_queued_ || closed_; }
  // Past --max-pending commands or --max-client-buffer reply bytes: stop reading for now.
  bool OverLimits() const;
  // The last reply (QUIT's, a protocol error's) is in output(): close once it is written.
  bool close_after_output() const { return replies_.closing(); }
  bool closed() const { return closed_; }
  uint64_t id() const { return id_; }
  // This thread's /metrics counters; null without --metrics-port.
  ThreadMetrics* metrics() const { return metrics_; }
  // SubRequests that point at this session.
  size_t inflight() const { return inflight_; }

  // ReplySink: the worker hands replies back and asks about order and pinned connections.
  void OnReply(SubRequest* request, std::string_view frame) override;
  bool Gone() const override { return closed_; }
  bool Admit(SubRequest* request, const void* connection) override;
  void HoldSlot(int slot) override { sequencer_.Hold(slot); }
  PinnedLink* PinnedLinkFor(const SubRequest& request, const std::string& host, int port) override;
  void ForgetPinned(PinnedLink* link) override;
  void BreakWatch() override { pinned_.BreakWatch(); }
  void OnPinnedPush(PinnedLink* link, std::string_view push) override;

  // Another client's invalidation, for this client as its CLIENT TRACKING REDIRECT target
  // (`keys` from InvalidationKeys()); its worker delivers it on this thread.
  void DeliverInvalidation(std::string_view keys);

  // Subscriber: messages on the channels this client subscribed to.
  int protocol() const override { return protocol_; }
  void PushMessage(std::string_view frame) override;
  void SubscriptionsReady() override;

 private:
  // HandleCommand() for the command after CLIENT CACHING, which it then disarms.
  void HandleCachedCommand(std::string_view frame, std::span<const std::string_view> args,
                           const CommandInfo& info);
  // The command table's routing (session.cc), once HandleCommand counted the command.
  void Dispatch(std::string_view frame, std::span<const std::string_view> args,
                const CommandInfo& info);
  // Routing (session.cc). `pinned`: over this client's own connection (also a watched slot's
  // commands, and every keyed command once the client has used WAIT). `may_block`: exempt from
  // --timeout (it waits by design).
  SubRequest* NewSubRequest(PendingReply& pending, int slot, bool pinned = false);
  void Forward(std::string_view frame, int slot, bool pinned = false, bool may_block = false,
               bool read_only = false);
  void ForwardSplit(SplitRequest split, const CommandInfo& info);
  // Counts a split command's parts and keys (key_load.h).
  void CountSplit(const SplitRequest& split, const CommandInfo& info,
                  std::span<const std::string_view> args);
  void ForwardFanOut(std::string_view frame, std::span<const std::string_view> args);
  void ForwardScan(std::span<const std::string_view> args);
  // Sends one request to every primary, part i to primary i; null when the map has none.
  // `pinned`: over this client's own connections (SCRIPT KILL must not queue behind the busy
  // script on a shared connection).
  bool ForwardToEveryPrimary(PendingReply& pending, std::string_view request, bool pinned = false);
  // Whether a command for `slot` may go to a replica (--read-from); notes this client's writes
  // for prefer-replica's read-your-writes rule.
  bool ReadsFromReplica(const CommandInfo& info, int slot);
  void Deliver(const SubRequest& request, std::string_view frame);

  // Transactions (session_transaction.cc). HandleTransaction() returns false when the command
  // is not part of one and takes the normal path.
  bool HandleTransaction(std::string_view frame, std::span<const std::string_view> args,
                         const CommandInfo& info);
  void ExecTransaction();
  // Valkey 8 and later: a nested MULTI or a WATCH inside MULTI aborts the transaction at EXEC.
  bool NestingAbortsTransaction() const;
  // Queue probes (session_transaction.cc): SendQueueProbe() asks the slot's primary whether it
  // would queue `frame`; DeliverProbe() answers the client +QUEUED or the shard's refusal, and
  // runs an EXEC or DISCARD that waited for the probes.
  void SendQueueProbe(std::string_view frame, int slot);
  void DeliverProbe(const SubRequest& request);
  void FinishTransaction(bool exec);
  void ExecServerWide(const Transaction& transaction);
  // WATCH, UNWATCH outside MULTI, WAIT (session_pinned.cc).
  void HandleWatch(std::string_view frame, std::span<const std::string_view> args,
                   const CommandInfo& info);
  void HandleUnwatch(std::string_view frame);
  void ForwardWait(std::string_view frame, std::span<const std::string_view> args);
  void RunWaitBarrier();
  // Pub/sub (session_pubsub.cc). SubscribedModeRefuses() answers a RESP2 subscriber's command
  // that Redis would refuse in that state and returns true.
  void HandlePubSub(std::span<const std::string_view> args, const CommandInfo& info);
  bool SubscribedModeRefuses(std::span<const std::string_view> args, const CommandInfo& info);
  void ForwardPublish(std::string_view frame, std::span<const std::string_view> args);
  // Scripts (session_scripts.cc). ForwardScript(): a keyless EVAL/FCALL over this client's own
  // connection, counted as running. PingMeetsScript(): while another client's script runs, PING
  // is asked of every primary (a busy one answers -BUSY, as one Redis would); returns false
  // when PING is answered here as usual.
  void ForwardScript(std::string_view frame);
  bool PingMeetsScript(std::span<const std::string_view> args);
  // CLIENT TRACKING and CLIENT CACHING (session_tracking.cc, tracking.h).
  struct TrackingTarget {
    std::string host;
    int port = 0;
    int protocol = 2;
  };
  void HandleClientTracking(std::span<const std::string_view> args);
  void TrackingOff(std::string_view frame);
  // Every connection the client's tracking state must be on: each primary over the client's
  // protocol, and the connections of the other protocol already tracking.
  std::vector<TrackingTarget> TrackingTargets() const;
  // Sends the held CLIENT TRACKING ON to every target, once the receivers it needs are known.
  void SendTracking();
  void DeliverReceiverId(const SubRequest& request, std::string_view frame);
  // A keyed request of a tracking client: over its own connection, after CLIENT CACHING if armed.
  void NoteTrackedRequest(SubRequest& request);
  // A connection about to carry a tracking client's command is put in its tracking state.
  void BringIntoTracking(PinnedLink* link);
  // An invalidation for this client's cache: to the client, or to its REDIRECT target.
  void ForwardInvalidation(std::string_view keys);
  // Past --pubsub-buffer-limit with `more` bytes to write: the client, which does not read what
  // it is sent, is closed (counted as a slow subscriber) and true is returned.
  bool ClosedForSlowReading(size_t more);
  // A push for this client, placed among its replies (ReplyQueue::PlacePush()); past
  // --pubsub-buffer-limit the client is closed instead, as a slow subscriber is.
  void PlacePush(std::string_view frame);
  // The REDIRECT a connection to host:port speaking `protocol` is tracked with: 0 for none (no
  // REDIRECT, or a RESP3 connection, whose pushes the proxy passes on), the receiver's id on
  // that shard for RESP2, -1 when it has none.
  int64_t ShardRedirect(const std::string& host, int port, int protocol) const;
  // Local commands (session_local.cc).
  void HandleLocal(std::span<const std::string_view> args);
  void HandleHello(std::span<const std::string_view> args);
  // CLIENT and its subcommands (session_client.cc).
  void HandleClient(std::span<const std::string_view> args);
  void HandleClientList(std::span<const std::string_view> args);
  void HandleClientKill(std::span<const std::string_view> args);
  void HandleClientPause(std::span<const std::string_view> args);
  void HandleClientReply(std::span<const std::string_view> args);
  std::string ClientInfoLine(std::span<const std::string_view> args) const;
  // Redis' rule for client names (SETNAME, HELLO SETNAME): printable ASCII without spaces.
  static bool ValidClientName(std::string_view name);
  void HandleCommandCommand(std::span<const std::string_view> args);
  void HandleInfo(std::span<const std::string_view> args);
  void HandleProxy(std::span<const std::string_view> args);
  void HandleReset();
  bool CheckAuth(std::string_view user, std::string_view password);

  // Replies made by the proxy, queued in order behind pending ones.
  void Reply(std::string_view bytes, bool close_after = false);
  void ReplyError(std::string_view message, bool close_after = false);
  void Fill(PendingReply& pending, std::string_view bytes);
  // Takes back a request that was never sent.
  void Discard(SubRequest* request);

  RequestRouter& router_;
  ProxyServices& services_;
  ClientLink& link_;
  const uint64_t id_;
  // Fan-outs sent so far: where a "first non-null reply" merge (RANDOMKEY) starts looking, so
  // that one client asking again and again sees every shard's keys.
  uint64_t fan_outs_ = 0;
  const int thread_;
  const ProxyOptions& options_;   // fixed for the proxy's life: read on every command
  ThreadMetrics* const metrics_;  // null without --metrics-port
  KeyLoad* const key_load_;       // the worker's key and slot counters; null with --hot-keys 0
  // The command being handled, until a request for it takes it into its PendingReply.
  CommandStamp stamp_;
  std::string peer_;
  std::string local_;
  std::string out_;
  ReplyQueue replies_;
  SlotSequencer sequencer_;
  PinnedLinks pinned_;
  std::optional<Transaction> transaction_;  // set between MULTI and EXEC/DISCARD
  uint64_t transactions_ = 0;               // MULTIs so far: probes name theirs
  // EXEC or DISCARD read while queue probes were in flight: nothing more is read until they
  // are answered and it has run.
  enum class Finish : uint8_t { kNone, kExec, kDiscard } waiting_finish_ = Finish::kNone;
  // A CLIENT TRACKING ON waits for its receivers' ids (tracking_setup_): nothing more is read.
  bool holding_for_receivers_ = false;
  // CLIENT TRACKING: the client's state, and an ON held until its receivers' ids are known
  // (nothing more is read meanwhile).
  ClientTracking tracking_;
  struct TrackingSetup {
    PendingReply* pending = nullptr;
    std::vector<std::string> args;  // CLIENT TRACKING ON ... as the client sent it
    ClientTracking before;          // restored when the shards refuse it
    size_t receivers_waiting = 0;
    std::string error;  // a receiver's failure
  };
  std::optional<TrackingSetup> tracking_setup_;
  // A keyed request went out since the last "invalidate everything" this client was given:
  // the next one (each primary sends its own for one FLUSHALL) is worth passing on.
  bool read_since_flush_ = true;
  size_t tracked_inflight_ = 0;  // tracked requests sent and not yet answered
  std::unique_ptr<ClientSubscriptions> subscriptions_;  // null until the first (P|S)SUBSCRIBE
  // (P)SUBSCRIBE confirmations held until the hub's connections have subscribed, in order.
  std::vector<std::pair<PendingReply*, std::string>> held_subscribes_;
  size_t inflight_ = 0;
  int protocol_ = 2;
  std::string name_;
  bool authenticated_;  // false until AUTH when the proxy has users (--auth-file)
  bool closed_ = false;
  bool last_reply_queued_ = false;  // QUIT or a protocol error: read nothing more
  // --read-from prefer-replica: when this client last wrote each slot (loop ms); its reads of a
  // slot written in the last second go to the primary.
  std::unordered_map<int, uint64_t> recent_writes_;
  // Keyed commands went over shared connections since the last WAIT (WAIT must catch up).
  bool shared_keyed_ = false;
  // A WAIT held until the replies before it are in (see ForwardWait()).
  PendingReply* barrier_pending_ = nullptr;
  std::vector<SubRequest*> barrier_requests_;
};

}  // namespace shardctl::proxy
