#include "launcher/state/import_progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/wall_clock.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

json ProgressJson(const LiveImportProgress& progress) {
  return {{"source", progress.source},
          {"phase", progress.phase},
          {"pid", progress.pid},
          {"keys", progress.keys},
          {"commands", progress.commands},
          {"co_located", progress.co_located},
          {"applied_offset", progress.applied_offset},
          {"source_offset", progress.source_offset},
          {"lag_bytes", progress.lag_bytes},
          {"lag_ms", progress.lag_ms},
          {"updated_unix_ms", progress.updated_unix_ms},
          {"error", progress.error},
          {"expiry_held", progress.expiry_held}};
}

std::optional<LiveImportProgress> ProgressOf(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  LiveImportProgress progress;
  progress.source = parsed.value("source", "");
  progress.phase = parsed.value("phase", "");
  progress.pid = parsed.value("pid", 0);
  progress.keys = parsed.value("keys", uint64_t{0});
  progress.commands = parsed.value("commands", uint64_t{0});
  progress.co_located = parsed.value("co_located", uint64_t{0});
  progress.applied_offset = parsed.value("applied_offset", int64_t{0});
  progress.source_offset = parsed.value("source_offset", int64_t{0});
  progress.lag_bytes = parsed.value("lag_bytes", int64_t{0});
  progress.lag_ms = parsed.value("lag_ms", int64_t{0});
  progress.updated_unix_ms = parsed.value("updated_unix_ms", int64_t{0});
  progress.error = parsed.value("error", "");
  progress.expiry_held = parsed.value("expiry_held", false);
  return progress;
}

}  // namespace

std::filesystem::path LiveImportDir(const DeploymentDir& dir) { return dir.root() / "import-live"; }

namespace {

std::filesystem::path ExpiryHoldFile(const DeploymentDir& dir) {
  return LiveImportDir(dir) / "expiry-held";
}

}  // namespace

common::Status WriteExpiryHold(const DeploymentDir& dir, const ExpiryHold& hold) {
  json nodes = json::array();
  for (const auto& node : hold.nodes) nodes.push_back(node.ToString());
  const json record = {{"pid", hold.holder.pid},
                       {"start_time", hold.holder.start_time},
                       {"nodes", nodes}};
  return WriteFileAtomically(ExpiryHoldFile(dir), record.dump() + "\n");
}

std::optional<ExpiryHold> ReadExpiryHold(const DeploymentDir& dir) {
  auto text = ReadWholeFile(ExpiryHoldFile(dir));
  if (!text.ok()) return std::nullopt;
  const json record = json::parse(*text, nullptr, false);
  if (!record.is_object()) return std::nullopt;
  ExpiryHold hold{.holder = {.pid = record.value("pid", 0),
                             .start_time = record.value("start_time", uint64_t{0})},
                  .nodes = {}};
  for (const auto& node : record.value("nodes", json::array())) {
    if (!node.is_string()) continue;
    if (auto endpoint = common::ParseEndpoint(node.get<std::string>(), ""); endpoint.ok())
      hold.nodes.push_back(*endpoint);
  }
  return hold;
}

void RemoveExpiryHold(const DeploymentDir& dir) {
  std::error_code ignored;
  std::filesystem::remove(ExpiryHoldFile(dir), ignored);
}

// Five missed rewrites.
constexpr int64_t kStalledAfterMs = 5000;

std::optional<LiveImportProgress> ReadLiveImport(const DeploymentDir& dir) {
  auto text = ReadWholeFile(LiveImportDir(dir) / "progress.json");
  if (!text.ok()) return std::nullopt;
  auto progress = ProgressOf(*text);
  if (!progress) return std::nullopt;
  const bool running = ProcessStartTime(progress->pid).has_value();
  const bool ended = progress->phase == "done" || progress->phase == "failed";
  if (!running && !ended) {
    // Killed (kill -9, a reboot) before its cutover: shown until a run again resumes it.
    progress->error = "its process (pid " + std::to_string(progress->pid) +
                      ") is gone: run the same import --live again to resume it";
    progress->phase = "stopped";
    progress->expiry_held = ReadExpiryHold(dir).has_value();  // until someone lets it go
    return progress;
  }
  const int64_t age_ms = common::UnixMsNow() - progress->updated_unix_ms;
  if (!running && age_ms >= 60000) return std::nullopt;
  if (running && progress->phase == "following" && age_ms > kStalledAfterMs) {
    // The importer writes this every second while it follows; silent this long, it is stuck on a
    // shard or the source that does not answer, and its last lag says nothing about now.
    progress->phase = "stalled";
    progress->lag_ms = std::max(progress->lag_ms, age_ms);
    progress->error = "no progress for " + std::to_string(age_ms / 1000) +
                      " s: a shard or the source is not answering (the lag is at least that)";
  }
  return progress;
}

common::Status WriteLiveImport(const DeploymentDir& dir, LiveImportProgress& progress) {
  progress.updated_unix_ms = common::UnixMsNow();
  return WriteFileAtomically(LiveImportDir(dir) / "progress.json",
                             ProgressJson(progress).dump() + "\n");
}

}  // namespace shardctl::launcher
