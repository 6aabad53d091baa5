#include "proxy/session/tracking.h"

#include "common/numbers.h"
#include "common/resp.h"
#include "common/text.h"

namespace shardctl::proxy {
namespace {

constexpr auto Is = common::MatchesUpperCase;
constexpr std::string_view kInvalidatePush = ">2\r\n$10\r\ninvalidate\r\n";

}  // namespace

common::Result<TrackingRequest> ParseTracking(std::span<const std::string_view> args,
                                              const std::function<bool(uint64_t)>& client_exists) {
  TrackingRequest request;
  for (size_t i = 3; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (Is(args[i], "REDIRECT") && more) {
      if (request.redirect != 0) {
        return common::Error("ERR A client can only redirect to a single other client");
      }
      const auto id = common::ParseInteger<int64_t>(args[++i]);
      if (!id) return common::Error("ERR value is not an integer or out of range");
      if (*id <= 0 || !client_exists(static_cast<uint64_t>(*id))) {
        return common::Error("ERR The client ID you want redirect to does not exist");
      }
      request.redirect = static_cast<uint64_t>(*id);
    } else if (Is(args[i], "BCAST")) {
      request.bcast = true;
    } else if (Is(args[i], "OPTIN")) {
      request.optin = true;
    } else if (Is(args[i], "OPTOUT")) {
      request.optout = true;
    } else if (Is(args[i], "NOLOOP")) {
      request.noloop = true;
    } else if (Is(args[i], "PREFIX") && more) {
      request.prefixes.emplace_back(args[++i]);
    } else {
      return common::Error("ERR syntax error");
    }
  }
  if (Is(args[2], "ON")) {
    request.on = true;
  } else if (!Is(args[2], "OFF")) {
    return common::Error("ERR syntax error");
  }
  return request;
}

void ClientTracking::Enable(const TrackingRequest& request) {
  on_ = true;
  broken_ = false;
  redirect_ = request.redirect;
  bcast_ = request.bcast;
  optin_ = request.optin;
  optout_ = request.optout;
  noloop_ = request.noloop;
  if (bcast_) {
    // BCAST without a prefix tracks every key: the empty prefix.
    if (request.prefixes.empty()) prefixes_.insert("");
    prefixes_.insert(request.prefixes.begin(), request.prefixes.end());
  }
}

std::string ClientTracking::ShardCommand(int64_t shard_redirect) const {
  std::vector<std::string> words = {"CLIENT", "TRACKING", on_ ? "ON" : "OFF"};
  if (on_) {
    if (shard_redirect > 0) {
      words.insert(words.end(), {"REDIRECT", std::to_string(shard_redirect)});
    }
    if (bcast_) {
      words.emplace_back("BCAST");
      for (const std::string& prefix : prefixes_) {
        if (!prefix.empty()) words.insert(words.end(), {"PREFIX", prefix});
      }
    }
    if (optin_) words.emplace_back("OPTIN");
    if (optout_) words.emplace_back("OPTOUT");
    if (noloop_) words.emplace_back("NOLOOP");
  }
  const std::vector<std::string_view> args(words.begin(), words.end());
  std::string out;
  common::AppendCommand(out, args);
  return out;
}

common::Status ClientTracking::ArmCaching(std::string_view answer) {
  if (!on_) {
    return common::Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
        "or OPTOUT mode enabled");
  }
  if (Is(answer, "YES")) {
    if (!optin_) {
      return common::Error(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (Is(answer, "NO")) {
    if (!optout_) {
      return common::Error(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return common::Error("ERR syntax error");
  }
  caching_ = true;
  return common::Ok();
}

std::string ClientTracking::CachingCommand() const {
  const std::string_view args[] = {"CLIENT", "CACHING", optin_ ? "yes" : "no"};
  std::string out;
  common::AppendCommand(out, args);
  return out;
}

std::string ClientTracking::InfoReply(int protocol) const {
  std::vector<std::string_view> flags = {on_ ? "on" : "off"};
  if (bcast_) flags.emplace_back("bcast");
  if (optin_) flags.emplace_back("optin");
  if (optin_ && caching_) flags.emplace_back("caching-yes");
  if (optout_) flags.emplace_back("optout");
  if (optout_ && caching_) flags.emplace_back("caching-no");
  if (noloop_) flags.emplace_back("noloop");
  if (broken_) flags.emplace_back("broken_redirect");
  std::string out = protocol >= 3 ? "%3\r\n" : "*6\r\n";
  common::AppendBulk(out, "flags");
  out += (protocol >= 3 ? "~" : "*") + std::to_string(flags.size()) + "\r\n";
  for (std::string_view flag : flags) common::AppendBulk(out, flag);
  common::AppendBulk(out, "redirect");
  common::AppendInteger(out, GetRedir());
  common::AppendBulk(out, "prefixes");
  common::AppendArrayHeader(out, prefixes_.size());
  for (const std::string& prefix : prefixes_) common::AppendBulk(out, prefix);
  return out;
}

std::optional<std::string_view> InvalidationKeys(std::string_view push) {
  if (!push.starts_with(kInvalidatePush)) return std::nullopt;
  return push.substr(kInvalidatePush.size());
}

bool InvalidatesEverything(std::string_view keys) {
  return keys == "_\r\n" || keys == "*-1\r\n" || keys == "$-1\r\n";
}

std::string InvalidationFrame(std::string_view keys, int protocol) {
  const bool everything = InvalidatesEverything(keys);
  if (protocol >= 3) {
    return std::string(kInvalidatePush) + (everything ? "_\r\n" : std::string(keys));
  }
  // Redis' RESP2 form: a Pub/Sub message whose payload is the array of keys (or a null).
  std::string out = "*3\r\n";
  common::AppendBulk(out, "message");
  common::AppendBulk(out, "__redis__:invalidate");
  out += everything ? "$-1\r\n" : std::string(keys);
  return out;
}

std::string RedirectBrokenFrame(uint64_t redirect) {
  std::string out = ">2\r\n";
  common::AppendBulk(out, "tracking-redir-broken");
  common::AppendInteger(out, static_cast<int64_t>(redirect));
  return out;
}

}  // namespace shardctl::proxy
