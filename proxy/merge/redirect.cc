#include "proxy/merge/redirect.h"

#include "common/cluster_text.h"

namespace shardctl::proxy {

Redirect ClassifyReply(std::string_view frame) {
  if (frame.size() < 3 || frame[0] != '-') return {};
  const std::string_view line = frame.substr(1, frame.find('\r') - 1);
  if (line.starts_with("TRYAGAIN") || line.starts_with("CLUSTERDOWN")) {
    return {.action = ReplyAction::kRetry};
  }
  // No default host: a target without one is passed on to the client rather than guessed.
  std::optional<common::Redirect> redirect = common::ParseRedirect(line);
  if (!redirect || redirect->target.host.empty()) return {};
  return {.action = redirect->ask ? ReplyAction::kAsk : ReplyAction::kMoved,
          .slot = redirect->slot,
          .host = std::move(redirect->target.host),
          .port = redirect->target.port};
}

}  // namespace shardctl::proxy
