// A small RESP2/RESP3 reply-tree decoder for control-plane replies (CLUSTER SLOTS, INFO) that
// launcher, proxy and bench must read.
//
// The proxy's data path never builds trees (design.md: forward bytes); this is for the few
// replies a program must itself read. The nodes are views into the frame, which must outlive the
// tree.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

struct ReplyNode {
  // The RESP type byte: '+', '-', ':', '$', '*', '%', '~', '>', '_', ',', '#', '(', '=', '!'.
  // A null bulk or null array ("$-1", "*-1") is reported as '_'. Attributes are skipped.
  char type = '_';
  // Strings, errors, doubles, big numbers, booleans ("t"/"f"): the payload. Verbatim strings keep
  // their "txt:" prefix.
  std::string_view text;
  int64_t integer = 0;  // ':' only
  // Aggregates: the elements; a map ('%') holds key, value, key, value, ...
  std::vector<ReplyNode> elements;

  bool IsAggregate() const { return type == '*' || type == '%' || type == '~' || type == '>'; }
};

// Decodes exactly one complete frame. Errors name the problem ("truncated reply", "bytes after
// the reply"); a frame that common::RespScanner accepted decodes without error.
common::Result<ReplyNode> DecodeReply(std::string_view frame);

}  // namespace shardctl::common
