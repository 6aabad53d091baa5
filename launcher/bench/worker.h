// One thread of the load generator (see bench_client.h for the whole picture): a libuv loop,
// its connections, its share of the requests and its own counters. Internal to bench_client.cc.
#pragma once

#include <uv.h>

#include <array>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "launcher/bench/client.h"
#include "launcher/bench/connection.h"
#include "launcher/bench/rate.h"

namespace shardctl::launcher {

// Sets the shared start time when the last thread is connected.
struct StartClock {
  std::atomic<uint64_t>* start_ns;
  void operator()() noexcept;
};
using ReadyBarrier = std::barrier<StartClock>;

// What the threads of one run share.
struct WorkerShared {
  static constexpr size_t kMaxGates = 8;  // more phases than any workload has
  explicit WorkerShared(int threads) : ready(threads, StartClock{&start_ns}) {}
  std::atomic<uint64_t> start_ns{0};
  ReadyBarrier ready;  // every thread connected: the clock starts
  // Threads past the end of each sequential phase (its requests all answered) or gone. The next
  // phase starts when all are, so GETs never race the SETs of another thread.
  std::array<std::atomic<int>, kMaxGates> arrived{};
};

// What a worker shares with the thread printing progress.
struct LiveCounters {
  std::atomic<uint64_t> ops{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<bool> finished{false};
  std::mutex mutex;
  LatencyHistogram window;  // since the progress thread last took it; guarded by mutex
};

class Worker final : private ConnectionEvents {
 public:
  // Thread `index` of `spec`; waits on shared.ready once connected, then reads shared.start_ns.
  Worker(const LoadSpec& spec, int index, WorkerShared& shared);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The thread body: connect, run the phases, drain, close. Sets live().finished at the end.
  void Run();

  LiveCounters& live() { return live_; }
  // Valid after Run(): per-phase numbers, per-second counts, redirects and the first error.
  const LoadResult& result() const { return result_; }
  // Valid after Run(): why the thread gave up ("" when it did not).
  const std::string& failure() const { return failure_; }
  // Per-phase first send and last reply (uv_hrtime ns), for merging phase durations.
  const std::vector<std::pair<uint64_t, uint64_t>>& phase_times() const { return phase_times_; }

 private:
  struct Client;
  // What a reply on a connection answers: a request, or a command whose reply is dropped.
  enum class Awaited : uint8_t { kRequest, kLogin, kAsking };
  // A request in flight; FIFO per TCP connection, as Redis answers in order.
  struct Pending {
    uint64_t start_ns = 0;
    uint64_t key = 0;
    uint32_t value_size = 0;
    uint16_t phase = 0;
    uint8_t redirects = 0;
    bool get = false;
    Awaited awaited = Awaited::kRequest;
  };
  // One TCP connection.
  struct Link {
    Client* client = nullptr;
    BenchConnection* connection = nullptr;  // null once it failed or was closed
    int node = 0;
    std::deque<Pending> pending;
  };
  // One of --connections: a link per node (one in plain mode), `pipeline` requests in flight.
  struct Client {
    std::vector<std::unique_ptr<Link>> links;  // indexed by node
    int in_flight = 0;
  };

  // ConnectionEvents; `user` is the Link.
  void OnConnected(void* user, const std::string& error) override;
  void OnReply(void* user, std::string_view frame) override;
  void OnClosed(void* user, const std::string& error) override;
  static void OnTick(uv_timer_t* timer);

  Link* Connect(Client& client, int node);
  void Connected();
  void Begin(uint64_t now);
  void PassGate(uint64_t now);
  void LeaveGates();
  std::optional<Op> NextOp();
  bool IssueNext(Client& client, uint64_t start_ns);
  void Send(Client& client, const Pending& request, const Endpoint* ask);
  // `frame`: the raw reply; empty when the connection closed before it came.
  void Complete(Link& link, const Pending& request, std::string_view frame);
  // The link's connection is gone: its requests will get no reply.
  void DropPending(Link& link);
  // Where connection `node` goes: the slot table's primary, or --host/--port.
  Endpoint Target(int node) const;
  bool FollowRedirect(Client& client, Pending request, const std::string& error);
  void Record(const Pending& request, uint64_t now, bool error);
  void Pump(uint64_t now);
  void Tick();
  void FlushWindow(uint64_t now);
  bool MayIssue(uint64_t now) const;
  int InFlight() const;
  void Shutdown();
  void Fail(const std::string& why);

  const LoadSpec& spec_;
  const BenchOptions& options_;
  int index_;
  WorkerShared& shared_;
  uv_loop_t loop_;
  uv_timer_t tick_;
  std::unique_ptr<ConnectionFlusher> flusher_;
  SlotTable slots_;
  std::string host_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<OpSource>> sources_;
  size_t phase_ = 0;
  bool at_gate_ = false;  // phase_ (sequential) is sent; waiting to start the next one
  bool arrived_ = false;  // counted in shared_.arrived[gate_]
  size_t gate_ = 0;       // gates passed
  std::string value_;     // SET payloads are prefixes of this
  std::string command_;   // the request being encoded, reused
  std::optional<RateSchedule> schedule_;
  int connecting_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  bool closing_ = false;    // Shutdown() ran: connections are going away
  bool shut_down_ = false;  // Run() returned
  uint64_t start_ns_ = 0;
  uint64_t end_ns_ = UINT64_MAX;  // no new requests after this
  uint64_t stop_ns_ = 0;          // when stopping began
  uint64_t last_reply_ns_ = 0;
  uint64_t budget_ = UINT64_MAX;  // requests this thread may send
  uint64_t issued_ = 0;
  uint64_t sent_on_schedule_ = 0;
  size_t next_client_ = 0;
  LatencyHistogram window_;
  uint64_t window_flushed_ns_ = 0;
  LiveCounters live_;
  LoadResult result_;
  std::vector<std::pair<uint64_t, uint64_t>> phase_times_;
  std::string failure_;
};

}  // namespace shardctl::launcher
