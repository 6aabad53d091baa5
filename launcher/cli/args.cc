#include "launcher/cli/args.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/duration.h"
#include "common/numbers.h"
#include "launcher/ops/top.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

const std::vector<std::string> kCommands = {
    "plan",      "up",         "status", "down", "restart",   "logs", "rebalance-roles",
    "rebalance", "move-slots", "scale",  "save", "supervise", "help", "bench",
    "top",       "reload-tls"};

// Spec keys a command accepts besides the shared --name/--state-dir/--config.
bool TakesFullSpec(const std::string& command) { return command == "plan" || command == "up"; }

// Commands that take one positional SHARD argument.
bool TakesShard(const std::string& command) { return command == "restart" || command == "logs"; }

// Flags without a value, and the commands that accept them.
const std::map<std::string, std::set<std::string>> kSwitches = {
    {"json",
     {"plan", "up", "status", "down", "restart", "rebalance-roles", "rebalance", "move-slots",
      "scale", "save", "reload-tls"}},
    {"dry-run", {"up", "rebalance", "move-slots", "scale", "reload-tls"}},
    {"foreground", {"up"}},
    {"purge", {"down"}},
    {"leave", {"down"}},
    {"rolling", {"restart"}},
    {"discard-data", {"restart"}},
    {"follow", {"logs"}},
    {"allow-no-auth", {"plan", "up"}},
    {"tls-also-plain", {"plan", "up"}},
    {"cluster", {"status"}},
};

// Flags with a value that are not spec settings.
const std::map<std::string, std::set<std::string>> kValueFlags = {
    {"config",
     {"plan", "up", "status", "down", "restart", "logs", "rebalance-roles", "rebalance",
      "move-slots", "scale", "save", "supervise", "top", "reload-tls"}},
    {"by", {"rebalance"}},
    {"threshold", {"rebalance"}},
    {"to", {"move-slots"}},
    {"migration", {"rebalance", "move-slots", "scale"}},
    {"sysfs-root", {"plan"}},
    {"lines", {"logs"}},
    {"ready-fd", {"supervise"}},
    {"interval", {"top"}},
    {"sort", {"top"}},
    {"count", {"top"}},
};

// Flags nobody types: `up` passes --ready-fd to the supervisor it starts.
bool IsInternalFlag(std::string_view flag) { return flag == "ready-fd"; }

common::FlagValue ValueOf(std::string_view flag) {
  if (flag == "config" || flag == "password-file" || flag == "tls-cert" || flag == "tls-key" ||
      flag == "tls-ca") {
    return common::FlagValue::kFile;
  }
  if (flag == "state-dir" || flag == "sysfs-root") return common::FlagValue::kDirectory;
  if (flag == "name") return common::FlagValue::kDynamic;
  return common::FlagValue::kAny;
}

std::vector<std::string_view> KnownFlags() {
  std::vector<std::string_view> flags(SpecKeys().begin(), SpecKeys().end());
  for (const auto& [flag, commands] : kSwitches) flags.push_back(flag);
  for (const auto& [flag, commands] : kValueFlags) flags.push_back(flag);
  flags.push_back("help");
  return flags;
}

std::string UnknownFlag(const std::string& flag) {
  auto known = KnownFlags();
  std::string hint = ClosestKey(flag, known);
  return "unknown flag --" + flag + (hint.empty() ? "" : " (did you mean --" + hint + "?)") +
         "; see shardctl --help";
}

bool Applies(const std::string& flag, const std::string& command) {
  if (IsSpecKey(flag)) {
    return TakesFullSpec(command) || flag == "name" || flag == "state-dir" ||
           (command == "restart" && flag == "engine") ||
           (command == "scale" && (flag == "shards" || flag == "cpus" || flag == "reserve-cpus"));
  }
  if (auto it = kSwitches.find(flag); it != kSwitches.end()) return it->second.count(command);
  if (auto it = kValueFlags.find(flag); it != kValueFlags.end()) return it->second.count(command);
  return false;
}

// `top`'s own flags: how often, in which order, how many times.
common::Status ApplyTopFlag(const std::string& flag, const std::string& value,
                            Invocation& invocation) {
  if (flag == "interval") {
    auto interval = common::ParseDuration(value);
    if (!interval.ok() || interval->count() < 100) {
      return Error("--interval: \"" + value + "\" is not a duration of at least 100ms (e.g. 1s)");
    }
    invocation.interval = *interval;
  } else if (flag == "sort") {
    if (!ParseTopSort(value)) {
      return Error("--sort: \"" + value +
                   "\" is not a sort key (use shard, ops, mem, cpu, clients or hits)");
    }
    invocation.sort = value;
  } else {
    std::optional<int> count = common::ParseIntegerIn(value, 1, 1000000);
    if (!count) return Error("--count: \"" + value + "\" is not a number of refreshes (e.g. 5)");
    invocation.count = *count;
  }
  return common::Ok();
}

common::Status ApplyValueFlag(const std::string& flag, const std::string& value,
                              Invocation& invocation) {
  if (IsSpecKey(flag)) {
    invocation.settings.push_back({flag, value, "--" + flag});
  } else if (flag == "config") {
    invocation.config_file = value;
  } else if (flag == "sysfs-root") {
    invocation.sysfs_root = value;
  } else if (flag == "lines") {
    std::optional<int> lines = common::ParseInteger<int>(value);
    if (!lines || *lines < 0) return Error("--lines: \"" + value + "\" is not a number of lines");
    invocation.lines = *lines;
  } else if (flag == "interval" || flag == "sort" || flag == "count") {
    return ApplyTopFlag(flag, value, invocation);
  } else if (flag == "by") {
    invocation.balance_by = value;
  } else if (flag == "threshold") {
    invocation.threshold = value;
  } else if (flag == "migration") {
    invocation.migration = value;
  } else if (flag == "to") {
    std::optional<int> shard = common::ParseInteger<int>(value);
    if (!shard || *shard < 0) {
      return Error("--to: \"" + value + "\" is not a shard index (shards are numbered 0, 1, ...)");
    }
    invocation.to_shard = *shard;
  } else if (flag == "ready-fd") {
    std::optional<int> fd = common::ParseInteger<int>(value);
    if (!fd || *fd < 0) {
      return Error("--ready-fd: \"" + value + "\" is not a file descriptor number");
    }
    invocation.ready_fd = *fd;
  }
  return common::Ok();
}

void ApplySwitch(const std::string& flag, Invocation& invocation) {
  if (flag == "json") invocation.json = true;
  if (flag == "dry-run") invocation.dry_run = true;
  if (flag == "foreground") invocation.foreground = true;
  if (flag == "purge") invocation.purge = true;
  if (flag == "leave") invocation.leave = true;
  if (flag == "rolling") invocation.rolling = true;
  if (flag == "discard-data") invocation.discard_data = true;
  if (flag == "follow") invocation.follow = true;
  if (flag == "cluster") invocation.cluster = true;
  // A spec setting written as a switch: `--allow-no-auth` is allow-no-auth = true.
  if (flag == "allow-no-auth" || flag == "tls-also-plain") {
    invocation.settings.push_back({flag, "true", "--" + flag});
  }
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
          "move-slots, scale, save, bench)");
    }
  }
  return invocation;
}

}  // namespace

const std::vector<std::string>& CommandNames() { return kCommands; }

std::vector<common::CompletionFlag> CommandFlags(const std::string& command) {
  std::vector<common::CompletionFlag> flags;
  if (command != "help" && command != "bench") {
    for (std::string_view key : SpecKeys()) {
      const std::string flag(key);
      if (Applies(flag, command) && !kSwitches.count(flag)) flags.push_back({flag, ValueOf(key)});
    }
    for (const auto& [flag, commands] : kValueFlags) {
      if (commands.count(command) && !IsInternalFlag(flag)) flags.push_back({flag, ValueOf(flag)});
    }
    for (const auto& [flag, commands] : kSwitches) {
      if (commands.count(command)) flags.push_back({flag, common::FlagValue::kNone});
    }
  }
  flags.push_back({"help", common::FlagValue::kNone});
  return flags;
}

Result<Invocation> ParseArgs(const std::vector<std::string>& args) {
  auto parsed = ParseCommand(args);
  if (!parsed.ok() || parsed->command == "help" || parsed->command == "version") return parsed;
  Invocation invocation = std::move(parsed).value();
  const std::string& command = invocation.command;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      invocation.help_topic = command;
      return invocation;
    }
    if (arg == "-f" && command == "logs") {
      invocation.follow = true;
      continue;
    }
    if (TakesShard(command) && !arg.empty() && arg[0] != '-' && !invocation.shard) {
      const int shard = common::ParseInteger<int>(arg).value_or(-1);
      if (shard < 0) {
        return Error(command + ": \"" + arg +
                     "\" is not a shard index (shards are numbered 0, 1, ...)");
      }
      invocation.shard = shard;
      continue;
    }
    if (command == "move-slots" && !arg.empty() && arg[0] != '-' && !invocation.slot_ranges) {
      invocation.slot_ranges = arg;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return Error(command + ": unexpected argument \"" + arg +
                   "\" (options are written --name value; see shardctl " + command + " --help)");
    }
    std::string flag = arg.substr(2);
    std::optional<std::string> inline_value;
    if (size_t equals = flag.find('='); equals != std::string::npos) {
      inline_value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    }
    bool is_switch = kSwitches.count(flag) > 0;
    if (!is_switch && !IsSpecKey(flag) && !kValueFlags.count(flag)) return Error(UnknownFlag(flag));
    if (!Applies(flag, command)) {
      return Error("--" + flag + " does not apply to " + command + " (see shardctl " + command +
                   " --help)");
    }
    if (is_switch) {
      if (inline_value) return Error("--" + flag + " takes no value");
      ApplySwitch(flag, invocation);
      continue;
    }
    if (!inline_value && i + 1 >= args.size()) {
      return Error("--" + flag + " needs a value (e.g. --" + flag + " " +
                   (flag == "shards" ? "8" : "VALUE") + ")");
    }
    if (!inline_value && args[i + 1].rfind("--", 0) == 0) {  // "--shards --help": value missing
      return Error("--" + flag + " needs a value, got the flag " + args[i + 1] + " (e.g. --" +
                   flag + " " + (flag == "shards" ? "8" : "VALUE") + ")");
    }
    std::string value = inline_value ? *inline_value : args[++i];
    if (auto status = ApplyValueFlag(flag, value, invocation); !status.ok()) return status.error();
  }
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
