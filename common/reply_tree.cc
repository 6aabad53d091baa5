#include "common/reply_tree.h"

#include <string>

#include "common/numbers.h"

namespace shardctl::common {
namespace {

constexpr size_t kMaxDepth = 64;

class Decoder {
 public:
  explicit Decoder(std::string_view frame) : frame_(frame) {}

  Result<ReplyNode> Decode(size_t depth) {
    if (depth > kMaxDepth) return Error("reply nested too deeply");
    std::string_view line;
    if (!ReadLine(line) || line.empty()) return Error("truncated reply");
    ReplyNode node;
    node.type = line[0];
    line.remove_prefix(1);
    switch (node.type) {
      case '+':
      case '-':
      case ',':
      case '#':
      case '(':
        node.text = line;
        return node;
      case '_':
        return node;
      case ':':
        if (!ParseInt(line, node.integer)) return Error("bad integer '" + std::string(line) + "'");
        return node;
      case '$':
      case '!':
      case '=':
        return DecodeBulk(std::move(node), line);
      case '*':
      case '%':
      case '~':
      case '>':
      case '|':
        return DecodeAggregate(std::move(node), line, depth);
      default:
        return Error("unknown reply type '" + std::string(1, node.type) + "'");
    }
  }

  bool AtEnd() const { return pos_ == frame_.size(); }

 private:
  bool ReadLine(std::string_view& line) {
    const size_t end = frame_.find("\r\n", pos_);
    if (end == std::string_view::npos) return false;
    line = frame_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return true;
  }

  // RESP allows a '+' sign on integers.
  static bool ParseInt(std::string_view text, int64_t& out) {
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    std::optional<int64_t> value = ParseInteger<int64_t>(text);
    if (value) out = *value;
    return value.has_value();
  }

  Result<ReplyNode> DecodeBulk(ReplyNode node, std::string_view line) {
    int64_t length = 0;
    if (!ParseInt(line, length) || length < -1) return Error("bad bulk length");
    if (length == -1) {
      node.type = '_';
      return node;
    }
    const auto size = static_cast<size_t>(length);
    if (frame_.size() - pos_ < size + 2 || frame_.substr(pos_ + size, 2) != "\r\n") {
      return Error("truncated reply");
    }
    node.text = frame_.substr(pos_, size);
    pos_ += size + 2;
    return node;
  }

  Result<ReplyNode> DecodeAggregate(ReplyNode node, std::string_view line, size_t depth) {
    int64_t count = 0;
    if (!ParseInt(line, count) || count < -1) return Error("bad aggregate length");
    if (count == -1) {
      node.type = '_';
      return node;
    }
    const bool pairs = node.type == '%' || node.type == '|';
    const int64_t elements = pairs ? count * 2 : count;
    if (elements > static_cast<int64_t>(frame_.size() - pos_) / 3) return Error("truncated reply");
    node.elements.reserve(static_cast<size_t>(elements));
    for (int64_t i = 0; i < elements; ++i) {
      auto element = Decode(depth + 1);
      if (!element) return element;
      node.elements.push_back(std::move(*element));
    }
    // An attribute annotates the reply that follows it; control-plane callers ignore it.
    if (node.type == '|') return Decode(depth);
    return node;
  }

  std::string_view frame_;
  size_t pos_ = 0;
};

}  // namespace

Result<ReplyNode> DecodeReply(std::string_view frame) {
  Decoder decoder(frame);
  auto node = decoder.Decode(0);
  if (!node) return node;
  if (!decoder.AtEnd()) return Error("bytes after the reply");
  return node;
}

}  // namespace shardctl::common
