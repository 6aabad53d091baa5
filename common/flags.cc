#include "common/flags.h"

#include <algorithm>

#include "common/duration.h"
#include "common/size.h"

namespace shardctl::common {
namespace {

constexpr size_t kHelpColumn = 27;
constexpr size_t kWidth = 100;

Error Usage(const FlagTable& table, const std::string& what) {
  return Error(what + " (" + table.help_hint + ")");
}

const Flag* FindShort(const FlagTable& table, std::string_view word) {
  if (word.size() != 2 || word[0] != '-' || word[1] == '-') return nullptr;
  auto found = std::find_if(table.flags.begin(), table.flags.end(),
                            [&](const Flag& flag) { return flag.short_name == word[1]; });
  return found == table.flags.end() ? nullptr : &*found;
}

Error Unknown(const FlagTable& table, const std::string& name) {
  if (std::find(table.elsewhere.begin(), table.elsewhere.end(), name) != table.elsewhere.end()) {
    return Usage(table, "--" + name + " does not apply to " + table.command);
  }
  const std::string hint = table.suggest ? table.suggest(name) : "";
  return Error("unknown flag --" + name + " (" +
               (hint.empty() ? "" : "did you mean --" + hint + "? ") + table.help_hint + ")");
}

// A word that is not a flag: the command's positional argument, or an error.
Status Positional(const FlagTable& table, const std::string& word) {
  if (table.positional && word != "--") {
    auto taken = table.positional(word);
    if (!taken.ok()) return taken.error();
    if (*taken) return Ok();
  }
  return Usage(table, "unexpected argument \"" + word + "\"");
}

std::string Placeholder(const Flag& flag) {
  if (!flag.value_name.empty()) return flag.value_name;
  switch (flag.type) {
    case FlagType::kSwitch:
      return "";
    case FlagType::kNumber:
      return "N";
    case FlagType::kSize:
      return "SIZE";
    case FlagType::kDuration:
      return "TIME";
    case FlagType::kText:
      return "VALUE";
    case FlagType::kFile:
      return "FILE";
    case FlagType::kDirectory:
      return "DIR";
    case FlagType::kDynamic:
      return "NAME";
  }
  return "VALUE";
}

FlagValue CompletionOf(FlagType type) {
  switch (type) {
    case FlagType::kSwitch:
      return FlagValue::kNone;
    case FlagType::kFile:
      return FlagValue::kFile;
    case FlagType::kDirectory:
      return FlagValue::kDirectory;
    case FlagType::kDynamic:
      return FlagValue::kDynamic;
    default:
      return FlagValue::kAny;
  }
}

// Appends `line` and a newline to `out`, without trailing spaces (a row with no help).
void EndLine(std::string_view line, std::string& out) {
  while (line.ends_with(' ')) line.remove_suffix(1);
  out.append(line).append("\n");
}

// Appends `text` wrapped into lines starting at the help column; `line` holds what is already on
// the current line (the flag's name).
void AppendWrapped(std::string_view text, std::string& line, std::string& out) {
  const std::string indent(kHelpColumn, ' ');
  size_t lead = 0;
  while (lead < text.size() && text[lead] == ' ') ++lead;
  const std::string hanging = indent + std::string(lead, ' ');
  line += std::string(lead, ' ');
  text.remove_prefix(lead);
  bool first = true;
  while (!text.empty()) {
    const size_t end = std::min(text.find(' '), text.size());
    const std::string_view word = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!first && line.size() + 1 + word.size() > kWidth) {
      EndLine(line, out);
      line = hanging;
      first = true;
    }
    line += (first ? "" : " ") + std::string(word);
    first = false;
  }
  EndLine(line, out);
}

void AppendRow(const Flag& flag, std::string& out) {
  std::string line = "  ";
  if (flag.short_name != 0) line += std::string("-") + flag.short_name + ", ";
  line += "--" + flag.name;
  if (const std::string value = Placeholder(flag); !value.empty()) line += " " + value;
  const std::string indent(kHelpColumn, ' ');
  if (line.size() + 1 > kHelpColumn) {
    out += line + "\n";
    line = indent;
  } else {
    line.resize(kHelpColumn, ' ');
  }
  std::string_view help = flag.help;
  bool first = true;
  while (first || !help.empty()) {
    const size_t end = std::min(help.find('\n'), help.size());
    if (!first) line = indent;
    AppendWrapped(help.substr(0, end), line, out);
    help.remove_prefix(std::min(end + 1, help.size()));
    first = false;
  }
}

}  // namespace

const Flag* FindFlag(const FlagTable& table, std::string_view name) {
  auto found = std::find_if(table.flags.begin(), table.flags.end(),
                            [&](const Flag& flag) { return flag.name == name; });
  return found == table.flags.end() ? nullptr : &*found;
}

Status ParseFlags(const FlagTable& table, std::span<const std::string> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const Flag* flag = FindShort(table, arg);
    std::optional<std::string> inline_value;
    if (flag == nullptr) {
      if (!arg.starts_with("--") || arg.size() == 2) {
        if (auto status = Positional(table, arg); !status.ok()) return status;
        continue;
      }
      std::string name = arg.substr(2);
      if (size_t equals = name.find('='); equals != std::string::npos) {
        inline_value = name.substr(equals + 1);
        name.resize(equals);
      }
      flag = FindFlag(table, name);
      if (flag == nullptr) return Unknown(table, name);
    }
    std::string value;
    if (flag->type == FlagType::kSwitch) {
      if (inline_value) return Usage(table, "--" + flag->name + " takes no value");
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      value = args[++i];
    } else {
      return Usage(table, "--" + flag->name + " needs a value");
    }
    if (flag->apply) {
      if (auto status = flag->apply(value); !status.ok()) return status;
    }
    if (flag->stops) return Ok();
  }
  return Ok();
}

std::vector<CompletionFlag> CompletionFlags(const std::vector<Flag>& flags) {
  std::vector<CompletionFlag> completion;
  for (const auto& flag : flags) {
    if (!flag.hidden) completion.push_back({flag.name, CompletionOf(flag.type)});
  }
  return completion;
}

std::string FormatOptions(const std::vector<Flag>& flags, std::string_view group) {
  std::string out;
  for (const auto& flag : flags) {
    if (!flag.hidden && flag.group == group) AppendRow(flag, out);
  }
  return out;
}

std::string FillOptions(std::string_view text, const std::vector<Flag>& flags) {
  std::string out;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line == "{options}") {
      out += FormatOptions(flags);
    } else if (line.starts_with("{options ") && line.ends_with("}")) {
      out += FormatOptions(flags, line.substr(9, line.size() - 10));
    } else {
      out.append(line).append("\n");
    }
  }
  return out;
}

Result<uint64_t> ParseSizeFlag(std::string_view flag, std::string_view text, uint64_t minimum,
                               std::string_view example) {
  auto bytes = ParseSize(text);
  if (!bytes || *bytes < minimum) {
    return Error("--" + std::string(flag) + ": expected a size of at least " + FormatSize(minimum) +
                 " (e.g. " + std::string(example) + "), got \"" + std::string(text) + "\"");
  }
  return *bytes;
}

Result<std::chrono::milliseconds> ParsePositiveDurationFlag(std::string_view flag,
                                                            std::string_view text) {
  auto duration = ParseDuration(text);
  if (!duration) return duration.error().Context("--" + std::string(flag));
  if (duration->count() <= 0) {
    return Error("--" + std::string(flag) + ": must be more than 0 (e.g. 5s), got \"" +
                 std::string(text) + "\"");
  }
  return *duration;
}

Result<std::string> ParseFileFlag(std::string_view flag, std::string_view text) {
  if (text.empty()) return Error("--" + std::string(flag) + ": give a file name");
  return std::string(text);
}

std::function<Status(const std::string&)> StoreFile(std::string& field, std::string_view flag) {
  return [&field, flag](const std::string& value) -> Status {
    auto file = ParseFileFlag(flag, value);
    if (!file) return file.error();
    field = *file;
    return Ok();
  };
}

Flag SwitchFlag(std::string name, bool& target, std::string help, std::string group) {
  return {.name = std::move(name),
          .help = std::move(help),
          .apply =
              [&target](const std::string&) {
                target = true;
                return Ok();
              },
          .group = std::move(group)};
}

Flag TextFlag(std::string name, FlagType type, std::string value_name, std::string& target,
              std::string help, std::string group) {
  return {.name = std::move(name),
          .type = type,
          .value_name = std::move(value_name),
          .help = std::move(help),
          .apply =
              [&target](const std::string& value) {
                target = value;
                return Ok();
              },
          .group = std::move(group)};
}

}  // namespace shardctl::common
