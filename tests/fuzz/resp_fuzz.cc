// libFuzzer target for common/resp: arbitrary bytes, fed whole and in pseudo-random chunks.
//
// Checks that the scanner never crashes or reads out of bounds (ASan/UBSan), never returns a span
// outside its buffer, finds the same frames and the same final error however the bytes are split
// and whether it copies them (Feed) or borrows a reused read buffer (FeedBorrowed, Detach),
// that ParseCommandArgs + AppendCommand reproduce every request frame they accept, and that the
// request fast path (ScanRequest) agrees with the scanner + ParseCommandArgs on every request it
// takes, and takes no more than they do.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "tests/fuzz/fuzz_chunks.h"

namespace {

using shardctl::common::AppendCommand;
using shardctl::common::FastRequest;
using shardctl::common::ParseCommandArgs;
using shardctl::common::RespLimits;
using shardctl::common::RespScanner;
using shardctl::common::ScanRequest;
using shardctl::common::ScanResult;
using shardctl::common::ScanStatus;

struct Outcome {
  struct Frame {
    size_t begin;  // offset in the whole input
    size_t end;
    char type;
    bool operator==(const Frame&) const = default;
  };
  std::vector<Frame> frames;
  ScanStatus last = ScanStatus::kIncomplete;
  std::string error;
};

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "resp_fuzz: %s\n", what);
    std::abort();
  }
}

// Small limits so the fuzzer reaches them with short inputs.
RespLimits FuzzLimits() {
  return RespLimits{.max_depth = 8,
                    .max_bulk_length = 1 << 16,
                    .max_aggregate_count = 1 << 12,
                    .max_line_length = 256};
}

// Feeds `input` in chunks whose sizes come from `seed` (0: all at once), pulling every frame after
// each chunk and consuming returned frames at pseudo-random moments. `borrowed`: each chunk is
// copied into one reused read buffer and lent with FeedBorrowed(), as the proxy reads; the buffer
// is overwritten after each Detach(), so a frame still pointing into it would differ.
Outcome Scan(std::string_view input, uint64_t seed, bool borrowed = false) {
  RespScanner scanner(FuzzLimits());
  Outcome outcome;
  size_t consumed = 0;    // bytes dropped from the front of the stream so far
  size_t frames_end = 0;  // stream offset where the last returned frame ended
  size_t fed = 0;
  std::string read_buffer;
  while (fed < input.size() && outcome.last != ScanStatus::kError) {
    const size_t chunk = shardctl::fuzz::NextChunkSize(seed, input.size() - fed);
    if (borrowed) {
      scanner.Detach();
      read_buffer.assign(read_buffer.size(), '\xff');
      read_buffer.assign(input.substr(fed, chunk));
      scanner.FeedBorrowed(read_buffer);
    } else {
      scanner.Feed(input.substr(fed, chunk));
    }
    fed += chunk;
    for (;;) {
      const ScanResult result = scanner.Next();
      outcome.last = result.status;
      if (result.status == ScanStatus::kError) outcome.error = result.error;
      if (result.status != ScanStatus::kFrame) break;
      Check(result.begin <= result.end && result.end <= scanner.Buffered().size(),
            "span outside the buffer");
      Check(consumed + result.begin == frames_end, "frames are not contiguous");
      Check(result.end > result.begin, "empty frame");
      Check(scanner.FrameBytes(result) == input.substr(frames_end, result.end - result.begin),
            "frame bytes differ from the input");
      outcome.frames.push_back({frames_end, consumed + result.end, result.type});
      frames_end = consumed + result.end;
      if (seed % 3 != 0) {
        const size_t before = scanner.Buffered().size();
        scanner.Consume(result.end);
        consumed += before - scanner.Buffered().size();
      }
    }
  }
  return outcome;
}

void CheckCommandRoundTrip(std::string_view frame) {
  const auto args = ParseCommandArgs(frame);
  if (!args.ok() || frame.substr(0, 2) == "*-") return;
  std::string rebuilt;
  AppendCommand(rebuilt, *args);
  Check(rebuilt == frame, "AppendCommand(ParseCommandArgs(frame)) != frame");
}

// ScanRequest on the start of `input` against the slow path: a request it frames is the first
// frame the scanner finds, with the arguments ParseCommandArgs gives; an incomplete start is one
// the scanner also finds incomplete (or one it would take further).
void CheckFastPath(std::string_view input, const Outcome& whole) {
  std::vector<std::string_view> args;
  const FastRequest fast = ScanRequest(input, FuzzLimits(), args);
  if (fast.kind == FastRequest::Kind::kSlowPath) return;
  if (fast.kind == FastRequest::Kind::kIncomplete) {
    Check(whole.frames.empty() && whole.last == ScanStatus::kIncomplete,
          "ScanRequest says incomplete where the scanner found a frame or an error");
    return;
  }
  Check(!whole.frames.empty() && whole.frames[0].begin == 0 && whole.frames[0].end == fast.length,
        "ScanRequest framed a request the scanner did not");
  const auto slow = ParseCommandArgs(input.substr(0, fast.length));
  Check(slow.ok() && *slow == args, "ScanRequest's arguments differ from ParseCommandArgs'");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const uint64_t seed = shardctl::fuzz::ChunkSeed(input);

  const Outcome whole = Scan(input, 0);
  const Outcome chunked = Scan(input, seed);
  Check(whole.frames == chunked.frames, "chunked frames differ from whole-input frames");
  Check(whole.last == chunked.last, "chunked final status differs");
  Check(whole.error == chunked.error, "chunked error differs");
  const Outcome lent = Scan(input, seed, /*borrowed=*/true);
  Check(whole.frames == lent.frames && whole.last == lent.last && whole.error == lent.error,
        "borrowed chunks differ from whole-input frames");
  if (size <= 512) {
    const Outcome other = Scan(input, 0x9e3779b97f4a7c15ull);
    Check(whole.frames == other.frames && whole.error == other.error, "second chunking differs");
  }

  for (const Outcome::Frame& frame : whole.frames) {
    if (frame.type == '*')
      CheckCommandRoundTrip(input.substr(frame.begin, frame.end - frame.begin));
  }
  (void)ParseCommandArgs(input);  // arbitrary bytes must not crash the request parser either
  CheckFastPath(input, whole);
  return 0;
}
