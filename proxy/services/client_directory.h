// ClientDirectory: every client of the proxy by its id (CLIENT ID), whatever worker thread serves
// it, so that one client can hand another a message: CLIENT TRACKING ... REDIRECT <id> sends the
// invalidations a client's shards produce to the client named.
//
//   session A (worker 1) ──Post(B, keys)──▶ directory ──▶ worker 2's inbox ──async──▶ session B
//
// A message goes through the inbox of the worker that serves the client (ClientInbox), which
// hands it to the client on its own loop thread. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace shardctl::proxy {

// One worker's mailbox for messages to its clients. Post() may be called from any thread; the
// worker delivers on its loop, to the client with that id if it is still there.
class ClientInbox {
 public:
  virtual ~ClientInbox() = default;
  // `keys`: an invalidation's keys (an array of keys, or a null for "everything"), from
  // InvalidationKeys().
  virtual void Post(uint64_t client, std::string keys) = 0;
};

class ClientDirectory {
 public:
  // `client` is served by the worker owning `inbox` from now until Remove().
  void Add(uint64_t client, ClientInbox* inbox);
  void Remove(uint64_t client);
  bool Contains(uint64_t client) const;
  // Hands `keys` to the client's worker; false when no such client is connected (any more).
  bool Post(uint64_t client, std::string keys);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, ClientInbox*> clients_;
};

}  // namespace shardctl::proxy
