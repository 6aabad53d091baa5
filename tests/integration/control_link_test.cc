// launcher/cluster's blocking control connection against a real redis-server stopped with SIGSTOP
// (the kernel still accepts and buffers, nobody answers): the read timeout is reported as what it
// is, naming the wait, not as the system's "Resource temporarily unavailable".
#include <signal.h>

#include <string>

#include "launcher/cluster/redis_client.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class ControlLinkTest : public ShardctlTest {};

TEST_F(ControlLinkTest, AStoppedServerIsNoReplyWithinTheTimeout) {
  const int port = base_port();
  BackgroundCommand server({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1",
                            "--save", "", "--dir", scratch_dir().string()},
                           scratch_dir() / "server.out", scratch_dir() / "server.err");
  ASSERT_TRUE(WaitUntil([&] { return !PortBindable(port); }, 10s));
  {
    // The setup's own connection has time to spare on a loaded machine.
    auto setup = launcher::RedisConnection::Connect({}, "127.0.0.1", port, 5s);
    ASSERT_TRUE(setup.ok()) << setup.error().message();
    auto answered = setup->Run({"SET", "before-stop", "1"});
    ASSERT_TRUE(answered.ok()) << answered.error().message();
  }
  // Connected while the server runs (the kernel would accept the connect anyway); it stops
  // before the command.
  auto connection = launcher::RedisConnection::Connect({}, "127.0.0.1", port, 300ms);
  ASSERT_TRUE(connection.ok()) << connection.error().message();
  ASSERT_EQ(::kill(server.pid(), SIGSTOP), 0);
  auto stalled = connection->Run({"PING"});
  ::kill(server.pid(), SIGCONT);
  ASSERT_FALSE(stalled.ok());
  const std::string message = stalled.error().message();
  EXPECT_NE(message.find("127.0.0.1:" + std::to_string(port) + ": no reply within 300ms"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("stopped"), std::string::npos) << message;
  EXPECT_EQ(message.find("temporarily unavailable"), std::string::npos) << message;

  // The server, continued, still holds its one key: the test touched nothing else.
  auto fresh = launcher::RedisConnection::Connect({}, "127.0.0.1", port, 5s);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message();
  auto keys = fresh->Run({"DBSIZE"});
  ASSERT_TRUE(keys.ok()) << keys.error().message();
  EXPECT_EQ(*keys, "1");
  ::kill(server.pid(), SIGTERM);
  EXPECT_TRUE(server.WaitForExit(10s).has_value());
}

}  // namespace
}  // namespace shardctl::integration
