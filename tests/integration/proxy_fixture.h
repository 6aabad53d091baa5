// The fixture of the shardproxy integration tests: a real 3-shard cluster from `shardctl up`, the
// real shardproxy binary in front of it, and clients that keep their connection (hiredis, raw
// sockets, redis-py through tests/integration/proxy_clients.py).
//
//   test ──RedisConnection / redis-cli / redis-py──▶ shardproxy (base+40) ──▶ 3 × redis-server
//                                                                              (base .. base+2)
//
// TearDown SIGTERMs the proxy and fails the test unless it exits 0: with ASan that also means no
// leak report. Then the ShardctlTest teardown stops the cluster and checks nothing is left.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

struct redisContext;  // hiredis

namespace shardctl::integration {

std::string ShardproxyBinary();

// The reply's text or integer, or "<no reply>"/-1 when there was none (no UB on nullopt).
std::string TextOf(const std::optional<RedisReply>& reply);
long long IntegerOf(const std::optional<RedisReply>& reply);

// One hiredis connection kept open for the life of the object (QueryRedis opens one per call).
class RedisConnection {
 public:
  // Connects to 127.0.0.1:port; nullptr with `error` set when that fails.
  static std::unique_ptr<RedisConnection> Open(int port, std::string* error = nullptr,
                                               std::chrono::milliseconds timeout = 5s);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command and reads its reply; nullopt on an I/O error (see error()).
  std::optional<RedisReply> Command(const std::vector<std::string>& argv);
  // Pipelining: Append() queues a command in hiredis' buffer, GetReply() writes whatever is
  // queued and reads the next reply.
  void Append(const std::vector<std::string>& argv);
  std::optional<RedisReply> GetReply();
  // Why the last call failed; the connection is unusable afterwards.
  const std::string& error() const { return error_; }

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}
  redisContext* context_;
  std::string error_;
};

// A plain TCP connection for bytes no client library would send.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  bool connected() const { return fd_ >= 0; }
  bool Send(const std::string& bytes);
  // Sends EOF and keeps reading (a half-close, as `nc -N` does).
  bool ShutdownWrite();
  // Reads until `bytes` bytes came, the peer closed or `timeout` passed.
  std::string ReadUntil(size_t bytes, std::chrono::milliseconds timeout);
  // Reads until the peer closes or `timeout` passes; sets `closed` when it saw EOF/reset.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout, bool* closed);

 private:
  int fd_ = -1;
};

// CLUSTER MYID of the node on 127.0.0.1:port; empty when it does not answer.
std::string NodeId(int port);

struct SlotRange {
  int first = 0;
  int last = 0;
  int port = 0;  // the primary serving it
};

class ProxyTest : public ShardctlTest {
 protected:
  void TearDown() override;

  // `shardctl up --shards 3`, then the proxy with `proxy_flags` added to the defaults.
  void UpWithProxy(const std::vector<std::string>& proxy_flags = {});
  // Starts shardproxy --cluster <shard 0> --listen <proxy_port()> --threads 2 plus `flags` and
  // waits until it answers PING (or `answers()`, for a proxy plain RESP cannot reach); fails the
  // test when it exits or never answers.
  void StartProxy(const std::vector<std::string>& flags = {},
                  const std::function<bool()>& answers = {});
  // SIGTERM, then expects exit 0 within 10 s (ASan: leak-clean). No-op without a proxy.
  void StopProxy();

  int proxy_port() const { return base_port() + 40; }
  pid_t proxy_pid() const { return proxy_ ? proxy_->pid() : 0; }
  int shard_port(int index) const { return base_port() + index; }
  std::string ProxyStderr() const;

  // CLUSTER SLOTS as seen by shard 0.
  std::vector<SlotRange> SlotRanges();
  // The port of the primary serving `slot` per CLUSTER SLOTS; 0 when none.
  int OwnerPort(int slot);
  // The first key `prefix`N (N = 0, 1, ...) whose slot is served by the primary on `port`.
  std::string KeyOn(int port, const std::string& prefix);
  // Moves `key`'s slot, with its keys, from the primary on `from` to the one on `to` by hand
  // (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE on every primary), behind the proxy's
  // back: its map still says `from` until a MOVED (or its refresh) tells it.
  void MoveSlotOf(const std::string& key, int from, int to);
  // One command through the proxy on a connection of its own; DBSIZE through the proxy.
  std::optional<RedisReply> Proxy(const std::vector<std::string>& command) {
    return QueryRedis(proxy_port(), command);
  }
  long long Keys() { return IntegerOf(Proxy({"DBSIZE"})); }
  // One key `prefix`N on each of the first `shards` primaries (KeyOn()), in shard order.
  std::vector<std::string> KeyPerShard(int shards, const std::string& prefix);
  // INFO proxy through the proxy, as name -> value; empty when it cannot be read.
  std::map<std::string, std::string> ProxyInfo();
  long long ProxyCounter(const std::string& name);
  // The pid of shard `index` from `shardctl status --json`; 0 when unknown.
  pid_t ShardPid(int index);

  // $SHARDCTL_PYTHON (else python3) tests/integration/proxy_clients.py --port <proxy> ...
  // `extra`: more flags for the script (--tls-ca FILE ...).
  CommandResult RunPythonScenario(const std::string& scenario, int protocol,
                                  const std::vector<std::string>& extra = {});
  // The same in the background, its output in <scratch dir>/<log>.out and .err.
  std::unique_ptr<BackgroundCommand> StartPythonScenario(const std::string& scenario, int protocol,
                                                         const std::vector<std::string>& extra,
                                                         const std::string& log);

 private:
  std::unique_ptr<BackgroundCommand> proxy_;
};

}  // namespace shardctl::integration
