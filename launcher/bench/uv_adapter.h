// Runs hiredis async contexts on a libuv loop for the load generator, with batched writes.
//
// hiredis' own adapters/libuv.h calls uv_poll_start() for every command sent and every write
// done; libuv re-registers the socket with epoll on each call (a DEL now, an ADD later), which
// at pipeline depth 16 costs more system time than the reads and writes themselves. Here a
// socket is polled for reading only; a command sent just marks its connection, and one
// uv_prepare handle flushes every marked connection right before the loop blocks in poll - one
// write per connection per loop turn, and no epoll changes while the socket keeps up. Only when
// a write is partial (socket buffer full), or while connecting, is the socket polled for
// writability.
#pragma once

#include <uv.h>

#include <vector>

struct redisAsyncContext;

namespace shardctl::launcher {

struct UvLink;

class UvWriteBatcher {
 public:
  // Starts the prepare handle on `loop`.
  explicit UvWriteBatcher(uv_loop_t* loop);
  UvWriteBatcher(const UvWriteBatcher&) = delete;
  UvWriteBatcher& operator=(const UvWriteBatcher&) = delete;

  // Hooks `context` (connecting or connected) into the loop. False when libuv refuses the
  // socket; the caller then frees the context. The hook's memory is freed when hiredis
  // cleans up the context and libuv has closed its poll handle.
  bool Attach(redisAsyncContext* context);

  // Closes the prepare handle; call once, after which the loop can end.
  void Close();

 private:
  friend struct UvLinkHooks;
  static void OnPrepare(uv_prepare_t* prepare);
  void Flush();
  void Forget(UvLink* link);

  uv_loop_t* loop_;
  uv_prepare_t prepare_;
  std::vector<UvLink*> marked_;  // connections with commands waiting to be written
};

}  // namespace shardctl::launcher
