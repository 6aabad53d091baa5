// Handle helpers for libuv code: casts, closing a handle whose memory is freed in its close
// callback (OwnedHandle), and the check that a loop ends with no live handle.
//
// libuv allows freeing a handle's memory only in its close callback. Heap-allocated handles derive
// from OwnedHandle and put themselves in handle->data, so any of them can be closed with the
// right callback (DeleteOwnedHandle), including by a final uv_walk that closes whatever is still
// open (the supervisor's shutdown). Handles embedded in a longer-lived object keep data pointing
// at that object and are closed with a null callback.
#pragma once

#include <uv.h>

#include "common/result.h"

namespace shardctl::common::uv {

// The base handle of any libuv handle type (uv_tcp_t, uv_timer_t, ...).
template <typename T>
uv_handle_t* AsHandle(T* handle) {
  return reinterpret_cast<uv_handle_t*>(handle);
}

// The stream view of a stream handle (uv_tcp_t, uv_pipe_t).
template <typename T>
uv_stream_t* AsStream(T* handle) {
  return reinterpret_cast<uv_stream_t*>(handle);
}

// A heap-allocated holder of libuv handles; deleted by DeleteOwnedHandle in the close callback.
struct OwnedHandle {
  virtual ~OwnedHandle() = default;
};

// A uv_close_cb: deletes the OwnedHandle in handle->data.
inline void DeleteOwnedHandle(uv_handle_t* handle) {
  delete static_cast<OwnedHandle*>(handle->data);
}

// Closes `handle` (whose data is an OwnedHandle) unless it is already closing.
inline void CloseOwnedHandle(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, DeleteOwnedHandle);
}

// Closes `handle` with `on_close` (null: nothing to free) unless it is already closing.
inline void CloseIfOpen(uv_handle_t* handle, uv_close_cb on_close = nullptr) {
  if (!uv_is_closing(handle)) uv_close(handle, on_close);
}

// Closes `loop` (uv_loop_close), which must have run until no handle is left. The error names the
// handles still there ("the loop still has 2 handles: tcp, timer (closing)"): a handle that was
// never closed, or closed but not yet run to its close callback. Every event-loop test and
// program ends with it.
Status CloseLoop(uv_loop_t* loop);

}  // namespace shardctl::common::uv
