// shardproxy against hostile or careless clients: oversized length headers, frames that never end,
// and thousands of connections. Each gets Redis' answer (a protocol error and a closed connection)
// or is simply held; other clients are served throughout, and the proxy's memory stays bounded
// (its RSS is printed, for docs/reliability.md).
#include <sys/resource.h>

#include <iostream>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

// VmRSS of `pid` in KiB; 0 when unreadable.
long RssKib(pid_t pid) {
  const std::string field = ProcStatusField(pid, "VmRSS");  // "12345 kB"
  return field.empty() ? 0 : std::stol(field);
}

// connected_clients from INFO clients through the proxy; -1 when unreadable.
long ConnectedClients(int port) {
  auto client = RedisConnection::Open(port, nullptr, 30s);
  if (!client) return -1;
  const std::string info = TextOf(client->Command({"INFO", "clients"}));
  const std::string field = "connected_clients:";
  const size_t at = info.find(field);
  if (at == std::string::npos) return -1;
  return std::stol(info.substr(at + field.size()));
}

// Fails the test unless a fresh client can still write and read through the proxy.
void ExpectServed(int port, const std::string& key) {
  auto client = RedisConnection::Open(port, nullptr, 30s);
  ASSERT_NE(client, nullptr) << "no new connection accepted";
  auto set = client->Command({"SET", key, "v"});
  ASSERT_TRUE(set.has_value()) << client->error();
  EXPECT_EQ(set->text, "OK");
  EXPECT_EQ(TextOf(client->Command({"GET", key})), "v");
}

TEST_F(ProxyTest, OversizedLengthHeadersGetAProtocolErrorAndAClosedConnection) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  for (const std::string& header : {std::string("*1\r\n$600000000\r\n"),  // over proto-max-bulk-len
                                    std::string("*99999999999\r\n"), std::string("*1\r\n$-5\r\n"),
                                    std::string("*1\r\n$99999999999999999999\r\n")}) {
    RawConnection raw(proxy_port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send(header));
    bool closed = false;
    const std::string reply = raw.ReadUntilClosed(5s, &closed);
    EXPECT_TRUE(reply.starts_with("-ERR Protocol error")) << header << " -> " << reply;
    EXPECT_TRUE(closed) << header << ": the connection stayed open";
  }
  ExpectServed(proxy_port(), "abuse:after-headers");
}

TEST_F(ProxyTest, UnterminatedFramesAndThousandsOfConnectionsKeepMemoryBounded) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  const int idle_clients = static_cast<int>(std::min<rlim_t>(3000, files.rlim_cur - 200));
  const long rss_start = RssKib(proxy_pid());

  // 200 clients each stop 32 KB into a 64 KB value and wait: the proxy holds what they sent.
  const std::string partial =
      "*3\r\n$3\r\nSET\r\n$9\r\nabuse:big\r\n$65536\r\n" + std::string(32 * 1024, 'x');
  std::vector<std::unique_ptr<RawConnection>> stuck;
  for (int i = 0; i < 200; ++i) {
    stuck.push_back(std::make_unique<RawConnection>(proxy_port()));
    ASSERT_TRUE(stuck.back()->connected());
    ASSERT_TRUE(stuck.back()->Send(partial));
  }
  // Then thousands of idle connections.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < idle_clients; ++i) {
    idle.push_back(std::make_unique<RawConnection>(proxy_port()));
    ASSERT_TRUE(idle.back()->connected()) << "connection " << i;
  }
  ExpectServed(proxy_port(), "abuse:during");
  // connect() returns once the kernel has queued the connection; the proxy accepts it a moment
  // later (thousands of them, two threads, a sanitizer build on a busy machine).
  long connected = 0;
  WaitUntil([&] { return (connected = ConnectedClients(proxy_port())) >= 201 + idle_clients; }, 20s,
            100ms);
  EXPECT_GE(connected, 201 + idle_clients);  // with the one asking
  const long rss_loaded = RssKib(proxy_pid());
  // What 200 x 32 KB of held input and the connections cost, whatever the allocator keeps:
  // bounded by 256 KiB per connection (the sanitizer build's redzones and quarantine included).
  const long per_connection = (rss_loaded - rss_start) / (200 + idle_clients);
  std::cout << "shardproxy RSS: " << rss_start << " KiB idle, " << rss_loaded << " KiB with "
            << idle_clients << " idle and 200 half-sent connections (" << per_connection
            << " KiB each)\n";
  RecordProperty("rss_per_connection_kib", static_cast<int>(per_connection));
  EXPECT_LT(per_connection, 256) << rss_start << " -> " << rss_loaded << " KiB";

  // The half-sent frames finish: every one is a complete SET.
  for (auto& connection : stuck)
    ASSERT_TRUE(connection->Send(std::string(32 * 1024, 'y') + "\r\n"));
  for (auto& connection : stuck) EXPECT_EQ(connection->ReadUntil(5, 10s), "+OK\r\n");
  stuck.clear();
  idle.clear();
  EXPECT_TRUE(WaitUntil([&] { return ConnectedClients(proxy_port()) == 1; }, 30s, 100ms))
      << "connected_clients: " << ConnectedClients(proxy_port());
  ExpectServed(proxy_port(), "abuse:after");
}

}  // namespace
}  // namespace shardctl::integration
