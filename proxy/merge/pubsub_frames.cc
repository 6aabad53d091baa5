#include "proxy/merge/pubsub_frames.h"

#include <algorithm>

#include "common/resp.h"

namespace shardctl::proxy {

std::string SubscriptionReply(std::string_view kind, std::optional<std::string_view> name,
                              int64_t count, int protocol) {
  std::string out = protocol >= 3 ? ">3\r\n" : "*3\r\n";
  common::AppendBulk(out, kind);
  if (name) {
    common::AppendBulk(out, *name);
  } else {
    out += protocol >= 3 ? "_\r\n" : "$-1\r\n";
  }
  common::AppendInteger(out, count);
  return out;
}

std::string SubscribedPong(std::string_view argument) {
  std::string out = "*2\r\n";
  common::AppendBulk(out, "pong");
  common::AppendBulk(out, argument);
  return out;
}

std::string MessageForProtocol(std::string_view push, int protocol) {
  std::string out(push);
  if (protocol < 3 && !out.empty() && out[0] == '>') out[0] = '*';
  return out;
}

namespace {

// `[...]` at the start of `pattern` (after the '['): whether `c` is in the class, and where the
// class ends (past its ']', or the end of the pattern).
bool ClassMatches(std::string_view pattern, char c, size_t& end) {
  size_t i = 0;
  const bool negate = i < pattern.size() && pattern[i] == '^';
  if (negate) ++i;
  bool match = false;
  for (; i < pattern.size() && pattern[i] != ']'; ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      match = match || pattern[++i] == c;
    } else if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      const char low = std::min(pattern[i], pattern[i + 2]);
      const char high = std::max(pattern[i], pattern[i + 2]);
      match = match || (c >= low && c <= high);
      i += 2;
    } else {
      match = match || pattern[i] == c;
    }
  }
  end = i < pattern.size() ? i + 1 : i;
  return negate ? !match : match;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  while (!pattern.empty()) {
    const char p = pattern[0];
    if (p == '*') {
      while (!pattern.empty() && pattern[0] == '*') pattern.remove_prefix(1);
      if (pattern.empty()) return true;
      for (size_t skip = 0; skip <= text.size(); ++skip) {
        if (GlobMatch(pattern, text.substr(skip))) return true;
      }
      return false;
    }
    if (text.empty()) return false;
    size_t used = 1;
    if (p == '?') {
      // any one character
    } else if (p == '[') {
      size_t end = 0;
      if (!ClassMatches(pattern.substr(1), text[0], end)) return false;
      used = end + 1;
    } else if (p == '\\' && pattern.size() > 1) {
      if (pattern[1] != text[0]) return false;
      used = 2;
    } else if (p != text[0]) {
      return false;
    }
    pattern.remove_prefix(used);
    text.remove_prefix(1);
  }
  return text.empty();
}

bool IsKeyspaceChannel(std::string_view channel) {
  return channel.starts_with("__keyspace@") || channel.starts_with("__keyevent@");
}

bool MayMatchKeyspace(std::string_view name, bool pattern) {
  if (!pattern) return IsKeyspaceChannel(name);
  const std::string_view literal = name.substr(0, name.find_first_of("*?[\\"));
  for (std::string_view prefix : {"__keyspace@", "__keyevent@"}) {
    const size_t common = std::min(literal.size(), prefix.size());
    if (literal.substr(0, common) == prefix.substr(0, common)) return true;
  }
  return false;
}

std::string MessagePush(std::string_view pattern, std::string_view channel,
                        std::string_view payload) {
  std::string out = pattern.empty() ? ">3\r\n" : ">4\r\n";
  common::AppendBulk(out, pattern.empty() ? "message" : "pmessage");
  if (!pattern.empty()) common::AppendBulk(out, pattern);
  common::AppendBulk(out, channel);
  common::AppendBulk(out, payload);
  return out;
}

}  // namespace shardctl::proxy
