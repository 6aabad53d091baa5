#include "common/completion.h"

#include <algorithm>

namespace shardctl::common {
namespace {

const CompletionFlag* FindFlag(const CompletionNode& node, std::string_view name) {
  auto found = std::find_if(node.flags.begin(), node.flags.end(),
                            [&](const CompletionFlag& flag) { return flag.name == name; });
  return found == node.flags.end() ? nullptr : &*found;
}

const CompletionNode* FindCommand(const CompletionNode& node, std::string_view name) {
  auto found = std::find_if(node.commands.begin(), node.commands.end(),
                            [&](const CompletionNode& command) { return command.name == name; });
  return found == node.commands.end() ? nullptr : &*found;
}

std::vector<std::string> StartingWith(const std::vector<std::string>& words,
                                      std::string_view prefix) {
  std::vector<std::string> matches;
  for (const auto& word : words) {
    if (word.starts_with(prefix)) matches.push_back(word);
  }
  return matches;
}

std::vector<std::string> FlagWords(const CompletionNode& node) {
  std::vector<std::string> words;
  for (const auto& flag : node.flags) words.push_back("--" + flag.name);
  return words;
}

// Where the words before the cursor leave us: the innermost command, the flag values given, and
// the flag whose value the cursor word is (if any).
struct LineState {
  const CompletionNode* node;
  std::map<std::string, std::string> given;
  const CompletionFlag* value_of = nullptr;
};

LineState ReadLine(const CompletionNode& root, const std::vector<std::string>& words) {
  LineState state{.node = &root, .given = {}};
  const size_t cursor = words.empty() ? 0 : words.size() - 1;
  for (size_t i = 0; i < cursor; ++i) {
    const std::string& word = words[i];
    if (word.starts_with("--")) {
      std::string name = word.substr(2);
      if (size_t equals = name.find('='); equals != std::string::npos) {
        state.given[name.substr(0, equals)] = name.substr(equals + 1);
        continue;
      }
      const CompletionFlag* flag = FindFlag(*state.node, name);
      if (flag == nullptr || flag->value == FlagValue::kNone) continue;
      if (i + 1 == cursor) {
        state.value_of = flag;
      } else {
        state.given[name] = words[++i];
      }
      continue;
    }
    if (const CompletionNode* command = FindCommand(*state.node, word)) state.node = command;
  }
  return state;
}

Completion CompleteValue(const CompletionFlag& flag, const LineState& state,
                         const std::string& typed, const DynamicValues& dynamic) {
  switch (flag.value) {
    case FlagValue::kFile:
      return {.kind = Completion::Kind::kFiles};
    case FlagValue::kDirectory:
      return {.kind = Completion::Kind::kDirectories};
    case FlagValue::kDynamic:
      if (dynamic) return {.words = StartingWith(dynamic(flag.name, state.given), typed)};
      break;
    case FlagValue::kNone:
    case FlagValue::kAny:
      break;
  }
  return {};
}

}  // namespace

Completion Complete(const CompletionNode& root, const std::vector<std::string>& words,
                    const DynamicValues& dynamic) {
  const std::string typed = words.empty() ? "" : words.back();
  LineState state = ReadLine(root, words);
  if (state.value_of != nullptr) return CompleteValue(*state.value_of, state, typed, dynamic);
  const CompletionNode& node = *state.node;
  // "--flag=value" in one word: the shells split it differently; offer nothing rather than guess.
  if (typed.starts_with("-")) {
    if (typed.find('=') != std::string::npos) return {};
    return {.words = StartingWith(FlagWords(node), typed)};
  }
  std::vector<std::string> candidates;
  for (const auto& command : node.commands) candidates.push_back(command.name);
  candidates.insert(candidates.end(), node.words.begin(), node.words.end());
  if (candidates.empty()) candidates = FlagWords(node);
  return {.words = StartingWith(candidates, typed)};
}

std::string FormatCompletion(const Completion& completion) {
  switch (completion.kind) {
    case Completion::Kind::kFiles:
      return ":files\n";
    case Completion::Kind::kDirectories:
      return ":directories\n";
    case Completion::Kind::kWords:
      break;
  }
  std::string out;
  for (const auto& word : completion.words) out += word + "\n";
  return out;
}

}  // namespace shardctl::common
