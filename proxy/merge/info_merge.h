// INFO for the whole cluster, as one Redis would answer it: every primary's own INFO for the
// sections the client asked for, merged section by section, with the proxy's own figures laid
// over them. Pure: texts in, text out.
//
//   INFO commandstats ──▶ every primary ──▶ "# Commandstats\r\ncmdstat_get:calls=2,..." x N
//        ──MergeInfo()──▶ cmdstat_get:calls=<sum>,usec=<sum>,usec_per_call=<usec/calls>,...
//
// Sections that count (clients, stats, memory, cpu, commandstats, errorstats, keyspace) add up
// their integer fields, also inside "a=1,b=2" lists (db0:keys=..., cmdstat_*), but for the counts
// of scripts and functions, which every primary holds (the largest). Persistence holds
// for all shards: unsaved changes summed, a save in progress anywhere is in progress, the oldest
// last save, the worst status. Anything else (server, replication, ...) is the first answering
// shard's. Fields only some shards
// have (a command only one shard ran) are kept. The proxy's sections then overlay what they
// share (connected_clients, maxclients, tcp_port are the proxy's; blocked_clients is the
// shards', which counts a request paused there too) and add the rest
// (# Proxy, # Hotkeys). With a keyspace section, "# Shards" follows with each primary's counts.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

// One section of INFO text: its header name as written ("Commandstats") and its "name:value"
// lines in order.
struct InfoSection {
  std::string name;
  std::vector<std::pair<std::string, std::string>> fields;
};

// Splits INFO text ("# Name\r\nfield:value\r\n...\r\n\r\n# Next...") into sections; lines
// before the first header and lines without ':' are ignored.
std::vector<InfoSection> ParseInfo(std::string_view text);

// Renders sections as Redis does: a blank line between sections, CRLF line ends.
std::string RenderInfo(std::span<const InfoSection> sections);

// The merged INFO text from each shard's INFO text (`shards[i]` names shard_texts[i], for the
// "# Shards" section) and the proxy's own sections (`own_text`, may be empty). A shard's text
// that is its error reply ("-ERR ...") is named in "# Shards" and counts for nothing.
std::string MergeInfo(std::span<const std::string_view> shard_texts,
                      std::span<const std::string> shards, std::string_view own_text);

// The client's INFO reply from every primary's reply to the same INFO request (part i from
// shard_names[i]): MergeInfo() of those that answered, framed for `protocol` (bulk, or verbatim
// over RESP3); the first error when no shard answered.
std::unique_ptr<ReplyAssembly> InfoAssembly(std::string own_text,
                                            std::vector<std::string> shard_names, int protocol);

}  // namespace shardctl::proxy
