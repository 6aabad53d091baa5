#include "launcher/engine/rdb_check.h"

#include <sstream>

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

common::Result<std::string> FindWhyRdbWouldNotLoad(const Engine& engine,
                                                   const std::filesystem::path& file,
                                                   std::chrono::milliseconds timeout) {
  // Both engines become their checker when called by this name (Valkey answers to its own
  // valkey-check-rdb as well).
  auto run = RunToEnd({"redis-check-rdb", file.string()}, timeout, engine.path);
  if (!run.ok()) return run.error().Context(engine.path.string() + " as redis-check-rdb");
  if (run->exit_code == 0) return std::string();
  std::string finding = RdbCheckFinding(run->output);
  if (finding.empty()) {
    finding = "its checker exited with code " + std::to_string(run->exit_code) + ": " +
              run->output.substr(0, run->output.find('\n'));
  }
  return finding;
}

}  // namespace shardctl::launcher
