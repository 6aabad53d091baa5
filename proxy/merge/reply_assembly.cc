#include "proxy/merge/reply_assembly.h"

#include "common/resp.h"
#include "proxy/commands/request.h"

namespace shardctl::proxy {

// Defined here, where ReplyAssembly is complete.
PendingReply::PendingReply() = default;
PendingReply::~PendingReply() = default;
PendingReply::PendingReply(PendingReply&&) noexcept = default;
PendingReply& PendingReply::operator=(PendingReply&&) noexcept = default;

void PendingReply::Reset() {
  bytes.clear();
  ready = close_after = silent = progressed = has_trailer = false;
  assembly.reset();
  stamp = {};
}

std::optional<std::string> ReplyAssembly::Add(size_t part, std::string_view frame) {
  if (replies_.empty()) replies_.resize(parts());
  replies_[part].assign(frame);
  if (++received_ < parts()) return std::nullopt;
  std::vector<std::string_view> views(replies_.begin(), replies_.end());
  std::string reply = Assemble(views);
  replies_.clear();
  return reply;
}

namespace {

class Split final : public ReplyAssembly {
 public:
  explicit Split(SplitRequest split) : split_(std::move(split)) {}
  size_t parts() const override { return split_.parts.size(); }

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    return MergeReplies(split_, replies);
  }
  SplitRequest split_;
};

class FanOut : public ReplyAssembly {
 public:
  FanOut(FanOutMerge merge, size_t shards, size_t rotate, int64_t limit = -1)
      : merge_(merge), shards_(shards), rotate_(rotate), limit_(limit) {}
  size_t parts() const override { return shards_; }

 protected:
  std::string Assemble(std::span<const std::string_view> replies) override {
    return MergeFanOut(merge_, replies, rotate_, limit_);
  }

 private:
  FanOutMerge merge_;
  size_t shards_;
  size_t rotate_;
  int64_t limit_;
};

class ScriptLoad final : public FanOut {
 public:
  ScriptLoad(size_t shards, std::function<void(std::string sha)> remember)
      : FanOut(FanOutMerge::kSameReply, shards, 0), remember_(std::move(remember)) {}

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    std::string merged = FanOut::Assemble(replies);
    // Every shard answered the same sha: the script is loaded everywhere.
    if (std::optional<std::string_view> sha = ShaOfBulkReply(merged)) remember_(std::string(*sha));
    return merged;
  }
  std::function<void(std::string sha)> remember_;
};

class AllOk final : public FanOut {
 public:
  AllOk(size_t shards, std::function<void(bool accepted)> done)
      : FanOut(FanOutMerge::kAllOk, shards, 0), done_(std::move(done)) {}

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    std::string merged = FanOut::Assemble(replies);
    done_(merged == "+OK\r\n");
    return merged;
  }
  std::function<void(bool accepted)> done_;
};

class Scan final : public ReplyAssembly {
 public:
  Scan(size_t shard, size_t shards) : shard_(shard), shards_(shards) {}
  size_t parts() const override { return 1; }

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    return RewriteScanReply(replies[0], shard_, shards_);
  }
  size_t shard_;
  size_t shards_;
};

}  // namespace

std::unique_ptr<ReplyAssembly> SplitAssembly(SplitRequest split) {
  return std::make_unique<Split>(std::move(split));
}

std::unique_ptr<ReplyAssembly> FanOutAssembly(FanOutMerge merge, size_t shards, size_t rotate,
                                              int64_t limit) {
  return std::make_unique<FanOut>(merge, shards, rotate, limit);
}

std::unique_ptr<ReplyAssembly> ScriptLoadAssembly(size_t shards,
                                                  std::function<void(std::string sha)> remember) {
  return std::make_unique<ScriptLoad>(shards, std::move(remember));
}

std::unique_ptr<ReplyAssembly> AllOkAssembly(size_t shards,
                                             std::function<void(bool accepted)> done) {
  return std::make_unique<AllOk>(shards, std::move(done));
}

std::unique_ptr<ReplyAssembly> ScanAssembly(size_t shard, size_t shards) {
  return std::make_unique<Scan>(shard, shards);
}

std::string InfoFrame(std::string_view text, int protocol) {
  std::string out;
  if (protocol >= 3) {
    constexpr std::string_view kFormat = "txt:";  // Redis sends INFO as verbatim text
    out += '=' + std::to_string(text.size() + kFormat.size()) + "\r\n";
    out.append(kFormat).append(text).append("\r\n");
  } else {
    common::AppendBulk(out, text);
  }
  return out;
}

std::optional<std::string_view> ShaOfBulkReply(std::string_view frame) {
  constexpr size_t kShaLength = 40;
  constexpr std::string_view kHeader = "$40\r\n";
  if (frame.size() != kHeader.size() + kShaLength + 2 || !frame.starts_with(kHeader) ||
      !frame.ends_with("\r\n")) {
    return std::nullopt;
  }
  const std::string_view sha = frame.substr(kHeader.size(), kShaLength);
  if (sha.find_first_not_of("0123456789abcdef") != std::string_view::npos) return std::nullopt;
  return sha;
}

}  // namespace shardctl::proxy
