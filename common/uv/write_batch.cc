#include "common/uv/write_batch.h"

#include <liburing.h>
#include <sys/socket.h>

namespace shardctl::common::uv {
namespace {

constexpr unsigned kEntries = 256;  // sends per system call; more wait for the next Submit()

}  // namespace

struct WriteBatch::Ring {
  io_uring ring{};
};

WriteBatch::WriteBatch() {
  auto ring = std::make_unique<Ring>();
  if (io_uring_queue_init(kEntries, &ring->ring, 0) == 0) ring_ = std::move(ring);
}

WriteBatch::~WriteBatch() {
  if (ring_) io_uring_queue_exit(&ring_->ring);
}

bool WriteBatch::Add(int fd, std::string_view bytes, int* result) {
  if (!ring_ || queued_ >= kEntries) return false;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
  if (sqe == nullptr) return false;
  io_uring_prep_send(sqe, fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  io_uring_sqe_set_data(sqe, result);
  ++queued_;
  ++sent_;
  return true;
}

void WriteBatch::Submit() {
  // Non-blocking sends complete during the submission itself; the wait only collects them. No
  // result may be left behind: a send the caller took for unsent would go out twice.
  while (queued_ > 0) {
    io_uring_submit_and_wait(&ring_->ring, static_cast<unsigned>(queued_));
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_->ring, head, cqe) {
      *static_cast<int*>(io_uring_cqe_get_data(cqe)) = cqe->res;
      ++seen;
    }
    io_uring_cq_advance(&ring_->ring, seen);
    queued_ -= seen;
  }
}

}  // namespace shardctl::common::uv
