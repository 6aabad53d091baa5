#include "launcher/bench/key_distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "common/numbers.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
__extension__ using Uint128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic needs the mark

constexpr const char* kForms =
    "uniform, zipf:S (e.g. zipf:0.99) or hotkeys:N:P (e.g. hotkeys:8:40)";
// The sampler accepts about 9 draws in 10; a bound keeps a pathological float from looping.
constexpr int kMostDraws = 64;

// log1p(x) / x and expm1(x) / x, both 1 at 0: keep H and its inverse exact near S = 1.
double Log1pOverX(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x / 2; }
double Expm1OverX(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x / 2; }

// The pieces of rejection-inversion for weights x^-s: h, its integral H and H's inverse.
double Weight(double x, double s) { return std::exp(-s * std::log(x)); }
double Integral(double x, double s) {
  const double log_x = std::log(x);
  return Expm1OverX((1 - s) * log_x) * log_x;
}
double IntegralInverse(double u, double s) { return std::exp(Log1pOverX((1 - s) * u) * u); }

Error Bad(std::string_view text, const std::string& what) {
  return Error("\"" + std::string(text) + "\": " + what + " (use " + kForms + ")");
}

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string KeyDistribution::ToString() const {
  switch (kind) {
    case Kind::kUniform:
      return "uniform";
    case Kind::kZipf:
      return "zipf:" + Number(exponent);
    case Kind::kHotKeys:
      return "hotkeys:" + std::to_string(hot_keys) + ":" + Number(hot_percent);
  }
  return "uniform";
}

Result<KeyDistribution> ParseKeyDistribution(std::string_view text) {
  if (text == "uniform") return KeyDistribution{};
  if (text.starts_with("zipf:")) {
    auto exponent = common::ParseDecimal(text.substr(5));
    if (!exponent || !(*exponent > 0) || *exponent > 10) {
      return Bad(text, "the zipf exponent S must be a number above 0 and at most 10");
    }
    return KeyDistribution{.kind = KeyDistribution::Kind::kZipf, .exponent = *exponent};
  }
  if (text.starts_with("hotkeys:")) {
    const std::string_view rest = text.substr(8);
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) return Bad(text, "hotkeys needs N and P");
    auto keys = common::ParseIntegerIn<uint64_t>(rest.substr(0, colon), 1, 1000000000);
    auto percent = common::ParseDecimal(rest.substr(colon + 1));
    if (!keys) return Bad(text, "N, the number of hot keys, must be a whole number from 1");
    if (!percent || !(*percent > 0) || *percent > 100) {
      return Bad(text, "P, the hot keys' share of requests, must be a percentage above 0");
    }
    return KeyDistribution{
        .kind = KeyDistribution::Kind::kHotKeys, .hot_keys = *keys, .hot_percent = *percent};
  }
  return Bad(text, "unknown key distribution");
}

KeyPicker::KeyPicker(const KeyDistribution& distribution, uint64_t keyspace, uint64_t seed)
    : distribution_(distribution), keyspace_(std::max<uint64_t>(keyspace, 1)) {
  SplitMix64 random(seed ^ 0x6b65792d72616e6bull);
  multiplier_ = (random() | 1) % keyspace_;
  // A multiplier sharing no factor with the key space makes rank -> key a bijection.
  while (multiplier_ == 0 || std::gcd(multiplier_, keyspace_) != 1) {
    multiplier_ = (multiplier_ + 1) % keyspace_;
    if (keyspace_ == 1) break;
  }
  offset_ = random() % keyspace_;
  if (distribution_.kind == KeyDistribution::Kind::kZipf) {
    const double s = distribution_.exponent;
    h_integral_first_ = Integral(1.5, s) - 1;
    h_integral_last_ = Integral(static_cast<double>(keyspace_) + 0.5, s);
    accept_margin_ = 2 - IntegralInverse(Integral(2.5, s) - Weight(2, s), s);
  }
}

uint64_t KeyPicker::KeyOfRank(uint64_t rank) const {
  return static_cast<uint64_t>((static_cast<Uint128>(rank % keyspace_) * multiplier_ + offset_) %
                               keyspace_);
}

uint64_t KeyPicker::ZipfRank(SplitMix64& random) const {
  const double s = distribution_.exponent;
  const double last = static_cast<double>(keyspace_);
  double rank = 1;
  for (int draw = 0; draw < kMostDraws; ++draw) {
    const double u = h_integral_last_ + random.Fraction() * (h_integral_first_ - h_integral_last_);
    const double x = IntegralInverse(u, s);
    rank = std::clamp(std::floor(x + 0.5), 1.0, last);
    // Inside the hat's rectangle at once; otherwise below the weight's own curve.
    if (rank - x <= accept_margin_ || u >= Integral(rank + 0.5, s) - Weight(rank, s)) break;
  }
  return static_cast<uint64_t>(rank) - 1;
}

uint64_t KeyPicker::Pick(SplitMix64& random) const {
  switch (distribution_.kind) {
    case KeyDistribution::Kind::kUniform:
      return random.Below(keyspace_);
    case KeyDistribution::Kind::kZipf:
      return KeyOfRank(ZipfRank(random));
    case KeyDistribution::Kind::kHotKeys:
      if (random.Fraction() * 100 < distribution_.hot_percent) {
        return KeyOfRank(random.Below(std::min(distribution_.hot_keys, keyspace_)));
      }
      return random.Below(keyspace_);
  }
  return random.Below(keyspace_);
}

}  // namespace shardctl::launcher
