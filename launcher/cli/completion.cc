#include "launcher/cli/completion.h"

#include <cstdlib>
#include <iostream>

#include "launcher/cli/args.h"
#include "launcher/ops/bench.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {

common::CompletionNode CompletionTree() {
  common::CompletionNode root{.flags = {{"help"}, {"version"}}};
  for (const auto& command : CommandNames()) {
    common::CompletionNode node{.name = command, .flags = CommandFlags(command)};
    if (command == "bench") {
      node.commands = {{.name = "run", .flags = BenchFlags("run")},
                       {.name = "compare", .flags = BenchFlags("compare")}};
    }
    if (command == "help") {
      for (const auto& topic : CommandNames()) {
        if (topic != "help") node.words.push_back(topic);
      }
    }
    root.commands.push_back(std::move(node));
  }
  root.commands.push_back({.name = "version"});
  return root;
}

namespace {

// The state directory a command line names: its --state-dir (the shell leaves "~/" unexpanded in
// the words it passes), else the default.
std::optional<std::filesystem::path> StateRootOf(const std::map<std::string, std::string>& given) {
  auto state_dir = given.find("state-dir");
  if (state_dir == given.end()) return std::nullopt;
  const std::string& dir = state_dir->second;
  const char* home = std::getenv("HOME");
  if (dir.starts_with("~/") && home != nullptr) return std::filesystem::path(home) / dir.substr(2);
  return dir;
}

}  // namespace

int RunComplete(const std::vector<std::string>& words) {
  auto deployments = [](const std::string&, const std::map<std::string, std::string>& given) {
    return DeploymentNames(StateRootOf(given));
  };
  std::cout << common::FormatCompletion(common::Complete(CompletionTree(), words, deployments));
  return kExitOk;
}

}  // namespace shardctl::launcher
