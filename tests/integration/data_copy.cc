#include "tests/integration/data_copy.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>

#include "common/numbers.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using namespace std::chrono_literals;

struct FreeContext {
  void operator()(redisContext* context) const { redisFree(context); }
};
using Context = std::unique_ptr<redisContext, FreeContext>;

struct FreeReply {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, FreeReply>;

// One connection per node, kept for the whole read.
class Nodes {
 public:
  explicit Nodes(std::string password) : password_(std::move(password)) {}

  Reply Run(int port, const std::vector<std::string>& command) {
    redisContext* context = At(port);
    if (context == nullptr) return nullptr;
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& word : command) {
      argv.push_back(word.data());
      lengths.push_back(word.size());
    }
    return Reply(static_cast<redisReply*>(
        redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
  }

  // Sends every command before reading a reply; a null reply where the connection broke.
  std::vector<Reply> Pipeline(int port, const std::vector<std::vector<std::string>>& commands) {
    std::vector<Reply> replies;
    redisContext* context = At(port);
    if (context == nullptr) return replies;
    for (const auto& command : commands) {
      std::vector<const char*> argv;
      std::vector<size_t> lengths;
      for (const auto& word : command) {
        argv.push_back(word.data());
        lengths.push_back(word.size());
      }
      redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data());
    }
    for (size_t i = 0; i < commands.size(); ++i) {
      void* reply = nullptr;
      if (redisGetReply(context, &reply) != REDIS_OK) reply = nullptr;
      replies.emplace_back(static_cast<redisReply*>(reply));
    }
    return replies;
  }

 private:
  redisContext* At(int port) {
    auto found = contexts_.find(port);
    if (found != contexts_.end()) return found->second.get();
    Context context(redisConnect("127.0.0.1", port));
    if (!context || context->err) return nullptr;
    if (!password_.empty()) {
      Reply login(
          static_cast<redisReply*>(redisCommand(context.get(), "AUTH %s", password_.c_str())));
      if (!login || login->type == REDIS_REPLY_ERROR) return nullptr;
    }
    return contexts_.emplace(port, std::move(context)).first->second.get();
  }

  std::string password_;
  std::map<int, Context> contexts_;
};

}  // namespace

int WriteEveryType(const std::vector<std::string>& cli_args, int per_type) {
  TempDir scratch;
  const auto file = scratch.path() / "commands.txt";
  int keys = 0;
  {
    std::ofstream script(file);
    for (int i = 0; i < per_type; ++i) {
      const std::string n = std::to_string(i);
      script << "SET string:" << n << " value-" << n << "\n"
             << "HSET hash:" << n << " a 1 b 2 c " << n << "\n"
             << "RPUSH list:" << n << " x y z " << n << "\n"
             << "SADD set:" << n << " p q " << n << "\n"
             << "ZADD zset:" << n << " 1 one 2 two 3 " << n << "\n"
             << "XADD stream:" << n << " * field " << n << "\n"
             << "XADD stream:" << n << " * other " << n << "\n";
      // A consumer group with an entry delivered and not acknowledged: DUMP carries the group,
      // its consumer and the pending entry, so a copy must keep them too.
      if (i % 10 == 0) {
        script << "XGROUP CREATE stream:" << n << " readers 0\n"
               << "XREADGROUP GROUP readers reader-" << n << " COUNT 1 STREAMS stream:" << n
               << " >\n";
      }
      // Every third key of each other type expires too: their TTL travels apart from the value
      // (DUMP has none), which a copy must not drop.
      if (i % 3 == 0) {
        for (const char* type : {"hash:", "list:", "set:", "zset:", "stream:"}) {
          script << "PEXPIRE " << type << n << " " << 7200000 + i << "\n";
        }
      }
      script << "PFADD hll:" << n << " a b c " << n << "\n"
             << "SET ttl:" << n << " expiring PX " << 3600000 + i << "\n";
      keys += 8;
    }
    script << "SET big " << std::string(200 * 1024, 'b') << "\n";
    ++keys;
  }
  std::string command = "redis-cli -e";  // -e: an error reply fails the run (and the test)
  for (const auto& arg : cli_args) command += " " + arg;
  auto written = RunCommand({"sh", "-c", command + " < " + file.string() + " > /dev/null"}, 120s);
  EXPECT_EQ(written.exit_code, 0) << written.Describe();
  return keys;
}

void LoadTestLibrary(const std::vector<std::string>& cli_args) {
  std::vector<std::string> argv = {"redis-cli"};
  argv.insert(argv.end(), cli_args.begin(), cli_args.end());
  argv.insert(argv.end(), {"FUNCTION", "LOAD", "REPLACE",
                           "#!lua name=shardctltest\n"
                           "redis.register_function('answer', function() return 42 end)"});
  auto loaded = RunCommand(argv, 10s);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.Describe();
  ASSERT_EQ(loaded.out, "shardctltest\n") << loaded.Describe();
}

bool TestLibraryAnswersOn(const std::vector<int>& ports) {
  for (int port : ports) {
    auto answer = QueryRedis(port, {"FCALL", "answer", "0"});
    if (!answer || answer->integer != 42) return false;
  }
  return true;
}

long long KeysAt(const std::vector<int>& ports) {
  long long total = 0;
  for (int port : ports) {
    auto size = QueryRedis(port, {"DBSIZE"});
    total += size ? size->integer : -1000000;
  }
  return total;
}

std::map<std::string, KeyValue> ReadKeyspace(const std::vector<int>& ports,
                                             const std::string& password) {
  Nodes nodes(password);
  std::map<std::string, KeyValue> keyspace;
  for (int port : ports) {
    std::string cursor = "0";
    do {
      Reply scan = nodes.Run(port, {"SCAN", cursor, "COUNT", "500"});
      if (!scan || scan->type != REDIS_REPLY_ARRAY || scan->elements != 2) {
        ADD_FAILURE() << "SCAN on port " << port << " failed";
        return keyspace;
      }
      cursor.assign(scan->element[0]->str, scan->element[0]->len);
      const redisReply* keys = scan->element[1];
      for (size_t i = 0; i < keys->elements; ++i) {
        keyspace[std::string(keys->element[i]->str, keys->element[i]->len)].port = port;
      }
    } while (cursor != "0");
  }
  // Each key is read where the scan found it (a cluster's primary holds its own slots' keys),
  // pipelined in batches.
  std::map<int, std::vector<std::string>> by_port;
  for (const auto& [key, value] : keyspace) by_port[value.port].push_back(key);
  constexpr size_t kBatch = 300;
  for (const auto& [port, keys] : by_port) {
    for (size_t first = 0; first < keys.size(); first += kBatch) {
      const size_t end = std::min(keys.size(), first + kBatch);
      std::vector<std::vector<std::string>> reads;
      for (size_t i = first; i < end; ++i) {
        reads.push_back({"DUMP", keys[i]});
        reads.push_back({"PTTL", keys[i]});
        reads.push_back({"TYPE", keys[i]});
      }
      auto replies = nodes.Pipeline(port, reads);
      std::vector<std::vector<std::string>> members_reads;
      std::vector<std::string> with_members;
      for (size_t i = first; i < end && 3 * (i - first) + 2 < replies.size(); ++i) {
        KeyValue& value = keyspace[keys[i]];
        const Reply& dump = replies[3 * (i - first)];
        const Reply& ttl = replies[3 * (i - first) + 1];
        const Reply& type = replies[3 * (i - first) + 2];
        if (dump && dump->type == REDIS_REPLY_STRING) value.dump.assign(dump->str, dump->len);
        if (ttl && ttl->type == REDIS_REPLY_INTEGER) value.pttl = ttl->integer;
        const std::string type_name = type && type->str ? std::string(type->str, type->len) : "";
        if (type_name == "set" || type_name == "hash") {
          members_reads.push_back({type_name == "set" ? "SMEMBERS" : "HGETALL", keys[i]});
          with_members.push_back(keys[i]);
        }
      }
      auto all = nodes.Pipeline(port, members_reads);
      for (size_t j = 0; j < all.size(); ++j) {
        if (!all[j]) continue;
        const bool hash = members_reads[j].front() == "HGETALL";
        std::vector<std::string> members;
        for (size_t i = 0; i < all[j]->elements; i += hash ? 2 : 1) {
          std::string member(all[j]->element[i]->str, all[j]->element[i]->len);
          if (hash) {
            member += "=" + std::string(all[j]->element[i + 1]->str, all[j]->element[i + 1]->len);
          }
          members.push_back(member);
        }
        std::sort(members.begin(), members.end());
        for (const auto& member : members) keyspace[with_members[j]].members += member + "\n";
      }
    }
  }
  return keyspace;
}

void ExpectSameKeyspace(const std::map<std::string, KeyValue>& expected,
                        const std::map<std::string, KeyValue>& actual, long long ttl_slack_ms) {
  EXPECT_EQ(actual.size(), expected.size()) << "keys: expected vs actual";
  int reported = 0;
  for (const auto& [key, value] : expected) {
    if (reported >= 5) break;
    auto found = actual.find(key);
    if (found == actual.end()) {
      ADD_FAILURE() << "key " << key << " is missing";
      ++reported;
      continue;
    }
    const KeyValue& other = found->second;
    const bool same_ttl = (value.pttl < 0) == (other.pttl < 0) &&
                          (value.pttl < 0 || std::llabs(value.pttl - other.pttl) <= ttl_slack_ms);
    const bool same_value =
        other.dump == value.dump || (!value.members.empty() && other.members == value.members);
    if (value.dump.empty() || !same_value || !same_ttl) {
      ADD_FAILURE() << "key " << key << " differs: DUMP " << value.dump.size() << " vs "
                    << other.dump.size() << " bytes" << (other.dump == value.dump ? " (equal)" : "")
                    << ", PTTL " << value.pttl << " vs " << other.pttl;
      ++reported;
    }
  }
}

int WriteKeysInOneSlot(int port, const std::string& tag, int count) {
  std::vector<std::string> mset = {"redis-cli", "-c", "-p", std::to_string(port), "MSET"};
  for (int i = 0; i < count; ++i)
    mset.insert(mset.end(), {"{" + tag + "}:" + std::to_string(i), "v"});
  if (RunCommand(mset, 10s).exit_code != 0) return -1;
  auto slot = QueryRedis(port, {"CLUSTER", "KEYSLOT", "{" + tag + "}"});
  return slot ? static_cast<int>(slot->integer) : -1;
}

long long KeysInSlot(int port, int slot) {
  auto count = QueryRedis(port, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
  return count && count->kind == RedisReply::Kind::kInteger ? count->integer : -1;
}

std::vector<std::string> SlotMigrationStates(int port) {
  std::vector<std::string> states;
  auto jobs = QueryRedis(port, {"CLUSTER", "GETSLOTMIGRATIONS"});
  if (!jobs) return states;
  for (const auto& job : jobs->elements) {
    for (size_t i = 0; i + 1 < job.elements.size(); i += 2) {
      if (job.elements[i].text == "state") states.push_back(job.elements[i + 1].text);
    }
  }
  return states;
}

}  // namespace shardctl::integration
