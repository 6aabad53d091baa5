#include "launcher/ops/import.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/endpoint.h"
#include "common/numbers.h"
#include "common/secrets.h"
#include "launcher/cluster/expiry_hold.h"
#include "launcher/cluster/function_copy.h"
#include "launcher/cluster/key_copy.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/engine/engine.h"
#include "launcher/ops/import_live.h"
#include "launcher/ops/resume_marker.h"
#include "launcher/ops/serving_cluster.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/state/data_lock.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kTimeout = 30s;

// What the source is, from its INFO.
struct SourceFacts {
  Engine engine;
  bool cluster = false;
  std::vector<common::Endpoint> primaries;  // the nodes to scan: itself, or a cluster's primaries
  uint64_t keys = 0;                        // db 0
  uint64_t volatile_keys = 0;               // of them, with a TTL
  std::vector<std::string> problems;
  // Each primary's run_id (INFO server), joined: a source restarted since an import was cut
  // short has other ones, and may no longer hold what was copied.
  std::string run_ids;
};

Engine EngineOfInfo(const std::string& info) {
  Engine engine;
  const std::string valkey = InfoField(info, "valkey_version");
  engine.kind = valkey.empty() ? EngineKind::kRedis : EngineKind::kValkey;
  engine.version = valkey.empty() ? InfoField(info, "redis_version") : valkey;
  engine.major = VersionMajor(engine.version);
  return engine;
}

struct DbKeys {
  int db = 0;
  uint64_t keys = 0;
  uint64_t expires = 0;        // keys with a TTL
  uint64_t field_expires = 0;  // hashes with a TTL on a field (Redis 7.4+: subexpiry)
};

// "db3:keys=10,expires=2,avg_ttl=0,subexpiry=1" lines: keys per db.
std::vector<DbKeys> KeysPerDb(const std::string& keyspace) {
  std::vector<DbKeys> dbs;
  std::istringstream lines(keyspace);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (!line.starts_with("db") || colon == std::string::npos) continue;
    auto db = common::ParseInteger<int>(std::string_view(line).substr(2, colon - 2));
    if (!db) continue;
    DbKeys counts{.db = *db};
    bool has_keys = false;
    std::istringstream fields(line.substr(colon + 1));
    for (std::string field; std::getline(fields, field, ',');) {
      const size_t equals = field.find('=');
      if (equals == std::string::npos) continue;
      const std::string_view name = std::string_view(field).substr(0, equals);
      const auto value = common::ParseInteger<uint64_t>(std::string_view(field).substr(equals + 1));
      if (!value) continue;
      if (name == "keys") {
        has_keys = true;
        counts.keys = *value;
      }
      if (name == "expires") counts.expires = *value;
      if (name == "subexpiry") counts.field_expires = *value;
    }
    if (has_keys) dbs.push_back(counts);
  }
  return dbs;
}

// Keys in db 0 with a TTL on the key or on one of a hash's fields, from INFO keyspace.
uint64_t VolatileKeys(const std::string& keyspace) {
  for (const DbKeys& db : KeysPerDb(keyspace)) {
    if (db.db == 0) return db.expires + db.field_expires;
  }
  return 0;
}

Result<SourceFacts> Probe(const Access& access, const common::Endpoint& from,
                          const Engine& target_engine) {
  auto connection = RedisConnection::Connect(access, from.host, from.port, 5s);
  if (!connection.ok()) {
    const std::string& why = connection.error().message();
    // The password is the user's to fix: exit 2, as for any bad input.
    if (why.find("login refused") != std::string::npos) return Error("usage: source " + why);
    return Error("source " + why +
                 " (is it running and reachable? check --from, --password-file, --tls-ca)");
  }
  auto info = connection->Pipeline({{"INFO", "server"}, {"INFO", "keyspace"}, {"INFO", "cluster"}});
  if (!info.ok()) return info.error().Context("source");
  for (auto& section : *info) {
    if (section.ok()) continue;
    if (section.error().message().find("NOAUTH") != std::string::npos) {
      return Error("usage: source " + connection->address() +
                   " asks for a password: give it with --password-file FILE (the password on "
                   "one line, mode 0600)");
    }
    return section.error().Context("source " + connection->address() + ": INFO");
  }
  SourceFacts facts;
  facts.engine = EngineOfInfo(*(*info)[0]);
  facts.run_ids = InfoField(*(*info)[0], "run_id");
  facts.cluster = InfoField(*(*info)[2], "cluster_enabled") == "1";
  if (std::string problem = DataFormatProblem(facts.engine, target_engine); !problem.empty()) {
    facts.problems.push_back(problem + ": import into a deployment of an engine at least as new");
  }
  if (!facts.cluster) {
    facts.primaries.push_back(from);
    facts.volatile_keys = VolatileKeys(*(*info)[1]);
    for (const DbKeys& counts : KeysPerDb(*(*info)[1])) {
      const int db = counts.db;
      const uint64_t keys = counts.keys;
      if (db == 0) facts.keys = keys;
      if (db != 0 && keys > 0) {
        facts.problems.push_back("the source holds " + std::to_string(keys) + " keys in db " +
                                 std::to_string(db) +
                                 "; a cluster has only db 0 (move them to db 0 first, e.g. with "
                                 "MOVE, or import them into another deployment)");
      }
    }
    return facts;
  }
  auto nodes = connection->Run({"CLUSTER", "NODES"});
  if (!nodes.ok()) return nodes.error().Context("source " + connection->address());
  auto table = common::SlotTable::FromClusterNodes(*nodes);
  if (!table.ok()) return table.error().Context("source " + connection->address());
  facts.run_ids.clear();
  for (const auto& primary : table->primaries()) {
    facts.primaries.push_back(primary);
    auto node = RedisConnection::Connect(access, primary.host, primary.port, 5s);
    if (!node.ok()) return node.error().Context("source");
    auto replies = node->Pipeline({{"DBSIZE"}, {"INFO", "server"}, {"INFO", "keyspace"}});
    if (!replies.ok()) return replies.error().Context("source " + node->address());
    for (const auto& reply : *replies) {
      if (!reply.ok()) return reply.error().Context("source " + node->address());
    }
    facts.keys += common::ParseInteger<uint64_t>(*(*replies)[0]).value_or(0);
    facts.run_ids += (facts.run_ids.empty() ? "" : ",") + InfoField(*(*replies)[1], "run_id");
    facts.volatile_keys += VolatileKeys(*(*replies)[2]);
  }
  return facts;
}

// Whether the source changed while it was copied: per primary, its DBSIZE and, from INFO, the
// writes since its last save (with that save's time: a save starts the count again) and the keys
// it expired or evicted. The same before and after the copy: nothing was written, deleted or
// expired there, so the deployment must hold every key the source holds. A live source changes
// them, and its import is not counted (SCAN may return a key twice, or miss none but copy one
// deleted since).
struct SourceMarks {
  std::vector<std::string> marks;
  uint64_t keys = 0;
  // Every node is a primary. A replica does not delete keys whose TTL has run out until its
  // primary says so: DBSIZE counts them, SCAN skips them, and its counters stay still.
  bool primaries = true;
  bool operator==(const SourceMarks&) const = default;
};

Result<SourceMarks> ReadSourceMarks(const Access& access,
                                    const std::vector<common::Endpoint>& primaries) {
  SourceMarks read;
  for (const auto& primary : primaries) {
    auto node = RedisConnection::Connect(access, primary.host, primary.port, 5s);
    if (!node.ok()) return node.error().Context("source");
    auto replies = node->Pipeline(
        {{"INFO", "persistence"}, {"INFO", "stats"}, {"DBSIZE"}, {"INFO", "replication"}});
    if (!replies.ok()) return replies.error().Context("source " + node->address());
    for (auto& reply : *replies) {
      if (!reply.ok()) return reply.error().Context("source " + node->address());
    }
    const std::string& persistence = *(*replies)[0];
    const std::string& stats = *(*replies)[1];
    const std::string& size = *(*replies)[2];
    read.marks.push_back(InfoField(persistence, "rdb_changes_since_last_save") + " " +
                         InfoField(persistence, "rdb_last_save_time") + " " +
                         InfoField(stats, "expired_keys") + " " + InfoField(stats, "evicted_keys") +
                         " " + size);
    read.keys += common::ParseInteger<uint64_t>(size).value_or(0);
    if (InfoField(*(*replies)[3], "role") != "master") read.primaries = false;
  }
  return read;
}

Result<Access> SourceAccess(const ImportRequest& request) {
  std::string password;
  if (request.password_file) {
    auto read = common::ReadPasswordFile(*request.password_file, "--password-file");
    if (!read.ok()) return read.error();
    password = *read;
  }
  std::optional<ControlTls> tls;
  if (request.tls_ca) tls = ControlTls{.ca_file = request.tls_ca->string()};
  auto access = MakeAccess(password, tls);
  if (access.ok()) access->wrong_password_hint = "not the source's password: check --password-file";
  return access;
}

// The marker a cut-short import left (ResumeMarker): its source, and that source's run ids then
// ("" in a marker written before they were recorded).
struct LeftMarker {
  std::string from;
  std::string run_ids;
};

std::optional<LeftMarker> ReadLeftMarker(const DeploymentDir& dir) {
  auto text = ReadWholeFile(dir.ImportMarkerFile());
  if (!text.ok()) return std::nullopt;
  const auto marker = nlohmann::json::parse(*text, nullptr, false);
  if (!marker.is_object() || !marker.contains("from") || !marker["from"].is_string()) {
    return std::nullopt;
  }
  return LeftMarker{.from = marker["from"].get<std::string>(),
                    .run_ids = marker.value("source_run_ids", "")};
}

}  // namespace

Outcome<ImportReport> Import(const ImportRequest& request) {
  const auto started = Clock::now();
  if (request.cutover) {
    auto target = LoadTarget(request.spec, {});
    if (!target.ok()) return target.error();
    return Cutover(*target);
  }
  auto from = common::ParseEndpoint(request.from, "");
  if (!from.ok() || from->host.empty()) {
    return Failure::Usage("--from \"" + request.from + "\": not HOST:PORT (e.g. 127.0.0.1:6379)");
  }
  auto source_access = SourceAccess(request);
  if (!source_access.ok()) return Failure::Usage(source_access.error());
  auto target = LoadTarget(request.spec, {.one_engine_for = "import"});
  if (!target.ok()) return target.error();
  // Held until the import ends: with --live, until its cutover.
  auto data_lock = DataLock::Take(target->dir, request.live ? "import --live" : "import");
  if (!data_lock.ok()) return Classify(data_lock.error());
  const Deployment& deployment = *target->deployment;
  auto facts = Probe(*source_access, *from, deployment.engine);
  if (!facts.ok()) return Classify(facts.error());
  auto serving = ReadServingCluster(target->access, deployment.plan);
  if (!serving.ok()) return serving.error();
  ImportReport report{.source = from->ToString(),
                      .source_engine = facts->engine.Name() + " " + facts->engine.version,
                      .source_is_cluster = facts->cluster,
                      .source_keys = facts->keys,
                      .problems = facts->problems};
  for (const auto& primary : serving->primaries) {
    for (const auto& source : facts->primaries) {
      if (primary.address == source) {
        report.problems.push_back("the source " + source.ToString() +
                                  " is a node of this deployment");
      }
    }
  }
  if (request.live) {
    auto holds = CanHoldExpiry(target->access, serving->primaries.front().address);
    if (!holds.ok()) return holds.error();
    report.expiry_held = *holds;
    if (!*holds && facts->volatile_keys > 0) {
      report.warnings.push_back(
          "the source holds TTLs on " + std::to_string(facts->volatile_keys) +
          " keys or hash fields' keys (INFO keyspace expires + subexpiry), and " +
          deployment.engine.Name() + " " + deployment.engine.version +
          " cannot hold expiry while the import catches up: a key whose TTL runs out here before "
          "the source's write that extended it arrives is lost (an INCR on it starts from 1); a "
          "deployment of Valkey 8.1 or newer holds them (import-mode)");
    }
  }
  auto held = TotalKeys(target->access, serving->primaries);
  if (!held.ok()) return held.error();
  const ResumeMarker marker(
      target->dir.ImportMarkerFile(),
      nlohmann::json{{"from", from->ToString()}, {"source_run_ids", facts->run_ids}}.dump());
  const auto left = ReadLeftMarker(target->dir);
  report.resumed = left && left->from == from->ToString() &&
                   (left->run_ids.empty() || left->run_ids == facts->run_ids);
  // A marker from before run ids were recorded cannot say the source did not restart since.
  report.resumed_same_source = report.resumed && !left->run_ids.empty();
  if (*held > 0 && left && left->from == from->ToString() && !report.resumed) {
    // Copying over what it left would keep keys the source no longer has, and emptying the
    // deployment first could delete the only copy of them: the operator decides.
    report.problems.push_back(
        "an import from " + left->from +
        " into this deployment was cut short, and the source "
        "has restarted or failed over since (its run_id changed): the deployment's " +
        std::to_string(*held) +
        " keys may include some the source no longer has, perhaps their only copy; back them up "
        "(shardctl backup --to DIR) if they matter, then start over: shardctl down --purge, up, "
        "import");
  } else if (*held > 0 && !report.resumed) {
    report.problems.push_back("the deployment holds " + std::to_string(*held) +
                              " keys; import goes only into an empty deployment (import into a "
                              "new one with another --name)");
  }
  if (request.dry_run) {
    report.live = request.live;  // would follow
    return report;
  }
  if (!report.problems.empty()) {
    std::string more = report.problems.size() > 1
                           ? " (and " + std::to_string(report.problems.size() - 1) +
                                 " more problems: --dry-run lists them)"
                           : "";
    return Failure::Usage(report.problems.front() + more);
  }
  if (auto marked = marker.Write(); !marked.ok()) {
    return marked.error();
  }
  if (request.live) {
    if (request.on_warning) {
      for (const auto& warning : report.warnings) request.on_warning(warning);
    }
    auto followed =
        FollowSource(request, *source_access, facts->primaries, *target, *serving, report);
    const Fault fault = followed.ok() ? Fault::kRuntime : followed.error().fault();
    if (!followed.ok() && (fault == Fault::kRuntime || fault == Fault::kInterrupted)) {
      // As for a plain import: how far it got, and that the same command resumes it (a Ctrl-C
      // that stopped the snapshot's copy included; while following, Ctrl-C is the cutover).
      const bool interrupted = fault == Fault::kInterrupted;
      return marker
          .End(Error(followed.error().message()), interrupted, "import",
               "run the same command again", target->access, serving->primaries)
          .error();
    }
    if (!followed.ok()) return followed.error();
    report = std::move(followed).value();
    auto after = marker.End(std::nullopt, false, "import", "run the same command again",
                            target->access, serving->primaries);
    if (!after.ok()) return after.error();
    report.keys_after = *after;
    return report;
  }
  // The libraries first: an import that cannot read them stops before any key moves.
  if (auto functions =
          CopyFunctions(facts->primaries.front(), *source_access, serving->table, target->access);
      !functions.ok()) {
    return marker
        .End(functions.error(), false, "import", "run the same command again", target->access,
             serving->primaries)
        .error();
  }
  // Read before the copy, for the count at its end (CopiedKeys). A source that does not say
  // (INFO or DBSIZE refused to this user) is copied without the count.
  auto source_before = ReadSourceMarks(*source_access, facts->primaries);
  auto departures = ReadKeyDepartures(target->access, serving->primaries);
  if (!departures.ok()) return departures.error();
  std::mutex mutex;
  std::optional<Error> failure;
  std::vector<std::thread> scans;
  std::vector<uint64_t> copied(facts->primaries.size(), 0);
  for (size_t i = 0; i < facts->primaries.size(); ++i) {
    scans.emplace_back([&, i] {
      KeyCopyOptions options{.source_access = *source_access, .target_access = target->access};
      options.stop = request.interrupted;
      options.on_progress = [&, i](uint64_t keys, uint64_t) {
        std::lock_guard lock(mutex);
        copied[i] = keys;
        uint64_t total = 0;
        for (uint64_t count : copied) total += count;
        if (request.on_progress) request.on_progress(total, report.source_keys);
      };
      auto outcome = CopyKeys(facts->primaries[i], serving->table, options);
      std::lock_guard lock(mutex);
      if (!outcome.ok()) {
        if (!failure) failure = outcome.error();
        return;
      }
      report.keys += outcome->keys;
      report.bytes += outcome->bytes;
      report.vanished += outcome->vanished;
    });
  }
  for (auto& scan : scans) scan.join();
  const bool interrupted = request.interrupted != nullptr && request.interrupted->load();
  // Counted at the end as a restore is when the source did not change meanwhile (SourceMarks):
  // then the deployment must hold its every key, less those expired here since.
  CopiedKeys counted{.keys = 0, .before = *departures};
  if (!failure && !interrupted && source_before.ok() && source_before->primaries) {
    auto source_after = ReadSourceMarks(*source_access, facts->primaries);
    if (source_after.ok() && *source_after == *source_before) {
      counted.keys = source_after->keys;
      report.source_unchanged = true;
    }
  }
  auto after = marker.End(failure, interrupted, "import", "run the same command again",
                          target->access, serving->primaries, counted);
  if (!after.ok()) return after.error();
  report.keys_after = *after;
  if (report.resumed && report.source_unchanged && report.keys_after > counted.keys) {
    // Copied by the cut-short run, deleted on the source since: the run again copies, it does
    // not delete (the deployment may hold them only).
    report.warnings.push_back(
        "the deployment holds " + std::to_string(report.keys_after - counted.keys) +
        " keys more than the source (" + std::to_string(counted.keys) +
        "): keys the cut-short run copied and the source deleted since stay here; for an exact "
        "copy start over (shardctl down --purge, up, import)");
    if (request.on_warning) request.on_warning(report.warnings.back());
  }
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return report;
}

}  // namespace shardctl::launcher
