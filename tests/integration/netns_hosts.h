// Two "hosts" for tests of deployments that span machines: two network namespaces joined by a veth
// pair, with addresses 10.<net>.0.1 and 10.<net>.0.2 (private, and only inside these namespaces).
// Made by the test process (root needed: Make() says why it could not), deleted by the destructor.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace shardctl::integration {

class NetnsHosts {
 public:
  // `net` picks the 10.<net>.0.0/24 network; names carry the test process' pid, so parallel test
  // processes never share a namespace.
  explicit NetnsHosts(int net);
  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  // Creates both namespaces and the link. "" on success, else why it could not (not root, no
  // `ip netns`): the caller skips with that. A failing step after the first is a test failure.
  std::string Make();

  const std::string& ns(int host) const { return names_[host]; }
  const std::string& address(int host) const { return addresses_[host]; }

  // `command` run inside host `host`'s namespace.
  CommandResult In(int host, std::vector<std::string> command,
                   std::chrono::milliseconds timeout = std::chrono::seconds(90)) const;

 private:
  std::string names_[2];
  std::string addresses_[2];
  std::string links_[2];
  bool made_ = false;
};

}  // namespace shardctl::integration
