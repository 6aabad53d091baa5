// Prometheus /metrics from the supervisor (`up --metrics-port`) and from shardproxy
// (`--proxy-metrics-port`): real shards, real scrapes over HTTP, every body checked by Debian's
// `promtool check metrics`; bad or taken metrics ports refused before anything starts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

// A connection to 127.0.0.1:port that sends nothing; -1 when it cannot connect.
int ConnectIdle(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// True when the server closes `fd` (end of file) within 15 s.
bool ClosedByServer(int fd) {
  timeval timeout{.tv_sec = 15, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char byte;
  const bool closed = recv(fd, &byte, 1, 0) == 0;
  close(fd);
  return closed;
}

// The body of GET /metrics, or "" unless the answer was 200.
std::string Scrape(int port) {
  std::string response = HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
  if (!response.starts_with("HTTP/1.1 200 OK\r\n")) return "";
  size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.starts_with(line + "\n") || text.find("\n" + line + "\n") != std::string::npos;
}

// The value of the first sample line starting with `prefix` (a name, maybe with labels), or -1.
double ValueOf(const std::string& text, const std::string& prefix) {
  for (const std::string& line : SplitLines(text)) {
    if (!line.starts_with(prefix) || line.starts_with("#")) continue;
    return std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
  }
  return -1;
}

class MetricsTest : public ShardctlTest {
 protected:
  int MetricsPort() const { return base_port() + 46; }
  int ProxyPort() const { return base_port() + 47; }
  int ProxyMetricsPort() const { return base_port() + 48; }

  // `promtool check metrics` on `text` (it reads stdin): its result, for the assertion message.
  CommandResult Promtool(const std::string& text, const std::string& name) {
    const auto file = scratch_dir() / (name + ".prom");
    std::ofstream(file) << text;
    return RunCommand(
        {"/bin/sh", "-c", "exec promtool check metrics < \"$1\"", "sh", file.string()}, 30s);
  }

  // The supervisor's scrape of a healthy 3-shard deployment: every family, every shard up,
  // and promtool's approval.
  void CheckSupervisorMetrics() {
    // The poller answers within a second or so: every shard up, the cluster ok.
    std::string shards;
    const std::string labels0 = R"({shard="0",port=")" + std::to_string(base_port()) + R"(")";
    ASSERT_TRUE(WaitUntil(
        [&] {
          shards = Scrape(MetricsPort());
          return HasLine(shards, "shardctl_cluster_state_ok 1");
        },
        15s, 100ms))
        << shards;
    for (int i = 0; i < 3; ++i) {
      const std::string port = std::to_string(base_port() + i);
      EXPECT_TRUE(HasLine(shards, "redis_up{shard=\"" + std::to_string(i) + "\",port=\"" + port +
                                      "\",role=\"primary\",numa_node=\"0\"} 1"))
          << shards;
    }
    for (const char* family :
         {"redis_memory_used_bytes", "redis_memory_max_bytes", "redis_connected_clients",
          "redis_commands_processed_total", "redis_keyspace_hits_total",
          "redis_keyspace_misses_total", "redis_evicted_keys_total", "redis_db_keys",
          "redis_rdb_last_cow_size_bytes", "redis_connected_slave_lag_seconds",
          "shardctl_shard_restarts_total", "shardctl_shard_cpu_seconds_total",
          "shardctl_forks_in_progress", "shardctl_fork_wait_seconds_total",
          "shardctl_cluster_state_ok", "shardctl_slot_moves_in_progress"}) {
      EXPECT_NE(shards.find("# TYPE " + std::string(family) + " "), std::string::npos) << family;
    }
    EXPECT_GT(ValueOf(shards, "redis_memory_max_bytes" + labels0), 0) << shards;
    EXPECT_TRUE(HasLine(shards, "shardctl_slot_moves_in_progress 0")) << shards;
    auto lint = Promtool(shards, "supervisor");
    EXPECT_EQ(lint.exit_code, 0) << lint.Describe() << "\n" << shards;
  }

  // Commands through the proxy show up in its own metrics, which promtool accepts too.
  void CheckProxyMetrics() {
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(QueryRedis(ProxyPort(), {"SET", "key" + std::to_string(i), "v"}));
      ASSERT_TRUE(QueryRedis(ProxyPort(), {"GET", "key" + std::to_string(i)}));
    }
    ASSERT_TRUE(QueryRedis(ProxyPort(), {"MGET", "key1", "key2", "key3", "key4"}));
    std::string proxy = Scrape(ProxyMetricsPort());
    EXPECT_EQ(ValueOf(proxy, "shardproxy_commands_total{cmd=\"get\"}"), 20) << proxy;
    EXPECT_EQ(ValueOf(proxy, "shardproxy_commands_total{cmd=\"set\"}"), 20) << proxy;
    EXPECT_EQ(ValueOf(proxy, "shardproxy_command_duration_seconds_count{cmd=\"get\"}"), 20)
        << proxy;
    EXPECT_EQ(
        ValueOf(proxy, "shardproxy_command_duration_seconds_bucket{cmd=\"mget\",le=\"+Inf\"}"), 1)
        << proxy;
    EXPECT_TRUE(HasLine(proxy, "shardproxy_redirects_total{kind=\"moved\"} 0")) << proxy;
    EXPECT_GE(ValueOf(proxy, "shardproxy_slot_map_version"), 1) << proxy;
    EXPECT_NE(proxy.find("# TYPE shardproxy_client_connections gauge"), std::string::npos);
    auto lint = Promtool(proxy, "proxy");
    EXPECT_EQ(lint.exit_code, 0) << lint.Describe() << "\n" << proxy;
  }
};

TEST_F(MetricsTest, SupervisorAndProxyServeMetricsPromtoolAccepts) {
  auto up = Up(3, {"--metrics-port", std::to_string(MetricsPort()), "--proxy-port",
                   std::to_string(ProxyPort()), "--proxy-metrics-port",
                   std::to_string(ProxyMetricsPort()), "--proxy-threads", "2"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  // Not a terminal: no progress lines among what `up` printed.
  EXPECT_EQ(up.err.find("PING"), std::string::npos) << up.err;
  // Connections that never send a request are closed after 5 s.
  const int idle_supervisor = ConnectIdle(MetricsPort());
  const int idle_proxy = ConnectIdle(ProxyMetricsPort());
  ASSERT_GE(idle_supervisor, 0);
  ASSERT_GE(idle_proxy, 0);
  json status = Status();
  EXPECT_EQ(status["metrics"]["url"],
            "http://127.0.0.1:" + std::to_string(MetricsPort()) + "/metrics")
      << status.dump(2);
  EXPECT_EQ(status["proxy"]["metrics_port"], ProxyMetricsPort()) << status.dump(2);

  CheckSupervisorMetrics();
  CheckProxyMetrics();

  // Strict HTTP: only GET /metrics.
  for (int port : {MetricsPort(), ProxyMetricsPort()}) {
    EXPECT_TRUE(HttpExchange(port, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
    EXPECT_TRUE(HttpExchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                    .starts_with("HTTP/1.1 405 "));
    EXPECT_TRUE(HttpExchange(port, "not http\r\n\r\n").starts_with("HTTP/1.1 400 "));
  }
  EXPECT_TRUE(ClosedByServer(idle_supervisor));
  EXPECT_TRUE(ClosedByServer(idle_proxy));

  // The endpoint's handles close with the supervisor's loop.
  ASSERT_EQ(OnDeployment("down").exit_code, 0);
  const std::string log = ReadFileText(deployment_dir() / "supervisor.log");
  EXPECT_NE(log.find("supervisor exits"), std::string::npos) << log;
  EXPECT_EQ(log.find("open libuv handles"), std::string::npos) << log;
}

TEST_F(MetricsTest, RestartsAndCpuOfAShard) {
  auto up = Up(2, {"--metrics-port", std::to_string(MetricsPort())});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const pid_t shard1 = Status()["shards"][1]["pid"].get<pid_t>();
  ASSERT_EQ(kill(shard1, SIGKILL), 0);
  const std::string restarted = R"(shardctl_shard_restarts_total{shard="1",port=")" +
                                std::to_string(base_port() + 1) +
                                R"(",role="primary",numa_node="0"} 1)";
  std::string text;
  ASSERT_TRUE(WaitUntil(
      [&] {
        text = Scrape(MetricsPort());
        return HasLine(text, restarted) && HasLine(text, "shardctl_cluster_state_ok 1");
      },
      30s, 100ms))
      << text;
  EXPECT_GE(ValueOf(text, R"(shardctl_shard_cpu_seconds_total{shard="0")"), 0) << text;
}

// Scale in leaves gaps in the shard indices (primaries 0-2 and replicas 3-5 lose 2 and 5); every
// remaining shard is still reported under its own index and port, with its own process's CPU, and
// shards added later are polled too.
TEST_F(MetricsTest, FollowScaleInWithGapsAndScaleOut) {
  auto up = Up(3, {"--replicas", "1", "--metrics-port", std::to_string(MetricsPort())});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto in = OnDeployment("scale", {"--shards", "2"});
  ASSERT_EQ(in.exit_code, 0) << in.Describe();
  auto up_line = [&](int index) {
    return R"(redis_up{shard=")" + std::to_string(index) + R"(",port=")" +
           std::to_string(base_port() + index) + R"(")";
  };
  auto cpu_line = [&](int index) {
    return R"(shardctl_shard_cpu_seconds_total{shard=")" + std::to_string(index) + R"(")";
  };
  std::string text;
  ASSERT_TRUE(WaitUntil(
      [&] {
        text = Scrape(MetricsPort());
        return ValueOf(text, up_line(3)) == 1 && ValueOf(text, up_line(4)) == 1;
      },
      15s, 100ms))
      << text;
  for (int index : {0, 1, 3, 4}) {
    EXPECT_EQ(ValueOf(text, up_line(index)), 1) << index << "\n" << text;
    EXPECT_GE(ValueOf(text, cpu_line(index)), 0) << index << "\n" << text;
  }
  for (int gone : {2, 5}) EXPECT_EQ(ValueOf(text, up_line(gone)), -1) << gone << "\n" << text;

  auto out = OnDeployment("scale", {"--shards", "3"});
  ASSERT_EQ(out.exit_code, 0) << out.Describe();
  json status = Status();
  ASSERT_EQ(status["shards"].size(), 6u) << status.dump(2);
  std::vector<int> added;
  for (const auto& shard : status["shards"]) {
    const int index = shard["index"].get<int>();
    if (index > 4) added.push_back(index);
  }
  ASSERT_EQ(added.size(), 2u) << "a primary and its replica, after the highest index\n"
                              << status.dump(2);
  ASSERT_TRUE(WaitUntil(
      [&] {
        text = Scrape(MetricsPort());
        return ValueOf(text, up_line(added[0])) == 1 && ValueOf(text, up_line(added[1])) == 1 &&
               HasLine(text, "shardctl_cluster_state_ok 1");
      },
      15s, 100ms))
      << text;
  auto lint = Promtool(text, "after-scale");
  EXPECT_EQ(lint.exit_code, 0) << lint.Describe() << "\n" << text;
}

TEST_F(MetricsTest, BadMetricsPortsAreRefusedBeforeAnythingStarts) {
  auto out_of_range = Up(2, {"--metrics-port", "70000"});
  EXPECT_EQ(out_of_range.exit_code, 2) << out_of_range.Describe();
  EXPECT_EQ(out_of_range.err,
            "shardctl: --metrics-port: \"70000\" is not a TCP port (use 1-65535, e.g. 9121)\n");

  auto on_a_shard = Up(2, {"--metrics-port", std::to_string(base_port() + 1)});
  EXPECT_EQ(on_a_shard.exit_code, 2) << on_a_shard.Describe();
  EXPECT_EQ(SplitLines(on_a_shard.err).size(), 1u) << on_a_shard.err;
  EXPECT_NE(on_a_shard.err.find("shard 1 uses it"), std::string::npos) << on_a_shard.err;

  auto without_proxy = Up(2, {"--proxy-metrics-port", std::to_string(ProxyMetricsPort())});
  EXPECT_EQ(without_proxy.exit_code, 2) << without_proxy.Describe();
  EXPECT_NE(without_proxy.err.find("needs --proxy-port"), std::string::npos);

  const int taken = ListenOn(MetricsPort());
  ASSERT_GE(taken, 0);
  auto in_use = Up(2, {"--metrics-port", std::to_string(MetricsPort())});
  EXPECT_EQ(in_use.exit_code, 1) << in_use.Describe();
  EXPECT_EQ(in_use.err, "shardctl: --metrics-port " + std::to_string(MetricsPort()) +
                            " is in use on 127.0.0.1 (pick another --metrics-port or stop what "
                            "listens there)\n");
  auto proxy_in_use = Up(2, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-metrics-port",
                             std::to_string(MetricsPort())});
  EXPECT_EQ(proxy_in_use.exit_code, 1) << proxy_in_use.Describe();
  EXPECT_NE(
      proxy_in_use.err.find("--proxy-metrics-port " + std::to_string(MetricsPort()) + " is in use"),
      std::string::npos)
      << proxy_in_use.err;
  ExpectNothingRunning("after refused starts");
  EXPECT_EQ(OnDeployment("status").exit_code, 3) << "a refused up must leave no deployment";

  // shardproxy itself: the port is checked before the cluster is even contacted.
  auto proxy_range =
      RunCommand({SHARDPROXY_BINARY, "--cluster", "127.0.0.1:1", "--metrics-port", "70000"}, 10s);
  EXPECT_EQ(proxy_range.exit_code, 2) << proxy_range.Describe();
  EXPECT_EQ(proxy_range.err,
            "shardproxy: --metrics-port: expected a number from 1 to 65535, got \"70000\"\n");
  auto proxy_taken = RunCommand(
      {SHARDPROXY_BINARY, "--cluster", "127.0.0.1:1", "--listen",
       "127.0.0.1:" + std::to_string(ProxyPort()), "--metrics-port", std::to_string(MetricsPort())},
      10s);
  EXPECT_EQ(proxy_taken.exit_code, 1) << proxy_taken.Describe();
  EXPECT_EQ(proxy_taken.err, "shardproxy: --metrics-port " + std::to_string(MetricsPort()) +
                                 ": 127.0.0.1:" + std::to_string(MetricsPort()) +
                                 ": address already in use (pick another --metrics-port or stop "
                                 "what listens there)\n");
  close(taken);
}

}  // namespace
}  // namespace shardctl::integration
