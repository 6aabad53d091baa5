// One flag table per command, and everything read from it: parsing, the options list of --help
// (and so the man page rendered from it) and shell completion. shardctl, `bench run`, `bench
// compare` and shardproxy each describe their flags as rows; no second list exists.
//
//   rows (name, value type, help line, how to store) ──▶ ParseFlags()      ── argv
//                                                     ├─▶ FillOptions()     ── --help, man page
//                                                     └─▶ CompletionFlags() ── bash/zsh
//
// The one rule of every program: `--flag value` or `--flag=value`; a flag's value is the next
// word unless that word starts with "--" (so "-1" is a value, "--help" is not); a switch takes no
// value. Usage errors are one line naming the flag and ending with where help is.
//
// Pure: no I/O. A row stores its value through its `apply` callback, bound to the caller's
// options struct.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/completion.h"
#include "common/numbers.h"
#include "common/result.h"

namespace shardctl::common {

// What follows a flag: its placeholder in --help and what the shell completes for it.
enum class FlagType {
  kSwitch,     // nothing
  kNumber,     // N
  kSize,       // SIZE (100mb, 1.5gb)
  kDuration,   // TIME (300ms, 5s)
  kText,       // VALUE: anything else (an address, a list, a mode)
  kFile,       // FILE: the shell completes paths
  kDirectory,  // DIR: the shell completes directories
  kDynamic,    // NAME: words from the completion callback (deployment names)
};

// One row of a flag table.
struct Flag {
  std::string name;  // without the leading "--"
  FlagType type = FlagType::kSwitch;
  std::string value_name;  // the placeholder in --help ("HOST:PORT"); empty: the type's
  // The options-list text. Wrapped to fit; a '\n' starts a new line (its leading spaces kept).
  std::string help;
  // Stores the value (a switch gets ""). An error is the user's: it names the flag and the fix.
  std::function<Status(const std::string& value)> apply;
  std::string group;    // the list it is printed in (FillOptions' "{options GROUP}"); "": main
  char short_name = 0;  // a one-letter alias: 'f' for -f
  bool stops = false;   // --help, --version: the words after it are not read
  bool hidden = false;  // internal (`supervise --ready-fd`): parsed, never shown nor completed
};

// One command's flags and what its errors say.
struct FlagTable {
  std::string command;    // "up", "bench run": in "--x does not apply to up"
  std::string help_hint;  // "see shardctl up --help": closes every usage error
  std::vector<Flag> flags;
  std::vector<std::string> elsewhere;  // flags other commands of the program take
  // A word that is no flag (a positional argument): true when taken, false when unexpected.
  std::function<Result<bool>(const std::string& word)> positional;
  // The known flag closest to a mistyped one, or "" (for "did you mean --shards?").
  std::function<std::string(const std::string& flag)> suggest;
};

// Reads `args` against `table`, calling each row's apply in order (a repeated flag applies
// again). Errors: "unknown flag --x", "--x does not apply to up", "--x needs a value", "--x takes
// no value", "unexpected argument \"w\"", each followed by "(<help_hint>)", or a row's own error.
Status ParseFlags(const FlagTable& table, std::span<const std::string> args);

// The row of `table` named `name`, or nullptr.
const Flag* FindFlag(const FlagTable& table, std::string_view name);

// Every row but hidden ones, with what the shell completes for its value.
std::vector<CompletionFlag> CompletionFlags(const std::vector<Flag>& flags);

// The options list of one group: a line "  -f, --name VALUE" per row, its help beside it from
// column 27 (below it when the name is longer), wrapped at 100 columns. Hidden rows left out.
std::string FormatOptions(const std::vector<Flag>& flags, std::string_view group = "");

// A help text with each line "{options}" or "{options GROUP}" replaced by that group's options.
std::string FillOptions(std::string_view text, const std::vector<Flag>& flags);

// A whole number from `low` to `high`, or "--flag: expected a number from L to H, got \"x\"".
template <typename Int>
Result<Int> ParseNumberFlag(std::string_view flag, std::string_view text, Int low, Int high) {
  if (std::optional<Int> value = ParseIntegerIn(text, low, high)) return *value;
  return Error("--" + std::string(flag) + ": expected a number from " + std::to_string(low) +
               " to " + std::to_string(high) + ", got \"" + std::string(text) + "\"");
}

// A size (Redis' units) of at least `minimum` bytes; the error shows `example` ("64mb").
Result<uint64_t> ParseSizeFlag(std::string_view flag, std::string_view text, uint64_t minimum,
                               std::string_view example);

// A duration above zero ("300ms", "5s").
Result<std::chrono::milliseconds> ParsePositiveDurationFlag(std::string_view flag,
                                                            std::string_view text);

// A file name: not empty.
Result<std::string> ParseFileFlag(std::string_view flag, std::string_view text);

// A row's apply that stores a whole number from `low` to `high` into `field` (an int, a size_t, an
// optional), refusing others with ParseNumberFlag's error. `flag` must outlive the row (a literal).
template <typename Int, typename Field>
std::function<Status(const std::string&)> StoreNumber(Field& field, std::string_view flag, Int low,
                                                      Int high) {
  return [&field, flag, low, high](const std::string& value) -> Status {
    auto number = ParseNumberFlag<Int>(flag, value, low, high);
    if (!number) return number.error();
    field = static_cast<Field>(*number);
    return Ok();
  };
}

// A row's apply that stores a file name (not empty) into `field`.
std::function<Status(const std::string&)> StoreFile(std::string& field, std::string_view flag);

// Row builders: a switch that sets `target`; a flag whose value is stored in `target` as given
// (`value_name` "" for the type's placeholder).
Flag SwitchFlag(std::string name, bool& target, std::string help, std::string group = "");
Flag TextFlag(std::string name, FlagType type, std::string value_name, std::string& target,
              std::string help, std::string group = "");

}  // namespace shardctl::common
