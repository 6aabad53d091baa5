// libFuzzer target for common/repl_stream and common/repl_plan: arbitrary bytes as a primary's
// replication stream, fed whole and in pseudo-random chunks, each command then planned.
//
// Checks that the parser never crashes or reads out of bounds (ASan/UBSan), gives the same
// commands, offsets and error however the bytes are split, that offsets only grow and each command
// is the stream bytes just before its offset (re-encoded), and that the planner never crashes and
// returns every Forward with a slot in range.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/repl_plan.h"
#include "common/repl_stream.h"
#include "common/resp.h"
#include "common/slots.h"
#include "tests/fuzz/fuzz_chunks.h"

namespace {

using shardctl::common::ReplCommand;
using shardctl::common::ReplStreamLimits;
using shardctl::common::ReplStreamParser;

struct Outcome {
  std::vector<ReplCommand> commands;
  std::string error;
  int64_t offset = 0;
  bool operator==(const Outcome&) const = default;
};

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "repl_stream_fuzz: %s\n", what);
    std::abort();
  }
}

// Small limits so the fuzzer reaches them with short inputs.
constexpr ReplStreamLimits kLimits{.max_argument_length = 1 << 12, .max_arguments = 64};
constexpr int64_t kStart = 1000;

// Feeds `input` in chunks whose sizes come from `seed` (0: all at once).
Outcome Parse(std::string_view input, uint64_t seed) {
  ReplStreamParser parser(kStart, kLimits);
  Outcome outcome;
  size_t fed = 0;
  while (fed < input.size() && outcome.error.empty()) {
    const size_t chunk = shardctl::fuzz::NextChunkSize(seed, input.size() - fed);
    parser.Feed(input.substr(fed, chunk));
    fed += chunk;
    for (;;) {
      auto next = parser.Next();
      if (!next.ok()) {
        outcome.error = next.error().message();
        break;
      }
      if (!next->has_value()) break;
      Check(outcome.commands.empty() || (*next)->offset > outcome.commands.back().offset,
            "offsets do not grow");
      outcome.commands.push_back(std::move(**next));
    }
  }
  outcome.offset = parser.offset();
  return outcome;
}

void CheckCommandBytes(std::string_view input, const ReplCommand& command) {
  std::vector<std::string_view> args(command.args.begin(), command.args.end());
  std::string encoded;
  shardctl::common::AppendCommand(encoded, args);
  const auto end = static_cast<size_t>(command.offset - kStart);
  Check(end <= input.size() && end >= encoded.size(), "offset outside the input");
  Check(input.substr(end - encoded.size(), encoded.size()) == encoded,
        "the bytes before a command's offset are not the command");
}

void CheckPlan(const Outcome& outcome) {
  shardctl::common::ReplPlanner planner;
  for (const ReplCommand& command : outcome.commands) {
    for (const auto& action : planner.Plan(command.args).actions) {
      if (const auto* forward = std::get_if<shardctl::common::Forward>(&action)) {
        Check(forward->slot >= 0 && forward->slot < shardctl::common::kSlotCount, "slot range");
        Check(!forward->command.empty(), "empty forwarded command");
      }
    }
  }
  Check(planner.counts().commands == static_cast<int64_t>(outcome.commands.size()),
        "planner did not count every command");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const uint64_t seed = shardctl::fuzz::ChunkSeed(input);

  const Outcome whole = Parse(input, 0);
  const Outcome chunked = Parse(input, seed);
  Check(whole == chunked, "chunked commands, error or offset differ from the whole input's");
  Check(whole.offset >= kStart && whole.offset <= kStart + static_cast<int64_t>(size),
        "offset beyond the bytes fed");
  for (const ReplCommand& command : whole.commands) CheckCommandBytes(input, command);
  CheckPlan(whole);
  return 0;
}
