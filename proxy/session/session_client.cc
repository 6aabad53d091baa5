// CLIENT: the connection's own state is the proxy's (the client's connection ends at the proxy),
// so ID, NAME, INFO, LIST, KILL, REPLY and NO-EVICT are answered here about this client; PAUSE
// and UNPAUSE concern every client of the server, so they go to every primary. TRACKING and
// CACHING: session_tracking.cc.
#include "common/numbers.h"
#include "common/resp.h"
#include "common/text.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {
namespace {

using common::AppendBulk;
using common::AppendInteger;
constexpr auto Is = common::MatchesUpperCase;

bool KnownClientType(std::string_view type) {
  for (std::string_view known : {"NORMAL", "SLAVE", "REPLICA", "PUBSUB", "MASTER"}) {
    if (Is(type, known)) return true;
  }
  return false;
}

// What CLIENT KILL's filters (ID, ADDR, LADDR, TYPE, USER, SKIPME) select; this client is the
// only one the proxy can close from here.
struct KillFilter {
  std::optional<uint64_t> id;
  std::optional<std::string> addr, laddr, type, user;
  bool skip_me = true;
};

// Parses CLIENT KILL <filter> <value> ... with Redis' errors for each bad filter.
common::Result<KillFilter> ParseKillFilter(std::span<const std::string_view> args,
                                           const AuthConfig& auth) {
  KillFilter filter;
  for (size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return common::Error("ERR syntax error");
    const std::string_view option = args[i], value = args[i + 1];
    if (Is(option, "ID")) {
      const auto id = common::ParseIntegerIn<int64_t>(value, 1, INT64_MAX);
      if (!id) return common::Error("ERR client-id should be greater than 0");
      filter.id = static_cast<uint64_t>(*id);
    } else if (Is(option, "TYPE")) {
      if (!KnownClientType(value)) {
        return common::Error("ERR Unknown client type '" + std::string(value) + "'");
      }
      filter.type = LowerCase(value);
    } else if (Is(option, "USER")) {
      const bool exists = auth.required() ? auth.users.contains(value) : value == "default";
      if (!exists) return common::Error("ERR No such user '" + std::string(value) + "'");
      filter.user = std::string(value);
    } else if (Is(option, "SKIPME")) {
      if (!Is(value, "YES") && !Is(value, "NO")) return common::Error("ERR syntax error");
      filter.skip_me = Is(value, "YES");
    } else if (Is(option, "ADDR")) {
      filter.addr = std::string(value);
    } else if (Is(option, "LADDR")) {
      filter.laddr = std::string(value);
    } else {
      return common::Error("ERR syntax error");
    }
  }
  return filter;
}

}  // namespace

bool Session::ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

// One line of CLIENT LIST / CLIENT INFO in Redis 7's field order. What the proxy does not keep
// per client (its socket's fd, age, buffers) reads 0; qbuf is the request being answered.
std::string Session::ClientInfoLine(std::span<const std::string_view> args) const {
  std::string request;
  common::AppendCommand(request, args);
  size_t argv_mem = 0;
  for (std::string_view arg : args) argv_mem += arg.size();
  const size_t channels = subscriptions_ ? subscriptions_->names(SubscriptionKind::kChannel) : 0;
  const size_t patterns = subscriptions_ ? subscriptions_->names(SubscriptionKind::kPattern) : 0;
  const size_t shard_channels =
      subscriptions_ ? subscriptions_->names(SubscriptionKind::kShardChannel) : 0;
  const bool subscribed = channels + patterns + shard_channels > 0;
  std::string flags = subscribed ? "P" : "";
  if (transaction_) flags += "x";
  if (tracking_.on()) flags += "t";
  if (tracking_.broken()) flags += "R";
  if (flags.empty()) flags = "N";
  const std::string cmd = "client|" + LowerCase(args.size() > 1 ? args[1] : "");
  return "id=" + std::to_string(id_) + " addr=" + peer_ + " laddr=" + local_ +
         " fd=0 name=" + name_ + " age=0 idle=0 flags=" + flags +
         " db=0 sub=" + std::to_string(channels) + " psub=" + std::to_string(patterns) +
         " ssub=" + std::to_string(shard_channels) +
         " multi=" + (transaction_ ? std::to_string(transaction_->count()) : "-1") +
         " qbuf=" + std::to_string(request.size()) +
         " qbuf-free=0 argv-mem=" + std::to_string(argv_mem) +
         " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=" +
         std::to_string(request.size() + argv_mem) + " events=r cmd=" + cmd +
         " user=default redir=" + std::to_string(tracking_.GetRedir()) +
         " resp=" + std::to_string(protocol_) + " proxy-thread=" + std::to_string(thread_) + "\n";
}

// CLIENT LIST [TYPE type] [ID id ...]: this client, when the filters select it.
void Session::HandleClientList(std::span<const std::string_view> args) {
  bool selected = true;
  for (size_t i = 2; i < args.size();) {
    if (Is(args[i], "TYPE") && i + 1 < args.size()) {
      if (!KnownClientType(args[i + 1])) {
        return ReplyError("ERR Unknown client type '" + std::string(args[i + 1]) + "'");
      }
      const bool pubsub = subscriptions_ && !subscriptions_->empty();
      selected = selected && Is(args[i + 1], pubsub ? "PUBSUB" : "NORMAL");
      i += 2;
    } else if (Is(args[i], "ID") && i + 1 < args.size()) {
      bool listed = false;
      for (++i; i < args.size(); ++i) {
        const auto id = common::ParseIntegerIn<int64_t>(args[i], 1, INT64_MAX);
        if (!id) return ReplyError("ERR Invalid client ID");
        listed = listed || static_cast<uint64_t>(*id) == id_;
      }
      selected = selected && listed;
    } else {
      return ReplyError("ERR syntax error");
    }
  }
  std::string out;
  AppendBulk(out, selected ? ClientInfoLine(args) : "");
  Reply(out);
}

// CLIENT KILL addr (old form) or CLIENT KILL <filter> <value> ...: the number of clients closed,
// this one at most (after its reply, as Redis does).
void Session::HandleClientKill(std::span<const std::string_view> args) {
  if (args.size() < 3) return ReplyError(WrongArgCountError("client|kill"));
  if (args.size() == 3) {
    if (args[2] != peer_) return ReplyError("ERR No such client");
    return Reply("+OK\r\n", /*close_after=*/true);
  }
  auto filter = ParseKillFilter(args, services_.auth());
  if (!filter) return ReplyError(filter.error().message());
  const bool pubsub = subscriptions_ && !subscriptions_->empty();
  const bool me = !filter->skip_me && (!filter->id || *filter->id == id_) &&
                  (!filter->addr || *filter->addr == peer_) &&
                  (!filter->laddr || *filter->laddr == local_) &&
                  (!filter->type || *filter->type == (pubsub ? "pubsub" : "normal")) &&
                  (!filter->user || *filter->user == "default");
  std::string out;
  AppendInteger(out, me ? 1 : 0);
  Reply(out, /*close_after=*/me);
}

// CLIENT PAUSE timeout [WRITE|ALL], CLIENT UNPAUSE: every primary pauses its clients, the
// proxy's connections among them, as one Redis would pause all of its clients.
void Session::HandleClientPause(std::span<const std::string_view> args) {
  const bool unpause = Is(args[1], "UNPAUSE");
  if (unpause ? args.size() != 2 : args.size() < 3 || args.size() > 4) {
    return ReplyError(WrongArgCountError(unpause ? "client|unpause" : "client|pause"));
  }
  const size_t shards = router_.CurrentMap().primaries().size();
  if (shards == 0) return ReplyError("CLUSTERDOWN Hash slot not served");
  PendingReply& pending = replies_.Push();
  pending.assembly = FanOutAssembly(FanOutMerge::kAllOk, shards);
  std::string request;
  common::AppendCommand(request, args);
  // Over this client's own connections: UNPAUSE must not wait on a shared connection behind a
  // write the pause holds.
  ForwardToEveryPrimary(pending, request, /*pinned=*/true);
}

// CLIENT REPLY ON|OFF|SKIP: OFF and SKIP are not answered themselves (as in Redis); SKIP drops
// the next command's reply.
void Session::HandleClientReply(std::span<const std::string_view> args) {
  if (args.size() != 3) return ReplyError(WrongArgCountError("client|reply"));
  if (Is(args[2], "ON")) {
    replies_.set_mode(ReplyQueue::Mode::kOn);
    return Reply("+OK\r\n");
  }
  if (Is(args[2], "OFF")) return replies_.set_mode(ReplyQueue::Mode::kOff);
  if (Is(args[2], "SKIP")) {
    if (!replies_.silencing()) replies_.set_mode(ReplyQueue::Mode::kSkipNext);
    return;
  }
  ReplyError("ERR syntax error");
}

void Session::HandleClient(std::span<const std::string_view> args) {
  if (args.size() < 2) return ReplyError(WrongArgCountError("client"));
  const std::string_view sub = args[1];
  const size_t argc = args.size();
  std::string out;
  if (Is(sub, "ID") && argc == 2) {
    AppendInteger(out, static_cast<int64_t>(id_));
    return Reply(out);
  }
  if (Is(sub, "GETNAME") && argc == 2) {
    if (name_.empty()) {
      common::AppendNull(out, protocol_);
    } else {
      AppendBulk(out, name_);
    }
    return Reply(out);
  }
  if (Is(sub, "SETNAME") && argc == 3) {
    if (!ValidClientName(args[2])) {
      return ReplyError("ERR Client names cannot contain spaces, newlines or special characters.");
    }
    name_ = std::string(args[2]);
    return Reply("+OK\r\n");
  }
  if (Is(sub, "SETINFO") && argc == 4) {
    if (!Is(args[2], "LIB-NAME") && !Is(args[2], "LIB-VER")) {
      return ReplyError("ERR Unrecognized option '" + std::string(args[2]) + "'");
    }
    return Reply("+OK\r\n");
  }
  if (Is(sub, "INFO") && argc == 2) {
    AppendBulk(out, ClientInfoLine(args));
    return Reply(out);
  }
  if (Is(sub, "LIST")) return HandleClientList(args);
  if (Is(sub, "KILL")) return HandleClientKill(args);
  if (Is(sub, "PAUSE") || Is(sub, "UNPAUSE")) return HandleClientPause(args);
  if (Is(sub, "REPLY")) return HandleClientReply(args);
  if (Is(sub, "NO-EVICT") && argc == 3) {
    // The proxy's client connections hold no shard memory to evict: on and off are both true.
    if (!Is(args[2], "ON") && !Is(args[2], "OFF")) return ReplyError("ERR syntax error");
    return Reply("+OK\r\n");
  }
  if (Is(sub, "TRACKING")) return HandleClientTracking(args);
  if (Is(sub, "CACHING") && argc == 3) {
    if (auto armed = tracking_.ArmCaching(args[2]); !armed) {
      return ReplyError(armed.error().message());
    }
    return Reply("+OK\r\n");
  }
  if (Is(sub, "TRACKINGINFO") && argc == 2) return Reply(tracking_.InfoReply(protocol_));
  if (Is(sub, "GETREDIR") && argc == 2) {
    AppendInteger(out, tracking_.GetRedir());
    return Reply(out);
  }
  ReplyError("ERR command 'client|" + LowerCase(sub) +
             "' is not supported by shardproxy: the proxy multiplexes clients over shared "
             "shard connections (supported: ID, GETNAME, SETNAME, SETINFO, INFO, LIST, KILL, "
             "PAUSE, UNPAUSE, REPLY, NO-EVICT, TRACKING, CACHING, TRACKINGINFO, GETREDIR)");
}

}  // namespace shardctl::proxy
