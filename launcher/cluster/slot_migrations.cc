#include "launcher/cluster/slot_migrations.h"

#include <algorithm>

namespace shardctl::launcher {

std::vector<SlotMigrationJob> ParseSlotMigrationJobs(const std::string& text) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<SlotMigrationJob> jobs;
  for (size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i] == "name") jobs.emplace_back();  // each job's first field
    if (!jobs.empty()) jobs.back()[fields[i]] = fields[i + 1];
  }
  return jobs;
}

bool SlotMigrationFinished(const std::string& state) {
  return state == "success" || state == "failed" || state == "canceled" || state == "cancelled";
}

std::string JobField(const SlotMigrationJob& job, const std::string& key) {
  auto it = job.find(key);
  return it == job.end() ? std::string() : it->second;
}

common::Result<std::vector<SlotMigrationJob>> ListSlotMigrations(RedisConnection& node) {
  auto reply = node.Run({"CLUSTER", "GETSLOTMIGRATIONS"});
  if (!reply.ok()) {
    // "ERR unknown subcommand 'GETSLOTMIGRATIONS'. Try CLUSTER HELP." on every engine without it.
    if (reply.error().message().find("unknown subcommand") != std::string::npos) {
      return std::vector<SlotMigrationJob>{};
    }
    return reply.error();
  }
  return ParseSlotMigrationJobs(*reply);
}

common::Status CancelSlotMigrations(RedisConnection& node) {
  auto bare = node.Run({"CLUSTER", "CANCELSLOTMIGRATIONS"});
  if (bare.ok()) return common::Ok();
  if (bare.error().message().find("wrong number of arguments") == std::string::npos) {
    return bare.error();
  }
  auto all = node.Run({"CLUSTER", "CANCELSLOTMIGRATIONS", "ALL"});
  if (!all.ok()) return all.error();
  return common::Ok();
}

}  // namespace shardctl::launcher
