#include "common/size.h"

#include <array>
#include <cctype>
#include <limits>

namespace shardctl::common {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

struct Unit {
  std::string_view name;
  uint64_t bytes;
};

// Redis' units (memtoull in util.c) plus "t"/"tb": a bare letter is decimal, "<letter>b" binary.
constexpr std::array<Unit, 10> kUnits = {{{"", 1},
                                          {"b", 1},
                                          {"k", 1000},
                                          {"kb", uint64_t{1} << 10},
                                          {"m", 1000 * 1000},
                                          {"mb", uint64_t{1} << 20},
                                          {"g", 1000 * 1000 * 1000},
                                          {"gb", uint64_t{1} << 30},
                                          {"t", uint64_t{1000} * 1000 * 1000 * 1000},
                                          {"tb", uint64_t{1} << 40}}};

constexpr std::string_view kHint =
    " (write bytes or a number with a unit, e.g. 1048576, 512mb, 1.5gb)";

Error BadSize(std::string_view text, const std::string& what) {
  return Error("bad size \"" + std::string(text) + "\": " + what + std::string(kHint));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// floor(0.<digits> * unit) without floating point or 128-bit integers: Horner's rule from the
// last digit, where each step's integer division keeps the floor exact (floor(floor(x)/10) ==
// floor(x/10)) and intermediate values stay below 10 * unit.
uint64_t FractionBytes(std::string_view digits, uint64_t unit) {
  uint64_t scaled = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    scaled = static_cast<uint64_t>(digits[i] - '0') * unit + scaled / 10;
  }
  return scaled / 10;
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  size_t pos = 0;
  uint64_t whole = 0;
  bool overflow = false;
  for (; pos < text.size() && IsDigit(text[pos]); ++pos) {
    const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (whole > (kMax - digit) / 10) overflow = true;
    whole = whole * 10 + digit;
  }
  if (pos == 0) {
    return BadSize(text, text.empty() ? "empty" : "does not start with a number");
  }
  std::string_view fraction;
  if (pos < text.size() && text[pos] == '.') {
    const size_t begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    fraction = text.substr(begin, pos - begin);
    if (fraction.empty()) return BadSize(text, "no digits after the decimal point");
  }
  std::string unit_name(text.substr(pos));
  for (char& c : unit_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const Unit* unit = nullptr;
  for (const Unit& candidate : kUnits) {
    if (candidate.name == unit_name) unit = &candidate;
  }
  if (unit == nullptr)
    return BadSize(text, "unknown unit \"" + std::string(text.substr(pos)) + "\"");
  if (!fraction.empty() && unit->bytes == 1) {
    return BadSize(text, "a fraction of a byte makes no sense");
  }
  const uint64_t fraction_bytes = FractionBytes(fraction, unit->bytes);
  if (overflow || whole > kMax / unit->bytes || whole * unit->bytes > kMax - fraction_bytes) {
    return BadSize(text, "larger than 2^64-1 bytes");
  }
  return whole * unit->bytes + fraction_bytes;
}

std::string FormatSize(uint64_t bytes) {
  // Largest binary unit the value reaches, so the number printed is always >= 1 and rounding to
  // a tenth is off by at most 5%.
  const Unit* unit = &kUnits[1];
  for (const Unit& candidate : kUnits) {
    if (candidate.name.size() == 2 && bytes >= candidate.bytes) unit = &candidate;
  }
  if (unit->bytes == 1) return std::to_string(bytes) + "b";
  const uint64_t remainder = bytes % unit->bytes;
  uint64_t tenths = bytes / unit->bytes * 10 + (remainder * 10 + unit->bytes / 2) / unit->bytes;
  auto render = [&] {
    std::string out = std::to_string(tenths / 10);
    if (tenths % 10 != 0) out += "." + std::to_string(tenths % 10);
    return out + std::string(unit->name);
  };
  // Rounding up just below 2^64 ("16777216tb") would print a size that no longer parses.
  if (!ParseSize(render()).ok()) --tenths;
  return render();
}

}  // namespace shardctl::common
