// `shardctl top`'s view: the rows of ops/top.h as lines of text. Pure.
//
//   shardctl top: "main", 4 shards, 120.4k ops/s, sorted by ops   (keys: o m c l h s, q quits)
//
//   SHARD  PORT  ROLE     OPS/S  HIT%  MEMORY  CAP    MEM%  CLIENTS  CPU%  LAST FORK
//   2      7002  primary  40.3k  99.1  12.1mb  256mb  4.7   51       38.0  0.3ms, saved 2m ago
//
//   shardctl top --slots: "main", the hottest 20 slots over 1.0s, by CPU
//
//   SLOT   SHARD  OPS/S  CPU%  KEYS  IN/S    OUT/S
//   12539  2      40.3k  61.2  1     1.2mb   310kb
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launcher/ops/top.h"
#include "launcher/ops/top_slots.h"

namespace shardctl::launcher {

// The summary line above the table; `keys` adds the key help (the live view only).
std::string TopHeadline(const std::string& name, const std::vector<TopRow>& rows, TopSort sort,
                        bool keys);

// The table: a header and one line per row, in the rows' order.
std::vector<std::string> TopTable(const std::vector<TopRow>& rows);

// `top --slots`: the line above the slot table, then the table ("-" where there is no source).
std::string SlotTopHeadline(const std::string& name, const SlotTopFrame& frame);
std::vector<std::string> SlotTopTable(const SlotTopFrame& frame);

// `top --slots --json`: one refresh as one object (null where there is no source).
nlohmann::json SlotTopJson(const std::string& name, const SlotTopFrame& frame);

// 950 -> "950", 12345 -> "12.3k", 2500000 -> "2.5M".
std::string FormatRate(double per_second);

// 45 -> "45s", 180 -> "3m", 7200 -> "2h", 172800 -> "2d".
std::string FormatAge(int64_t seconds);

}  // namespace shardctl::launcher
