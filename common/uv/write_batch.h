// WriteBatch: the writes of one loop turn handed to the kernel in one system call (io_uring),
// instead of one write() per connection. Each queued send is non-blocking (MSG_DONTWAIT), so the
// kernel completes all of them before Submit() returns: what a socket did not take comes back as
// a short count or EAGAIN, as from write(), and the buffers need to live only until then.
//
//   FlushList::Queue() ─▶ Stream::QueueWrite() ─▶ Add(fd, bytes, &result)
//   Submit() ─── io_uring_enter ───▶ every result filled ─▶ FlushList::Run() ─▶ Stream::Flush()
//                                                           (uses the result, no write())
//
// Without io_uring (an old kernel, a seccomp filter) available() is false and nothing is queued:
// every Flush() writes by itself, as before. Loop thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace shardctl::common::uv {

class WriteBatch {
 public:
  WriteBatch();
  ~WriteBatch();
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;

  bool available() const { return ring_ != nullptr; }
  // Queues a send of `bytes` (which must stay as they are until Submit() returns) on `fd`; its
  // outcome goes to `*result`: bytes written, or a negative errno (libuv's error codes on Linux).
  // False when the batch is full or unavailable: write the usual way.
  bool Add(int fd, std::string_view bytes, int* result);
  // Sends everything queued and fills the results.
  void Submit();
  size_t queued() const { return queued_; }
  // Sends submitted since the batch was made.
  size_t sent() const { return sent_; }

 private:
  struct Ring;
  std::unique_ptr<Ring> ring_;
  size_t queued_ = 0;
  size_t sent_ = 0;
};

}  // namespace shardctl::common::uv
