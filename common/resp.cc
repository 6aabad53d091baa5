#include "common/resp.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include "common/numbers.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// An emptied buffer keeps its capacity (the next frame is likely as big) unless it is this large.
constexpr size_t kMaxIdleCapacity = 1024 * 1024;
// Consumed bytes are dropped from the front only when there are this many, and they are at least
// half the buffer, so the memmove is amortised over the bytes consumed.
constexpr size_t kCompactThreshold = 4096;

bool ParseDecimal(std::string_view text, int64_t& out) {
  std::optional<int64_t> value = ParseRedisInteger(text);
  if (value) out = *value;
  return value.has_value();
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view StripSign(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  return text;
}

// ":" integers: the RESP3 spec allows a '+' sign too.
bool IsInteger(std::string_view text) {
  int64_t ignored = 0;
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  return ParseDecimal(text, ignored);
}

bool IsBigNumber(std::string_view text) { return AllDigits(StripSign(text)); }

bool EqualsIgnoringCase(std::string_view text, std::string_view lower) {
  return text.size() == lower.size() &&
         std::equal(text.begin(), text.end(), lower.begin(),
                    [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a + 32 : a) == b; });
}

// RESP3 doubles: [sign] digits [. digits] [e [sign] digits], or inf / nan with an optional sign
// (Redis 7.0 sends ",-nan" for a Lua 0/0).
bool IsDouble(std::string_view text) {
  text = StripSign(text);
  if (EqualsIgnoringCase(text, "inf") || EqualsIgnoringCase(text, "nan")) return true;
  const size_t exponent = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, exponent);
  const size_t dot = mantissa.find('.');
  std::string_view integral = mantissa.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : mantissa.substr(dot + 1);
  const bool mantissa_ok = (AllDigits(integral) && (fraction.empty() || AllDigits(fraction))) ||
                           (integral.empty() && AllDigits(fraction));
  if (!mantissa_ok) return false;
  return exponent == std::string_view::npos || AllDigits(StripSign(text.substr(exponent + 1)));
}

bool IsKnownType(char type) {
  return std::strchr("+-:$*_#,(!=%~|>", type) != nullptr && type != '\0';
}

std::string TypeName(char type) {
  switch (type) {
    case '$':
      return "bulk";
    case '!':
      return "bulk error";
    case '=':
      return "verbatim string";
    case '*':
      return "multibulk";
    case '%':
      return "map";
    case '~':
      return "set";
    case '>':
      return "push";
    default:
      return "attribute";
  }
}

void AppendLine(std::string& out, char type, std::string_view text) {
  out += type;
  const size_t start = out.size();
  out += text;
  std::replace_if(
      out.begin() + static_cast<std::ptrdiff_t>(start), out.end(),
      [](char c) { return c == '\r' || c == '\n'; }, ' ');
  out += kCrlf;
}

void AppendNumberLine(std::string& out, char type, int64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out += type;
  out.append(digits, end);
  out += kCrlf;
}

// Reads the line whose type byte is at `pos`: `line` gets the text between the type byte and
// "\r\n", `pos` moves past the "\r\n". False when the frame ends first.
bool ReadLine(std::string_view frame, size_t& pos, std::string_view& line) {
  const size_t end = frame.find(kCrlf, pos + 1);
  if (end == std::string_view::npos) return false;
  line = frame.substr(pos + 1, end - pos - 1);
  pos = end + 2;
  return true;
}

// A length line after its type byte at `pos`: digits by string2ll's rules, then "\r\n". Returns
// the position after the line, 0 when the bytes end first, or npos when it is not a valid length
// (the slow path then names the problem). On every request and reply: one pass, no bounds check
// per digit beyond the one that ends the digits, and inlined (GCC called it, and the calls were a
// fifth of ScanRequest's instructions).
[[gnu::always_inline]] inline size_t ReadLength(std::string_view bytes, size_t pos, size_t max_line,
                                                int64_t& value) {
  constexpr size_t kMaxDigits = 18;  // far beyond any limit
  const char* data = bytes.data();
  const size_t size = bytes.size();
  const size_t start = pos;
  const size_t stop = std::min(size, start + kMaxDigits + 1);
  uint64_t number = 0;
  for (; pos < stop; ++pos) {
    const unsigned digit = static_cast<unsigned char>(data[pos]) - unsigned{'0'};
    if (digit > 9) break;
    number = number * 10 + digit;
  }
  const size_t digits = pos - start;
  if (digits > kMaxDigits || digits > max_line) return std::string_view::npos;
  if (pos == size) return 0;
  if (digits == 0 || (digits > 1 && data[start] == '0') || data[pos] != '\r') {
    return std::string_view::npos;
  }
  if (pos + 1 == size) return 0;
  if (data[pos + 1] != '\n') return std::string_view::npos;
  value = static_cast<int64_t>(number);
  return pos + 2;
}

}  // namespace

RespScanner::RespScanner(RespLimits limits) : limits_(limits) {}

void RespScanner::Feed(std::string_view bytes) {
  Detach();
  buffer_.append(bytes);
}

void RespScanner::FeedBorrowed(std::string_view bytes) {
  if (!buffer_.empty() || borrowed_.data() != nullptr || bytes.empty()) return Feed(bytes);
  borrowed_ = bytes;  // nothing buffered: every offset is 0
}

void RespScanner::Detach() {
  if (borrowed_.data() == nullptr) return;
  buffer_.assign(borrowed_.substr(head_));
  borrowed_ = {};
  Rebase();
}

std::string_view RespScanner::Buffered() const { return Data().substr(head_); }

std::string_view RespScanner::FrameBytes(const ScanResult& frame) const {
  return Buffered().substr(frame.begin, frame.end - frame.begin);
}

void RespScanner::Reset() {
  if (buffer_.capacity() > kMaxIdleCapacity) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
  borrowed_ = {};
  head_ = frame_start_ = pos_ = line_search_ = bulk_body_ = bulk_end_ = 0;
  bulk_type_ = frame_type_ = 0;
  stack_.clear();
  error_.clear();
}

std::string_view RespScanner::Unreturned() const { return Data().substr(frame_start_); }

bool RespScanner::AtFrameStart() const {
  return error_.empty() && pos_ == frame_start_ && stack_.empty() && bulk_end_ == 0;
}

bool RespScanner::SkipUnreturned(size_t bytes) {
  if (!AtFrameStart() || bytes > Data().size() - frame_start_) return false;
  frame_start_ += bytes;
  pos_ = frame_start_;
  line_search_ = frame_start_;
  return true;
}

void RespScanner::Consume(size_t bytes) {
  head_ += std::min(bytes, frame_start_ - head_);
  const size_t size = Data().size();
  if (head_ == size && error_.empty()) {
    Reset();  // nothing partial is left: head_ == frame_start_ == pos_
  } else if (borrowed_.data() == nullptr && head_ >= kCompactThreshold && head_ * 2 >= size) {
    buffer_.erase(0, head_);
    Rebase();
  }
}

void RespScanner::Rebase() {
  frame_start_ -= head_;
  pos_ -= head_;
  line_search_ = line_search_ > head_ ? line_search_ - head_ : 0;
  if (bulk_end_ != 0) {
    bulk_body_ -= head_;
    bulk_end_ -= head_;
  }
  head_ = 0;
}

ScanResult RespScanner::Next() {
  ScanResult result;
  if (ScanSimpleFrame(result)) return result;
  for (;;) {
    switch (ScanElement()) {
      case Step::kContinue:
        continue;
      case Step::kIncomplete:
        return result;
      case Step::kError:
        result.status = ScanStatus::kError;
        result.error = error_;
        return result;
      case Step::kFrame:
        result.status = ScanStatus::kFrame;
        result.begin = frame_start_ - head_;
        result.end = pos_ - head_;
        result.type = frame_type_;
        frame_start_ = pos_;
        frame_type_ = 0;
        return result;
    }
  }
}

// The usual reply, in one pass: a whole status, error, integer or bulk string at a frame start.
// False, with nothing changed, for anything else (a partial frame, an aggregate, an invalid
// line): the element scanner then takes it, resumably, and names any problem.
bool RespScanner::ScanSimpleFrame(ScanResult& result) {
  if (pos_ != frame_start_ || bulk_end_ != 0 || !stack_.empty() || !error_.empty()) return false;
  const std::string_view data = Data();
  if (pos_ >= data.size()) return false;
  const char type = data[pos_];
  size_t next = 0;
  if (type == '$') {
    int64_t length = 0;
    const size_t body = ReadLength(data, pos_ + 1, limits_.max_line_length, length);
    if (body == 0 || body == std::string_view::npos || length > limits_.max_bulk_length) {
      return false;
    }
    const size_t end = body + static_cast<size_t>(length);
    if (end + 2 > data.size() || data[end] != '\r' || data[end + 1] != '\n') return false;
    next = end + 2;
  } else if (type == '+' || type == '-' || type == ':') {
    const size_t from = pos_ + 1;
    const void* cr = std::memchr(data.data() + from, '\r', data.size() - from);
    if (cr == nullptr) return false;
    const auto cr_at = static_cast<size_t>(static_cast<const char*>(cr) - data.data());
    if (cr_at + 1 >= data.size() || data[cr_at + 1] != '\n' ||
        cr_at - from > limits_.max_line_length) {
      return false;
    }
    if (type == ':' && !IsInteger(data.substr(from, cr_at - from))) return false;
    next = cr_at + 2;
  } else {
    return false;
  }
  result.status = ScanStatus::kFrame;
  result.begin = frame_start_ - head_;
  result.end = next - head_;
  result.type = type;
  frame_start_ = pos_ = next;
  line_search_ = 0;
  return true;
}

RespScanner::Step RespScanner::Fail(std::string message) {
  error_ = std::move(message);
  return Step::kError;
}

// Scans one element at pos_: a scalar, a bulk string, or an aggregate header.
RespScanner::Step RespScanner::ScanElement() {
  if (!error_.empty()) return Step::kError;
  if (bulk_end_ != 0) return ScanBulkBody();
  const std::string_view data = Data();
  if (pos_ >= data.size()) return Step::kIncomplete;
  const char type = data[pos_];
  if (!IsKnownType(type))
    return Fail("Protocol error: unknown type byte '" + PrintableByte(type) + "'");
  size_t line_end = 0;
  if (Step step = ScanLine(line_end); step != Step::kContinue) return step;
  const std::string_view line(data.data() + pos_ + 1, line_end - pos_ - 1);
  const size_t next = line_end + 2;
  if (stack_.empty() && type != '|') frame_type_ = type;
  bool valid = true;
  switch (type) {
    case '+':
    case '-':
      break;
    case ':':
      valid = IsInteger(line);
      break;
    case ',':
      valid = IsDouble(line);
      break;
    case '(':
      valid = IsBigNumber(line);
      break;
    case '#':
      valid = line == "t" || line == "f";
      break;
    case '_':
      valid = line.empty();
      break;
    case '$':
    case '!':
    case '=':
      return ScanBulkHeader(type, line, next);
    default:
      return ScanAggregateHeader(type, line, next);
  }
  if (!valid) {
    static constexpr std::string_view kNames[] = {"integer", "double", "big number", "boolean",
                                                  "null"};
    const size_t index = std::string_view(":,(#_").find(type);
    return Fail("Protocol error: invalid " + std::string(kNames[index]) + " '" +
                std::string(line.substr(0, 32)) + "'");
  }
  return FinishElement(next);
}

// Finds the "\r\n" ending the line at pos_, resuming the search where the last call stopped.
RespScanner::Step RespScanner::ScanLine(size_t& line_end) {
  const std::string_view data = Data();
  const size_t from = std::max(line_search_, pos_ + 1);
  const void* cr =
      from < data.size() ? std::memchr(data.data() + from, '\r', data.size() - from) : nullptr;
  const size_t cr_at =
      cr != nullptr ? static_cast<size_t>(static_cast<const char*>(cr) - data.data()) : data.size();
  if (cr_at - (pos_ + 1) > limits_.max_line_length) {
    return Fail("Protocol error: line longer than " + std::to_string(limits_.max_line_length) +
                " bytes");
  }
  if (cr == nullptr || cr_at + 1 >= data.size()) {
    line_search_ = cr_at;
    return Step::kIncomplete;
  }
  if (data[cr_at + 1] != '\n') return Fail("Protocol error: expected '\\r\\n'");
  line_end = cr_at;
  return Step::kContinue;
}

RespScanner::Step RespScanner::ScanBulkHeader(char type, std::string_view line, size_t next) {
  if (line == "?") return Fail("Protocol error: streamed strings are not supported");
  int64_t length = 0;
  if (!ParseDecimal(line, length) || length < -1 || (length == -1 && type != '$')) {
    return Fail("Protocol error: invalid " + TypeName(type) + " length");
  }
  if (length == -1) return FinishElement(next);
  if (length > limits_.max_bulk_length) {
    return Fail("Protocol error: " + TypeName(type) + " length " + std::to_string(length) +
                " over the limit of " + std::to_string(limits_.max_bulk_length));
  }
  if (type == '=' && length < 4) {
    return Fail("Protocol error: verbatim string shorter than its 3-byte format and ':'");
  }
  bulk_type_ = type;
  bulk_body_ = next;
  bulk_end_ = next + static_cast<size_t>(length) + 2;
  return ScanBulkBody();
}

// Waits until the whole body of the bulk whose header was scanned is buffered, then checks it.
RespScanner::Step RespScanner::ScanBulkBody() {
  const std::string_view data = Data();
  if (data.size() < bulk_end_) return Step::kIncomplete;
  if (data.compare(bulk_end_ - 2, 2, kCrlf) != 0) {
    return Fail("Protocol error: expected '\\r\\n' after " + TypeName(bulk_type_) + " data");
  }
  if (bulk_type_ == '=' && data[bulk_body_ + 3] != ':') {
    return Fail("Protocol error: verbatim string without a 3-byte format and ':'");
  }
  const size_t next = bulk_end_;
  bulk_end_ = 0;
  return FinishElement(next);
}

RespScanner::Step RespScanner::ScanAggregateHeader(char type, std::string_view line, size_t next) {
  if (line == "?") return Fail("Protocol error: streamed aggregates are not supported");
  int64_t count = 0;
  if (!ParseDecimal(line, count) || count < -1 || (count == -1 && type != '*') ||
      count > limits_.max_aggregate_count || count > INT64_MAX / 2) {
    return Fail("Protocol error: invalid " + TypeName(type) + " length");
  }
  if (count == -1) return FinishElement(next);
  if (stack_.size() >= limits_.max_depth) {
    return Fail("Protocol error: aggregates nested deeper than " +
                std::to_string(limits_.max_depth) + " levels");
  }
  const bool pairs = type == '%' || type == '|';
  const int64_t elements = pairs ? count * 2 : count;
  if (type == '|') {
    // The annotated value follows the attribute and takes the attribute's place in its parent.
    pos_ = next;
    line_search_ = 0;
    if (elements > 0) stack_.push_back({elements, true});
    return Step::kContinue;
  }
  if (elements == 0) return FinishElement(next);
  pos_ = next;
  line_search_ = 0;
  stack_.push_back({elements, false});
  return Step::kContinue;
}

// An element ending at `next` is complete: count it in its parents, closing finished aggregates.
RespScanner::Step RespScanner::FinishElement(size_t next) {
  pos_ = next;
  line_search_ = 0;
  while (!stack_.empty()) {
    Level& top = stack_.back();
    if (--top.remaining > 0) return Step::kContinue;
    const bool attribute = top.attribute;
    stack_.pop_back();
    if (attribute) return Step::kContinue;
  }
  return Step::kFrame;
}

Status ParseCommandArgsInto(std::string_view frame, std::vector<std::string_view>& args) {
  args.clear();
  if (frame.empty() || frame[0] != '*') {
    return Error("Protocol error: expected '*', got '" +
                 (frame.empty() ? std::string() : PrintableByte(frame[0])) + "'");
  }
  size_t pos = 0;
  std::string_view line;
  int64_t count = 0;
  if (!ReadLine(frame, pos, line)) return Error("Protocol error: incomplete command");
  if (!ParseDecimal(line, count) || count < -1) {
    return Error("Protocol error: invalid multibulk length");
  }
  args.reserve(static_cast<size_t>(std::clamp<int64_t>(count, 0, int64_t(frame.size() / 4))));
  for (int64_t i = 0; i < count; ++i) {
    if (pos >= frame.size()) return Error("Protocol error: incomplete command");
    if (frame[pos] != '$') {
      return Error("Protocol error: expected '$', got '" + PrintableByte(frame[pos]) + "'");
    }
    int64_t length = 0;
    if (!ReadLine(frame, pos, line)) return Error("Protocol error: incomplete command");
    if (!ParseDecimal(line, length) || length < 0) {
      return Error("Protocol error: invalid bulk length");
    }
    if (static_cast<uint64_t>(length) > frame.size() - pos ||
        frame.size() - pos - static_cast<size_t>(length) < 2) {
      return Error("Protocol error: incomplete command");
    }
    args.push_back(frame.substr(pos, static_cast<size_t>(length)));
    pos += static_cast<size_t>(length);
    if (frame.substr(pos, 2) != kCrlf) return Error("Protocol error: expected '\\r\\n'");
    pos += 2;
  }
  if (pos != frame.size()) {
    return Error("Protocol error: " + std::to_string(frame.size() - pos) +
                 " bytes after the end of the command");
  }
  return Ok();
}

FastRequest ScanRequest(std::string_view bytes, const RespLimits& limits,
                        std::vector<std::string_view>& args) {
  using Kind = FastRequest::Kind;
  args.clear();
  if (bytes.empty()) return {Kind::kIncomplete, 0};
  if (bytes[0] != '*' || limits.max_depth == 0) return {Kind::kSlowPath, 0};
  int64_t count = 0;
  size_t pos = ReadLength(bytes, 1, limits.max_line_length, count);
  if (pos == 0) return {Kind::kIncomplete, 0};
  if (pos == std::string_view::npos || count > limits.max_aggregate_count) {
    return {Kind::kSlowPath, 0};
  }
  for (int64_t i = 0; i < count; ++i) {
    if (pos == bytes.size()) return {Kind::kIncomplete, 0};
    if (bytes[pos] != '$') return {Kind::kSlowPath, 0};
    int64_t length = 0;
    const size_t body = ReadLength(bytes, pos + 1, limits.max_line_length, length);
    if (body == 0) return {Kind::kIncomplete, 0};
    if (body == std::string_view::npos || length > limits.max_bulk_length) {
      return {Kind::kSlowPath, 0};
    }
    const auto size = static_cast<size_t>(length);
    if (bytes.size() - body < size + 2) return {Kind::kIncomplete, 0};
    if (bytes[body + size] != '\r' || bytes[body + size + 1] != '\n') {
      return {Kind::kSlowPath, 0};
    }
    args.push_back(bytes.substr(body, size));
    pos = body + size + 2;
  }
  return {Kind::kRequest, pos};
}

Result<std::vector<std::string_view>> ParseCommandArgs(std::string_view frame) {
  std::vector<std::string_view> args;
  if (auto parsed = ParseCommandArgsInto(frame, args); !parsed) return parsed.error();
  return args;
}

void AppendCommand(std::string& out, std::span<const std::string_view> args) {
  AppendArrayHeader(out, args.size());
  for (std::string_view arg : args) AppendBulk(out, arg);
}

std::vector<std::string_view> SplitInlineArgs(std::string_view line) {
  constexpr std::string_view kSpaces = " \t\r";
  std::vector<std::string_view> args;
  while (!line.empty()) {
    const size_t start = line.find_first_not_of(kSpaces);
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const size_t end = std::min(line.find_first_of(kSpaces), line.size());
    args.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
  return args;
}

void AppendError(std::string& out, std::string_view message) { AppendLine(out, '-', message); }

void AppendSimple(std::string& out, std::string_view message) { AppendLine(out, '+', message); }

void AppendInteger(std::string& out, int64_t value) { AppendNumberLine(out, ':', value); }

void AppendBulk(std::string& out, std::string_view bytes) {
  AppendNumberLine(out, '$', static_cast<int64_t>(bytes.size()));
  out += bytes;
  out += kCrlf;
}

void AppendArrayHeader(std::string& out, size_t count) {
  AppendNumberLine(out, '*', static_cast<int64_t>(count));
}

void AppendNull(std::string& out, int protocol) { out += protocol >= 3 ? "_\r\n" : "$-1\r\n"; }

}  // namespace shardctl::common
