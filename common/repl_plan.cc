#include "common/repl_plan.h"

#include <optional>
#include <unordered_map>
#include <utility>

#include "common/numbers.h"
#include "common/repl_colocate.h"
#include "common/repl_commands.h"
#include "common/slots.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

// The command's name as a problem line shows it: upper case, printable, not too long (a name is
// whatever bytes the stream held).
std::string NameOf(const ReplArgs& command) {
  if (command.empty()) return "(an empty command)";
  std::string name;
  for (char c : UpperCase(std::string_view(command[0]).substr(0, 64))) name += PrintableByte(c);
  return name;
}

std::vector<ReplAction> ProblemWith(const ReplArgs& command, std::string_view what) {
  return {Problem{NameOf(command) + ": " + std::string(what)}};
}

std::vector<ReplAction> WrongDb(const ReplArgs& command, int db) {
  return ProblemWith(command,
                     "the source writes to db " + std::to_string(db) + "; a cluster has only db 0");
}

// COPY src dst DB n: a copy into another db of the source, which the cluster does not have.
bool CopiesToOtherDb(const ReplCommandInfo& info, const ReplArgs& command) {
  if (info.name != "COPY") return false;
  for (size_t at = 3; at + 1 < command.size(); ++at) {
    if (UpperCase(command[at]) == "DB") return ParseInteger<int64_t>(command[at + 1]) != 0;
  }
  return false;
}

// MSET, DEL, UNLINK: one command per slot, each key (with its value, for MSET) in the command of
// its slot, slots in the order their first key appears.
std::vector<ReplAction> SplitBySlot(const ReplCommandInfo& info, ReplArgs command,
                                    const std::vector<size_t>& positions) {
  std::vector<Forward> parts;
  std::unordered_map<int, size_t> part_of_slot;
  const size_t step = static_cast<size_t>(info.keys.step);
  for (size_t at : positions) {
    const int slot = KeySlot(command[at]);
    const auto [found, added] = part_of_slot.try_emplace(slot, parts.size());
    if (added) parts.push_back(Forward{.slot = slot, .command = {command[0]}});
    ReplArgs& part = parts[found->second].command;
    part.insert(part.end(), command.begin() + at, command.begin() + at + step);
  }
  if (parts.size() == 1) return {Forward{.slot = parts[0].slot, .command = std::move(command)}};
  return {parts.begin(), parts.end()};
}

// MSETEX across slots: SplitBySlot's parts (the name and the pairs), each given its count of pairs
// and the options after the last pair, NX and XX left out (a primary replicates MSETEX only when
// it set every key, as MSETNX).
std::vector<ReplAction> SplitMsetex(const ReplCommandInfo& info, ReplArgs command,
                                    const std::vector<size_t>& positions) {
  ReplArgs options;
  for (size_t at = positions.back() + 2; at < command.size(); ++at) {
    const std::string option = UpperCase(command[at]);
    if (option != "NX" && option != "XX") options.push_back(command[at]);
  }
  std::vector<ReplAction> parts = SplitBySlot(info, std::move(command), positions);
  for (ReplAction& action : parts) {
    ReplArgs& part = std::get<Forward>(action).command;
    part.insert(part.begin() + 1, std::to_string((part.size() - 1) / 2));
    part.insert(part.end(), options.begin(), options.end());
  }
  return parts;
}

// A command whose keys must change together: one Forward when they share a slot. Across slots,
// MSETNX becomes MSET per slot and MSETEX one MSETEX per slot (a primary replicates either only
// when it set every key, so the condition held); every other command is co-located by the
// executor when it can be (repl_colocate.h), or is a Problem saying why not.
std::vector<ReplAction> KeepTogether(const ReplCommandInfo& info, ReplArgs command,
                                     const std::vector<size_t>& positions) {
  const int slot = KeySlot(command[positions[0]]);
  bool one_slot = true;
  for (size_t at : positions) one_slot = one_slot && KeySlot(command[at]) == slot;
  if (one_slot) return {Forward{.slot = slot, .command = std::move(command)}};
  if (info.name == "MSETNX") {
    command[0] = "MSET";
    return SplitBySlot(info, std::move(command), positions);
  }
  if (info.name == "MSETEX") return SplitMsetex(info, std::move(command), positions);
  if (Result<Colocation> colocation = PlanColocation(command); !colocation) {
    return {Problem{colocation.error().message()}};
  }
  CrossSlot cross{.command = {}, .keys = {}};
  for (size_t at : positions) cross.keys.push_back(command[at]);
  cross.command = std::move(command);
  return {std::move(cross)};
}

std::vector<ReplAction> PlanKeyed(const ReplCommandInfo& info, ReplArgs command, int db) {
  if (db != 0) return WrongDb(command, db);
  Result<std::vector<size_t>> positions = ReplKeyPositions(info, command);
  if (!positions) return {Problem{positions.error().message()}};
  if (positions->empty()) return ProblemWith(command, "no keys, so no slot to send it to");
  if (CopiesToOtherDb(info, command)) {
    return ProblemWith(command, "copies to another db; a cluster has only db 0");
  }
  switch (info.route) {
    case ReplRoute::kIndependentKeys:
      return SplitBySlot(info, std::move(command), *positions);
    case ReplRoute::kKeysTogether:
      return KeepTogether(info, std::move(command), *positions);
    default:
      const int slot = KeySlot(command[positions->front()]);
      return {Forward{.slot = slot, .command = std::move(command)}};
  }
}

bool IsOneOf(std::string_view word, std::string_view words) {
  while (!words.empty()) {
    const size_t space = words.find(' ');
    if (words.substr(0, space) == word) return true;
    words.remove_prefix(space == std::string_view::npos ? words.size() : space + 1);
  }
  return false;
}

// The slot every queued action goes to, when each one is a Forward to the same slot.
std::optional<int> OneSlot(const std::vector<std::vector<ReplAction>>& queued) {
  std::optional<int> slot;
  for (const std::vector<ReplAction>& actions : queued) {
    for (const ReplAction& action : actions) {
      const Forward* forward = std::get_if<Forward>(&action);
      if (forward == nullptr || (slot && *slot != forward->slot)) return std::nullopt;
      slot = forward->slot;
    }
  }
  return slot;
}

}  // namespace

ReplPlan ReplPlanner::Plan(ReplArgs command) {
  ++counts_.commands;
  const ReplCommandInfo* info = command.empty() ? nullptr : FindReplCommand(command[0]);
  const ReplRoute route = info != nullptr ? info->route : ReplRoute::kRefused;
  ReplPlan plan;
  if (route == ReplRoute::kMulti) {
    if (in_transaction_) plan.actions = ProblemWith(command, "inside a transaction already");
    in_transaction_ = true;
  } else if (route == ReplRoute::kExec) {
    plan = in_transaction_ ? Exec() : ReplPlan{.actions = ProblemWith(command, "without MULTI")};
  } else if (route == ReplRoute::kDiscard) {
    in_transaction_ = false;
    queued_.clear();
  } else if (in_transaction_) {
    queued_.push_back(PlanCommand(info, std::move(command)));
  } else {
    plan.actions = PlanCommand(info, std::move(command));
  }
  Count(plan);
  return plan;
}

std::vector<ReplAction> ReplPlanner::PlanCommand(const ReplCommandInfo* info, ReplArgs command) {
  if (info == nullptr) {
    return ProblemWith(command, "unknown command; shardctl does not know where its keys are");
  }
  switch (info->route) {
    case ReplRoute::kSkip:
      ++counts_.skipped;
      return {};
    case ReplRoute::kSelect:
      return PlanSelect(command);
    case ReplRoute::kRefused:
      return ProblemWith(command, info->refusal);
    case ReplRoute::kFanOut:
      return PlanFanOut(std::move(command), info->selected_db_only, info->fan_out_subcommands);
    case ReplRoute::kSingleKey:
    case ReplRoute::kIndependentKeys:
    case ReplRoute::kKeysTogether: {
      std::vector<ReplAction> actions = PlanKeyed(*info, std::move(command), db_);
      if (actions.size() > 1) ++counts_.split;
      return actions;
    }
    default:  // MULTI, EXEC and DISCARD: Plan() handles them before
      return ProblemWith(command, "out of place");
  }
}

std::vector<ReplAction> ReplPlanner::PlanSelect(const ReplArgs& command) {
  const std::optional<int> db =
      command.size() == 2 ? ParseIntegerIn<int>(command[1], 0, INT32_MAX) : std::nullopt;
  if (!db) return ProblemWith(command, "expected one db number");
  db_ = *db;
  ++counts_.skipped;
  return {};
}

std::vector<ReplAction> ReplPlanner::PlanFanOut(ReplArgs command, bool selected_db_only,
                                                std::string_view subcommands) {
  if (!subcommands.empty()) {
    const std::string subcommand = command.size() > 1 ? UpperCase(command[1]) : "";
    if (!IsOneOf(subcommand, subcommands) || subcommand.empty()) {
      return ProblemWith(command, "subcommand '" + subcommand.substr(0, 32) +
                                      "' is not one shardctl mirrors (only " +
                                      std::string(subcommands) + ")");
    }
  }
  if (selected_db_only && db_ != 0) return WrongDb(command, db_);
  return {FanOut{.command = std::move(command)}};
}

ReplPlan ReplPlanner::Exec() {
  in_transaction_ = false;
  ++counts_.transactions;
  std::vector<std::vector<ReplAction>> queued = std::move(queued_);
  queued_.clear();
  ReplPlan plan;
  if (const std::optional<int> slot = OneSlot(queued)) {
    ForwardTransaction transaction{.slot = *slot, .commands = {}};
    for (std::vector<ReplAction>& actions : queued) {
      for (ReplAction& action : actions) {
        transaction.commands.push_back(std::move(std::get<Forward>(action).command));
      }
    }
    plan.actions.push_back(std::move(transaction));
    return plan;
  }
  for (std::vector<ReplAction>& actions : queued) {
    for (ReplAction& action : actions) plan.actions.push_back(std::move(action));
  }
  plan.non_atomic = plan.actions.size() > 1;
  if (plan.non_atomic) ++counts_.non_atomic_transactions;
  return plan;
}

void ReplPlanner::Count(const ReplPlan& plan) {
  for (const ReplAction& action : plan.actions) {
    if (std::holds_alternative<CrossSlot>(action)) ++counts_.cross_slot;
    if (std::holds_alternative<Problem>(action)) ++counts_.problems;
  }
}

}  // namespace shardctl::common
