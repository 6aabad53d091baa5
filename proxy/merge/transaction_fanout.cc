// EXEC of a transaction holding server-wide commands (CONFIG SET, FLUSHALL, DBSIZE ...):
//
//   home primary (the keys' slot): MULTI <every command> EXEC ──▶ [r0, r1, r2]
//   each other primary:            MULTI <server-wide ones> EXEC ──▶ [s1]
//   client: [r0, MergeFanOut(merge of r1's command, {r1, s1 of each other}), r2]
//
// Commands any one shard answers (CONFIG GET) run only at home. The home's reply decides the
// shape: EXECABORT or a null (aborted) reply is the client's as is.
#include "common/resp.h"
#include "proxy/merge/frames.h"
#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {
namespace {

class TransactionFanOut final : public ReplyAssembly {
 public:
  TransactionFanOut(std::vector<ServerWideCommand> commands, size_t shards)
      : commands_(std::move(commands)), shards_(shards) {}
  size_t parts() const override { return shards_; }

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    return MergeTransactionFanOut(replies, commands_);
  }
  std::vector<ServerWideCommand> commands_;
  size_t shards_;
};

}  // namespace

std::string MergeTransactionFanOut(std::span<const std::string_view> replies,
                                   std::span<const ServerWideCommand> commands) {
  if (replies.empty()) return MergeError("no shard to ask");
  auto home = ArrayElements(replies[0]);
  if (!home) return std::string(replies[0]);  // EXECABORT, an error, or null: aborted
  std::vector<std::string> merged(home->begin(), home->end());
  std::vector<std::vector<std::string_view>> others;
  for (size_t r = 1; r < replies.size(); ++r) {
    auto elements = ArrayElements(replies[r]);
    others.push_back(elements ? *elements : std::vector<std::string_view>{});
  }
  size_t sent_everywhere = 0;
  for (const ServerWideCommand& command : commands) {
    if (!command.plan.every_shard) continue;
    const size_t index = sent_everywhere++;
    if (command.position >= merged.size()) return MergeError("transaction replies missing");
    std::vector<std::string_view> shard_replies{merged[command.position]};
    for (size_t r = 1; r < replies.size(); ++r) {
      // A shard whose transaction failed as a whole: its error stands for each command.
      shard_replies.push_back(index < others[r - 1].size() ? others[r - 1][index] : replies[r]);
    }
    merged[command.position] =
        MergeFanOut(command.plan.merge, shard_replies, 0, command.plan.limit);
  }
  std::string out;
  common::AppendArrayHeader(out, merged.size());
  for (const std::string& element : merged) out += element;
  return out;
}

std::unique_ptr<ReplyAssembly> TransactionFanOutAssembly(std::vector<ServerWideCommand> commands,
                                                         size_t shards) {
  return std::make_unique<TransactionFanOut>(std::move(commands), shards);
}

}  // namespace shardctl::proxy
