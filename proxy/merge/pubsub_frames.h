// The frames of pub/sub as Redis writes them to a client, for RESP2 (arrays) and RESP3 (pushes).
// Pure: the proxy answers (P|S)(UN)SUBSCRIBE itself, per client, and re-frames the messages its
// shared subscriber connections receive (always RESP3 pushes) for each client's protocol.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardctl::proxy {

// "subscribe ch 3": `kind` is subscribe, unsubscribe, psubscribe, punsubscribe, ssubscribe or
// sunsubscribe; `name` is null when an UNSUBSCRIBE without arguments found nothing to drop;
// `count` is the client's subscriptions left (channels + patterns, or shard channels for the
// s-variants), exactly as Redis counts them.
std::string SubscriptionReply(std::string_view kind, std::optional<std::string_view> name,
                              int64_t count, int protocol);

// PING's reply while a RESP2 client is subscribed: ["pong", argument or ""].
std::string SubscribedPong(std::string_view argument);

// A message push (">3 message ch payload", ">4 pmessage ...", ">3 smessage ...") as a client of
// `protocol` must get it: RESP3 as is, RESP2 as an array with the same elements.
std::string MessageForProtocol(std::string_view push, int protocol);

// Redis' glob match of PSUBSCRIBE patterns: `*`, `?`, `[abc]`, `[^a-z]` and `\` escapes.
bool GlobMatch(std::string_view pattern, std::string_view text);

// Keyspace notifications ("__keyspace@0__:key", "__keyevent@0__:set") are published by the node
// that owns the key, to its own subscribers only (not over the cluster bus).
bool IsKeyspaceChannel(std::string_view channel);
// A channel or pattern a keyspace notification could reach: a keyspace channel, or a pattern
// whose text before its first wildcard could begin one ("*", "__key*", "__keyevent@0__:*").
bool MayMatchKeyspace(std::string_view name, bool pattern);

// The RESP3 push a subscriber of `pattern` (or, when empty, of `channel` itself) gets for a
// message published on `channel`: ">4 pmessage pattern channel payload" or ">3 message ...".
std::string MessagePush(std::string_view pattern, std::string_view channel,
                        std::string_view payload);

}  // namespace shardctl::proxy
