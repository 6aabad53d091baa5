// common/uv/ over real loopback sockets: common::uv::Stream (echo with batched writes, a write
// too big for the socket, reads in pieces, the peer closing, a refused connect), the same with a
// loop turn's writes in one io_uring submission (common::uv::WriteBatch), and
// common::uv::MetricsHttpServer (GET /metrics, 404), and the same echo in TLS. Every test ends with
// the loop closed and no handle left (common::uv::CloseLoop).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/tls.h"
#include "common/uv/address.h"
#include "common/uv/flush.h"
#include "common/uv/handle.h"
#include "common/uv/http_server.h"
#include "common/uv/stream.h"
#include "tests/integration/harness.h"
#include "tests/integration/test_certs.h"

namespace shardctl::integration {
namespace {

using common::uv::StreamFailure;

// One end of a connection, as the proxy's connections use a Stream: an output buffer flushed
// once per loop turn, and a record of what the stream reported.
class TestPeer {
 public:
  TestPeer(uv_loop_t* loop, common::uv::FlushList<TestPeer>& flushes, bool echo)
      : stream(loop, this), flushes_(flushes), echo_(echo) {}

  void Send(std::string_view bytes) {
    out += bytes;
    flushes_.Mark(this);
  }
  void QueueFlush(common::uv::WriteBatch& batch) { stream.QueueWrite(batch, out); }
  void Flush() {
    ++flush_calls;
    const common::uv::FlushOutcome flushed = stream.Flush(out);
    if (flushed.failed) OnStreamFailure(flushed.failure, stream.failure_detail());
  }

  // common::uv::Stream's hooks.
  uv_buf_t StreamReadBuffer() { return uv_buf_init(buffer_, sizeof buffer_); }
  void OnStreamConnected() {
    connected = true;
    flushes_.Mark(this);  // a ClientHello, or what was sent while connecting
  }
  void OnStreamRead(std::string_view bytes) {
    ++reads;
    received += bytes;
    if (echo_) Send(bytes);
  }
  void OnStreamFlushWanted() { flushes_.Mark(this); }
  void OnStreamWritten() {
    ++completed_writes;
    Flush();
  }
  void OnStreamFailure(StreamFailure what, std::string_view) {
    if (!failure) failure = what;
    Close();
  }
  void OnStreamClosed() { closed = true; }

  void Close() {
    flushes_.Forget(this);
    stream.Close();
  }

  common::uv::Stream stream;
  bool flush_scheduled = false;
  std::string out;
  std::string received;
  int reads = 0;
  int flush_calls = 0;
  int completed_writes = 0;  // uv_writes that finished (what uv_try_write could not send)
  bool connected = false;
  bool closed = false;
  std::optional<StreamFailure> failure;

 private:
  common::uv::FlushList<TestPeer>& flushes_;
  const bool echo_;
  char buffer_[64 * 1024];
};

// A loop with a listener on 127.0.0.1 whose accepted connections are TestPeers, a flusher run
// before each poll and after each turn's I/O, and a tick so waits can time out.
class UvStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_ = PortBlock::Reserve();
    ASSERT_NE(ports_, nullptr);
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    loop_.data = this;
    hooks_.emplace(&loop_, this, &UvStreamTest::FlushAll, &UvStreamTest::FlushAll);
    uv_timer_init(&loop_, &tick_);
    uv_timer_start(
        &tick_, [](uv_timer_t*) {}, 5, 5);
  }

  void TearDown() override {
    for (auto& peer : peers_) peer->Close();
    if (hooks_) hooks_->Close();
    common::uv::CloseIfOpen(common::uv::AsHandle(&tick_));
    if (listening_) common::uv::CloseIfOpen(common::uv::AsHandle(&listener_));
    uv_run(&loop_, UV_RUN_DEFAULT);
    for (auto& peer : peers_) EXPECT_TRUE(peer->closed);
    const common::Status closed = common::uv::CloseLoop(&loop_);
    EXPECT_TRUE(closed.ok()) << closed.error().message();
  }

  int port() const { return ports_->base(); }

  // The flush phase, as the proxy's worker runs it: with a batch, every write of the turn is
  // queued and submitted at once, then each Flush() takes its result.
  static void FlushAll(void* data) {
    auto* self = static_cast<UvStreamTest*>(data);
    if (self->batch && self->batch->available()) {
      self->flushes_.Queue(*self->batch);
      self->batch->Submit();
    }
    self->flushes_.Run();
  }

  // Listens on 127.0.0.1:port(); each connection becomes a TestPeer (echoing when `echo`).
  void Listen(bool echo) {
    echo_ = echo;
    sockaddr_storage address{};
    ASSERT_TRUE(common::uv::ParseIpAddress("127.0.0.1", port(), address));
    uv_tcp_init(&loop_, &listener_);
    listening_ = true;
    ASSERT_EQ(uv_tcp_bind(&listener_, reinterpret_cast<sockaddr*>(&address), 0), 0);
    const int rc = uv_listen(common::uv::AsStream(&listener_), 16, [](uv_stream_t* server, int) {
      auto* self = static_cast<UvStreamTest*>(server->loop->data);
      self->accepted.push_back(self->NewPeer(self->echo_));
      if (self->server_tls) self->accepted.back()->stream.UseTls(*self->server_tls);
      ASSERT_EQ(self->accepted.back()->stream.Accept(server), 0);
      self->accepted.back()->stream.ReadStart<TestPeer>();
    });
    ASSERT_EQ(rc, 0);
  }

  TestPeer* NewPeer(bool echo) {
    peers_.push_back(std::make_unique<TestPeer>(&loop_, flushes_, echo));
    return peers_.back().get();
  }

  // A TestPeer connecting to 127.0.0.1:`to`, in TLS with `tls`.
  TestPeer* Connect(int to, const common::TlsContext* tls = nullptr) {
    TestPeer* peer = NewPeer(false);
    if (tls != nullptr) peer->stream.UseTls(*tls);
    sockaddr_storage address{};
    EXPECT_TRUE(common::uv::ParseIpAddress("127.0.0.1", to, address));
    EXPECT_EQ(peer->stream.Connect(address), 0);
    return peer;
  }

  // Runs the loop until `done` or 10 s; false on the timeout.
  bool RunUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(&loop_, UV_RUN_ONCE);
    }
    return true;
  }

  uv_loop_t loop_{};
  std::vector<TestPeer*> accepted;
  std::shared_ptr<const common::TlsContext> server_tls;  // set before Listen(): accept in TLS
  std::optional<common::uv::WriteBatch> batch;           // set: writes go out in batches

 private:
  std::unique_ptr<PortBlock> ports_;
  std::optional<common::uv::LoopTurnHooks> hooks_;
  common::uv::FlushList<TestPeer> flushes_;
  uv_timer_t tick_{};
  uv_tcp_t listener_{};
  bool listening_ = false;
  bool echo_ = false;
  std::vector<std::unique_ptr<TestPeer>> peers_;
};

TEST_F(UvStreamTest, EchoesWithOneWritePerLoopTurn) {
  Listen(/*echo=*/true);
  TestPeer* client = Connect(port());
  ASSERT_TRUE(RunUntil([&] { return client->connected && accepted.size() == 1; }));

  // 100 sends in one loop turn: one flush, one write.
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    const std::string message = "message " + std::to_string(i) + "\n";
    client->Send(message);
    expected += message;
  }
  const int flushes_before = client->flush_calls;
  ASSERT_TRUE(RunUntil([&] { return client->received.size() >= expected.size(); }));
  EXPECT_EQ(client->received, expected);
  EXPECT_EQ(client->flush_calls, flushes_before + 1);
  EXPECT_EQ(accepted[0]->received, expected);
  EXPECT_FALSE(client->failure.has_value());
}

TEST_F(UvStreamTest, WritesWhatTheSocketCannotTakeWithOneUvWrite) {
  Listen(/*echo=*/true);
  TestPeer* client = Connect(port());
  ASSERT_TRUE(RunUntil([&] { return client->connected; }));

  // Far more than a loopback socket buffers: uv_try_write takes part, a uv_write the rest.
  std::string big(16 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  client->Send(big);
  ASSERT_TRUE(RunUntil([&] { return client->received.size() >= big.size(); }))
      << client->received.size() << " of " << big.size() << " bytes echoed";
  EXPECT_TRUE(client->received == big);
  EXPECT_GE(client->completed_writes, 1);
  EXPECT_EQ(client->stream.bytes_in_flight(), 0u);
  EXPECT_FALSE(client->failure.has_value());
}

// Many connections' writes in one io_uring submission per loop turn: every byte arrives once, in
// order, and no write went the usual way.
TEST_F(UvStreamTest, BatchesTheWritesOfManyConnectionsInOneSubmission) {
  batch.emplace();
  if (!batch->available()) GTEST_SKIP() << "io_uring is not available here (kernel or seccomp)";
  Listen(/*echo=*/true);
  std::vector<TestPeer*> clients;
  for (int i = 0; i < 8; ++i) clients.push_back(Connect(port()));
  ASSERT_TRUE(RunUntil([&] {
    return accepted.size() == clients.size() &&
           std::ranges::all_of(clients, [](TestPeer* c) { return c->connected; });
  }));
  std::vector<std::string> expected(clients.size());
  for (int round = 0; round < 20; ++round) {
    for (size_t i = 0; i < clients.size(); ++i) {
      const std::string message =
          "client " + std::to_string(i) + " round " + std::to_string(round) + "\n";
      clients[i]->Send(message);
      expected[i] += message;
    }
    ASSERT_TRUE(RunUntil([&] {
      for (size_t i = 0; i < clients.size(); ++i) {
        if (clients[i]->received.size() < expected[i].size()) return false;
      }
      return true;
    }));
  }
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(clients[i]->received, expected[i]) << "client " << i;
    EXPECT_EQ(clients[i]->completed_writes, 0) << "client " << i;
    EXPECT_FALSE(clients[i]->failure.has_value());
  }
  // 20 rounds of 8 requests and 8 echoes, the connects' empty flushes not counted.
  EXPECT_GE(batch->sent(), 2u * 20 * clients.size());
}

// A batched send the socket takes only part of: the rest goes with one uv_write, nothing twice.
TEST_F(UvStreamTest, BatchedWriteTooBigForTheSocketSendsTheRestWithAUvWrite) {
  batch.emplace();
  if (!batch->available()) GTEST_SKIP() << "io_uring is not available here (kernel or seccomp)";
  Listen(/*echo=*/true);
  TestPeer* client = Connect(port());
  ASSERT_TRUE(RunUntil([&] { return client->connected; }));
  std::string big(16 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  const size_t sent_before = batch->sent();
  client->Send(big);
  ASSERT_TRUE(RunUntil([&] { return client->received.size() >= big.size(); }))
      << client->received.size() << " of " << big.size() << " bytes echoed";
  EXPECT_TRUE(client->received == big);
  EXPECT_GT(batch->sent(), sent_before);
  EXPECT_GE(client->completed_writes, 1);
  EXPECT_EQ(client->stream.bytes_in_flight(), 0u);
  EXPECT_FALSE(client->failure.has_value());
}

TEST_F(UvStreamTest, EchoesInTlsWhatWasQueuedDuringTheHandshake) {
  TempDir dir;
  MakeTestCa(dir.path(), "ca");
  MakeTestCertificate(dir.path(), "server", "ca");
  const std::string ca = dir.path() / "ca.crt";
  auto server =
      common::TlsContext::ForServer({dir.path() / "server.crt", dir.path() / "server.key", ca},
                                    common::TlsClientCertificates::kNo);
  ASSERT_TRUE(server.ok()) << server.error().message();
  auto client_tls = common::TlsContext::ForClient({"", "", ca});
  ASSERT_TRUE(client_tls.ok()) << client_tls.error().message();
  server_tls = *server;
  Listen(/*echo=*/true);

  TestPeer* client = Connect(port(), client_tls->get());
  client->Send("PING over TLS\r\n");  // held until the handshake is done
  ASSERT_TRUE(RunUntil([&] { return client->received.size() >= 15 || client->failure; }));
  EXPECT_EQ(client->received, "PING over TLS\r\n");
  EXPECT_TRUE(client->stream.ready());
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0]->received, "PING over TLS\r\n");
  EXPECT_FALSE(client->failure.has_value());
}

TEST_F(UvStreamTest, HandsOverReadsAsTheyComeAndReportsThePeerClosing) {
  Listen(/*echo=*/false);
  // A plain blocking socket on another thread sends one request in three pieces, then closes.
  std::atomic<bool> sent{false};
  std::thread raw([&, to = port()] {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(to));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      for (std::string_view piece : {"*3\r\n$3\r\nSET\r\n", "$1\r\nk", "\r\n$1\r\nv\r\n"}) {
        send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    close(fd);
    sent = true;
  });
  const bool ended = RunUntil([&] { return !accepted.empty() && accepted[0]->failure; });
  raw.join();
  ASSERT_TRUE(ended);
  ASSERT_TRUE(sent);
  EXPECT_EQ(accepted[0]->received, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_GE(accepted[0]->reads, 3);
  EXPECT_EQ(accepted[0]->failure, StreamFailure::kPeerClosed);
}

TEST_F(UvStreamTest, TellsTheClientWhenTheServerCloses) {
  Listen(/*echo=*/false);
  TestPeer* client = Connect(port());
  ASSERT_TRUE(RunUntil([&] { return client->connected && accepted.size() == 1; }));
  accepted[0]->Close();
  ASSERT_TRUE(RunUntil([&] { return client->failure.has_value(); }));
  EXPECT_EQ(client->failure, StreamFailure::kPeerClosed);
  EXPECT_TRUE(accepted[0]->closed);
}

TEST_F(UvStreamTest, ReportsARefusedConnect) {
  // Nobody listens on the block's next port (the block was bindable when reserved).
  TestPeer* client = Connect(port() + 1);
  ASSERT_TRUE(RunUntil([&] { return client->failure.has_value(); }));
  EXPECT_EQ(client->failure, StreamFailure::kConnect);
  EXPECT_FALSE(client->connected);
}

// The HTTP server on a loop of this thread; the requests come from another thread, which closes
// the server when it is done.
TEST(UvHttpServerTest, AnswersGetMetricsAnd404ForOtherPaths) {
  auto ports = PortBlock::Reserve();
  ASSERT_NE(ports, nullptr);
  uv_loop_t loop{};
  ASSERT_EQ(uv_loop_init(&loop), 0);
  int scrapes = 0;
  auto server = std::make_unique<common::uv::MetricsHttpServer>(&loop, [&] {
    ++scrapes;
    return std::string("shardctl_test_up 1\n");
  });
  const common::Status listening = server->Listen("127.0.0.1", ports->base());
  ASSERT_TRUE(listening.ok()) << listening.error().message();
  EXPECT_EQ(server->port(), ports->base());

  uv_async_t done{};
  done.data = &server;
  uv_async_init(&loop, &done, [](uv_async_t* async) {
    static_cast<std::unique_ptr<common::uv::MetricsHttpServer>*>(async->data)->reset();
    uv_close(common::uv::AsHandle(async), nullptr);
  });
  std::string metrics, other, post;
  std::thread client([&, port = ports->base()] {
    metrics = HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
    other = HttpExchange(port, "GET /other HTTP/1.1\r\n\r\n");
    post = HttpExchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    uv_async_send(&done);
  });
  uv_run(&loop, UV_RUN_DEFAULT);
  client.join();

  EXPECT_TRUE(metrics.starts_with("HTTP/1.1 200 ")) << metrics;
  EXPECT_TRUE(metrics.ends_with("\r\n\r\nshardctl_test_up 1\n")) << metrics;
  EXPECT_TRUE(other.starts_with("HTTP/1.1 404 ")) << other;
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 ")) << post;
  EXPECT_EQ(scrapes, 1);
  const common::Status closed = common::uv::CloseLoop(&loop);
  EXPECT_TRUE(closed.ok()) << closed.error().message();
}

}  // namespace
}  // namespace shardctl::integration
