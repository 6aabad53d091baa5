#include "proxy/services/client_directory.h"

#include <utility>

namespace shardctl::proxy {

void ClientDirectory::Add(uint64_t client, ClientInbox* inbox) {
  const std::lock_guard lock(mutex_);
  clients_[client] = inbox;
}

void ClientDirectory::Remove(uint64_t client) {
  const std::lock_guard lock(mutex_);
  clients_.erase(client);
}

bool ClientDirectory::Contains(uint64_t client) const {
  const std::lock_guard lock(mutex_);
  return clients_.contains(client);
}

bool ClientDirectory::Post(uint64_t client, std::string keys) {
  // Under the lock: a worker removes its clients before its inbox goes away.
  const std::lock_guard lock(mutex_);
  auto found = clients_.find(client);
  if (found == clients_.end()) return false;
  found->second->Post(client, std::move(keys));
  return true;
}

}  // namespace shardctl::proxy
