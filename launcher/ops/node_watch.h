// What a live import checks every second about the nodes it works with: what each says now,
// compared with what it said when the import began. A change stops the import (it could not go
// on mirroring the source), naming the node.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

class NodeWatch {
 public:
  // What a node says (read over `connection`); and the error when it says something else later.
  using Reading = std::function<common::Result<std::string>(RedisConnection& connection)>;
  using Changed = std::function<std::string(const common::Endpoint& node)>;

  NodeWatch(const Access& access, std::vector<common::Endpoint> nodes, std::string what,
            Reading read, Changed changed)
      : access_(access),
        nodes_(std::move(nodes)),
        what_(std::move(what)),
        read_(std::move(read)),
        changed_(std::move(changed)) {}

  // Takes the first reading; later Check()s compare against it.
  common::Status Start();
  common::Status Check();

 private:
  // One connection per node, kept; one that broke (a restart closes it) is opened again once.
  common::Result<std::vector<std::string>> Read();

  Access access_;
  std::vector<common::Endpoint> nodes_;
  std::string what_;  // "source", "the deployment's primary": errors name the node with it
  Reading read_;
  Changed changed_;
  std::vector<std::optional<RedisConnection>> connections_;
  std::vector<std::string> first_;
};

// A source cluster's slot layout as each primary states it (its own slots, with any
// migrating/importing marks): keys moving between source primaries reach us on two streams in no
// common order (RESTORE on one, DEL on the other).
NodeWatch WatchSlotLayout(const Access& access, std::vector<common::Endpoint> primaries);

// The deployment's primaries by their run_id (INFO server), which a restart changes: one that
// restarted came back with what its files held (nothing, without persistence), not with the keys
// copied to it. Its connections broke, but the applier learns that only from the next write for
// it, and a quiet source sends none (a cutover then reported success with the keys gone).
NodeWatch WatchForRestarts(const Access& access, std::vector<common::Endpoint> primaries);

}  // namespace shardctl::launcher
