// `shardctl restart SHARD` and `shardctl restart --rolling [--engine E]`: one shard at a time
// through the supervisor (ops/restart.h), each waited for until the cluster is healthy again.
#include "launcher/ops/restart.h"

#include <algorithm>
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

json RestartJson(const ShardRestart& restart) {
  auto optional = [](const std::optional<long long>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {
      {"shard", restart.shard},
      {"old_pid", restart.old_pid ? json(*restart.old_pid) : json(nullptr)},
      {"new_pid", restart.new_pid},
      {"ms", restart.took.count()},
      {"data", restart.data},
      {"keys_before", optional(restart.keys_before)},
      {"keys_after", optional(restart.keys_after)},
      {"write_pause_ms", restart.write_pause ? json(restart.write_pause->count()) : json(nullptr)}};
}

// "keys kept: saved 1000 keys, loaded 1000" — what happened to the shard's data, for people.
std::string DataNote(const ShardRestart& restart) {
  auto keys = [](const std::optional<long long>& count) {
    return count ? std::to_string(*count) : std::string("?");
  };
  if (restart.data == "handed-over") {
    // --discard-data does not count the keys first; a replica took them over all the same.
    return restart.keys_before
               ? "its replica took over its " + keys(restart.keys_before) + " keys first"
               : "its replica took over first, with its keys (a primary with a "
                 "replica hands over even with --discard-data)";
  }
  if (restart.data == "saved") {
    return "saved " + keys(restart.keys_before) + " keys with writes held " +
           std::to_string(restart.write_pause ? restart.write_pause->count() : 0) + " ms, loaded " +
           keys(restart.keys_after);
  }
  if (restart.data == "aof") {
    return "AOF replayed: " + keys(restart.keys_before) + " keys before, " +
           keys(restart.keys_after) + " after";
  }
  if (restart.data == "resynced") return "a replica: resynced from its primary";
  if (restart.data == "discarded") return "data discarded as asked (--discard-data)";
  return "it was not running";
}

}  // namespace

int RunRestart(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  CatchInterrupt();
  json results = json::array();
  auto report =
      Restart({.spec = *spec,
               .shard = invocation.rolling ? std::nullopt : invocation.shard,
               .engine_given = std::any_of(invocation.settings.begin(), invocation.settings.end(),
                                           [](const Setting& s) { return s.key == "engine"; }),
               .discard_data = invocation.discard_data,
               .interrupted = &InterruptRequested(),
               .on_restarted = [&](const ShardRestart& restart) {
                 json result = RestartJson(restart);
                 if (!invocation.json) {
                   std::cout << "shard " << restart.shard << " restarted (pid "
                             << result["old_pid"].dump() << " -> " << result["new_pid"].dump()
                             << "; " << DataNote(restart) << "), cluster healthy after "
                             << restart.took.count() << " ms\n"
                             << std::flush;
                 }
                 results.push_back(result);
               }});
  if (!report.ok()) return Fail(report.error().Context("restart"));
  if (invocation.json) {
    std::cout << json{{"name", spec->name}, {"restarted", results}}.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
