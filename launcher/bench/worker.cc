#include "launcher/bench/worker.h"

#include <sched.h>

#include <algorithm>

#include "common/endpoint.h"
#include "common/resp.h"
#include "common/slots.h"
#include "common/uv/handle.h"

namespace shardctl::launcher {
namespace {

constexpr uint64_t kNsPerSecond = 1000000000;
constexpr uint64_t kDrainTimeoutNs = 5 * kNsPerSecond;   // replies still missing then: failure
constexpr uint64_t kStallTimeoutNs = 10 * kNsPerSecond;  // no reply for this long: failure
constexpr uint64_t kWindowFlushNs = 100000000;           // progress window handed over each 100 ms
constexpr int kMaxRedirects = 5;

// Splits `total` among `parts`; part `index` gets its share (the first ones one more).
uint64_t ShareOf(uint64_t total, int parts, int index) {
  auto count = static_cast<uint64_t>(parts);
  auto i = static_cast<uint64_t>(index);
  return total / count + (i < total % count ? 1 : 0);
}

}  // namespace

void StartClock::operator()() noexcept { start_ns->store(uv_hrtime()); }

Worker::Worker(const LoadSpec& spec, int index, WorkerShared& shared)
    : spec_(spec), options_(*spec.options), index_(index), shared_(shared) {
  uv_loop_init(&loop_);
  uv_timer_init(&loop_, &tick_);
  tick_.data = this;
  flusher_ = std::make_unique<ConnectionFlusher>(&loop_);
  if (spec.slots) slots_ = *spec.slots;
  host_ = options_.host;
  uint64_t seed = options_.seed * 0x100000001B3ull + static_cast<uint64_t>(index) * 7919;
  for (const auto& phase : spec.phases) {
    sources_.push_back(
        std::make_unique<OpSource>(options_.workload, phase, index, options_.threads, seed++));
  }
  result_.phases.resize(spec.phases.size());
  phase_times_.assign(spec.phases.size(), {UINT64_MAX, 0});
  for (size_t i = 0; i < spec.phases.size(); ++i) result_.phases[i].name = spec.phases[i].name;
  SplitMix64 random(seed);
  value_.resize(options_.workload.value_size.max);
  for (char& c : value_) c = static_cast<char>('a' + random.Below(26));
  if (spec.bounded && options_.requests) {
    budget_ = ShareOf(*options_.requests, options_.threads, index);
  }
  if (spec.bounded && !options_.rate.empty()) {
    schedule_.emplace(options_.rate, 1.0 / options_.threads);
  }
}

Worker::~Worker() {
  // Run() closed every handle; a loop that never ran only holds the timer.
  if (!shut_down_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
    flusher_->Close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    (void)common::uv::CloseLoop(&loop_);
  }
}

void Worker::Run() {
  if (!options_.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = options_.cpus[static_cast<size_t>(index_) % options_.cpus.size()];
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      Fail("cannot pin generator thread " + std::to_string(index_) + " to CPU " +
           std::to_string(cpu) + " (is it online and allowed? see --cpus)");
    }
  }
  int nodes = spec_.slots ? static_cast<int>(slots_.primaries().size()) : 1;
  for (int i = 0; i < options_.connections && failure_.empty(); ++i) {
    clients_.push_back(std::make_unique<Client>());
    for (int node = 0; node < nodes; ++node) Connect(*clients_.back(), node);
  }
  if (connecting_ == 0) Connected();  // nothing to wait for: every connect failed at once
  uv_timer_start(&tick_, OnTick, 1, 1);
  uv_run(&loop_, UV_RUN_DEFAULT);
  shut_down_ = true;
  // Every handle (timer, prepare, each connection's poll) must be closed by now.
  if (auto closed = common::uv::CloseLoop(&loop_); !closed) {
    Fail("internal error: " + closed.error().message());
  }
  result_.seconds = start_ns_ && last_reply_ns_ > start_ns_
                        ? static_cast<double>(last_reply_ns_ - start_ns_) / 1e9
                        : 0;
  live_.finished = true;
}

Endpoint Worker::Target(int node) const {
  return spec_.slots ? Endpoint(slots_.primaries()[static_cast<size_t>(node)])
                     : Endpoint{options_.host, options_.port};
}

Worker::Link* Worker::Connect(Client& client, int node) {
  if (client.links.size() <= static_cast<size_t>(node)) client.links.resize(node + 1);
  auto link = std::make_unique<Link>();
  link->client = &client;
  link->node = node;
  const Endpoint target = Target(node);
  std::string error;
  link->connection =
      BenchConnection::Open(&loop_, *flusher_, target, options_.tls, *this, link.get(), error);
  if (link->connection == nullptr) {
    Fail("cannot connect to " + target.ToString() + ": " + error);
    return nullptr;
  }
  if (!options_.password.empty()) {
    // Queued first, so its reply comes before any request's.
    std::string_view login[2] = {"AUTH", options_.password};
    command_.clear();
    common::AppendCommand(command_, std::span<const std::string_view>(login, 2));
    link->connection->Send(command_);
    link->pending.push_back({.awaited = Awaited::kLogin});
  }
  ++connecting_;
  client.links[static_cast<size_t>(node)] = std::move(link);
  return client.links[static_cast<size_t>(node)].get();
}

void Worker::OnConnected(void* user, const std::string& error) {
  auto* link = static_cast<Link*>(user);
  if (!error.empty()) {
    link->connection = nullptr;  // gone after this call
    Fail("cannot connect to " + Target(link->node).ToString() + ": " + error);
    DropPending(*link);  // requests queued while connecting (after a redirect)
  }
  if (connecting_ > 0 && --connecting_ == 0) Connected();
}

void Worker::OnClosed(void* user, const std::string& error) {
  auto* link = static_cast<Link*>(user);
  link->connection = nullptr;
  if (!closing_) Fail("connection to " + Target(link->node).ToString() + " lost: " + error);
  DropPending(*link);
}

void Worker::DropPending(Link& link) {
  std::deque<Pending> pending;
  pending.swap(link.pending);
  for (const Pending& request : pending) {
    if (request.awaited == Awaited::kRequest) Complete(link, request, {});
  }
}

void Worker::OnReply(void* user, std::string_view frame) {
  auto* link = static_cast<Link*>(user);
  if (link->pending.empty())
    return Fail("a reply nobody asked for from " + Target(link->node).ToString());
  const Pending request = link->pending.front();
  link->pending.pop_front();
  if (request.awaited == Awaited::kLogin) {
    if (frame.starts_with('-')) {
      Fail("login refused: " + std::string(frame.substr(1, frame.size() - 3)) +
           " (check --password-file)");
    }
    return;
  }
  if (request.awaited == Awaited::kAsking) return;  // +OK
  Complete(*link, request, frame);
}

void Worker::Connected() {
  if (started_) return;  // a later connection (to a node named by MOVED) came up
  started_ = true;
  shared_.ready.arrive_and_wait();
  start_ns_ = shared_.start_ns.load();
  last_reply_ns_ = start_ns_;
  window_flushed_ns_ = start_ns_;
  if (spec_.bounded && options_.duration) {
    end_ns_ =
        start_ns_ + static_cast<uint64_t>(std::chrono::nanoseconds(*options_.duration).count());
  }
  if (!failure_.empty()) {
    stopping_ = true;
    return;
  }
  Begin(start_ns_);
}

void Worker::Begin(uint64_t now) {
  if (schedule_) return;  // open loop: the timer sends
  for (auto& client : clients_) {
    while (client->in_flight < spec_.pipeline) {
      if (!MayIssue(now) || !IssueNext(*client, now)) return;
    }
  }
}

std::optional<Op> Worker::NextOp() {
  while (phase_ < sources_.size() && !at_gate_) {
    if (auto op = sources_[phase_]->Next()) return op;
    if (phase_ + 1 < sources_.size() && gate_ < WorkerShared::kMaxGates) {
      at_gate_ = true;  // Tick() starts the next phase once every thread is through this one
      return std::nullopt;
    }
    ++phase_;
  }
  return std::nullopt;
}

void Worker::PassGate(uint64_t now) {
  if (!arrived_ && InFlight() == 0) {
    shared_.arrived[gate_].fetch_add(1);
    arrived_ = true;
  }
  if (!arrived_ || shared_.arrived[gate_].load() < options_.threads) return;
  at_gate_ = false;
  arrived_ = false;
  ++gate_;
  ++phase_;
  if (schedule_) {
    Pump(now);
  } else {
    Begin(now);
  }
}

void Worker::LeaveGates() {
  // A thread that stops counts as through every gate it has not reached, so none waits on it.
  for (size_t gate = gate_ + (arrived_ ? 1 : 0); gate < WorkerShared::kMaxGates; ++gate) {
    shared_.arrived[gate].fetch_add(1);
  }
  arrived_ = true;
}

bool Worker::MayIssue(uint64_t now) const {
  return !stopping_ && issued_ < budget_ && now < end_ns_ && failure_.empty();
}

bool Worker::IssueNext(Client& client, uint64_t start_ns) {
  auto op = NextOp();
  if (!op) return false;
  Pending request{.start_ns = start_ns,
                  .key = op->key,
                  .value_size = op->value_size,
                  .phase = static_cast<uint16_t>(phase_),
                  .get = op->get};
  auto& times = phase_times_[phase_];
  times.first = std::min(times.first, start_ns);
  ++client.in_flight;
  ++issued_;
  Send(client, request, nullptr);
  return true;
}

}  // namespace shardctl::launcher

namespace shardctl::launcher {

void Worker::Send(Client& client, const Pending& request, const Endpoint* ask) {
  KeyBuffer buffer;
  std::string_view key = KeyName(request.key, buffer);
  int node = 0;
  if (spec_.slots) {
    node = ask ? slots_.AddPrimary({*ask, ""}) : slots_.PrimaryFor(common::KeySlot(key));
    if (node == SlotTable::kNoNode) {
      --client.in_flight;
      Fail("no cluster node serves slot " + std::to_string(common::KeySlot(key)));
      return;
    }
  }
  auto index = static_cast<size_t>(node);
  Link* link = index < client.links.size() && client.links[index] ? client.links[index].get()
                                                                  : Connect(client, node);
  if (link == nullptr || link->connection == nullptr) {
    --client.in_flight;
    Fail("lost the connection to " + (spec_.slots ? slots_.primaries()[index].ToString() : host_));
    return;
  }
  command_.clear();
  if (ask) {
    command_ = "*1\r\n$6\r\nASKING\r\n";
    link->pending.push_back({.awaited = Awaited::kAsking});
  }
  std::string_view args[3] = {request.get ? "GET" : "SET", key,
                              std::string_view(value_).substr(0, request.value_size)};
  common::AppendCommand(command_, std::span<const std::string_view>(args, request.get ? 2 : 3));
  link->connection->Send(command_);
  link->pending.push_back(request);
}

void Worker::Complete(Link& link, const Pending& request, std::string_view frame) {
  Client& client = *link.client;
  if (frame.empty()) {  // the connection closed before this reply came
    --client.in_flight;
    return;
  }
  uint64_t now = uv_hrtime();
  last_reply_ns_ = now;
  PhaseResult& phase = result_.phases[request.phase];
  if (frame.starts_with('-')) {
    std::string error(frame.substr(1, frame.size() - 3));
    if (spec_.slots && FollowRedirect(client, request, error)) return;
    if (result_.first_error.empty()) result_.first_error = error;
    Record(request, now, /*error=*/true);
  } else {
    // A GET of a missing key: RESP2's null bulk string ($-1), or RESP3's null (_).
    const bool nil = frame.starts_with("$-1") || frame.starts_with('_');
    if (request.get) ++(nil ? phase.misses : phase.hits);
    Record(request, now, /*error=*/false);
  }
  --client.in_flight;
  if (schedule_) {
    Pump(now);
  } else if (MayIssue(now)) {
    IssueNext(client, now);
  }
}

bool Worker::FollowRedirect(Client& client, Pending request, const std::string& error) {
  auto redirect = ParseRedirect(error, host_);
  if (!redirect || request.redirects >= kMaxRedirects) return false;
  // A node named by host name (cluster-preferred-endpoint-type hostname): its IP, when CLUSTER
  // SLOTS gave it; else the name, resolved when the connection opens.
  if (!common::IsIpAddress(redirect->target.host)) {
    if (auto ip = slots_.AddressOfName(redirect->target.host)) redirect->target.host = *ip;
  }
  ++request.redirects;
  if (redirect->ask) {
    ++result_.asked;
  } else {
    ++result_.moved;
    (void)slots_.Assign(redirect->slot, redirect->slot, {redirect->target, ""});  // slot is valid
  }
  Send(client, request, redirect->ask ? &redirect->target : nullptr);
  return true;
}

void Worker::Record(const Pending& request, uint64_t now, bool error) {
  PhaseResult& phase = result_.phases[request.phase];
  auto& times = phase_times_[request.phase];
  times.second = std::max(times.second, now);
  if (error) {
    ++phase.errors;
    live_.errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++phase.ops;
  uint64_t latency = now > request.start_ns ? now - request.start_ns : 0;
  phase.latency.Record(latency);
  window_.Record(latency);
  auto second = static_cast<size_t>((now - start_ns_) / kNsPerSecond);
  if (result_.per_second.size() <= second) result_.per_second.resize(second + 1);
  ++result_.per_second[second];
  live_.ops.fetch_add(1, std::memory_order_relaxed);
}

void Worker::Pump(uint64_t now) {
  if (!started_ || clients_.empty()) return;
  uint64_t due = schedule_->DueBy(std::chrono::nanoseconds(now - start_ns_));
  size_t scanned = 0;
  while (sent_on_schedule_ < due && scanned < clients_.size()) {
    Client& client = *clients_[next_client_];
    next_client_ = (next_client_ + 1) % clients_.size();
    if (client.in_flight >= spec_.pipeline) {
      ++scanned;
      continue;
    }
    // Latency counts from when the request was due, however late a free connection came.
    uint64_t intended =
        start_ns_ + static_cast<uint64_t>(schedule_->SendTime(sent_on_schedule_).count());
    if (!MayIssue(intended) || !IssueNext(client, intended)) return;
    ++sent_on_schedule_;
    scanned = 0;
  }
}

void Worker::OnTick(uv_timer_t* timer) { static_cast<Worker*>(timer->data)->Tick(); }

void Worker::Tick() {
  if (!started_ || closing_) return;
  uint64_t now = uv_hrtime();
  bool interrupted = spec_.stop != nullptr && spec_.stop->load(std::memory_order_relaxed);
  if (!stopping_ && interrupted) result_.interrupted = true;
  if (!stopping_ &&
      (interrupted || now >= end_ns_ || issued_ >= budget_ || phase_ >= sources_.size())) {
    stopping_ = true;
    stop_ns_ = now;
  }
  if (!stopping_ && at_gate_) PassGate(now);
  if (!stopping_ && schedule_) Pump(now);
  if (now - window_flushed_ns_ >= kWindowFlushNs) FlushWindow(now);
  int in_flight = InFlight();
  if (!failure_.empty() || (stopping_ && in_flight == 0)) {
    Shutdown();
  } else if (stopping_ && now - stop_ns_ > kDrainTimeoutNs) {
    Fail(std::to_string(in_flight) + " request(s) still unanswered 5 s after the end");
    Shutdown();
  } else if (in_flight > 0 && now - last_reply_ns_ > kStallTimeoutNs) {
    Fail("no reply for 10 s with " + std::to_string(in_flight) + " request(s) in flight");
    Shutdown();
  }
}

void Worker::FlushWindow(uint64_t now) {
  std::lock_guard lock(live_.mutex);
  live_.window.Merge(window_);
  window_ = LatencyHistogram();
  window_flushed_ns_ = now;
}

int Worker::InFlight() const {
  int in_flight = 0;
  for (const auto& client : clients_) in_flight += client->in_flight;
  return in_flight;
}

void Worker::Shutdown() {
  closing_ = true;
  LeaveGates();
  FlushWindow(uv_hrtime());
  uv_timer_stop(&tick_);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
  flusher_->Close();
  for (auto& client : clients_) {
    for (auto& link : client->links) {
      if (!link || link->connection == nullptr) continue;
      link->connection->Close();  // what is still pending gets no reply
      link->connection = nullptr;
    }
  }
}

void Worker::Fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  if (!stopping_) {
    stopping_ = true;
    stop_ns_ = uv_hrtime();
  }
}

}  // namespace shardctl::launcher
