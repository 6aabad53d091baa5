// The commands shardproxy answers itself: connection state (HELLO, AUTH, SELECT, CLIENT, RESET,
// QUIT), PING/ECHO, COMMAND from the routing table, INFO about the proxy.
#include "common/numbers.h"
#include "common/resp.h"
#include "proxy/merge/frames.h"
#include "proxy/merge/info_merge.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/services/key_load.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {
namespace {

using common::AppendArrayHeader;
using common::AppendBulk;
using common::AppendInteger;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 32);
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 32);
    if (x != y) return false;
  }
  return true;
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return lower;
}

// A map header in RESP3, the flat array of twice as many elements in RESP2.
void AppendMapHeader(std::string& out, size_t pairs, int protocol) {
  if (protocol >= 3) {
    out += '%' + std::to_string(pairs) + "\r\n";
  } else {
    AppendArrayHeader(out, pairs * 2);
  }
}

}  // namespace

void Session::HandleLocal(std::span<const std::string_view> args) {
  const std::string_view name = args[0];
  const size_t argc = args.size();
  std::string out;
  if (EqualsNoCase(name, "PING")) {
    if (argc > 2) return ReplyError(WrongArgCountError(name));
    if (PingMeetsScript(args)) return;
    if (argc == 2) {
      AppendBulk(out, args[1]);
      return Reply(out);
    }
    return Reply("+PONG\r\n");
  }
  if (EqualsNoCase(name, "ECHO")) {
    if (argc != 2) return ReplyError(WrongArgCountError(name));
    AppendBulk(out, args[1]);
    return Reply(out);
  }
  if (EqualsNoCase(name, "QUIT")) return Reply("+OK\r\n", /*close_after=*/true);
  if (EqualsNoCase(name, "RESET")) return HandleReset();
  if (EqualsNoCase(name, "SELECT")) {
    if (argc != 2) return ReplyError(WrongArgCountError(name));
    if (args[1] == "0") return Reply("+OK\r\n");
    return ReplyError("ERR SELECT is not allowed in cluster mode");
  }
  if (EqualsNoCase(name, "AUTH")) {
    if (argc < 2 || argc > 3) return ReplyError(WrongArgCountError(name));
    if (argc == 2 && services_.auth().required()) {
      if (!CheckAuth("default", args[1])) return;
      return Reply("+OK\r\n");
    }
    if (argc == 2) {
      return ReplyError(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
    }
    if (!CheckAuth(args[1], args[2])) return;
    return Reply("+OK\r\n");
  }
  if (EqualsNoCase(name, "HELLO")) return HandleHello(args);
  if (EqualsNoCase(name, "CLIENT")) return HandleClient(args);
  if (EqualsNoCase(name, "COMMAND")) return HandleCommandCommand(args);
  if (EqualsNoCase(name, "INFO")) return HandleInfo(args);
  if (EqualsNoCase(name, "PROXY")) return HandleProxy(args);
  ReplyError(LookupCommand(name).UnsupportedError(name));
}

// PROXY HOTKEYS [COUNT n], PROXY SLOTS, PROXY HELP: the key and slot counts the workers
// published (key_load.h), merged.
void Session::HandleProxy(std::span<const std::string_view> args) {
  if (args.size() < 2) return ReplyError(WrongArgCountError(args[0]));
  const std::string_view sub = args[1];
  if (EqualsNoCase(sub, "HELP") && args.size() == 2) {
    constexpr std::string_view kHelp[] = {
        "PROXY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "HOTKEYS [COUNT <count>]",
        "    The hottest keys routed since the proxy started, hottest first: each",
        "    [key, requests, reads, error] (error: of requests, how many may be another key's).",
        "SLOTS",
        "    Requests routed per slot since the proxy started: slot, requests, ... ascending.",
        "HELP",
        "    Print this help."};
    std::string out;
    AppendArrayHeader(out, std::size(kHelp));
    for (std::string_view line : kHelp) out += "+" + std::string(line) + "\r\n";
    return Reply(out);
  }
  const bool hotkeys = EqualsNoCase(sub, "HOTKEYS");
  const bool slots = EqualsNoCase(sub, "SLOTS") && args.size() == 2;
  if (!hotkeys && !slots) {
    return ReplyError("ERR unknown subcommand '" + std::string(sub) + "'. Try PROXY HELP.");
  }
  const KeyLoadBoard* board = services_.key_load_board();
  if (board == nullptr) {
    return ReplyError("ERR key and slot counting is off (shardproxy --hot-keys 0)");
  }
  if (slots) return Reply(SlotsReply(board->Merged(0).slots));
  size_t count = board->capacity();
  if (args.size() == 4 && EqualsNoCase(args[2], "COUNT")) {
    const auto given = common::ParseIntegerIn<int64_t>(args[3], 1, 1000000);
    if (!given) return ReplyError("ERR COUNT must be a positive integer");
    count = static_cast<size_t>(*given);
  } else if (args.size() != 2) {
    return ReplyError("ERR syntax error. Try PROXY HELP.");
  }
  Reply(HotKeysReply(board->Merged(count).keys));
}

// With users in --auth-file, the password must match. Without, like a Redis whose default user
// is "nopass": the default user is accepted with any password, other users are refused.
void Session::HandleReset() {
  // RESET has one reply: the shards' tracking is turned off without one.
  if (tracking_.on()) {
    const std::string_view off[] = {"CLIENT", "TRACKING", "OFF"};
    std::string command;
    common::AppendCommand(command, off);
    for (PinnedLink* link : pinned_.links()) {
      if (link->tracking && !link->closing()) link->SendUnanswered(command);
    }
    tracking_.Disable();
    pinned_.set_tracking(false);
  }
  pinned_.EndWatch();
  SubscriptionsReady();  // confirmations still held are answered before RESET's own reply
  subscriptions_.reset();
  protocol_ = 2;
  name_.clear();
  authenticated_ = !services_.auth().required();
  Reply("+RESET\r\n");
}

bool Session::CheckAuth(std::string_view user, std::string_view password) {
  const AuthConfig& auth = services_.auth();
  if (auth.required() ? auth.Check(user, password) : user == "default") {
    authenticated_ = true;
    return true;
  }
  ReplyError("WRONGPASS invalid username-password pair or user is disabled.");
  return false;
}

void Session::HandleHello(std::span<const std::string_view> args) {
  int protocol = protocol_;
  if (args.size() >= 2) {
    const std::string_view version = args[1];
    if (version != "2" && version != "3") {
      return ReplyError("NOPROTO unsupported protocol version");
    }
    protocol = version[0] - '0';
  }
  std::string name = name_;
  bool authenticates = false;
  for (size_t i = 2; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (EqualsNoCase(args[i], "AUTH") && i + 2 < args.size()) {
      if (!CheckAuth(args[i + 1], args[i + 2])) return;
      authenticates = true;
      i += 2;
    } else if (EqualsNoCase(args[i], "SETNAME") && more) {
      if (!ValidClientName(args[i + 1])) {
        return ReplyError(
            "ERR Client names cannot contain spaces, newlines or special characters.");
      }
      name = std::string(args[++i]);
    } else {
      return ReplyError("ERR Syntax error in HELLO option '" + std::string(args[i]) + "'");
    }
  }
  if (!authenticated_ && !authenticates) {
    return ReplyError(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
  }
  protocol_ = protocol;
  name_ = name;
  std::string out;
  AppendMapHeader(out, 8, protocol_);
  const EngineIdentity engine = services_.ServerEngine();
  AppendBulk(out, "server");
  AppendBulk(out, engine.name);
  AppendBulk(out, "version");
  AppendBulk(out, engine.version.empty() ? "7.0.0" : engine.version);
  AppendBulk(out, "proto");
  AppendInteger(out, protocol_);
  AppendBulk(out, "id");
  AppendInteger(out, static_cast<int64_t>(id_));
  AppendBulk(out, "mode");
  AppendBulk(out, "standalone");
  AppendBulk(out, "role");
  AppendBulk(out, "master");
  AppendBulk(out, "modules");
  AppendArrayHeader(out, 0);
  AppendBulk(out, "proxy");
  AppendBulk(out, "shardproxy " SHARDCTL_VERSION);
  Reply(out);
}

// COMMAND GETKEYS from the proxy's table (the keys the proxy routes by); the rest of COMMAND
// (the command list, COUNT, INFO, DOCS, LIST, GETKEYSANDFLAGS) describes the engine behind the
// proxy, so any shard answers it, in Redis' own shapes and words.
void Session::HandleCommandCommand(std::span<const std::string_view> args) {
  if (args.size() >= 3 && EqualsNoCase(args[1], "GETKEYS")) {
    auto positions = KeyArgumentPositions(args.subspan(2));
    if (!positions) return ReplyError(positions.error().message());
    std::string out;
    AppendArrayHeader(out, positions->size());
    for (size_t at : *positions) AppendBulk(out, args[2 + at]);
    return Reply(out);
  }
  std::string request;
  common::AppendCommand(request, args);
  Forward(request, -1);
}

// INFO [section ...]: every primary's INFO for the same sections, merged as one Redis would
// answer (info_merge.h), with the proxy's own sections over it. The proxy's own sections alone
// (INFO proxy, INFO hotkeys) and a cluster without primaries are answered here.
void Session::HandleInfo(std::span<const std::string_view> args) {
  std::string own;
  bool proxy_only = args.size() > 1;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string section = Lower(args[i]);
    proxy_only = proxy_only && (section == "proxy" || section == "hotkeys");
    own += services_.InfoText(section) + "\r\n";
  }
  if (args.size() == 1) own = services_.InfoText("");
  const auto& primaries = router_.CurrentMap().primaries();
  if (proxy_only || primaries.empty()) {
    return Reply(InfoFrame(RenderInfo(ParseInfo(own)), protocol_));
  }
  std::vector<std::string> shard_names;
  for (const common::NodeAddress& primary : primaries) shard_names.push_back(primary.ToString());
  PendingReply& pending = replies_.Push();
  pending.assembly = InfoAssembly(std::move(own), std::move(shard_names), protocol_);
  std::string request;
  common::AppendCommand(request, args);
  // Over this client's own connections: a shared one may be held up behind a paused write
  // (CLIENT PAUSE), which is exactly when clients poll INFO's blocked_clients.
  ForwardToEveryPrimary(pending, request, /*pinned=*/true);
}

}  // namespace shardctl::proxy
