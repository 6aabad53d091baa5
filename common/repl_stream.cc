#include "common/repl_stream.h"

#include <utility>

#include "common/text.h"

namespace shardctl::common {
namespace {

// Only the lengths of "*<count>" and "$<length>" live on a line of their own in a command; 20
// bytes hold any 64-bit number, so a longer line is garbage, found before it is buffered whole.
constexpr size_t kMaxHeaderLine = 20;

RespLimits CommandLimits(const ReplStreamLimits& limits) {
  // One level: a command is an array of bulk strings, never of arrays.
  return RespLimits{.max_depth = 1,
                    .max_bulk_length = limits.max_argument_length,
                    .max_aggregate_count = limits.max_arguments,
                    .max_line_length = kMaxHeaderLine};
}

}  // namespace

ReplStreamParser::ReplStreamParser(int64_t start_offset, ReplStreamLimits limits)
    : scanner_(CommandLimits(limits)), offset_(start_offset) {}

void ReplStreamParser::Feed(std::string_view bytes) {
  if (!error_) scanner_.Feed(bytes);
}

Result<std::optional<ReplCommand>> ReplStreamParser::Fail(std::string what) {
  error_ = Error("replication stream offset " + std::to_string(offset_) + ": " + std::move(what));
  return *error_;
}

bool ReplStreamParser::SkipKeepalives() {
  if (!scanner_.AtFrameStart()) return true;  // a command is partly scanned: no boundary here
  const std::string_view unreturned = scanner_.Unreturned();
  size_t newlines = 0;
  while (newlines < unreturned.size() && unreturned[newlines] == '\n') ++newlines;
  if (newlines > 0) {
    scanner_.SkipUnreturned(newlines);
    scanner_.Consume(newlines);
    offset_ += static_cast<int64_t>(newlines);
  }
  return newlines == unreturned.size() || unreturned[newlines] == '*';
}

Result<std::optional<ReplCommand>> ReplStreamParser::Next() {
  if (error_) return *error_;
  for (;;) {
    if (!SkipKeepalives()) {
      return Fail("expected a command ('*') or a keepalive ('\\n'), got '" +
                  PrintableByte(scanner_.Unreturned()[0]) + "'");
    }
    const ScanResult frame = scanner_.Next();
    if (frame.status == ScanStatus::kIncomplete) return std::optional<ReplCommand>();
    if (frame.status == ScanStatus::kError) {
      return Fail("expected a command (an array of bulk strings): " + frame.error);
    }
    std::vector<std::string_view> views;
    if (Status parsed = ParseCommandArgsInto(scanner_.FrameBytes(frame), views); !parsed) {
      return Fail("expected a command (an array of bulk strings): " + parsed.error().message());
    }
    ReplCommand command{.args = std::vector<std::string>(views.begin(), views.end())};
    offset_ += static_cast<int64_t>(frame.end - frame.begin);
    scanner_.Consume(frame.end);
    command.offset = offset_;
    if (!command.args.empty()) return std::optional<ReplCommand>(std::move(command));
  }
}

}  // namespace shardctl::common
