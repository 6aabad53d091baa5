#include "launcher/ops/bench.h"

#include "launcher/bench/args.h"
#include "launcher/bench/commands.h"
#include "launcher/bench/compare.h"
#include "launcher/bench/help.h"

namespace shardctl::launcher {

int Bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "compare") return RunBenchCompare(args);
  return RunBench(args);
}

std::string BenchHelp(const std::string& command) { return BenchHelpText(command); }

std::vector<common::CompletionFlag> BenchFlags(const std::string& subcommand) {
  return subcommand == "compare" ? BenchCompareFlags() : BenchRunFlags();
}

}  // namespace shardctl::launcher
