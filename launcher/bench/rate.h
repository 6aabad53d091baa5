// Open-loop pacing for the load generator: the rate given with --rate or --rate-profile, and the
// schedule of intended send times it implies. Pure: no clocks; callers pass elapsed time in.
//
// Latency in open-loop mode is measured from a request's *intended* send time (SendTime), not from
// when a free connection finally sent it, so a server stall shows up in the latency of every
// request that should have gone out during it (no coordinated omission).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

// One stretch of constant rate.
struct RateStep {
  double ops_per_sec = 0;  // 0 pauses sending for the step
  std::chrono::milliseconds duration{0};
  friend bool operator==(const RateStep&, const RateStep&) = default;
};

// Parses a rate: "50000", "50k", "1.5m" (k = 1000, m = 1000000; case-insensitive). Errors name
// the text and show an example. A rate must be > 0 unless `allow_zero`.
common::Result<double> ParseRate(std::string_view text, bool allow_zero = false);

// Parses "50k:10s,150k:5s,50k:10s": comma-separated RATE:DURATION steps run in order. A step's
// rate may be 0 (a pause); at least one step must send.
common::Result<std::vector<RateStep>> ParseRateProfile(std::string_view text);

// "50k:10s,150k:5s" from steps (rates in the shortest of plain, k or m form).
std::string FormatRateProfile(const std::vector<RateStep>& steps);

// Total duration of the steps.
std::chrono::milliseconds ProfileDuration(const std::vector<RateStep>& steps);

// The intended send times of one sender's requests. Request n (0-based) is due when the integral
// of the rate since the start reaches n + 1, so at 1000 ops/s request 0 is due at 1 ms. After the
// last step the last step's rate continues.
class RateSchedule {
 public:
  // `share` scales every rate: a generator thread gets 1/threads of the total.
  explicit RateSchedule(std::vector<RateStep> steps, double share = 1.0);

  // How many requests are due at `elapsed` since the start.
  uint64_t DueBy(std::chrono::nanoseconds elapsed) const;
  // When request `n` is due, since the start; nanoseconds::max() when it never is (the rate
  // ends at 0).
  std::chrono::nanoseconds SendTime(uint64_t n) const;
  // The rate in force at `elapsed` (ops/s, after `share`).
  double RateAt(std::chrono::nanoseconds elapsed) const;

 private:
  struct Segment {
    double start_seconds;
    double end_seconds;
    double rate;
    double count_before;  // integral of the rate up to start_seconds
  };
  const Segment& SegmentAt(double seconds) const;

  std::vector<Segment> segments_;
};

}  // namespace shardctl::launcher
