#include "proxy/merge/pubsub_frames.h"

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

}  // namespace shardctl::proxy
