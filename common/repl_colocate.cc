#include "common/repl_colocate.h"

#include <algorithm>
#include <unordered_map>

#include "common/repl_commands.h"
#include "common/slots.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

// Which key's slot is home: the one the command writes, so it is written in place.
enum class Home {
  kFirstKey,   // SUNIONSTORE dst ..., ZUNIONSTORE dst n ..., PFMERGE dst ..., BITOP op dst ...
  kSecondKey,  // RENAME src dst, SMOVE src dst m, LMOVE src dst ..., COPY src dst
  kLastKey,    // SORT src ... STORE dst, GEORADIUS src ... STORE dst (the last STORE wins)
};

struct Rule {
  std::string_view name;
  Home home;
  // Every key may change (RENAME deletes its source, SMOVE and LMOVE take from it); otherwise
  // only the destination, which is home and never moved.
  bool writes_every_key;
};

// The commands primaries replicate verbatim with keys in several slots.
constexpr Rule kRules[] = {
    {"RENAME", Home::kSecondKey, true},
    {"RENAMENX", Home::kSecondKey, true},
    {"SMOVE", Home::kSecondKey, true},
    {"LMOVE", Home::kSecondKey, true},
    {"RPOPLPUSH", Home::kSecondKey, true},
    {"COPY", Home::kSecondKey, false},
    {"SINTERSTORE", Home::kFirstKey, false},
    {"SUNIONSTORE", Home::kFirstKey, false},
    {"SDIFFSTORE", Home::kFirstKey, false},
    {"ZUNIONSTORE", Home::kFirstKey, false},
    {"ZINTERSTORE", Home::kFirstKey, false},
    {"ZDIFFSTORE", Home::kFirstKey, false},
    {"ZRANGESTORE", Home::kFirstKey, false},
    {"GEOSEARCHSTORE", Home::kFirstKey, false},
    {"PFMERGE", Home::kFirstKey, false},
    {"BITOP", Home::kFirstKey, false},
    {"SORT", Home::kLastKey, false},
    {"GEORADIUS", Home::kLastKey, false},
    {"GEORADIUSBYMEMBER", Home::kLastKey, false},
};

const Rule* FindRule(std::string_view upper_name) {
  const auto* found = std::find_if(std::begin(kRules), std::end(kRules),
                                   [&](const Rule& rule) { return rule.name == upper_name; });
  return found == std::end(kRules) ? nullptr : found;
}

// A key as an error line may quote it: printable, at most 64 bytes.
std::string Quoted(std::string_view key) {
  std::string quoted;
  for (char c : key.substr(0, 64)) quoted += PrintableByte(c);
  return key.size() > 64 ? quoted + "..." : quoted;
}

Error CannotColocate(std::string_view name, const std::vector<std::string>& command,
                     const std::vector<size_t>& positions, std::string_view why) {
  std::string keys = Quoted(command[positions.front()]);
  if (positions.size() > 1) keys += ", " + Quoted(command[positions.back()]);
  return Error(std::string(name) + ": keys in different slots (" + keys + "), and " +
               std::string(why) + "; give such keys one hash tag on the source");
}

// SORT's BY and GET patterns with a '*' name keys of their own (weight_*), which the home primary
// does not hold: the command would read nothing there where the source read values.
bool SortReadsPatternKeys(const std::vector<std::string>& command) {
  for (size_t at = 2; at + 1 < command.size(); ++at) {
    const std::string option = UpperCase(command[at]);
    if (option == "LIMIT") {
      at += 2;
    } else if (option == "STORE") {
      ++at;
    } else if (option == "BY" || option == "GET") {
      if (command[++at].find('*') != std::string::npos) return true;
    }
  }
  return false;
}

size_t HomePosition(Home home, const std::vector<size_t>& positions) {
  switch (home) {
    case Home::kFirstKey:
      return positions.front();
    case Home::kSecondKey:
      return positions[1];
    case Home::kLastKey:
      break;
  }
  return positions.back();
}

}  // namespace

std::string ColocateTemporary(int home_slot, size_t n) {
  return std::string(kColocatePrefix) + "{" + std::string(TagForSlot(home_slot)) +
         "}:" + std::to_string(n);
}

Result<Colocation> PlanColocation(const std::vector<std::string>& command) {
  const ReplCommandInfo* info = command.empty() ? nullptr : FindReplCommand(command[0]);
  if (info == nullptr) return Error("co-location: a command shardctl does not know the keys of");
  Result<std::vector<size_t>> positions = ReplKeyPositions(*info, command);
  if (!positions) return positions.error();
  if (positions->size() < 2) return Error(std::string(info->name) + ": no keys to co-locate");
  const Rule* rule = FindRule(info->name);
  if (rule == nullptr) {
    return CannotColocate(info->name, command, *positions,
                          info->name.starts_with("EVAL")
                              ? "a script may touch keys it does not declare"
                              : "Redis 7+ and Valkey replicate it in other forms");
  }
  if (info->name == "SORT" && SortReadsPatternKeys(command)) {
    return CannotColocate(info->name, command, *positions,
                          "its BY/GET pattern names keys the cluster holds elsewhere");
  }
  Colocation colocation{.home_slot = KeySlot(command[HomePosition(rule->home, *positions)]),
                        .command = command,
                        .moved = {}};
  std::unordered_map<std::string_view, size_t> moved_at;
  for (size_t at : *positions) {
    if (KeySlot(command[at]) == colocation.home_slot) continue;
    const auto [found, added] = moved_at.try_emplace(command[at], colocation.moved.size());
    if (added) {
      colocation.moved.push_back(
          {.key = command[at],
           .temporary = ColocateTemporary(colocation.home_slot, found->second),
           .written = rule->writes_every_key});
    }
    colocation.command[at] = colocation.moved[found->second].temporary;
  }
  return colocation;
}

}  // namespace shardctl::common
