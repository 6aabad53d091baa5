// Writes batched per loop turn: connections only append to their buffers and ask to be flushed;
// once per loop turn each one asked is flushed once, so 16 pipelined commands become one write.
//
//   Send() ──▶ FlushList::Mark(connection) ─ ─ ─▶ LoopTurnHooks (prepare: before the loop polls;
//                                                 check: after this turn's I/O callbacks)
//                                                  └─▶ FlushList::Run() ─▶ connection->Flush()
#pragma once

#include <uv.h>

#include <vector>

#include "common/uv/write_batch.h"

namespace shardctl::common::uv {

// The connections to flush in this loop turn, each listed once. T has a public
// `bool flush_scheduled` (false when created; owned by the list) and `void Flush()`.
// Loop thread only.
template <typename T>
class FlushList {
 public:
  // Lists `item` unless it is listed already.
  void Mark(T* item) {
    if (item->flush_scheduled) return;
    item->flush_scheduled = true;
    items_.push_back(item);
  }
  // Unlists `item` (it is closing). One taken by a Run() in progress stays valid until the
  // loop's close callbacks, and its Flush() sees it closing.
  void Forget(T* item) {
    if (item->flush_scheduled) std::erase(items_, item);
  }
  bool empty() const { return items_.empty(); }
  // Queues every listed item's write on `batch` (T::QueueFlush(WriteBatch&)), for the Submit()
  // and Run() that follow.
  void Queue(WriteBatch& batch) {
    for (T* item : items_) item->QueueFlush(batch);
  }
  // Flushes every listed item once. Items marked while it runs wait for the next Run().
  void Run() {
    running_.swap(items_);
    for (T* item : running_) {
      item->flush_scheduled = false;
      item->Flush();
    }
    running_.clear();
  }

 private:
  std::vector<T*> items_;
  std::vector<T*> running_;  // kept to reuse its capacity
};

// A prepare handle calling `before_poll(owner)` in every loop turn just before the loop waits for
// I/O and, when `after_io` is given, a check handle calling it right after the turn's I/O
// callbacks (what they queued is written in the same turn, before the next poll). The handles
// live in this object, which must outlive their close callbacks (Close(), then run the loop).
class LoopTurnHooks {
 public:
  using Callback = void (*)(void* owner);

  LoopTurnHooks(uv_loop_t* loop, void* owner, Callback before_poll, Callback after_io = nullptr)
      : owner_(owner), before_poll_(before_poll), after_io_(after_io) {
    uv_prepare_init(loop, &prepare_);
    prepare_.data = this;
    uv_prepare_start(&prepare_, [](uv_prepare_t* prepare) {
      auto* self = static_cast<LoopTurnHooks*>(prepare->data);
      self->before_poll_(self->owner_);
    });
    if (after_io_ == nullptr) return;
    uv_check_init(loop, &check_);
    check_.data = this;
    uv_check_start(&check_, [](uv_check_t* check) {
      auto* self = static_cast<LoopTurnHooks*>(check->data);
      self->after_io_(self->owner_);
    });
  }
  LoopTurnHooks(const LoopTurnHooks&) = delete;
  LoopTurnHooks& operator=(const LoopTurnHooks&) = delete;

  // Closes the handles (idempotent); the loop can end once it has run their close callbacks.
  void Close() {
    for (uv_handle_t* handle :
         {reinterpret_cast<uv_handle_t*>(&prepare_), reinterpret_cast<uv_handle_t*>(&check_)}) {
      if (handle->type != UV_UNKNOWN_HANDLE && !uv_is_closing(handle)) uv_close(handle, nullptr);
    }
  }

 private:
  void* const owner_;
  const Callback before_poll_;
  const Callback after_io_;
  uv_prepare_t prepare_{};
  uv_check_t check_{};
};

}  // namespace shardctl::common::uv
