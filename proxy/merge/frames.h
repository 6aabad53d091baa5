// Reading the few reply shapes the proxy merges (arrays, integers), as views into the frame.
// Pure. Used by split.cc and fanout.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::proxy {

// The element frames of an array reply ("*N\r\n..."; with `allow_set`, a RESP3 set "~N\r\n..."
// too), as views into `frame`. Errors name what is wrong with the shape.
common::Result<std::vector<std::string_view>> ArrayElements(std::string_view frame,
                                                            bool allow_set = false);

// ":<n>\r\n" -> n; false for anything else.
bool ParseIntegerReply(std::string_view frame, int64_t& value);

// Redis' null array for a client speaking `protocol`: "*-1" (RESP2) or "_" (RESP3). EXEC
// answers it for an aborted transaction.
std::string_view NullArray(int protocol);

// "-ERR shardproxy: <what>\r\n": a merge that cannot be done, named.
std::string MergeError(std::string_view what);

}  // namespace shardctl::proxy
