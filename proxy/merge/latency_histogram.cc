// LATENCY HISTOGRAM over every shard: one Redis' reply from the shards' per-command histograms.
//
//   shard i: {name: {calls: n, histogram_usec: {bucket: count, ...}}, ...}  (RESP3 maps, or the
//            same as flat arrays in RESP2)
//   merged:  every command once, in first-seen order; a keyed command's calls and buckets added
//            up (each call ran on one shard); a command the proxy sends to every shard (CONFIG
//            SET, FLUSHALL) counted once per client call: the shard that counted most.
#include <algorithm>
#include <map>
#include <vector>

#include "common/numbers.h"
#include "common/resp.h"
#include "proxy/commands/command_table.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/frames.h"

namespace shardctl::proxy {
namespace {

// An array's elements, or a map's keys and values in turn (twice as many).
common::Result<std::vector<std::string_view>> Fields(std::string_view frame) {
  if (frame.empty() || frame[0] != '%') return ArrayElements(frame);
  const size_t header_end = frame.find("\r\n");
  auto pairs = common::ParseInteger<size_t>(frame.substr(1, header_end - 1));
  if (header_end == std::string_view::npos || !pairs) return common::Error("bad map header");
  std::string flat = "*" + std::to_string(*pairs * 2) + std::string(frame.substr(header_end));
  auto elements = ArrayElements(flat);
  if (!elements) return elements.error();
  // Views into `frame`: the bodies are the same bytes after a header of another length.
  const ptrdiff_t shift =
      static_cast<ptrdiff_t>(header_end) - static_cast<ptrdiff_t>(flat.find("\r\n"));
  std::vector<std::string_view> views;
  for (std::string_view element : *elements) {
    const ptrdiff_t at = element.data() - flat.data() + shift;
    views.push_back(frame.substr(static_cast<size_t>(at), element.size()));
  }
  return views;
}

// "$3\r\nset\r\n" -> "set".
std::string_view BulkText(std::string_view frame) {
  const size_t header_end = frame.find("\r\n");
  if (header_end == std::string_view::npos || frame.size() < header_end + 4) return {};
  return frame.substr(header_end + 2, frame.size() - header_end - 4);
}

struct Histogram {
  std::string_view name;  // the name's frame, as the shards wrote it
  int64_t calls = 0;
  std::map<int64_t, int64_t> buckets;
};

// One shard's entry for a command; false when its shape is not Redis'.
bool ReadHistogram(std::string_view details, Histogram& out) {
  auto fields = Fields(details);
  if (!fields || fields->size() != 4 || !ParseIntegerReply((*fields)[1], out.calls)) return false;
  auto buckets = Fields((*fields)[3]);
  if (!buckets || buckets->size() % 2 != 0) return false;
  for (size_t i = 0; i < buckets->size(); i += 2) {
    int64_t bucket = 0, count = 0;
    if (!ParseIntegerReply((*buckets)[i], bucket) || !ParseIntegerReply((*buckets)[i + 1], count)) {
      return false;
    }
    out.buckets[bucket] += count;
  }
  return true;
}

bool SentToEveryShard(std::string_view name) {
  const std::string_view command = name.substr(0, name.find('|'));
  return LookupCommand(command).kind == RouteKind::kFanOut;
}

void AppendHeader(std::string& out, bool map, size_t pairs) {
  if (map) {
    out += "%" + std::to_string(pairs) + "\r\n";
  } else {
    common::AppendArrayHeader(out, pairs * 2);
  }
}

}  // namespace

std::string MergeLatencyHistograms(std::span<const std::string_view> replies) {
  for (std::string_view reply : replies) {
    if (!reply.empty() && reply[0] == '-') return std::string(reply);
  }
  std::vector<Histogram> merged;
  for (std::string_view reply : replies) {
    auto fields = Fields(reply);
    if (!fields || fields->size() % 2 != 0) return MergeError("expected latency histograms");
    for (size_t i = 0; i < fields->size(); i += 2) {
      Histogram shard{(*fields)[i]};
      if (!ReadHistogram((*fields)[i + 1], shard)) return MergeError("unexpected histogram");
      auto known = std::find_if(merged.begin(), merged.end(),
                                [&](const Histogram& h) { return h.name == shard.name; });
      if (known == merged.end()) {
        merged.push_back(std::move(shard));
      } else if (SentToEveryShard(BulkText(shard.name))) {
        if (shard.calls > known->calls) *known = std::move(shard);
      } else {
        known->calls += shard.calls;
        for (const auto& [bucket, count] : shard.buckets) known->buckets[bucket] += count;
      }
    }
  }
  const bool map = !replies.empty() && !replies[0].empty() && replies[0][0] == '%';
  std::string out;
  AppendHeader(out, map, merged.size());
  for (const Histogram& histogram : merged) {
    out += histogram.name;
    AppendHeader(out, map, 2);
    common::AppendBulk(out, "calls");
    common::AppendInteger(out, histogram.calls);
    common::AppendBulk(out, "histogram_usec");
    AppendHeader(out, map, histogram.buckets.size());
    for (const auto& [bucket, count] : histogram.buckets) {
      common::AppendInteger(out, bucket);
      common::AppendInteger(out, count);
    }
  }
  return out;
}

}  // namespace shardctl::proxy
