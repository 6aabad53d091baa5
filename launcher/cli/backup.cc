// `shardctl backup`, `shardctl restore` and `shardctl import`: parse, call ops/, print. The data
// in and out of a deployment (ops/backup.h, ops/restore.h, ops/import.h say how).
#include "launcher/ops/backup.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/ops/import.h"
#include "launcher/ops/restore.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

// A pause this long or longer, taken at normal priority, earns the hint that root shortens it.
constexpr int64_t kLongPauseMs = 50;

std::string KeysPerSecond(uint64_t keys, std::chrono::milliseconds took) {
  if (took.count() <= 0) return "";
  return ", " + std::to_string(keys * 1000 / static_cast<uint64_t>(took.count())) + " keys/s";
}

}  // namespace

int RunBackup(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) return Fail(Failure::Usage(spec.error()));
  if (invocation.data_dir.empty()) {
    return Fail(Failure::Usage("backup needs --to DIR (a new or empty directory)"));
  }
  CatchInterrupt();
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto done = Backup({.spec = *spec,
                      .to = invocation.data_dir,
                      .on_progress = [&](const std::string& text) { progress.Show(text); },
                      .interrupted = &InterruptRequested(),
                      .wait = invocation.backup_wait});
  progress.Clear();
  if (!done.ok()) return Fail(done.error());
  const BackupManifest& manifest = done->manifest;
  if (!done->warning.empty()) std::cerr << "warning: " << done->warning << "\n";
  uint64_t bytes = 0;
  for (const auto& file : manifest.files) bytes += file.bytes;
  if (invocation.json) {
    std::cout << json{{"name", spec->name},
                      {"dir", done->dir.string()},
                      {"shards", manifest.files.size()},
                      {"keys", manifest.keys},
                      {"bytes", bytes},
                      {"write_pause_ms", manifest.write_pause_ms},
                      {"attempts", done->attempts},
                      {"cut_realtime", done->cut_realtime},
                      {"fork_limit", done->fork_limit},
                      {"most_snapshots_at_once", done->most_copying},
                      {"ms", done->took.count()},
                      {"checked_ms", done->checked.count()},
                      {"waited_ms", done->waited.count()},
                      {"engine", manifest.engine},
                      {"engine_version", manifest.engine_version},
                      {"moving_slots", manifest.moving_slots},
                      {"files", ManifestFilesJson(manifest)}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "backed up " << manifest.files.size() << " primaries (" << manifest.keys
              << " keys, " << bytes << " bytes) to " << done->dir.string() << " in "
              << done->took.count() << " ms; writes paused " << manifest.write_pause_ms
              << " ms for one consistent cut";
    if (done->waited.count() >= 1000) {
      std::cout << " (after waiting " << done->waited.count() / 1000 << " s for the deployment)";
    }
    std::cout << "\n";
    if (!done->cut_realtime && manifest.write_pause_ms >= kLongPauseMs) {
      std::cout << "the cut ran at normal priority, waiting its turn for a CPU (real-time "
                   "scheduling refused: "
                << done->cut_realtime_refusal
                << "); with CAP_SYS_NICE (root, outside a rootless container) or an rtprio limit "
                   "(ulimit -r) it runs at real-time priority, a shorter pause on a busy host\n";
    }
    if (!manifest.moving_slots.empty()) {
      std::cout << "slots " << manifest.moving_slots
                << " were moving between primaries at the cut: a restore copies their keys to "
                   "their owners instead of placing files\n";
    }
  }
  return kExitOk;
}

// How the files went (or would go) in, and why not the fast way.
std::string MethodSentence(const RestoreReport& report) {
  if (report.method == "placed") {
    return "each file loaded by its primary (the same shape)";
  }
  return "keys copied to their slots' owners (" + report.why_copied + ")";
}

int RunRestore(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) return Fail(Failure::Usage(spec.error()));
  if (invocation.data_dir.empty()) {
    return Fail(Failure::Usage("restore needs --from DIR (a directory shardctl backup wrote)"));
  }
  CatchInterrupt();
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto done = Restore({.spec = *spec,
                       .from = invocation.data_dir,
                       .dry_run = invocation.dry_run,
                       .on_progress = [&](const std::string& text) { progress.Show(text); },
                       .interrupted = &InterruptRequested()});
  progress.Clear();
  if (!done.ok()) return Fail(done.error());
  const BackupManifest& manifest = done->manifest;
  if (invocation.json) {
    std::cout << json{{"name", spec->name},
                      {"from", invocation.data_dir},
                      {"dry_run", invocation.dry_run},
                      {"backup_shards", manifest.files.size()},
                      {"target_shards", done->target_shards},
                      {"backup_keys", manifest.keys},
                      {"resumed", done->resumed},
                      {"keys", done->keys},
                      {"expired", done->expired},
                      {"keys_after", done->keys_after},
                      {"method", done->method},
                      {"why_copied", done->why_copied},
                      {"replica_keys", done->replica_keys},
                      {"ms", done->took.count()}}

                     .dump(2)
              << "\n";
  } else if (invocation.dry_run) {
    std::cout << "would restore " << manifest.keys << " keys from " << manifest.files.size()
              << " files (" << manifest.engine << " " << manifest.engine_version << ") onto "
              << done->target_shards << " primaries; every file checked; " << MethodSentence(*done)
              << "\n";
  } else {
    std::cout << "restored " << done->keys << " keys from " << manifest.files.size()
              << " files onto " << done->target_shards << " primaries in " << done->took.count()
              << " ms" << KeysPerSecond(done->keys, done->took) << "; the deployment holds "
              << done->keys_after << " keys"
              << (done->expired ? " (" + std::to_string(done->expired) + " expired meanwhile)" : "")
              << "; " << MethodSentence(*done) << "\n";
  }
  return kExitOk;
}

int RunImport(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) return Fail(Failure::Usage(spec.error()));
  if (invocation.import_from.empty() && !invocation.cutover) {
    return Fail(Failure::Usage("import needs --from HOST:PORT (the instance to copy from)"));
  }
  CatchInterrupt();
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto done =
      Import({.spec = *spec,
              .from = invocation.import_from,
              .password_file = invocation.source_password_file,
              .tls_ca = invocation.source_tls_ca,
              .dry_run = invocation.dry_run,
              .live = invocation.live,
              .cutover = invocation.cutover,
              .on_progress = [&](uint64_t keys,
                                 uint64_t of) { progress.Show("importing: keys", keys, of); },
              .on_following = [&](const std::string& text) { progress.Show(text); },
              .on_warning =
                  [&](const std::string& text) {
                    progress.Clear();
                    std::cerr << "warning: " << text << "\n";
                  },
              .interrupted = &InterruptRequested()});
  progress.Clear();
  if (!done.ok()) return Fail(done.error());
  if (invocation.json) {
    json report = {{"name", spec->name},
                   {"from", done->source},
                   {"source_engine", done->source_engine},
                   {"source_is_cluster", done->source_is_cluster},
                   {"source_keys", done->source_keys},
                   {"dry_run", invocation.dry_run},
                   {"problems", done->problems},
                   {"warnings", done->warnings},
                   {"expiry_held", done->expiry_held},
                   {"resumed", done->resumed},
                   {"keys", done->keys},
                   {"bytes", done->bytes},
                   {"vanished", done->vanished},
                   {"stale_removed", done->stale_removed},
                   {"keys_after", done->keys_after},
                   {"source_unchanged", done->source_unchanged},
                   {"ms", done->took.count()},
                   {"live", done->live},
                   {"commands_applied", done->commands_applied},
                   {"co_located", done->commands_co_located},
                   {"lag_bytes", done->final_lag_bytes},
                   {"cutover_ms", done->cutover_ms}};
    if (invocation.cutover) {
      // Known only to the importing process, which prints them itself: null here, not 0.
      for (const char* field :
           {"source_engine", "source_is_cluster", "source_keys", "resumed", "bytes", "vanished",
            "stale_removed", "keys_after", "source_unchanged", "ms"}) {
        report[field] = nullptr;
      }
    }
    std::cout << report.dump(2) << "\n";
  } else if (invocation.cutover) {
    std::cout << "cutover: the import from " << done->source << " caught up (lag "
              << done->final_lag_bytes << " bytes) in " << done->cutover_ms << " ms and stopped; "
              << done->keys << " keys copied, " << done->commands_applied
              << " writes applied after the snapshot (" << done->commands_co_located
              << " with keys in several slots, co-located)\n";
  } else if (invocation.dry_run) {
    std::cout << "source " << done->source << " (" << done->source_engine
              << (done->source_is_cluster ? ", a cluster" : "") << "): " << done->source_keys
              << " keys in db 0\n";
    for (const auto& problem : done->problems) std::cout << "problem: " << problem << "\n";
    for (const auto& warning : done->warnings) std::cout << "warning: " << warning << "\n";
    if (done->problems.empty()) std::cout << "no problems: import would copy every key\n";
  } else {
    std::cout
        << "imported " << done->keys << " keys (" << done->bytes << " bytes) from " << done->source
        << " in " << done->took.count() << " ms" << KeysPerSecond(done->keys, done->took)
        << "; the deployment holds " << done->keys_after << " keys"
        << (done->stale_removed > 0
                ? " (" + std::to_string(done->stale_removed) +
                      " keys here that the source's snapshot lacks, left by the cut-short run, "
                      "were deleted)"
                : "")
        << (done->live ? "; then followed " + std::to_string(done->commands_applied) + " writes (" +
                             std::to_string(done->commands_co_located) +
                             " co-located) until the cutover (lag " +
                             std::to_string(done->final_lag_bytes) + " bytes)"
                       : "")
        << "\n";
  }
  return invocation.dry_run && !done->problems.empty() ? kExitUsage : kExitOk;
}

}  // namespace shardctl::launcher
