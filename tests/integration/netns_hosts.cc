#include "tests/integration/netns_hosts.h"

#include <unistd.h>

namespace shardctl::integration {
namespace {

CommandResult Ip(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  return RunCommand(args, std::chrono::seconds(20));
}

}  // namespace

NetnsHosts::NetnsHosts(int net) {
  const std::string id = std::to_string(getpid());
  for (int host = 0; host < 2; ++host) {
    const std::string suffix = std::to_string(net) + (host == 0 ? "a" : "b");
    names_[host] = "shardctl-" + id + "-" + suffix;
    links_[host] = "sc" + id + suffix;
    addresses_[host] = "10." + std::to_string(net) + ".0." + std::to_string(host + 1);
  }
}

std::string NetnsHosts::Make() {
  if (geteuid() != 0) return "needs root to create network namespaces";
  if (auto added = Ip({"netns", "add", names_[0]}); added.exit_code != 0) {
    return "ip netns add failed: " + added.Describe();
  }
  made_ = true;
  for (const auto& step : std::vector<std::vector<std::string>>{
           {"netns", "add", names_[1]},
           {"link", "add", links_[0], "type", "veth", "peer", "name", links_[1]},
           {"link", "set", links_[0], "netns", names_[0]},
           {"link", "set", links_[1], "netns", names_[1]},
           {"-n", names_[0], "addr", "add", addresses_[0] + "/24", "dev", links_[0]},
           {"-n", names_[1], "addr", "add", addresses_[1] + "/24", "dev", links_[1]},
           {"-n", names_[0], "link", "set", links_[0], "up"},
           {"-n", names_[1], "link", "set", links_[1], "up"},
           {"-n", names_[0], "link", "set", "lo", "up"},
           {"-n", names_[1], "link", "set", "lo", "up"}}) {
    auto done = Ip(step);
    EXPECT_EQ(done.exit_code, 0) << done.Describe();
  }
  return "";
}

NetnsHosts::~NetnsHosts() {
  if (!made_) return;
  Ip({"netns", "del", names_[0]});
  Ip({"netns", "del", names_[1]});
}

CommandResult NetnsHosts::In(int host, std::vector<std::string> command,
                             std::chrono::milliseconds timeout) const {
  command.insert(command.begin(), {"ip", "netns", "exec", names_[host]});
  return RunCommand(command, timeout);
}

}  // namespace shardctl::integration
