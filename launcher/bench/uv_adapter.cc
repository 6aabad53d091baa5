#include "launcher/bench/uv_adapter.h"

#include <hiredis/async.h>

#include <algorithm>

namespace shardctl::launcher {

// One connection's poll handle and write state.
struct UvLink {
  UvWriteBatcher* batcher = nullptr;
  redisAsyncContext* context = nullptr;  // null once hiredis cleaned up
  uv_poll_t poll;
  int events = 0;         // what `poll` watches
  bool marked = false;    // in batcher->marked_
  bool flushing = false;  // inside Flush(): a new write request means the write was partial
};

// The ev hooks hiredis calls; privdata is the UvLink.
struct UvLinkHooks {
  static void OnPoll(uv_poll_t* handle, int status, int events) {
    auto* link = static_cast<UvLink*>(handle->data);
    // On a poll error let hiredis read: the read fails and hiredis reports the disconnect.
    if (status < 0) events = UV_READABLE;
    if (link->context != nullptr && (events & UV_READABLE)) {
      redisAsyncHandleRead(link->context);
    }
    if (link->context != nullptr && (events & UV_WRITABLE)) {
      redisAsyncHandleWrite(link->context);
    }
  }

  static void Watch(UvLink* link, int events) {
    if (events == link->events) return;  // uv_poll_start would re-register for nothing
    link->events = events;
    if (events != 0) {
      uv_poll_start(&link->poll, events, OnPoll);
    } else {
      uv_poll_stop(&link->poll);
    }
  }

  static void AddRead(void* data) {
    auto* link = static_cast<UvLink*>(data);
    Watch(link, link->events | UV_READABLE);
  }
  static void DelRead(void* data) {
    auto* link = static_cast<UvLink*>(data);
    Watch(link, link->events & ~UV_READABLE);
  }
  static void AddWrite(void* data) {
    auto* link = static_cast<UvLink*>(data);
    bool connected = (link->context->c.flags & REDIS_CONNECTED) != 0;
    if (!connected || link->flushing) {
      Watch(link, link->events | UV_WRITABLE);  // connect completion, or a full socket
    } else if (!link->marked && !(link->events & UV_WRITABLE)) {
      link->marked = true;
      link->batcher->marked_.push_back(link);
    }
  }
  static void DelWrite(void* data) {
    auto* link = static_cast<UvLink*>(data);
    Watch(link, link->events & ~UV_WRITABLE);
  }
  static void Cleanup(void* data) {
    auto* link = static_cast<UvLink*>(data);
    link->context = nullptr;
    link->batcher->Forget(link);
    uv_close(reinterpret_cast<uv_handle_t*>(&link->poll),
             [](uv_handle_t* handle) { delete static_cast<UvLink*>(handle->data); });
  }
};

UvWriteBatcher::UvWriteBatcher(uv_loop_t* loop) : loop_(loop) {
  uv_prepare_init(loop, &prepare_);
  prepare_.data = this;
  uv_prepare_start(&prepare_, OnPrepare);
}

bool UvWriteBatcher::Attach(redisAsyncContext* context) {
  if (context->ev.data != nullptr) return false;
  auto* link = new UvLink;
  if (uv_poll_init(loop_, &link->poll, context->c.fd) != 0) {
    delete link;
    return false;
  }
  link->batcher = this;
  link->context = context;
  link->poll.data = link;
  context->ev.data = link;
  context->ev.addRead = UvLinkHooks::AddRead;
  context->ev.delRead = UvLinkHooks::DelRead;
  context->ev.addWrite = UvLinkHooks::AddWrite;
  context->ev.delWrite = UvLinkHooks::DelWrite;
  context->ev.cleanup = UvLinkHooks::Cleanup;
  return true;
}

void UvWriteBatcher::Close() {
  uv_prepare_stop(&prepare_);
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
}

void UvWriteBatcher::OnPrepare(uv_prepare_t* prepare) {
  static_cast<UvWriteBatcher*>(prepare->data)->Flush();
}

void UvWriteBatcher::Flush() {
  std::vector<UvLink*> links;
  links.swap(marked_);
  for (UvLink* link : links) {  // still allocated: a cleanup frees it only in its close callback
    link->marked = false;
    if (link->context == nullptr) continue;
    link->flushing = true;
    redisAsyncHandleWrite(link->context);  // may disconnect and clean up links of this batch
    link->flushing = false;
  }
}

void UvWriteBatcher::Forget(UvLink* link) {
  if (!link->marked) return;
  std::replace(marked_.begin(), marked_.end(), link, static_cast<UvLink*>(nullptr));
  link->marked = false;
}

}  // namespace shardctl::launcher
