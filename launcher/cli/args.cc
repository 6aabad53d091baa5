#include "launcher/cli/args.h"

#include <algorithm>

#include "common/flags.h"
#include "common/numbers.h"
#include "launcher/cli/flag_rows.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

const std::vector<std::string> kCommands = {
    "plan",      "up",         "status", "down",    "restart",   "logs", "rebalance-roles",
    "rebalance", "move-slots", "scale",  "save",    "supervise", "help", "bench",
    "top",       "reload-tls", "backup", "restore", "import"};

// Commands that take one positional SHARD argument.
bool TakesShard(const std::string& command) { return command == "restart" || command == "logs"; }

// The positional words of restart/logs (SHARD) and move-slots (RANGES); false for any other.
Result<bool> TakePositional(const std::string& word, Invocation& invocation) {
  const std::string& command = invocation.command;
  if (word.empty() || word[0] == '-') return false;
  if (TakesShard(command) && !invocation.shard) {
    const int shard = common::ParseInteger<int>(word).value_or(-1);
    if (shard < 0) {
      return Error(command + ": \"" + word +
                   "\" is not a shard index (shards are numbered 0, 1, ...)");
    }
    invocation.shard = shard;
    return true;
  }
  if (command == "move-slots" && !invocation.slot_ranges) {
    invocation.slot_ranges = word;
    return true;
  }
  return false;
}

// What a command needs beyond its flags' own checks.
common::Status CheckRequired(const Invocation& invocation) {
  const std::string& command = invocation.command;
  if (command == "scale" &&
      std::none_of(invocation.settings.begin(), invocation.settings.end(),
                   [](const Setting& setting) { return setting.key == "shards"; })) {
    return Error("scale: give the number of primaries wanted (e.g. shardctl scale --shards 8)");
  }
  if (command == "move-slots" && (!invocation.slot_ranges || !invocation.to_shard)) {
    return Error(
        "move-slots: give the slots and the shard to move them to (e.g. shardctl "
        "move-slots 100-200 --to 3)");
  }
  if (command == "restart" && invocation.rolling == invocation.shard.has_value()) {
    return Error("restart: give either a shard index or --rolling (e.g. shardctl restart 3)");
  }
  return common::Ok();
}

Result<Invocation> ParseCommand(const std::vector<std::string>& args) {
  Invocation invocation;
  if (args.empty()) return Error("no command given (try shardctl --help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    invocation.command = "help";
    invocation.help_topic = "";
    return invocation;
  }
  if (first == "--version" || first == "version") {
    invocation.command = "version";
    return invocation;
  }
  if (std::find(kCommands.begin(), kCommands.end(), first) == kCommands.end()) {
    std::vector<std::string_view> known(kCommands.begin(), kCommands.end());
    std::string hint = ClosestKey(first, known);
    return Error("unknown command \"" + first + "\"" +
                 (hint.empty() ? "" : " (did you mean " + hint + "?)") +
                 "; commands: plan, up, status, down (see shardctl --help)");
  }
  invocation.command = first;
  if (first == "help" && args.size() > 1 && args[1] == "--man") {
    invocation.man_page = true;
    return invocation;
  }
  if (first == "help" && args.size() > 1 && args[1] == "--complete") {
    invocation.complete = std::vector<std::string>(args.begin() + 2, args.end());
    return invocation;
  }
  if (first == "help") {
    invocation.help_topic = args.size() > 1 ? args[1] : "";
    bool known =
        invocation.help_topic->empty() ||
        std::find(kCommands.begin(), kCommands.end(), *invocation.help_topic) != kCommands.end();
    if (!known) {
      return Error(
          "help: no command \"" + *invocation.help_topic +
          "\" (commands: plan, up, status, top, down, restart, logs, rebalance-roles, rebalance, "
          "move-slots, scale, save, backup, restore, import, bench)");
    }
  }
  return invocation;
}

}  // namespace

const std::vector<std::string>& CommandNames() { return kCommands; }

std::vector<common::CompletionFlag> CommandFlags(const std::string& command) {
  if (command == "help" || command == "bench") return {{"help", common::FlagValue::kNone}};
  Invocation unused;
  return common::CompletionFlags(CommandRows(command, unused));
}

Result<Invocation> ParseArgs(const std::vector<std::string>& args) {
  auto parsed = ParseCommand(args);
  if (!parsed.ok() || parsed->command == "help" || parsed->command == "version") return parsed;
  Invocation invocation = std::move(parsed).value();
  const std::string& command = invocation.command;
  const common::FlagTable table{
      .command = command,
      .help_hint = "see shardctl " + command + " --help",
      .flags = CommandRows(command, invocation),
      .elsewhere = AllFlagNames(),
      .positional = [&](const std::string& word) { return TakePositional(word, invocation); },
      .suggest =
          [](const std::string& flag) {
            const auto& names = AllFlagNames();
            return ClosestKey(flag, std::vector<std::string_view>(names.begin(), names.end()));
          }};
  const std::span<const std::string> words(args.begin() + 1, args.end());
  if (auto status = common::ParseFlags(table, words); !status.ok()) return status.error();
  if (invocation.help_topic) return invocation;
  if (auto status = CheckRequired(invocation); !status.ok()) return status.error();
  return invocation;
}

Result<Spec> ResolveSpec(const Invocation& invocation) {
  std::vector<Setting> settings;
  if (invocation.config_file) {
    auto from_file = ReadSpecFile(*invocation.config_file);
    if (!from_file.ok()) return from_file.error();
    settings = std::move(from_file).value();
  }
  settings.insert(settings.end(), invocation.settings.begin(), invocation.settings.end());
  return BuildSpec(settings);
}

}  // namespace shardctl::launcher
