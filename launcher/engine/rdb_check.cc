#include "launcher/engine/rdb_check.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "common/numbers.h"
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

common::Result<RdbFileCheck> CheckRdbFile(const Engine& engine, const std::filesystem::path& file,
                                          std::chrono::milliseconds timeout) {
  // Both engines become their checker when called by this name (Valkey answers to its own
  // valkey-check-rdb as well).
  auto run = RunToEnd({"redis-check-rdb", file.string()}, timeout, engine.path);
  if (!run.ok()) return run.error().Context(engine.path.string() + " as redis-check-rdb");
  RdbFileCheck check{.finding = "", .keys = RdbCheckKeysRead(run->output)};
  if (run->exit_code == 0) return check;
  check.finding = RdbCheckFinding(run->output);
  if (check.finding.empty()) {
    check.finding = "its checker exited with code " + std::to_string(run->exit_code) + ": " +
                    run->output.substr(0, run->output.find('\n'));
  }
  return check;
}

std::vector<common::Result<RdbFileCheck>> CheckRdbFiles(
    const Engine& engine, const std::vector<std::filesystem::path>& files,
    std::chrono::milliseconds timeout, const std::atomic<bool>* stop) {
  std::vector<common::Result<RdbFileCheck>> checks(files.size(), RdbFileCheck{});
  std::atomic<size_t> next = 0;
  auto check_files = [&] {
    for (size_t k = next++; k < files.size(); k = next++) {
      if (stop != nullptr && stop->load()) return;
      checks[k] = CheckRdbFile(engine, files[k], timeout);
    }
  };
  std::vector<std::thread> workers;
  const size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < std::min(cpus, files.size()); ++i) workers.emplace_back(check_files);
  for (auto& worker : workers) worker.join();
  return checks;
}

}  // namespace shardctl::launcher
