#include "launcher/engine/rdb_check.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/numbers.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

using common::Error;

constexpr std::string_view kErrorBanner = "--- RDB ERROR DETECTED ---";

// "[offset 55] Unexpected EOF" → {"55", "Unexpected EOF"}; a line without the prefix is all text.
std::pair<std::string, std::string> SplitOffset(const std::string& line) {
  constexpr std::string_view kPrefix = "[offset ";
  const size_t close = line.find("] ");
  if (!line.starts_with(kPrefix) || close == std::string::npos) return {"", line};
  return {line.substr(kPrefix.size(), close - kPrefix.size()), line.substr(close + 2)};
}

}  // namespace

std::string RdbCheckFinding(std::string_view output) {
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line) && line != kErrorBanner) {
  }
  if (!std::getline(lines, line)) return "";
  auto [offset, what] = SplitOffset(line);
  std::string finding = offset.empty() ? what : "at offset " + offset + ": " + what;
  // The key being read, when the checker got that far: where in the data the damage is.
  constexpr std::string_view kKey = "[additional info] Reading key ";
  while (std::getline(lines, line)) {
    if (line.starts_with(kKey)) return finding + " (reading key " + line.substr(kKey.size()) + ")";
  }
  return finding;
}

std::string RdbFileProblem(const RdbFileCheck& check, uint64_t expected_keys) {
  if (!check.finding.empty()) return check.finding;
  if (check.keys && *check.keys != expected_keys) {
    return "it holds " + std::to_string(*check.keys) + " keys, not " +
           std::to_string(expected_keys);
  }
  return "";
}

std::optional<uint64_t> RdbCheckKeysRead(std::string_view output) {
  constexpr std::string_view kInfo = "[info] ";
  constexpr std::string_view kKeysRead = " keys read";
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(kInfo) || !line.ends_with(kKeysRead)) continue;
    return common::ParseInteger<uint64_t>(
        std::string_view(line).substr(kInfo.size(), line.size() - kInfo.size() - kKeysRead.size()));
  }
  return std::nullopt;
}

std::filesystem::path CheckerBinary(const Deployment& deployment, const DeploymentDir& dir) {
  auto is_binary = [](const std::filesystem::path& path) {
    char magic[4] = {};
    std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
    return std::string_view(magic, sizeof magic) ==
           "\x7f"
           "ELF";
  };
  if (is_binary(deployment.engine.path)) return deployment.engine.path;
  for (const auto& shard : deployment.plan.shards) {
    auto process = ReadProcessId(dir.ShardPidFile(shard.index));
    if (!process || !IsRunning(*process)) continue;
    std::error_code error;
    const auto exe =
        std::filesystem::read_symlink("/proc/" + std::to_string(process->pid) + "/exe", error);
    if (!error && is_binary(exe)) return exe;
  }
  return deployment.engine.path;
}

common::Result<RdbFileCheck> CheckRdbFile(const std::filesystem::path& checker,
                                          const std::filesystem::path& file,
                                          std::chrono::milliseconds timeout) {
  // Both engines become their checker when called by this name (Valkey answers to its own
  // valkey-check-rdb as well).
  const std::string as = checker.string() + " as redis-check-rdb";
  auto run = RunToEnd({"redis-check-rdb", file.string()}, timeout, checker);
  if (!run.ok()) return run.error().Context(as);
  if (run->exit_code >= 128) {  // a signal: Ctrl-C, the OOM killer
    return common::Error(as + ": killed by signal " + std::to_string(run->exit_code - 128));
  }
  if (run->output.find("Checking RDB file") == std::string::npos) {
    return common::Error(as + ": it did not act as the checker (" +
                         run->output.substr(0, run->output.find('\n')) + ")");
  }
  RdbFileCheck check{.finding = "", .keys = RdbCheckKeysRead(run->output)};
  if (run->exit_code == 0) return check;
  check.finding = RdbCheckFinding(run->output);
  if (check.finding.empty()) {
    check.finding = "its checker exited with code " + std::to_string(run->exit_code);
  }
  return check;
}

std::vector<common::Result<RdbFileCheck>> CheckRdbFiles(
    const std::filesystem::path& checker, const std::vector<std::filesystem::path>& files,
    std::chrono::milliseconds timeout, size_t at_once, const std::atomic<bool>* stop) {
  std::vector<common::Result<RdbFileCheck>> checks(files.size(),
                                                   common::Error("not checked: stopped"));
  std::atomic<size_t> next = 0;
  auto check_files = [&] {
    for (size_t k = next++; k < files.size(); k = next++) {
      if (stop != nullptr && stop->load()) return;
      checks[k] = CheckRdbFile(checker, files[k], timeout);
    }
  };
  std::vector<std::thread> workers;
  for (size_t i = 0; i < std::min(std::max<size_t>(1, at_once), files.size()); ++i) {
    workers.emplace_back(check_files);
  }
  for (auto& worker : workers) worker.join();
  return checks;
}

}  // namespace shardctl::launcher
