// Helpers for the tests of backup, restore and import: data of every type written through
// redis-cli, and a key-by-key comparison of two keyspaces by DUMP and PTTL (not by counts).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace shardctl::integration {

// Writes `per_type` keys of each type (string, hash, list, set, sorted set, stream, HyperLogLog,
// string with a TTL; every third hash, list, set, sorted set and stream with a TTL too) plus one
// 200 KB string, with `redis-cli <cli_args>` (e.g. {"-c", "-p",
// "7000"} for a cluster). Returns the number of keys written; fails the test on an error.
int WriteEveryType(const std::vector<std::string>& cli_args, int per_type);

// Redis Functions, which are not keys: loads the library "shardctltest" (FCALL answer 0 returns
// 42) with `redis-cli <cli_args>` on one node, failing the test on an error; and whether every
// node at `ports` answers FCALL answer 0 with 42.
void LoadTestLibrary(const std::vector<std::string>& cli_args);
bool TestLibraryAnswersOn(const std::vector<int>& ports);

// DBSIZE of the nodes at `ports`, summed; a node that does not answer counts -1000000, so a
// comparison with the expected count fails.
long long KeysAt(const std::vector<int>& ports);

// Writes `count` keys "{tag}:0".. (one slot, one MSET through redis-cli -c at `port`); returns
// their slot, -1 when the write failed.
int WriteKeysInOneSlot(int port, const std::string& tag, int count);
// CLUSTER COUNTKEYSINSLOT at `port`; -1 when it does not answer.
long long KeysInSlot(int port, int slot);
// The state of every atomic slot migration job `port` lists (CLUSTER GETSLOTMIGRATIONS, Valkey 9).
std::vector<std::string> SlotMigrationStates(int port);

// Every key of the nodes at `ports` (SCAN of each), with its DUMP payload and PTTL, read from the
// node that listed it (a cluster's primaries: each holds its own slots' keys). `password` is sent
// with AUTH when not empty.
struct KeyValue {
  std::string dump;
  long long pttl = -2;
  // Sets and hashes in a hash table serialize in table order, which a reload may change: for them
  // the sorted members (and fields with values) are what must be equal.
  std::string members;
  int port = 0;  // the node the key was read from
};
std::map<std::string, KeyValue> ReadKeyspace(const std::vector<int>& ports,
                                             const std::string& password = "");

// Fails the test (naming at most 5 keys) unless both hold the same keys with byte-equal DUMP
// payloads (for sets and hashes: byte-equal, or the same sorted members) and TTLs within
// `ttl_slack_ms` of each other (and both with or both without one).
void ExpectSameKeyspace(const std::map<std::string, KeyValue>& expected,
                        const std::map<std::string, KeyValue>& actual,
                        long long ttl_slack_ms = 60000);

}  // namespace shardctl::integration
