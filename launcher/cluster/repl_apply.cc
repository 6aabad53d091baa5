#include "launcher/cluster/repl_apply.h"

#include <type_traits>

#include "common/repl_commands.h"
#include "launcher/cluster/expiry_hold.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;
using common::Status;

namespace {

Error Failed(const Command& command, const RedisConnection& connection, const Error& error) {
  return Error(command.front() + " on " + connection.address() + " failed: " + error.message() +
               " (the cluster no longer mirrors the source)");
}

}  // namespace

Result<RedisConnection*> ReplApplier::Connection(int primary) {
  if (primary == common::SlotTable::kNoNode) return Error("a slot of the cluster has no owner");
  auto found = connections_.find(primary);
  if (found != connections_.end()) return &found->second;
  const auto& node = table_.primaries()[static_cast<size_t>(primary)];
  auto connection = RedisConnection::Connect(access_, node.host, node.port, timeout_);
  if (!connection.ok()) return connection.error();
  if (expiry_held_) {
    if (auto declared = DeclareImportSource(*connection); !declared.ok()) return declared.error();
  }
  return &connections_.emplace(primary, std::move(connection).value()).first->second;
}

Result<std::vector<std::string>> ReplApplier::RunAll(int primary,
                                                     const std::vector<Command>& commands) {
  auto connection = Connection(primary);
  if (!connection.ok()) return connection.error();
  auto replies = (*connection)->Pipeline(commands);
  if (!replies.ok()) return replies.error();
  std::vector<std::string> texts;
  for (size_t i = 0; i < replies->size(); ++i) {
    if (!(*replies)[i].ok()) return Failed(commands[i], **connection, (*replies)[i].error());
    texts.push_back(std::move((*replies)[i]).value());
  }
  applied_ += commands.size();
  return texts;
}

Status ReplApplier::Queue(int primary, Command command) {
  if (primary == common::SlotTable::kNoNode) return Error("a slot of the cluster has no owner");
  queued_[primary].push_back(std::move(command));
  ++queued_count_;
  return common::Ok();
}

Status ReplApplier::Apply(const common::ReplPlan& plan) {
  for (const auto& action : plan.actions) {
    Status queued = std::visit(
        [&](const auto& step) -> Status {
          using Step = std::decay_t<decltype(step)>;
          if constexpr (std::is_same_v<Step, common::Forward>) {
            return Queue(table_.PrimaryFor(step.slot), step.command);
          } else if constexpr (std::is_same_v<Step, common::ForwardTransaction>) {
            const int primary = table_.PrimaryFor(step.slot);
            if (auto begun = Queue(primary, {"MULTI"}); !begun.ok()) return begun;
            for (const auto& command : step.commands) (void)Queue(primary, command);
            return Queue(primary, {"EXEC"});
          } else if constexpr (std::is_same_v<Step, common::FanOut>) {
            return FanOut(step.command);
          } else if constexpr (std::is_same_v<Step, common::CrossSlot>) {
            return CoLocate(step);
          } else {
            return Error(step.reason);
          }
        },
        action);
    if (!queued.ok()) return queued;
  }
  return common::Ok();
}

std::optional<std::string> ReplApplier::Refusal(const common::ReplPlan& plan) const {
  for (const auto& action : plan.actions) {
    if (const auto* problem = std::get_if<common::Problem>(&action)) return problem->reason;
    const auto* fan_out = std::get_if<common::FanOut>(&action);
    if (!one_of_several_ || fan_out == nullptr) continue;
    const std::string name = common::UpperCase(fan_out->command.front());
    if (name == "FLUSHALL" || name == "FLUSHDB") {
      return name +
             ": it emptied one primary of the source cluster, whose keys are those of its slots "
             "only; the other primaries' streams are applied in no common order, so the cluster "
             "cannot follow it (import into an empty deployment again)";
    }
  }
  return std::nullopt;
}

Status ReplApplier::FanOut(common::ReplArgs command) {
  if (one_of_several_) {
    const std::string name = common::UpperCase(command.front());
    const std::string sub = command.size() > 1 ? common::UpperCase(command[1]) : "";
    const bool load = name == "FUNCTION" && sub == "LOAD" && command.size() > 2 &&
                      common::UpperCase(command[2]) != "REPLACE";
    if (load) command.insert(command.begin() + 2, "REPLACE");
    // FUNCTION RESTORE payload [APPEND|REPLACE|FLUSH]: the default APPEND fails on the second.
    if (name == "FUNCTION" && sub == "RESTORE" && command.size() == 3) command.push_back("REPLACE");
  }
  for (size_t i = 0; i < table_.primaries().size(); ++i) (void)Queue(static_cast<int>(i), command);
  return common::Ok();
}

bool ReplApplier::AlreadyDone(const Command& command, const Error& error) const {
  // A library deleted on each primary of a source cluster arrives once per stream: the first
  // deletes it here, the others find it gone.
  return one_of_several_ && command.size() > 1 && common::UpperCase(command[0]) == "FUNCTION" &&
         common::UpperCase(command[1]) == "DELETE" &&
         error.message().find("Library not found") != std::string::npos;
}

Status ReplApplier::Flush() {
  // Every primary gets its commands before any reply is read: they work at once.
  for (auto& [primary, commands] : queued_) {
    auto connection = Connection(primary);
    if (!connection.ok()) return connection.error();
    if (auto sent = (*connection)->Send(commands); !sent.ok()) return sent;
  }
  for (auto& [primary, commands] : queued_) {
    RedisConnection* connection = &connections_.at(primary);
    auto replies = connection->Receive(commands.size());
    if (!replies.ok()) return replies.error();
    for (size_t i = 0; i < replies->size(); ++i) {
      if ((*replies)[i].ok() || AlreadyDone(commands[i], (*replies)[i].error())) continue;
      return Failed(commands[i], *connection, (*replies)[i].error());
    }
    applied_ += commands.size();
  }
  queued_.clear();
  queued_count_ = 0;
  return common::Ok();
}

}  // namespace shardctl::launcher
