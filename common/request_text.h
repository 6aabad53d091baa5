// Redis' own reading of a client's request bytes where it differs from a generic RESP scanner:
// the errors its request parser names (networking.c's words, which clients and Redis' tests
// match), the multibulk headers it ignores, and inline commands with quoted arguments. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

// What Redis does with the request at the start of `bytes`: skip `skip` bytes ("*0", "*-10":
// no command) or refuse it with `error` ("Protocol error: ..."). Exactly one is set.
struct RequestProblem {
  size_t skip = 0;
  std::string error;
};

// For bytes a RESP scanner could not take as a request. nullopt when Redis would not refuse
// them yet either (well-formed so far, or incomplete): the scanner's verdict stands.
// `max_bulk_length`: the largest argument accepted (Redis' proto-max-bulk-len).
std::optional<RequestProblem> ExamineBadRequest(std::string_view bytes, int64_t max_bulk_length);

// An inline command's arguments with Redis' quoting: "double quoted" with \n, \r, \t, \b, \a,
// \xHH and \<char> escapes, 'single quoted' with \' only; a closing quote must end the argument.
// Error "Protocol error: unbalanced quotes in request" otherwise.
Result<std::vector<std::string>> SplitQuotedArgs(std::string_view line);

}  // namespace shardctl::common
